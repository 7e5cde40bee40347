// flock(2) through Bun's FFI on libc (Linux glibc/musl, macOS). Locks belong to the open file
// description, so they end with the holder's process: no stale locks after kill -9.
// We never block inside FFI (that would also block signal handlers): LOCK_NB plus short polling.
// This module is the lock alone, on a descriptor: `mam pane-lock acquire` (run by bash shims many
// times a minute) loads it and nothing else; lock files (open, create, lock) are lock-file.ts.
import { fstatSync } from "node:fs";
import { EXIT, MamError, usageError } from "./errors.ts";
import { field } from "./fields.ts";

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

type Symbols = Record<string, { args: string[]; returns: string }>;
interface Ffi {
  dlopen(name: string, symbols: Symbols): { symbols: Record<string, (...a: number[]) => unknown> } | Error;
  read: { i32(ptr: number, offset: number): number };
}

/**
 * the native side of bun:ffi (Bun.FFI, what the bun:ffi module wraps with argument checks for
 * every type): loading that module costs about 0.75M instructions, a tenth of mam's whole
 * start-up, and `mam pane-lock acquire` pays it many times a minute. Two plain int calls need
 * none of its checks. bun:ffi is the fallback, should a Bun come without Bun.FFI.
 */
function ffi(): Ffi {
  const native = (Bun as unknown as { FFI?: Partial<Ffi> }).FFI;
  if (typeof native?.dlopen === "function" && typeof native.read?.i32 === "function") return native as Ffi;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require("bun:ffi") as Ffi;
}

function loadLibc(): Libc {
  if (libc) return libc;
  const { dlopen, read } = ffi();
  const mac = process.platform === "darwin";
  const candidates = mac
    ? ["libSystem.B.dylib", "/usr/lib/libSystem.B.dylib"]
    : ["libc.so.6", `libc.musl-${process.arch === "arm64" ? "aarch64" : "x86_64"}.so.1`, "libc.so"];
  const errnoSym = mac ? "__error" : "__errno_location";
  let lastErr: unknown;
  for (const name of candidates) {
    try {
      const lib = dlopen(name, {
        flock: { args: ["i32", "i32"], returns: "i32" },
        [errnoSym]: { args: [], returns: "ptr" },
      });
      if (lib instanceof Error) throw lib;
      const flock = lib.symbols.flock!;
      const errnoFn = lib.symbols[errnoSym]!;
      libc = {
        flock: (fd, op) => flock(fd, op) as number,
        errno: () => {
          const p = errnoFn() as number | null;
          return p ? read.i32(p, 0) : -1;
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

export interface LockWaitOptions {
  /** give up after this many milliseconds (Infinity = never) */
  budgetMs: number;
  /** longest pause between attempts; a waiter gets the lock within this of its release */
  maxPollMs?: number;
  /** aborts the wait (e.g. a signal) */
  signal?: AbortSignal;
}

/** take the lock on fd, polling with a short back-off; "timeout" when the budget runs out */
export async function flockWait(fd: number, opts: LockWaitOptions, exclusive = true): Promise<"locked" | "timeout"> {
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
  if (!Number.isInteger(fd) || fd < 0) throw usageError(`invalid descriptor '${fd}'`, `pass ${field("fd")} N with an open descriptor number`);
  if (!fdIsOpen(fd)) throw usageError(`descriptor ${fd} is not open`, `open it first, e.g. exec ${fd}>>"$(mam pane-lock path)"`);
  return fd;
}
