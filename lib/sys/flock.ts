// flock(2) through bun:ffi on libc (Linux glibc/musl, macOS). Locks belong to the open file
// description, so they end with the holder's process: no stale locks after kill -9.
// We never block inside FFI (that would also block signal handlers): LOCK_NB plus short polling.
// This module is the lock alone, on a descriptor: `mam pane-lock acquire` (run by bash shims many
// times a minute) loads it and nothing else; lock files (open, create, lock) are lock-file.ts.
import { fstatSync } from "node:fs";
import { EXIT, MamError, usageError } from "./errors.ts";

const LOCK_SH = 1;
const LOCK_EX = 2;
const LOCK_NB = 4;
const LOCK_UN = 8;
const EINTR = 4;

interface Libc {
  flock(fd: number, op: number): number;
  errno(): number;
  wouldBlock: number;
}

let libc: Libc | undefined;

function loadLibc(): Libc {
  if (libc) return libc;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { dlopen, FFIType, read } = require("bun:ffi") as typeof import("bun:ffi");
  const mac = process.platform === "darwin";
  const candidates = mac
    ? ["libSystem.B.dylib", "/usr/lib/libSystem.B.dylib"]
    : ["libc.so.6", `libc.musl-${process.arch === "arm64" ? "aarch64" : "x86_64"}.so.1`, "libc.so"];
  const errnoSym = mac ? "__error" : "__errno_location";
  let lastErr: unknown;
  for (const name of candidates) {
    try {
      const lib = dlopen(name, {
        flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
        [errnoSym]: { args: [], returns: FFIType.ptr },
      });
      const errnoFn = lib.symbols[errnoSym] as () => number | null;
      libc = {
        flock: lib.symbols.flock as (fd: number, op: number) => number,
        errno: () => {
          const p = errnoFn();
          return p ? read.i32(p as never, 0) : -1;
        },
        wouldBlock: mac ? 35 : 11,
      };
      return libc;
    } catch (e) {
      lastErr = e;
    }
  }
  throw new MamError(`cannot load libc for flock (${String(lastErr)})`, EXIT.FAIL);
}

/** true when fd is an open descriptor of this process */
export function fdIsOpen(fd: number): boolean {
  try {
    fstatSync(fd);
    return true;
  } catch {
    return false;
  }
}

/** one non-blocking attempt: true = taken, false = held by someone else */
export function tryFlock(fd: number, exclusive = true): boolean {
  const c = loadLibc();
  for (;;) {
    if (c.flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) === 0) return true;
    const e = c.errno();
    if (e === c.wouldBlock) return false;
    if (e === EINTR) continue;
    throw new MamError(`flock on descriptor ${fd} failed (errno ${e})`, EXIT.FAIL);
  }
}

export function unflock(fd: number): void {
  loadLibc().flock(fd, LOCK_UN);
}

export interface WaitOptions {
  /** give up after this many milliseconds (Infinity = never) */
  budgetMs: number;
  /** longest pause between attempts; a waiter gets the lock within this of its release */
  maxPollMs?: number;
  /** aborts the wait (e.g. a signal) */
  signal?: AbortSignal;
}

/** take the lock on fd, polling with a short back-off; "timeout" when the budget runs out */
export async function flockWait(fd: number, opts: WaitOptions, exclusive = true): Promise<"locked" | "timeout"> {
  const deadline = Date.now() + opts.budgetMs;
  const maxPoll = opts.maxPollMs ?? 25;
  let delay = 1;
  for (;;) {
    if (tryFlock(fd, exclusive)) return "locked";
    if (opts.signal?.aborted) throw opts.signal.reason ?? new MamError("interrupted", EXIT.FAIL);
    const left = deadline - Date.now();
    if (left <= 0) return "timeout";
    await Bun.sleep(Math.min(delay, maxPoll, left));
    delay = Math.min(delay * 2, maxPoll);
  }
}

export function checkFd(fd: number): number {
  if (!Number.isInteger(fd) || fd < 0) throw usageError(`invalid descriptor '${fd}'`, "pass --fd N with an open descriptor number");
  if (!fdIsOpen(fd)) throw usageError(`descriptor ${fd} is not open`, `open it first, e.g. exec ${fd}>>"$(mam pane-lock path)"`);
  return fd;
}
