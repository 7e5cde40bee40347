// What herdr reads from /proc to know what runs in a pane (herdr.md §4.1): the terminal's
// foreground process group (tpgid), its members, and their comm, argv, cwd and HERDR_AGENT hint.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { type AgentKind, canonicalKind, kindForProcessName } from "../common/kinds.ts";

/** a foreground process as herdr 0.8.0 reports it on Linux (argv0 is never set there) */
export interface ProcInfo {
  pid: number;
  name: string;
  argv?: string[];
  cmdline?: string;
  cwd?: string;
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

function link(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

export function alive(pid: number): boolean {
  const st = read(`/proc/${pid}/stat`);
  if (!st) return false;
  const state = st.slice(st.lastIndexOf(")") + 2, st.lastIndexOf(")") + 3);
  return state !== "Z" && state !== "X";
}

/** direct children of pid (all threads) */
export function children(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const t of tasks) {
    const s = read(`/proc/${pid}/task/${t}/children`);
    if (s) for (const c of s.trim().split(/\s+/)) if (c) out.push(Number(c));
  }
  return out;
}

export function comm(pid: number): string | undefined {
  return read(`/proc/${pid}/comm`)?.replace(/\n$/, "");
}

export function argv(pid: number): string[] | undefined {
  const s = read(`/proc/${pid}/cmdline`);
  if (!s) return undefined;
  const parts = s.split("\0");
  if (parts[parts.length - 1] === "") parts.pop();
  return parts;
}

export function cwdOf(pid: number): string | undefined {
  return link(`/proc/${pid}/cwd`);
}

export function envVar(pid: number, name: string): string | undefined {
  const s = read(`/proc/${pid}/environ`);
  if (!s) return undefined;
  const prefix = `${name}=`;
  for (const kv of s.split("\0")) if (kv.startsWith(prefix)) return kv.slice(prefix.length);
  return undefined;
}

export function procInfo(pid: number): ProcInfo | undefined {
  const name = comm(pid);
  if (name === undefined) return undefined;
  const a = argv(pid);
  const info: ProcInfo = { pid, name };
  if (a && a.length) {
    info.argv = a;
    info.cmdline = a.join(" ");
  }
  const c = cwdOf(pid);
  if (c) info.cwd = c;
  return info;
}

export interface Stat {
  state: string;
  ppid: number;
  pgrp: number;
  session: number;
  tpgid: number;
  /** clock ticks after boot (field 22): with the pid, a process's identity */
  startTime: number;
}

/** /proc/<pid>/stat after the comm: "state ppid pgrp session tty_nr tpgid …" */
export function stat(pid: number): Stat | undefined {
  const s = read(`/proc/${pid}/stat`);
  if (!s) return undefined;
  const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
  return { state: f[0]!, ppid: Number(f[1]), pgrp: Number(f[2]), session: Number(f[3]), tpgid: Number(f[5]), startTime: Number(f[19]) };
}

/** the process group that owns the terminal of pid (herdr: tpgid of the shell), if any */
export function foregroundGroup(shellPid: number): number | undefined {
  const st = stat(shellPid);
  return st && st.tpgid > 0 ? st.tpgid : undefined;
}

/** pid and its descendants, breadth first */
export function tree(roots: number[], limit = 4096): number[] {
  const seen = new Set<number>(roots.filter((p) => p > 0));
  const queue = [...seen];
  const out: number[] = [];
  while (queue.length && out.length < limit) {
    const pid = queue.shift()!;
    out.push(pid);
    for (const c of children(pid)) if (!seen.has(c)) (seen.add(c), queue.push(c));
  }
  return out;
}

/**
 * The pane's foreground job as herdr 0.8.0 reads it (src/platform/linux.rs foreground_job): the
 * terminal's foreground process group (tpgid of the shell), its members found by walking the
 * process tree from the shell and from the group leader, sorted by pid. The shell alone when it
 * owns the terminal and runs nothing.
 */
export function foregroundJob(shellPid: number): { pgid: number; pids: number[] } | undefined {
  const pgid = foregroundGroup(shellPid);
  if (pgid === undefined) return undefined;
  const pids = tree([shellPid, pgid])
    .filter((pid) => {
      const st = stat(pid);
      return st !== undefined && st.pgrp === pgid && st.state !== "Z" && st.state !== "X";
    })
    .sort((a, b) => a - b);
  return pids.length ? { pgid, pids } : undefined;
}

/**
 * every live process of a session (a pane's shell is its session leader). `leaderStart` guards
 * against a recycled id: when a process with the session's id runs but started at another time,
 * the session is someone else's and nothing is returned (Linux keeps an id from being reused
 * while any process still has it as its session, so members of ours are never mistaken).
 */
export function sessionMembers(sid: number, leaderStart?: number): number[] {
  const out: number[] = [];
  if (leaderStart !== undefined) {
    const leader = stat(sid);
    if (leader && leader.startTime !== leaderStart) return out;
  }
  let ents: string[];
  try {
    ents = readdirSync("/proc");
  } catch {
    return out;
  }
  for (const e of ents) {
    const c = e.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const st = stat(Number(e));
    if (st && st.session === sid && st.state !== "Z") out.push(Number(e));
  }
  return out;
}

const INTERPRETERS = new Set(["bash", "sh", "dash", "zsh", "node", "bun", "deno", "python", "python3"]);

/**
 * The agent a process is: its comm or argv0 names a known agent; or it is an interpreter
 * (node, bash, …) running a script named like one; or it carries HERDR_AGENT=<kind>.
 */
export function agentKindOf(pid: number): AgentKind | undefined {
  const c = comm(pid);
  if (c === undefined) return undefined;
  const byName = kindForProcessName(c);
  if (byName) return byName;
  const a = argv(pid);
  if (a?.[0]) {
    const k = kindForProcessName(a[0]);
    if (k) return k;
    const base0 = a[0].slice(a[0].lastIndexOf("/") + 1);
    const script = a.slice(1).find((x) => !x.startsWith("-"));
    if (INTERPRETERS.has(base0) && script) {
      const ks = kindForProcessName(script);
      if (ks) return ks;
    }
  }
  const hint = envVar(pid, "HERDR_AGENT");
  return hint ? canonicalKind(hint) : undefined;
}

/** the agent of a job: the group leader's kind first (herdr identify_agent_in_job), else the first member's */
export function detectAgent(job: number[], leader?: number): { pid: number; kind: AgentKind } | undefined {
  const order = leader !== undefined && job.includes(leader) ? [leader, ...job.filter((p) => p !== leader)] : job;
  for (const pid of order) {
    const kind = agentKindOf(pid);
    if (kind) return { pid, kind };
  }
  return undefined;
}
