// What of the jobs' side may need a person (mam status --needs-me; docs/unattended.md#a-leave-it-view):
// the merge queue's stuck entries (merge-plan.ts stuckMerges) and, when asked, the jobs waiting
// their turn. Read-only and cheap: one file for the merge queue; the job queue only when an agent
// is limited with no reset known (the caller says), since only then can a waiting job be stuck.
// The decision what needs a person is lib/ops/session/why.ts needsMe's; this only reads.
import { hostName } from "../../team/host.ts";
import type { Deps } from "../deps.ts";
import { readQueue as readMergeQueue } from "./merge-files.ts";
import { stuckMerges } from "./merge-plan.ts";
import { readQueue } from "./queue.ts";

export interface StuckReading {
  merges: { job_id: string; branch: string; target: string; stuck: "dirty" | "dropped"; note: string; since: number }[];
  waits: { job_id: string; to: string | null; role: string | null; since: number }[];
}

/** the merge queue's stuck entries and (with `waits`) the jobs waiting their turn; what does not read is left out (its own command reports it) */
export function readStuck(deps: Pick<Deps, "ws" | "env" | "jobs" | "clock">, waits: boolean): StuckReading {
  const out: StuckReading = { merges: [], waits: [] };
  try {
    out.merges = stuckMerges(readMergeQueue(deps.ws).entries, deps.clock.epoch()).map(({ entry: e, stuck }) => ({
      job_id: e.job_id,
      branch: e.branch,
      target: e.target,
      stuck,
      note: e.blocked ?? e.note ?? "",
      since: e.since,
    }));
  } catch {} // a broken queue file: mam merge status says so
  if (!waits) return out;
  try {
    let host: string | undefined;
    try {
      host = hostName(deps.env);
    } catch {}
    out.waits = readQueue(deps.jobs, host).waiting.map((w) => ({ job_id: w.job_id, to: w.to, role: w.role, since: w.since }));
  } catch {} // a broken job: job status says so
  return out;
}
