// Process facts of a pane: what runs in the foreground of its terminal. tmux panes are read from
// /proc (Linux); herdr reports the same facts through `pane process-info`.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import type { ForegroundProcess, ProcessInfo } from "./types.ts";

const SHELLS = new Set(["sh", "bash", "zsh", "fish", "dash", "ksh", "mksh", "tcsh", "csh", "nu", "elvish", "xonsh", "login"]);

/** a login/interactive shell process name ("-bash" counts) */
export function isShellName(name: string): boolean {
  return SHELLS.has(name.replace(/^-/, "").replace(/^.*\//, ""));
}

/**
 * True when nothing but the pane's shell owns the terminal: no foreground process, or only the
 * shell itself (by pid when known, else by name).
 */
export function isShellOnly(info: ProcessInfo): boolean {
  return info.foreground.every((p) => (info.shellPid !== undefined ? p.pid === info.shellPid : isShellName(p.name)));
}

/** the foreground processes that are not the pane's shell */
export function nonShellForeground(info: ProcessInfo): ForegroundProcess[] {
  return info.foreground.filter((p) => (info.shellPid !== undefined ? p.pid !== info.shellPid : !isShellName(p.name)));
}

interface Stat {
  pid: number;
  comm: string;
  pgrp: number;
  tpgid: number;
}

/** /proc/<pid>/stat: "pid (comm) state ppid pgrp session tty_nr tpgid …"; comm may hold spaces and parens */
export function parseStat(text: string): Stat | undefined {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < open) return undefined;
  const pid = Number(text.slice(0, open).trim());
  const rest = text.slice(close + 2).split(" ");
  // rest: state ppid pgrp session tty_nr tpgid
  const pgrp = Number(rest[2]);
  const tpgid = Number(rest[5]);
  if (!Number.isInteger(pid) || !Number.isInteger(pgrp) || !Number.isInteger(tpgid)) return undefined;
  return { pid, comm: text.slice(open + 1, close), pgrp, tpgid };
}

function readStat(pid: number): Stat | undefined {
  try {
    return parseStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

function describe(pid: number, comm: string): ForegroundProcess {
  let argv: string[] = [];
  let cwd: string | undefined;
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((a, i, all) => a !== "" || i < all.length - 1);
  } catch {}
  try {
    cwd = readlinkSync(`/proc/${pid}/cwd`);
  } catch {}
  return { pid, name: comm, argv, ...(cwd !== undefined ? { cwd } : {}) };
}

/** true when /proc can answer (Linux) */
export function hasProcfs(): boolean {
  try {
    readFileSync("/proc/self/stat");
    return true;
  } catch {
    return false;
  }
}

/**
 * The foreground process group of the terminal that `panePid` (the process the multiplexer
 * started in the pane) runs on. Empty when the pane process is gone. shellPid is the pane process
 * only when it is a shell (tmux runs mam's agents without one).
 */
export function foregroundOf(panePid: number): ProcessInfo {
  const top = readStat(panePid);
  if (!top) return { foreground: [] };
  const shell = isShellName(top.comm) ? { shellPid: panePid } : {};
  const fg = top.tpgid > 0 ? top.tpgid : top.pgrp;
  if (fg === top.pgrp) return { ...shell, foreground: [describe(panePid, top.comm)] };
  const members: ForegroundProcess[] = [];
  for (const ent of readdirSync("/proc")) {
    if (!/^\d+$/.test(ent)) continue;
    const st = readStat(Number(ent));
    if (st && st.pgrp === fg) members.push(describe(st.pid, st.comm));
  }
  members.sort((a, b) => (a.pid === fg ? -1 : b.pid === fg ? 1 : a.pid - b.pid));
  return { ...shell, foreground: members };
}

/** a process's environment as it started (/proc/<pid>/environ; undefined: gone, not ours, or no /proc) */
export function processEnviron(pid: number): Record<string, string> | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/environ`, "utf8");
  } catch {
    return undefined;
  }
  const out: Record<string, string> = {};
  for (const kv of text.split("\0")) {
    const eq = kv.indexOf("=");
    if (eq > 0) out[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return out;
}

/** a process's start time (clock ticks since boot, /proc/<pid>/stat field 22): with its pid, who it is */
export function procStartTime(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** the pids of every descendant of `pid` (children, their children, …), from /proc; [] without it */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  let ents: string[] = [];
  try {
    ents = readdirSync("/proc");
  } catch {
    return [];
  }
  for (const ent of ents) {
    if (!/^\d+$/.test(ent)) continue;
    try {
      const text = readFileSync(`/proc/${ent}/stat`, "utf8");
      const ppid = Number(text.slice(text.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(ent)]);
    } catch {}
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}
