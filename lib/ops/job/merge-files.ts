// The merge queue's files (docs/merge-queue.md#files), in .mam/merge/: config.json (the target and
// the check, `mam merge config`), queue.json (the entries, ./merge-plan.ts), each written whole
// (atomic replace) under the flock on .mam/merge/.lock, their one writer; per target, the lock a
// runner holds while it merges into it (target-<name>.lock), the scratch worktree it merges in
// (scratch/<name>) and the checks' output (logs/<job>-<n>.log).
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile } from "../../sys/atomic.ts";
import { EXIT, MamError } from "../../sys/errors.ts";
import { type HeldLock, lockFile, withLock } from "../../sys/lock-file.ts";
import { ensureMamSubdir } from "../../sys/mam-dir.ts";
import { mamDir } from "../../sys/paths.ts";
import type { MergeEntry, QueueDoc } from "./merge-plan.ts";

export interface MergeConfig {
  /** the branch merges land on (default: the branch the main checkout is on) */
  target?: string;
  /** run with sh -c in the scratch worktree after the rebase; none: no check */
  check?: string;
  /** the check's time limit in seconds */
  check_timeout_s?: number;
}

export const DEFAULT_CHECK_TIMEOUT_S = 1800;
const LOCK_BUDGET_MS = 30_000;

export const mergeDir = (ws: string) => join(mamDir(ws), "merge");
const configPath = (ws: string) => join(mergeDir(ws), "config.json");
const queuePath = (ws: string) => join(mergeDir(ws), "queue.json");
const lockPath = (ws: string) => join(mergeDir(ws), ".lock");
/** a target's name as a file name */
const fileName = (target: string) => encodeURIComponent(target).replace(/\./g, "%2E");
export const scratchPath = (ws: string, target: string) => join(mergeDir(ws), "scratch", fileName(target));
export const logPath = (ws: string, job: string, n: number) => join(mergeDir(ws), "logs", `${job}-${n}.log`);

function readJson(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new MamError(`${what} ${path} is not JSON`, EXIT.FAIL, "fix or remove it (mam merge config writes the config again)");
  }
}

export function readMergeConfig(ws: string): MergeConfig {
  const v = readJson(configPath(ws), "the merge queue's config");
  if (v === undefined) return {};
  const o = (v && typeof v === "object" ? v : {}) as Record<string, unknown>;
  return {
    ...(typeof o.target === "string" && o.target !== "" ? { target: o.target } : {}),
    ...(typeof o.check === "string" && o.check.trim() !== "" ? { check: o.check } : {}),
    ...(typeof o.check_timeout_s === "number" && o.check_timeout_s > 0 ? { check_timeout_s: o.check_timeout_s } : {}),
  };
}

/** change the config under the queue's lock (the one writer) */
export async function mutateMergeConfig(ws: string, fn: (c: MergeConfig) => MergeConfig): Promise<MergeConfig> {
  ensureMamSubdir(ws, "merge");
  return withLock(lockPath(ws), "merge queue", LOCK_BUDGET_MS, () => {
    const next = fn(readMergeConfig(ws));
    atomicWriteFile(configPath(ws), `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
    return next;
  });
}

export function readQueue(ws: string): QueueDoc {
  const v = readJson(queuePath(ws), "the merge queue");
  if (v === undefined) return { next: 1, entries: [] };
  const o = v as Partial<QueueDoc>;
  if (!o || typeof o !== "object" || !Array.isArray(o.entries)) throw new MamError(`the merge queue ${queuePath(ws)} is malformed`, EXIT.FAIL, "fix or remove it");
  return { next: typeof o.next === "number" ? o.next : o.entries.length + 1, entries: o.entries as MergeEntry[] };
}

/** a stamp of the queue file that changes whenever it is written ("-": none) */
export function queueStamp(ws: string): string {
  try {
    const st = statSync(queuePath(ws));
    return `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return "-";
  }
}

export const hasQueue = (ws: string) => existsSync(queuePath(ws));

/** change the queue under its lock; fn returns what the caller gets back */
export async function mutateQueue<T>(ws: string, fn: (q: QueueDoc) => T): Promise<T> {
  ensureMamSubdir(ws, "merge");
  return withLock(lockPath(ws), "merge queue", LOCK_BUDGET_MS, () => {
    const q = readQueue(ws);
    const out = fn(q);
    atomicWriteFile(queuePath(ws), `${JSON.stringify(q, null, 1)}\n`, { mode: 0o600 });
    return out;
  });
}

/** the lock of a target's merges, or undefined when another runner (a daemon, mam merge run) holds it */
export async function tryTargetLock(ws: string, target: string): Promise<HeldLock | undefined> {
  ensureMamSubdir(ws, "merge");
  const held = await lockFile(join(mergeDir(ws), `target-${fileName(target)}.lock`), { budgetMs: 0 });
  return held === "timeout" ? undefined : held;
}
