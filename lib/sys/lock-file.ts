// Lock files: open (creating it and its folder) and flock (flock.ts) a file, for the length of a
// task or until close(). The lock dies with the process that holds the descriptor.
import { closeSync, constants as C } from "node:fs";
import { dirname } from "node:path";
import { openRegular } from "./atomic.ts";
import { EXIT, MamError, writeRefused } from "./errors.ts";
import { flockWait, type LockWaitOptions } from "./flock.ts";
import { prepareDir } from "./mam-dir.ts";

/** an open, locked file; close() releases the lock */
export interface HeldLock {
  fd: number;
  path: string;
  close(): void;
}

/**
 * open (creating it and its folder, 0700: prepareDir) and lock a lock file; never through a symbolic link, and
 * only a regular file (openRegular): a planted `.lock -> PATH` would create PATH
 */
export async function lockFile(path: string, opts: LockWaitOptions & { exclusive?: boolean; mode?: number }): Promise<HeldLock | "timeout"> {
  let fd: number;
  try {
    prepareDir(dirname(path)); // a workspace's .mam/ gets its .gitignore (mam-dir.ts)
    fd = openRegular(path, C.O_WRONLY | C.O_APPEND | C.O_CREAT, opts.mode ?? 0o600);
  } catch (e) {
    if (e instanceof MamError) throw e;
    // a read-only workspace: name its folder (.mam), not an internal error
    throw writeRefused(e, dirname(path)) ?? e;
  }
  try {
    const r = await flockWait(fd, opts, opts.exclusive ?? true);
    if (r === "timeout") {
      closeSync(fd);
      return "timeout";
    }
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  let open = true;
  return {
    fd,
    path,
    close() {
      if (open) {
        open = false;
        closeSync(fd);
      }
    },
  };
}

/** a lock taken for the length of fn */
export async function withLock<T>(path: string, what: string, budgetMs: number, fn: () => T | Promise<T>): Promise<T> {
  const held = await lockFile(path, { budgetMs });
  if (held === "timeout") {
    throw new MamError(`timed out after ${Math.round(budgetMs / 1000)} s waiting for the ${what} lock (${path})`, EXIT.TIMEOUT);
  }
  try {
    return await fn();
  } finally {
    held.close();
  }
}
