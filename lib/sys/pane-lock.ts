// The per-herdr-server pane-claim lock (SPEC §4): its wait budget and an in-process claim.
import { lockFile, type HeldLock } from "./flock.ts";
import { EXIT, MamError } from "./errors.ts";
import { type Env, paneLockPath } from "./paths.ts";

export const DEFAULT_PANE_CLAIM_WAIT_S = 120;

/** MAM_PANE_CLAIM_WAIT_S read as a decimal integer >= 1; anything else means 120 */
export function paneClaimWaitSeconds(env: Env = process.env): number {
  const v = env.MAM_PANE_CLAIM_WAIT_S;
  if (v === undefined || !/^\d+$/.test(v)) return DEFAULT_PANE_CLAIM_WAIT_S;
  const n = Number.parseInt(v, 10);
  return n >= 1 ? n : DEFAULT_PANE_CLAIM_WAIT_S;
}

/** take a server's pane-claim lock in this process (the same file `mam pane-lock` uses) */
export async function claimPaneLock(server: string, env: Env = process.env): Promise<HeldLock> {
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
