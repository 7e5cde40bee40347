// The status use case (`mam status`, the MCP tool, the dashboard, the demo): the registry next to
// the multiplexers' view of it, with each row's job and worktree. Read-only.
import { existsSync } from "node:fs";
import type { JobEvent } from "../../jobs/event.ts";
import { effectiveStatus, type JobStore } from "../../jobs/store.ts";
import { type RegistryData, type Row, SECTIONS } from "../../registry/types.ts";
import { isValidJobId } from "../../sys/names.ts";
import { hostName, localPart } from "../../team/host.ts";
import type { Deps } from "../deps.ts";
import { observe } from "./observe.ts";
import { rowAgent } from "../../fleet/rows.ts";
import type { SessionCost } from "../../cost/summary.ts";
import { type JobRef, type StatusDoc, statusDoc, type WorktreeStatus } from "./status.ts";

/** the job of a row: its delegate_job_id, when that job record exists */
function jobReader(jobs: JobStore) {
  return (row: Row): JobRef | null => {
    const id = row.delegate_job_id;
    if (typeof id !== "string" || !isValidJobId(id)) return null;
    try {
      const rec = jobs.read(id);
      // the journal is the truth; the record's status is a cache
      return rec ? { id, status: effectiveStatus(rec, jobs.journal(id)) } : { id, status: "unknown" };
    } catch {
      return { id, status: "unreadable" };
    }
  };
}

/**
 * the worktrees of the rows that have one (git is asked for no other row), all at once; the
 * ahead/behind/changed counts only when `counts` (--json)
 */
async function worktreeStatuses(deps: Deps, data: RegistryData, counts: boolean): Promise<Map<Row, WorktreeStatus>> {
  const m = new Map<Row, WorktreeStatus>();
  const withWt = SECTIONS.flatMap((section) => data[section].filter((r) => r.worktree !== undefined).map((row) => ({ section, row })));
  if (withWt.length === 0) return m;
  const [{ worktreeOf }, { headOf, viewOf }] = await Promise.all([import("../../worktrees/plan.ts"), import("../worktree.ts")]);
  const head = counts ? headOf(deps.ws, deps.git) : undefined;
  await Promise.all(
    withWt.map(async ({ section, row }) => {
      const wt = worktreeOf(row);
      if (!wt) return;
      const v = await viewOf(section, row, wt, head, deps.git, counts);
      m.set(row, { path: v.path, branch: v.branch, base: v.base, exists: v.exists, ahead: v.ahead, behind: v.behind, changed: v.changed });
    }),
  );
  return m;
}

/**
 * the newest job per session (agent_session), when the row names none; a copy of another host's
 * job (docs/machines.md) is the job of whichever of its sessions is on this host
 */
function latestJobs(jobs: JobStore, host: string): Map<string, JobRef> {
  const m = new Map<string, JobRef>();
  if (!existsSync(jobs.dir)) return m;
  const recs = jobs
    .ids()
    .map((id) => {
      try {
        return jobs.read(id);
      } catch {
        return undefined;
      }
    })
    .filter((r) => r !== undefined)
    .sort((a, b) => (a!.created_at < b!.created_at ? -1 : 1));
  // jobs waiting their turn are counted beside the session's job (the oldest of them is shown
  // when it has no other)
  const waiting = new Map<string, JobRef[]>();
  for (const r of recs) {
    const evs = jobs.journal(r!.job_id);
    const ref = { id: r!.job_id, status: effectiveStatus(r!, evs) };
    // a job that ended while it waited its turn (cancelled in the queue) never was its agent's
    if (ref.status !== "queued" && neverDispatched(evs)) continue;
    const names = !r!.remote_of ? [r!.agent_session] : [r!.agent_session, r!.reviewer_session].flatMap((s) => (s === null ? [] : [localPart(s, host)].filter((x): x is string => x !== undefined)));
    for (const n of names) {
      if (ref.status === "queued") waiting.set(n, [...(waiting.get(n) ?? []), ref]);
      else m.set(n, ref);
    }
  }
  for (const [n, refs] of waiting) {
    const shown = m.get(n) ?? refs[0]!;
    const more = refs.filter((x) => x !== shown).length;
    m.set(n, more ? { ...shown, queued: more } : shown);
  }
  return m;
}

/** pure: a job that waited its turn (queued) and never got it (no `dispatched`) */
export function neverDispatched(events: readonly Pick<JobEvent, "event">[]): boolean {
  return events.some((e) => e.event === "queued") && !events.some((e) => e.event === "dispatched");
}

/**
 * each session's usage (docs/cost.md) from the daemon's ledger, at the user's prices, and whether
 * it is over its daily cap today (what the queue and job submit check: ../job/cap.ts, the same rule)
 */
async function usageReader(deps: Deps): Promise<{ usage: (row: Row, job: JobRef | null) => SessionCost; cap: (row: Row) => string | undefined }> {
  const [{ readLedger, dayOf }, { loadPrices }, { sessionCost }, { dailyCapCheck, dailyLimits, hasLimits }] = await Promise.all([
    import("../../cost/ledger.ts"),
    import("../../cost/prices.ts"),
    import("../../cost/summary.ts"),
    import("../../cost/budget.ts"),
  ]);
  const ledger = readLedger(deps.ws);
  const prices = loadPrices(deps.env);
  const now = deps.clock.ms();
  return {
    usage: (row, job) => sessionCost(ledger, row.name, rowAgent(row) ?? null, job?.id ?? null, prices, now),
    cap(row) {
      const lim = dailyLimits(row);
      if (!hasLimits(lim)) return undefined;
      const c = dailyCapCheck(ledger, row.name, lim, prices, now);
      return c.over ? `${c.detail} (UTC day ${dayOf(now)})` : undefined;
    },
  };
}

/**
 * The status of every session. `counts`: also each worktree's ahead/behind/changed (what JSON
 * shows). `jobOf` replaces reading the job records for the JOB column (mam ui has them in
 * memory); by default a row's delegate_job_id, else its newest job. `usage`: each session's
 * this-job / today / total (what `mam status`, MCP and the dashboard show; the team's presence does not).
 */
export async function sessionStatus(deps: Deps, counts = true, jobOf?: (row: Row) => JobRef | null, usage = true): Promise<StatusDoc> {
  const data = deps.registry.read();
  const [obs, wts, costs] = await Promise.all([observe(deps, data, [], { questions: true }), worktreeStatuses(deps, data, counts), usage ? usageReader(deps) : undefined]);
  const own = jobReader(deps.jobs);
  let latest: Map<string, JobRef> | undefined;
  return statusDoc(deps.ws, deps.registry.path, obs, jobOf ?? ((row) => own(row) ?? (latest ??= latestJobs(deps.jobs, hostName(deps.env))).get(row.name) ?? null), (row) => wts.get(row), costs?.usage, deps.clock.epoch(), costs?.cap);
}
