// Resume at reset (docs/unattended.md#resume-at-reset): type a limited agent's own "continue"
// (its kind's continueAtReset.text) so that it goes on with its work once its usage limit has reset. Only
// at its prompt: never into a dialog, never into an agent at work (it went on by itself), never
// into a gone one. Each attempt is kept on the row (`limit_resume`: the per-day count and the
// backoff read it) and journalled as `resume_attempt` on the job the agent works on. Behind the
// daemon's limit.resume reaction (when the time has come, lib/fleet/limit.ts) and `mam resume
// --limited` (now, by hand).
import { agentKind } from "../../agents/kinds/index.ts";
import { type Limit, limitOf, logAttempt, onLimitOf, type ResumeLog, resumeLogOf, resumeTarget } from "../../fleet/limit.ts";
import { policyView } from "../../fleet/policy.ts";
import { rowAgent } from "../../fleet/rows.ts";
import { endsJob } from "../../jobs/event.ts";
import { isRemote } from "../../jobs/runtime.ts";
import { isFinal } from "../../jobs/statuses.ts";
import { type Appended, effectiveStatus, type JobRecord } from "../../jobs/store.ts";
import { allRows } from "../../registry/rows.ts";
import type { Row } from "../../registry/types.ts";
import { notFound } from "../../sys/errors.ts";
import type { Notice } from "../../sys/notice.ts";
import { recordKey } from "../../sys/record-key.ts";
import type { Deps } from "../deps.ts";

export interface Continued {
  name: string;
  /** the job it works on, whose journal got `resume_attempt` (null: none) */
  job_id: string | null;
  /** the `resume_attempt` event (publish it) */
  appended?: Appended;
  record?: JobRecord;
}

export interface ResumedLimited {
  continued: Continued[];
  /** the limited agents nothing was typed into, and why */
  left: { name: string; why: string }[];
  warnings: Notice[];
}

/** the running rows at a usage limit (of these names, when given), by name */
export function limitedRows(deps: Deps, names?: readonly string[]): { row: Row; limit: Limit }[] {
  const out: { row: Row; limit: Limit }[] = [];
  for (const row of allRows(deps.registry.read())) {
    if (row.status !== "running" || (names && !names.includes(row.name))) continue;
    const limit = limitOf(row);
    if (limit) out.push({ row, limit });
  }
  return out.sort((a, b) => (a.row.name < b.row.name ? -1 : 1));
}

/**
 * the rows whose agents the daemon resumes at the reset (`create --on-limit resume`), each with
 * the limit to resume it from (its own, or the one kept after the daemon lifted it at its reset
 * time: resumeTarget) and the log to keep first
 */
export function resumableRows(deps: Deps, now: number): { row: Row; limit?: Limit; keep?: ResumeLog }[] {
  const out: { row: Row; limit?: Limit; keep?: ResumeLog }[] = [];
  const key = recordKey(deps.env, false);
  for (const row of allRows(deps.registry.read())) {
    // on_limit resume types into the agent: only when this user's mam wrote it (lib/fleet/policy.ts)
    if (row.status !== "running" || onLimitOf(policyView(row, key, deps.ws)) !== "resume") continue;
    const t = resumeTarget(limitOf(row), resumeLogOf(row), now);
    if (t.limit || t.keep) out.push({ row, ...t });
  }
  return out;
}

/** write the row's resume log (the registry's one writer) */
export async function keepResumeLog(deps: Deps, name: string, log: ResumeLog): Promise<void> {
  await deps.registry.mutate((d) => {
    for (const row of allRows(d)) if (row.name === name && row.status === "running") row.limit_resume = log;
  });
}

/** the unfinished job the agent works on (not one waiting its turn), if any */
function currentJob(deps: Deps, name: string): JobRecord | undefined {
  for (const id of deps.jobs.ids()) {
    let r: JobRecord | undefined;
    try {
      r = deps.jobs.read(id);
    } catch {
      continue;
    }
    if (!r || r.agent_session !== name || isFinal(r.status)) continue;
    const st = effectiveStatus(r, deps.jobs.journal(id));
    if (!isFinal(st) && st !== "queued") return r;
  }
  return undefined;
}

