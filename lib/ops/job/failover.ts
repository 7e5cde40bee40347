// Failover (docs/unattended.md#failover), its I/O side: the jobs whose agent is at a usage limit
// (its registry row's `limit`) and that may move (the job's `failover` targets, or the agent's
// `create --on-limit failover`: its role, else any agent) go to a free agent of those targets.
// The decision and the `failover` event are taken under the dispatch lock, as the queue's are
// (./queue.ts), so no agent ever gets two jobs at once; the typing comes after, outside it, through
// the queue's own typeDispatched (only at the prompt, never into a dialog). No free target: the
// job stays, `failover_waiting` is journalled once, and the next look tries again.
import { readsCommands } from "../../agents/kinds/index.ts";
import { limitOf, type Limit, onLimitOf } from "../../fleet/limit.ts";
import { policyView } from "../../fleet/policy.ts";
import { rowAgent } from "../../fleet/rows.ts";
import { recordKey } from "../../sys/record-key.ts";
import { endsJob } from "../../jobs/event.ts";
import { ANY_AGENT, type Candidate, failoverPreface, heldBefore, pickFailover, reportedSoFar, waitingSaid } from "../../jobs/failover.ts";
import { busySession } from "../../jobs/loop.ts";
import { isFinal } from "../../jobs/statuses.ts";
import { type Appended, effectiveStatus, type JobRecord } from "../../jobs/store.ts";
import { allRows } from "../../registry/rows.ts";
import type { Row } from "../../registry/types.ts";
import type { Deps } from "../deps.ts";
import { type Dispatched, freeAgents, kindOf, readQueue, textForAgent } from "./queue.ts";

interface Limited {
  row: Row;
  limit: Limit;
}

/** a job on a limited agent that may move: to these targets */
interface Movable {
  record: JobRecord;
  from: Limited;
  targets: string[];
}

export interface FailoverPass {
  /** the jobs handed to another agent (type each: typeDispatched), with their `failover` event */
  moved: Dispatched[];
  /** the `failover_waiting` events journalled now (publish them) */
  waiting: { job_id: string; record: JobRecord; appended: Appended }[];
  /** jobs that wait for a free target */
  left: number;
}

/** pure: where a job on a limited agent may go: its own targets, else the agent's `--on-limit failover` (its role, then anyone), else nowhere */
export function targetsOf(record: Pick<JobRecord, "failover">, row: Row): string[] {
  if (record.failover?.length) return record.failover;
  if (onLimitOf(row) !== "failover") return [];
  return typeof row.role === "string" && row.role !== "" ? [row.role, ANY_AGENT] : [ANY_AGENT];
}

/** the running agents at a usage limit, by name */
function limitedAgents(rows: Row[]): Map<string, Limited> {
  const out = new Map<string, Limited>();
  for (const row of rows) {
    if (row.status !== "running") continue;
    const limit = limitOf(row);
    if (limit) out.set(row.name, { row, limit });
  }
  return out;
}

/** the unfinished jobs of this host whose agent is limited and which may move */
function movableJobs(deps: Deps, limited: Map<string, Limited>): Movable[] {
  const out: Movable[] = [];
  for (const id of deps.jobs.ids()) {
    let r: JobRecord | undefined;
    try {
      r = deps.jobs.read(id);
    } catch {
      continue; // a broken record is job status's to report
    }
    if (!r || r.remote_of || isFinal(r.status)) continue;
    const from = limited.get(r.agent_session);
    if (!from) continue;
    // only a job this user's mam wrote moves: a shipped record (a cloned repository's) never gets
    // its prompt typed into another agent (docs/security.md)
    if (deps.jobs.notOwn(r) !== undefined) continue;
    const targets = targetsOf(r, from.row);
    if (targets.length === 0) continue;
    const events = deps.jobs.journal(id);
    const status = effectiveStatus(r, events);
    // a job waiting its turn is the queue's; a loop job at its review waits on the reviewer
    if (isFinal(status) || status === "queued" || busySession(r, events) !== r.agent_session) continue;
    out.push({ record: r, from, targets });
  }
  return out;
}

