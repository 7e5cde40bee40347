// Dependencies between jobs, their I/O side (docs/jobs.md#dependencies): the statuses of the jobs
// a job runs after, read fresh from their records and journals, and the submit's checks. The
// decisions are lib/jobs/after.ts's; the queue holds a job back while they say `held`
// (./queue.ts readQueue) and cancels it when they say `cancel` (./queue.ts assignWaiting).
import { afterVerdict, type AfterVerdict, type DepStatus } from "../../jobs/after.ts";
import { effectiveStatus, type JobStore, jobsDir } from "../../jobs/store.ts";
import { EXIT, MamError, notFound, usageError } from "../../sys/errors.ts";
import { field } from "../../sys/fields.ts";
import { isValidJobId } from "../../sys/names.ts";
import type { Deps } from "../deps.ts";

/** at most this many jobs one job runs after */
export const MAX_AFTER = 50;

/** the status of each job in `ids`, as its journal says now ("gone": no record here) */
export function depStatuses(jobs: JobStore, ids: readonly string[]): { id: string; status: DepStatus }[] {
  return ids.map((id) => {
    try {
      const rec = jobs.read(id);
      return { id, status: rec ? effectiveStatus(rec, jobs.journal(id)) : "gone" };
    } catch {
      // a record that cannot be read is not a job that completed: it holds the job back
      return { id, status: "pending" as const };
    }
  });
}

/**
 * At submit: each id names a job of this workspace (exit 3 otherwise), none has already ended in
 * a way that would cancel the new job at once (exit 1: pass --after-any-end to run it anyway).
 * Nothing is written either way. The verdict now: ready (it takes its turn as any job) or held.
 */
export function checkAfter(deps: Deps, after: readonly string[], anyEnd: boolean): Exclude<AfterVerdict, { state: "cancel" }> {
  if (after.length > MAX_AFTER) throw usageError(`${field("after")} names ${after.length} jobs; at most ${MAX_AFTER}`);
  for (const id of after) if (!isValidJobId(id)) throw usageError(`invalid job id '${id.slice(0, 40)}' in ${field("after")}`, "job ids are 8 lowercase hex digits (mam job list)");
  const deps0 = depStatuses(deps.jobs, after);
  const gone = deps0.find((d) => d.status === "gone");
  if (gone) throw notFound(`no job ${gone.id} in ${jobsDir(deps.ws)}; nothing was submitted`, `${field("after")} names jobs of this workspace: see mam job list`);
  const v = afterVerdict(deps0, anyEnd);
  if (v.state === "cancel") throw new MamError(`${v.why.replace(/, which it runs after,/, "")}: a job after it would be cancelled at once; nothing was submitted`, EXIT.FAIL, `to run it anyway once each has ended: ${field("after_any_end")}`);
  return v;
}
