// An agent at a usage limit (docs/unattended.md), as its registry row says: the `limit` field a
// daemon reaction writes when it sees the limit (absent: not limited), what the row asked mam to
// do then (`on_limit`, from `mam create --on-limit`), and the pure decisions of a resume at reset:
// when to type the agent's "continue" (after the reset, with a jitter so ten agents do not hit the
// provider at the same second; on an unknown reset, on a backoff), and how many a day. Pure: no I/O.
import type { LimitBlock, Row } from "../registry/types.ts";

/** a row's `limit`: since when the agent is limited, when its window resets (null: unknown), why, seen where */
export type Limit = LimitBlock;

const isIso = (v: unknown): v is string => typeof v === "string" && v !== "" && Number.isFinite(Date.parse(v));

/** the row's limit when it has a well-formed one (an ill-formed one counts as none) */
export function limitOf(row: Pick<Row, "limit"> | Record<string, unknown>): Limit | undefined {
  const l = (row as Record<string, unknown>).limit;
  if (typeof l !== "object" || l === null || Array.isArray(l)) return undefined;
  const o = l as Record<string, unknown>;
  if (!isIso(o.since) || !(o.resets_at === null || o.resets_at === undefined || isIso(o.resets_at))) return undefined;
  if (typeof o.reason !== "string" || (o.source !== "records" && o.source !== "screen")) return undefined;
  if (o.used_percent !== undefined && !(typeof o.used_percent === "number" && Number.isFinite(o.used_percent))) return undefined;
  return { since: o.since, resets_at: (o.resets_at as string | null | undefined) ?? null, reason: o.reason, source: o.source, ...(o.used_percent !== undefined ? { used_percent: o.used_percent as number } : {}) };
}

export const ON_LIMIT = ["wait", "resume", "failover"] as const;
export type OnLimit = (typeof ON_LIMIT)[number];

/** what the row asked mam to do at a limit (`create --on-limit`; absent: wait) */
export function onLimitOf(row: Record<string, unknown>): OnLimit {
  const v = row.on_limit;
  return v === "resume" || v === "failover" ? v : "wait";
}

// ---- resume at reset -----------------------------------------------------------------------------

/** the waits between two attempts when the reset time is unknown (or an attempt did not end the limit): 1 m, 5 m, 15 m, then every hour */
export const RESUME_BACKOFF_S = [60, 300, 900, 3600] as const;
/** the most resumes mam types into one agent per UTC day (by itself or by `mam resume --limited`) */
export const RESUMES_PER_DAY = 8;
/** the default jitter's upper bound, in seconds (MAM_LIMIT_JITTER_S); its lower bound is a third of it */
export const DEFAULT_JITTER_S = 90;

/** what mam keeps on the row about its resumes (`limit_resume`): of which limit, how many, the last when, per UTC day */
export interface ResumeLog {
  /** the limit's `since` the attempts were for */
  since: string;
  /** attempts at this limit */
  attempts: number;
  /** epoch seconds of the last attempt */
  last_at: number;
  /** the UTC day (YYYY-MM-DD) `today` counts */
  day: string;
  today: number;
  /**
   * the limit mam resumes the agent from, kept: the daemon lifts the row's `limit` as soon as its
   * reset time has passed, before the jitter is over and while the agent still sits at its prompt
   */
  limit?: Limit;
}

export function resumeLogOf(row: Record<string, unknown>): ResumeLog | undefined {
  const v = row.limit_resume;
  if (typeof v !== "object" || v === null) return undefined;
  const o = v as Record<string, unknown>;
  if (typeof o.since !== "string" || typeof o.day !== "string" || !Number.isSafeInteger(o.attempts) || !Number.isSafeInteger(o.today) || typeof o.last_at !== "number") return undefined;
  const limit = limitOf({ limit: o.limit });
  return { since: o.since, attempts: o.attempts as number, last_at: o.last_at, day: o.day, today: o.today as number, ...(limit ? { limit } : {}) };
}

/** the log that keeps `limit` (a new limit: no attempt at it yet) */
export function rememberLimit(was: ResumeLog | undefined, limit: Limit, now: number): ResumeLog {
  const same = was?.since === limit.since;
  return { since: limit.since, attempts: same ? was.attempts : 0, last_at: same ? was.last_at : now, day: was?.day ?? utcDay(now), today: was?.today ?? 0, limit };
}

