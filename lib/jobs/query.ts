// Reading jobs (SPEC §7.4 `job status`, `job list`, `job logs`): the use cases behind those
// commands and the MCP tools job_status / job_logs and the job resources. Read-only: no lock, no
// file or folder created; the status always comes from the journal.
import type { JobEvent } from "./event.ts";
import type { JobStatus } from "./statuses.ts";
import { unsigned } from "./event.ts";
import { jobView, type JobRecord, type JobView, listJobIds, readJournal, readRecord, requireRecord } from "./store.ts";
import { checkJobId } from "../sys/names.ts";
import type { PriceTable } from "../cost/prices.ts";
import { jobUsageView, type JobUsageView } from "../cost/summary.ts";

/** a job as `job status` and `job list` show it: with its usage and its budget (docs/cost.md) */
export interface CostedJobView extends Omit<JobView, "usage"> {
  usage: JobUsageView;
  budget_usd: number | null;
  max_tokens: number | null;
}

/** the view of a record and its journal, with its usage at these prices */
export function costedView(r: JobRecord, events: readonly JobEvent[], prices: PriceTable): CostedJobView {
  return { ...jobView(r, events), usage: jobUsageView(r, events, prices), budget_usd: r.budget_usd ?? null, max_tokens: r.max_tokens ?? null };
}

/** one job: its record without the token, the folded status, the event count and the last event, its usage */
export function jobStatus(ws: string, rawId: string, prices: PriceTable): CostedJobView {
  const id = checkJobId(rawId);
  return costedView(requireRecord(ws, id), readJournal(ws, id), prices);
}

/** every job of the workspace (oldest id order), optionally only those in one status */
/** newest first (as the dashboard shows them); the same second: the larger id first, so the order is stable */
const newestFirst = (a: Pick<JobRecord, "created_at" | "job_id">, b: Pick<JobRecord, "created_at" | "job_id">): number =>
  a.created_at !== b.created_at ? (a.created_at < b.created_at ? 1 : -1) : a.job_id < b.job_id ? 1 : a.job_id > b.job_id ? -1 : 0;

export function listJobs(ws: string, prices: PriceTable, status?: JobStatus): CostedJobView[] {
  return listJobIds(ws)
    .map((id) => readRecord(ws, id))
    .filter((r): r is JobRecord => r !== undefined)
    .sort(newestFirst)
    .map((r) => costedView(r, readJournal(ws, r.job_id), prices))
    .filter((v) => status === undefined || v.status === status);
}

/** a job's journal, in order, without signatures (a not-found error when the job does not exist) */
export function jobEvents(ws: string, rawId: string, opts: { withSignatures?: boolean } = {}): JobEvent[] {
  const id = checkJobId(rawId);
  requireRecord(ws, id);
  const evs = readJournal(ws, id);
  return opts.withSignatures ? evs : evs.map(unsigned);
}
