// What herdr reads from /proc to know what runs in a pane (herdr.md §4.1): the shell's children,
// which of them hold the pane's input (the foreground job: background jobs of a non-interactive
// shell get /dev/null), and their comm, argv, cwd and HERDR_AGENT hint.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { type AgentKind, canonicalKind, kindForProcessName } from "../common/kinds.ts";

export interface ProcInfo {
  pid: number;
  name: string;
  argv0?: string;
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

export function stdinLink(pid: number): string | undefined {
  return link(`/proc/${pid}/fd/0`);
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
    info.argv0 = a[0];
    info.argv = a;
    info.cmdline = a.join(" ");
  }
  const c = cwdOf(pid);
  if (c) info.cwd = c;
  return info;
}

/**
 * The pane's foreground job: children of the shell whose stdin is the pane's input, plus their
 * descendants (the same process group in a real terminal), parents first. Empty when the shell
 * owns the foreground.
 */
export function foregroundJob(shellPid: number, input: string | undefined, maxDepth = 4): number[] {
  const first = children(shellPid).filter((c) => alive(c) && (input === undefined || stdinLink(c) === input));
  const out: number[] = [];
  let level = first;
  for (let d = 0; d < maxDepth && level.length; d++) {
    out.push(...level);
    const next: number[] = [];
    for (const p of level) for (const c of children(p)) if (alive(c)) next.push(c);
    level = next;
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

/** the first process of the job that is a known agent (parents first) */
export function detectAgent(job: number[]): { pid: number; kind: AgentKind } | undefined {
  for (const pid of job) {
    const kind = agentKindOf(pid);
    if (kind) return { pid, kind };
  }
  return undefined;
}
