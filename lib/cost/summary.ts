// What users see of usage (docs/cost.md): a job's (job status, job list, MCP, the dashboard), a
// session's this-job / today / total (mam status), and the team's spend per hour (the dashboard).
// From the job record's counts, the `usage` events another host sent for its part of a job, and
// the ledger. A session of a kind whose records mam cannot read is unknown, never 0. Pure.
import { KINDS } from "../agents/kinds/index.ts";
import { bucketOf, dayOf, type JobUsage, type Ledger } from "./ledger.ts";
import type { PriceTable } from "./prices.ts";
import { asByModel, type ByModel, mergeModels, tokensOf, totalOf } from "./tokens.ts";
import { unknownUsage, type UsageView, usageView } from "./view.ts";

/** can mam read this kind's usage? */
export const meterable = (kind: string | null | undefined): boolean => typeof kind === "string" && Object.hasOwn(KINDS, kind) && KINDS[kind]!.usage !== null;

export const cannotRead = (kind: string | null | undefined) => `mam cannot read the records of ${kind ?? "an unknown agent kind"}`;

export const NOT_METERED = "not metered yet: the workspace's daemon counts usage";

/** a session that reported on a job while the meter counted none of its answers */
export const NOT_FOUND = "it reported on the job, but mam has found none of its answers in its conversation files (docs/cost.md: where mam looks)";

/** did session `s` (the job's worker or reviewer) report on the job itself (an event it sent, not mam's or the daemon's)? */
function reported(rec: JobLike, events: readonly EventLike[], s: string): boolean {
  const own = (e: EventLike) => e.source !== "mam" && !e.source.startsWith("mam@") && e.source !== "monitor";
  if (s === rec.reviewer_session) return events.some((e) => own(e) && e.source === s);
  return events.some((e) => own(e) && e.source !== rec.reviewer_session);
}

/** the parts of a job record the views read */
export interface JobLike {
  job_id: string;
  agent: string | null;
  agent_session: string;
  reviewer_session: string | null;
  reviewer_agent?: string | null;
  remote_of?: string;
  /** a pool job: agent is null until an agent of the role takes it */
  to_role?: string;
  usage?: JobUsage;
}

/** the parts of an event the views read */
export interface EventLike {
  event: string;
  source: string;
  origin?: string;
  data: { [k: string]: unknown };
}

export interface JobUsageView extends UsageView {
  by_session: Record<string, UsageView>;
  /** loop jobs: per iteration ("1", "2", …) */
  by_iteration: Record<string, UsageView>;
}

/** the counts another host reported for its part of a job: its last `usage` event per origin */
export function reportedUsage(events: readonly EventLike[]): JobUsage[] {
  const last = new Map<string, JobUsage>();
  for (const e of events) {
    if (e.event !== "usage" || e.source !== "mam") continue;
    const u = e.data.usage as { by_session?: unknown; by_iteration?: unknown } | undefined;
    if (!u || typeof u !== "object") continue;
    const bySession: Record<string, ByModel> = {};
    for (const [s, m] of Object.entries((u.by_session as Record<string, unknown>) ?? {})) bySession[s] = asByModel(m);
    const byIteration: Record<string, ByModel> = {};
    for (const [i, m] of Object.entries((u.by_iteration as Record<string, unknown>) ?? {})) byIteration[i] = asByModel(m);
    last.set(e.origin ?? "", { by_session: bySession, by_iteration: byIteration });
  }
  return [...last.values()];
}

const hostOf = (s: string) => s.slice(s.indexOf("@") + 1);