/**
 * pure: the limit to resume the agent from: the row's own; else the one kept, when the row's was
 * lifted at its reset time and nothing was typed for it yet (lifted before its reset time: a turn
 * was answered, the agent is back). `keep`: the log to write first (undefined: as it is).
 */
export function resumeTarget(current: Limit | undefined, log: ResumeLog | undefined, now: number): { limit?: Limit; keep?: ResumeLog } {
  if (current) {
    const kept = log?.limit;
    const same = kept !== undefined && kept.since === current.since && kept.resets_at === current.resets_at;
    return { limit: current, ...(same ? {} : { keep: rememberLimit(log, current, now) }) };
  }
  const kept = log?.limit;
  if (!kept) return {};
  const attempted = log!.since === kept.since && log!.attempts > 0;
  if (kept.resets_at !== null && now >= Date.parse(kept.resets_at) / 1000 && !attempted) return { limit: kept };
  const { limit: _drop, ...rest } = log!;
  return { keep: rest };
}

export const utcDay = (epochS: number): string => new Date(epochS * 1000).toISOString().slice(0, 10);

/** the log after one more attempt at `limit`, at `now` */
export function logAttempt(was: ResumeLog | undefined, limit: Limit, now: number): ResumeLog {
  const day = utcDay(now);
  const same = was?.since === limit.since;
  return { since: limit.since, attempts: (same ? was.attempts : 0) + 1, last_at: now, day, today: (was?.day === day ? was.today : 0) + 1, ...(was?.limit ? { limit: was.limit } : {}) };
}

/** attempts left today */
export function resumesLeftToday(log: ResumeLog | undefined, now: number, perDay = RESUMES_PER_DAY): number {
  return Math.max(0, perDay - (log?.day === utcDay(now) ? log.today : 0));
}

/**
 * the jitter of one agent's limit, in seconds: spread over [max/3, max] by a hash of the agent's
 * name and the limit's start (the same each time it is asked, so a daemon restart keeps it)
 */
export function jitterS(key: string, max: number = DEFAULT_JITTER_S): number {
  if (!(max > 0)) return 0;
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619) >>> 0;
  const lo = max / 3;
  return Math.round(lo + ((h % 10_000) / 9_999) * (max - lo));
}

/** MAM_LIMIT_JITTER_S: the jitter's upper bound in seconds (whole, ≥ 0; 0: none); anything else: the default */
export function jitterMax(raw: string | undefined): number {
  return raw !== undefined && /^\d+$/.test(raw.trim()) ? Number(raw) : DEFAULT_JITTER_S;
}

/**
 * when (epoch seconds) mam may type the agent's "continue" for this limit: with a known reset,
 * once it has passed, plus the jitter and the kind's own auto-continue margin (claude 2.1.332
 * continues by itself at the reset + 30–90 s: mam comes after it, and sees it at work); with an
 * unknown one, on the backoff from the limit's start. After an attempt that did not end the limit,
 * the next comes on the backoff from that attempt.
 */
export function resumeDueAt(limit: Limit, log: ResumeLog | undefined, jitter: number, marginS = 0): number {
  const since = Date.parse(limit.since) / 1000;
  const attempts = log?.since === limit.since ? log.attempts : 0;
  if (attempts > 0) return log!.last_at + RESUME_BACKOFF_S[Math.min(attempts, RESUME_BACKOFF_S.length - 1)]!;
  if (limit.resets_at !== null) return Date.parse(limit.resets_at) / 1000 + jitter + marginS;
  return since + RESUME_BACKOFF_S[0];
}

export type ResumeDecision = { type: true } | { type: false; why: string };

/** pure: type "continue" now? (a limit, its time has come, attempts left today) */
export function resumeNow(limit: Limit | undefined, log: ResumeLog | undefined, now: number, jitter: number, marginS = 0, perDay = RESUMES_PER_DAY): ResumeDecision {
  if (!limit) return { type: false, why: "not limited" };
  const due = resumeDueAt(limit, log, jitter, marginS);
  if (now < due) return { type: false, why: `not before ${new Date(due * 1000).toISOString()}` };
  if (resumesLeftToday(log, now, perDay) === 0) return { type: false, why: `${perDay} resumes today already` };
  return { type: true };
}