/**
 * Under the dispatch lock: hand each job of a limited agent that may move to a free agent of its
 * targets (journal `failover`, the record then names the new agent), or journal
 * `failover_waiting` once. Returns what moved, to be typed, and what to publish.
 */
export async function failoverLimited(deps: Deps, host: string | undefined): Promise<FailoverPass> {
  // a row's on_limit failover counts only when this user's mam wrote it (lib/fleet/policy.ts)
  const key = recordKey(deps.env, false);
  const rows = allRows(deps.registry.read()).map((r) => policyView(r, key, deps.ws));
  const limited = limitedAgents(rows);
  const none: FailoverPass = { moved: [], waiting: [], left: 0 };
  if (limited.size === 0) return none;
  if (movableJobs(deps, limited).length === 0) return none;
  return deps.jobs.dispatchLock(async () => {
    const jobs = movableJobs(deps, limited);
    const q = readQueue(deps.jobs, host);
    const busy = new Set(q.busy);
    // who could take a job: running here, not limited, not a shell (a job's text is prose), nobody waiting for it
    const pool = new Map<string, Candidate>();
    for (const row of rows) {
      const kind = rowAgent(row) ?? null;
      if (row.status !== "running" || limited.has(row.name) || readsCommands(kind ?? undefined) || q.waiting.some((w) => w.to === row.name)) continue;
      pool.set(row.name, { name: row.name, role: typeof row.role === "string" ? row.role : null, kind });
    }
    const out: FailoverPass = { moved: [], waiting: [], left: 0 };
    for (const m of jobs) {
      const wanted = new Set([...pool.values()].filter((c) => !busy.has(c.name) && m.targets.some((t) => t === ANY_AGENT || t === c.name || t === c.role || t === c.kind)).map((c) => c.name));
      const free = wanted.size ? (await freeAgents(deps, wanted, new Set(), busy)).map((f) => pool.get(f.name)!) : [];
      const events = deps.jobs.journal(m.record.job_id);
      const from = m.from.row.name;
      const to = pickFailover(m.targets, from, free, heldBefore(events));
      const reason = m.from.limit.reason.replace(/\s+/g, " ").slice(0, 200);
      const until = m.from.limit.resets_at ? ` until ${m.from.limit.resets_at}` : "";
      if (to === undefined) {
        out.left++;
        if (waitingSaid(events, from)) continue;
        const a = await deps.jobs.append(m.record.job_id, (r, evs) =>
          r && r.agent_session === from && !evs.some((e) => endsJob(e, r)) && !waitingSaid(evs, from)
            ? { event: "failover_waiting", detail: `${from} is limited${until} (${reason}); no agent of ${m.targets.join(", ")} is free: the job stays with ${from} until one is`, source: "mam", data: { from, targets: m.targets } }
            : undefined,
        );
        if (a) out.waiting.push({ job_id: m.record.job_id, record: a.record ?? m.record, appended: a });
        continue;
      }
      const appended = await deps.jobs.append(m.record.job_id, (r, evs) =>
        r && r.agent_session === from && !evs.some((e) => endsJob(e, r))
          ? { event: "failover", detail: `${from} is limited${until} (${reason}): the job goes to ${to}`, source: "mam", data: { from, to, reason, resets_at: m.from.limit.resets_at } }
          : undefined,
      );
      if (!appended) continue;
      const record = await deps.jobs.mutate(m.record.job_id, (r) => ({ ...r, agent_session: to, agent: kindOf(deps, to) }));
      busy.add(to);
      const text = `${failoverPreface(record.job_id, from, to, reason, reportedSoFar(events))}\n${textForAgent(deps, record, to)}`;
      out.moved.push({ job_id: record.job_id, to, record, appended, text });
    }
    return out;
  });
}
