// Dead agents come back, opt-in (docs/unattended.md#dead-agents): the pure model of a row's restart
// policy. `mam create --restart on-failure [--max-restarts N]` stores on the row
//   restart: on-failure        (absent: no)
//   max_restarts: N            (absent: DEFAULT_MAX_RESTARTS), per hour
// and the daemon (lib/ops/react/agents-restart.ts) keeps, on the same row,
//   restarts: [epoch, …]       when it restarted it (the last hour's)
//   restart_claim_epoch: E     a restart of this death is under way (claimed under the registry lock)
//   restart_gave_up_at(_epoch) it stopped trying: N restarts within the hour; the row stays terminated
// A death is a running row the reconcile model ended (`termination_mode: auto-detected`): its pane
// went, or its agent left it. A `mam stop` (soft or hard) is no death: stopped, or terminated `hard`.
import { stopInProgress } from "./apply.ts";
import type { Row } from "../registry/types.ts";
import { isoUtc } from "../sys/time.ts";

/** restarts per hour when `max_restarts` is not given */
export const DEFAULT_MAX_RESTARTS = 3;
/** the window the restarts are counted in */
export const RESTART_WINDOW_S = 3600;
/**
 * a claim older than this is a restart that never finished (its daemon was killed mid-resume):
 * the next daemon may claim the death again
 */
export const RESTART_CLAIM_STALE_S = 300;

/** the keys the daemon keeps on a row; a user's `mam resume` clears them (the count starts again) */
export const RESTART_STATE_KEYS = ["restarts", "restart_claim_epoch", "restart_gave_up_at", "restart_gave_up_epoch"];

/** the row's policy: on (on-failure) or not, and its restarts per hour */
export function restartPolicy(row: Pick<Row, "restart" | "max_restarts">): { on: boolean; max: number } {
  const max = typeof row.max_restarts === "number" && Number.isSafeInteger(row.max_restarts) && row.max_restarts >= 1 ? row.max_restarts : DEFAULT_MAX_RESTARTS;
  return { on: row.restart === "on-failure", max };
}

/** the restart times of the last hour (before `now`, within RESTART_WINDOW_S) */
export function restartsWithin(row: Row, now: number): number[] {
  const all = Array.isArray(row.restarts) ? row.restarts.filter((t): t is number => typeof t === "number" && Number.isFinite(t)) : [];
  return all.filter((t) => t > now - RESTART_WINDOW_S && t <= now);
}

export const gaveUp = (row: Row): boolean => typeof row.restart_gave_up_at === "string";

/** the row ended by itself (the reconcile model saw its pane or agent go), not by a `mam stop` */
export function died(row: Row, now: number): boolean {
  return row.status === "terminated" && row.termination_mode === "auto-detected" && !stopInProgress(row, now);
}

/** a restart of this row is under way (claimed, and not stale) */
export function claimed(row: Row, now: number): boolean {
  return typeof row.restart_claim_epoch === "number" && now - row.restart_claim_epoch < RESTART_CLAIM_STALE_S;
}

/**
 * the daemon may still bring this row back (policy on, not given up): a running row, or one that
 * died. Its job's watch waits for the restart instead of ending the job ("agent exited").
 */
export function restartable(row: Row, now: number): boolean {
  return restartPolicy(row).on && !gaveUp(row) && (row.status === "running" || died(row, now));
}

export type RestartDecision =
  | { kind: "none"; why: string }
  | { kind: "restart"; attempt: number; max: number }
  | { kind: "give-up"; attempts: number; max: number };

/**
 * pure: what to do with a row now. A row that died with restart on-failure is restarted while it
 * has had fewer than max restarts in the last hour, else given up on (once: a row given up on is
 * left alone until a user's resume). Stopped rows, a hard stop, a stop in progress, a row whose
 * restart is under way: nothing.
 */
export function decideRestart(row: Row, now: number): RestartDecision {
  const p = restartPolicy(row);
  if (!p.on) return { kind: "none", why: "restart is not on-failure" };
  if (row.status === "running") return { kind: "none", why: "running" };
  if (!died(row, now)) return { kind: "none", why: row.status === "terminated" ? `ended by a stop (${String(row.termination_mode ?? "?")})` : `${row.status} by a user` };
  if (gaveUp(row)) return { kind: "none", why: "gave up restarting" };
  if (claimed(row, now)) return { kind: "none", why: "a restart is under way" };
  const n = restartsWithin(row, now).length;
  if (n >= p.max) return { kind: "give-up", attempts: n, max: p.max };
  return { kind: "restart", attempt: n + 1, max: p.max };
}

/**
 * the decision written on the row (under the registry lock: the write is the claim, so that one
 * death is restarted at most once whoever else looks): a restart is counted and claimed; a give-up
 * marked. Returns the decision.
 */
export function claimRestart(row: Row, now: number): RestartDecision {
  const d = decideRestart(row, now);
  if (d.kind === "restart") {
    row.restarts = [...restartsWithin(row, now), now];
    row.restart_claim_epoch = now;
  } else if (d.kind === "give-up") {
    row.restarts = restartsWithin(row, now);
    delete row.restart_claim_epoch;
    row.restart_gave_up_at = isoUtc(now);
    row.restart_gave_up_epoch = now;
  }
  return d;
}

/** what `mam status` says of a row's restarts: "restarting (2/3 this hour)", "gave up restarting", or nothing */
export function restartState(row: Row, now: number): string | undefined {
  const p = restartPolicy(row);
  if (!p.on) return undefined;
  if (gaveUp(row)) return "gave up restarting";
  const n = restartsWithin(row, now).length;
  if (n === 0 && !(died(row, now) && row.status !== "running")) return undefined;
  return `restarting (${n}/${p.max} this hour)`;
}
