// The rules between a job's fields (usage errors naming fields as {{field}}), checked before
// anything is looked at: by job.submit's input check, and by create for the job it submits.
import { usageError } from "../../sys/errors.ts";
import { field } from "../../sys/fields.ts";

/** a job as the rules see it */
export interface JobFields {
  /** the agent by name; or to_role: the first free agent of a role (a pool) */
  to?: string;
  to_role?: string;
  prompt?: string;
  brief_file?: string;
  expect?: string[];
  type?: "single" | "loop";
  reviewer?: string;
  max_iterations?: number;
}

/** the rules between a job's fields (usage errors, before anything is looked at) */
export function checkJob(o: JobFields): void {
  if ((o.to === undefined) === (o.to_role === undefined)) throw usageError(`give exactly one of ${field("to")} and ${field("to_role")}`, `the agent by name: ${field("to")} NAME (as mam status lists it), or the first free one of a role: ${field("to_role")} ROLE`);
  if ((o.prompt === undefined) === (o.brief_file === undefined)) throw usageError(`give exactly one of ${field("prompt")} and ${field("brief_file")}`, `the job's text: ${field("prompt")} "Fix the failing test", or a file that holds it: ${field("brief_file")} brief.md`);
  if ((o.type ?? "single") === "loop") {
    if (o.reviewer === undefined) throw usageError(`${field("type", "loop")} needs ${field("reviewer")}`);
    if (o.reviewer === o.to) throw usageError(`the reviewer must be another session than the worker (${field("to")})`);
  } else {
    if (o.reviewer !== undefined) throw usageError(`${field("reviewer")} goes with ${field("type", "loop")}`);
    if (o.max_iterations !== undefined) throw usageError(`${field("max_iterations")} goes with ${field("type", "loop")}`);
  }
  for (const a of o.expect ?? []) if (a.includes("\n")) throw usageError(`invalid ${field("expect")} '${a.slice(0, 80)}': one path per line`);
}
