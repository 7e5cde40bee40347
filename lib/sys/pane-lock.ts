// The per-herdr-server pane-claim lock (SPEC §4): its wait budget, `acquire` on a caller's
// descriptor, and an in-process claim. `mam pane-lock acquire` (the herdr shim runs it many times
// a minute) needs only the first two: they load flock.ts and nothing else; the claim loads the
// lock-file code when it runs.
import { checkFd, flockWait, tryFlock } from "./flock.ts";
import { EXIT, MamError, usageError } from "./errors.ts";
import { field } from "./fields.ts";
import type { HeldLock } from "./lock-file.ts";
import type { Env } from "./paths.ts";

export const DEFAULT_PANE_CLAIM_WAIT_S = 120;

/** MAM_PANE_CLAIM_WAIT_S read as a decimal integer >= 1; anything else means 120 */
export function paneClaimWaitSeconds(env: Env = process.env): number {
  const v = env.MAM_PANE_CLAIM_WAIT_S;
  if (v === undefined || !/^\d+$/.test(v)) return DEFAULT_PANE_CLAIM_WAIT_S;
  const n = Number.parseInt(v, 10);
  return n >= 1 ? n : DEFAULT_PANE_CLAIM_WAIT_S;
}

/**
 * `acquire --fd N` (SPEC §4.2): an exclusive flock on the caller's open descriptor `raw`, within
 * the wait budget. A free lock is taken at the first try, before the budget (the environment) or
 * the clock is read: the shim's usual case costs the flock call alone.
 */
export async function acquireOnFd(raw: string, env?: Env): Promise<"locked" | "timeout"> {
  if (!/^\d+$/.test(raw)) throw usageError(`invalid descriptor '${raw}'`, `pass ${field("fd")} N with an open descriptor number`);
  const fd = checkFd(Number(raw));
  if (tryFlock(fd)) return "locked";
  return flockWait(fd, { budgetMs: paneClaimWaitSeconds(env ?? process.env) * 1000, maxPollMs: 20 });
}

/** take a server's pane-claim lock in this process (the same file `mam pane-lock` uses) */
export async function claimPaneLock(server: string, env: Env = process.env): Promise<HeldLock> {
  const [{ paneLockPath }, { lockFile }] = await Promise.all([import("./paths.ts"), import("./lock-file.ts")]);
  const path = paneLockPath(server, env);
  const wait = paneClaimWaitSeconds(env);
  const held = await lockFile(path, { budgetMs: wait * 1000, maxPollMs: 20 });
  if (held === "timeout") {
    throw new MamError(
      `gave up after ${wait} s waiting for the pane-claim lock of herdr server '${server}'`,
      EXIT.TIMEOUT,
      "raise MAM_PANE_CLAIM_WAIT_S to wait longer",
    );
  }
  return held;
}
