// Reading jobs (SPEC §7.4 `job status`, `job list`, `job logs`): the use cases behind those
// commands and the MCP tools job_status / job_logs and the job resources. Read-only: no lock, no
// file or folder created; the status always comes from the journal.
import type { JobEvent } from "./event.ts";
import type { JobStatus } from "./statuses.ts";
import { unsigned } from "./event.ts";
import { jobView, type JobRecord, type JobView, listJobIds, readJournal, readRecord, requireRecord } from "./store.ts";
import { checkJobId } from "../sys/names.ts";

/** one job: its record without the token, the folded status, the event count and the last event */
export function jobStatus(ws: string, rawId: string): JobView {
  const id = checkJobId(rawId);
  return jobView(requireRecord(ws, id), readJournal(ws, id));
}

/** every job of the workspace (oldest id order), optionally only those in one status */
export function listJobs(ws: string, status?: JobStatus): JobView[] {
  return listJobIds(ws)
    .map((id) => readRecord(ws, id))
    .filter((r): r is JobRecord => r !== undefined)
    .map((r) => jobView(r, readJournal(ws, r.job_id)))
    .filter((v) => status === undefined || v.status === status);
}

/** a job's journal, in order, without signatures (a not-found error when the job does not exist) */
export function jobEvents(ws: string, rawId: string, opts: { withSignatures?: boolean } = {}): JobEvent[] {
  const id = checkJobId(rawId);
  requireRecord(ws, id);
  const evs = readJournal(ws, id);
  return opts.withSignatures ? evs : evs.map(unsigned);
}