/** a job's usage: its own counts and what other hosts reported, at these prices */
export function jobUsageView(rec: JobLike, events: readonly EventLike[], prices: PriceTable): JobUsageView {
  const parts = [...(rec.usage ? [rec.usage] : []), ...(rec.remote_of ? [] : reportedUsage(events))];
  const sessions = [rec.agent_session, ...(rec.reviewer_session ? [rec.reviewer_session] : [])];
  const remote = (s: string) => s.includes("@") && !rec.remote_of;
  const kindOf = (s: string) => (s === rec.agent_session ? rec.agent : rec.reviewer_agent);
  const bySession: Record<string, ByModel> = {};
  const byIteration: Record<string, ByModel> = {};
  for (const p of parts) {
    for (const [s, m] of Object.entries(p.by_session)) bySession[s] = mergeModels(bySession[s], m);
    for (const [i, m] of Object.entries(p.by_iteration)) byIteration[i] = mergeModels(byIteration[i], m);
  }
  // a local session of a kind mam reads, that reported on the job (each report is a model answer
  // that ran a command), with no answer counted: the meter missed its conversation; unknown, never 0
  const unseen = (s: string) => !remote(s) && meterable(kindOf(s)) && reported(rec, events, s) && totalOf(tokensOf(bySession[s] ?? {})) === 0;
  // the sessions whose part cannot be known here
  const missing = sessions
    .map((s) =>
      unseen(s)
        ? `${s}: ${NOT_FOUND}`
        : parts.some((p) => p.by_session[s] !== undefined)
          ? undefined
          : remote(s)
            ? `${s}: costed on ${hostOf(s)}, no report yet`
            : !meterable(kindOf(s)) && kindOf(s) !== undefined
              ? `${s}: ${cannotRead(kindOf(s))}`
              : undefined,
    )
    .filter((x): x is string => x !== undefined);
  const counted = Object.entries(bySession).filter(([s]) => !unseen(s));
  if (parts.length === 0 || (missing.length && counted.every(([, m]) => totalOf(tokensOf(m)) === 0))) {
    const worker = rec.agent_session;
    const why =
      parts.length > 0 || unseen(worker)
        ? `not counted: ${missing.join("; ")}`
        : remote(worker)
          ? `costed on ${hostOf(worker)}: no report yet`
          : rec.agent === null && rec.to_role !== undefined
            ? `no agent of ${rec.to_role} has taken it yet`
            : !meterable(rec.agent)
              ? cannotRead(rec.agent)
              : NOT_METERED;
    return { ...unknownUsage(why), by_session: {}, by_iteration: {} };
  }
  for (const s of sessions) if (unseen(s)) delete bySession[s];
  const all = usageView(mergeModels(...Object.values(bySession)), prices);
  const views = (r: Record<string, ByModel>) => Object.fromEntries(Object.entries(r).map(([k, m]) => [k, usageView(m, prices)]));
  return { ...all, ...(missing.length ? { why: `not counted: ${missing.join("; ")}` } : {}), by_session: views(bySession), by_iteration: views(byIteration) };
}

/** a session's usage as `mam status` shows it */
export interface SessionCost {
  /** its part of the job it runs (null: none) */
  job: UsageView | null;
  /** the current UTC day */
  today: UsageView;
  total: UsageView;
}

/** a session's this-job / today / total from the ledger */
export function sessionCost(ledger: Ledger | "none" | "broken", name: string, kind: string | null, jobId: string | null, prices: PriceTable, now: number): SessionCost {
  const all = (why: string): SessionCost => ({ job: jobId ? unknownUsage(why) : null, today: unknownUsage(why), total: unknownUsage(why) });
  if (!meterable(kind)) return all(cannotRead(kind));
  if (ledger === "broken") return all("the usage ledger .mam/usage.json is not readable; the daemon counts again");
  const s = ledger === "none" ? undefined : ledger.sessions[name];
  if (!s || ledger === "none") return all(NOT_METERED);
  const j = jobId ? ledger.jobs[jobId]?.by_session[name] : undefined;
  return {
    job: jobId ? usageView(j ?? {}, prices) : null,
    today: usageView(s.days[dayOf(now)] ?? {}, prices),
    total: usageView(s.total, prices),
  };
}

/** the team's spend per hour: what every session used in the last hour (10-minute buckets) */
export interface TeamRate {
  usd_per_hour: number | null;
  tokens_per_hour: number;
  /** how many minutes the buckets span (up to 60) */
  minutes: number;
}

export function teamRate(ledger: Ledger | "none" | "broken", prices: PriceTable, now: number): TeamRate {
  if (ledger === "none" || ledger === "broken") return { usd_per_hour: 0, tokens_per_hour: 0, minutes: 0 };
  const first = bucketOf(now - 50 * 60_000);
  const spent = mergeModels(...Object.values(ledger.sessions).flatMap((s) => Object.entries(s.recent).filter(([b]) => b >= first).map(([, m]) => m)));
  // the buckets from `first` to now: 50 to 60 minutes
  const minutes = Math.max(1, (now - Date.parse(`${first}:00Z`)) / 60_000);
  const v = usageView(spent, prices);
  const per = 60 / minutes;
  return { usd_per_hour: v.usd === null ? null : v.usd * per, tokens_per_hour: Math.round((v.tokens?.total ?? 0) * per), minutes: Math.round(minutes) };
}