/**
 * type the agent's "continue" once, at its prompt only: a reason in `why` when nothing was typed
 * (no such kind's text, not running, at a dialog, at work, gone); `by` says who asked (journalled)
 */
export async function continueAgent(deps: Deps, l: { row: Row; limit: Limit }, by: "reset" | "hand"): Promise<Continued | { why: string }> {
  const name = l.row.name;
  const kind = rowAgent(l.row);
  let text: string | undefined;
  try {
    text = kind ? agentKind(kind).continueAtReset?.text : undefined;
  } catch {}
  if (text === undefined) return { why: `mam knows no "continue" message for ${kind ?? "its kind"}` };
  const s = await deps.runtime.findSession(name);
  if (!s || isRemote(s)) return { why: "its pane is not found" };
  if (s.gone) return { why: `its agent is gone (${s.gone})` };
  if (s.waiting) return { why: `it waits at ${s.waiting}` };
  if (s.working) {
    // it went on by itself (claude's own auto-continue): this limit needs nothing more from mam
    const was = resumeLogOf(l.row);
    if (by === "reset") await keepResumeLog(deps, name, { ...(was ?? { day: "", today: 0 }), since: l.limit.since, attempts: Math.max(1, was?.since === l.limit.since ? was.attempts : 0), last_at: deps.clock.epoch() });
    return { why: "it is at work (it went on by itself)" };
  }
  // counted before it is typed: a daemon tick that comes while it types sees the attempt
  const now = deps.clock.epoch();
  let attempt = 1;
  await deps.registry.mutate((d) => {
    for (const row of allRows(d)) {
      if (row.name !== name || row.status !== "running") continue;
      const log = logAttempt(resumeLogOf(row), l.limit, now);
      row.limit_resume = log;
      attempt = log.attempts;
    }
  });
  await deps.runtime.prompt(s, text);
  const job = currentJob(deps, name);
  if (!job) return { name, job_id: null };
  const until = l.limit.resets_at ? `its limit reset at ${l.limit.resets_at}` : "its limit's reset time is unknown";
  const appended = await deps.jobs.append(job.job_id, (r, evs) =>
    r && !evs.some((e) => endsJob(e, r))
      ? { event: "resume_attempt", detail: `typed ${JSON.stringify(text)} into ${name} (${by === "hand" ? "mam resume --limited" : until}; attempt ${attempt})`, source: "mam", data: { session: name, attempt, by, resets_at: l.limit.resets_at } }
      : undefined,
  );
  return { name, job_id: job.job_id, ...(appended ? { appended, record: appended.record ?? job } : {}) };
}

/** `mam resume --limited [NAME]`: type "continue" now into every limited agent (or NAME), at its prompt only */
export async function resumeLimitedNow(deps: Deps, name?: string): Promise<ResumedLimited> {
  const rows = limitedRows(deps, name !== undefined ? [name] : undefined);
  if (name !== undefined && rows.length === 0) {
    const known = allRows(deps.registry.read()).some((r) => r.name === name && r.status === "running");
    if (!known) throw notFound(`no running session named '${name}' in this workspace (${deps.ws})`, "see: mam status");
  }
  const out: ResumedLimited = { continued: [], left: [], warnings: [] };
  if (name !== undefined && rows.length === 0) out.left.push({ name, why: "it is not at a usage limit" });
  for (const l of rows) {
    try {
      const r = await continueAgent(deps, l, "hand");
      if ("why" in r) out.left.push({ name: l.row.name, why: r.why });
      else out.continued.push({ name: r.name, job_id: r.job_id });
    } catch (e) {
      out.left.push({ name: l.row.name, why: (e as Error).message });
    }
  }
  return out;
}
