// Dependencies between jobs (docs/jobs.md#dependencies): a job submitted with `--after ID,…`
// waits, queued, until each job it names has completed; one that ends any other way (error,
// cancelled, timeout, over its budget) cancels it with the reason, unless it was submitted with
// `--after-any-end`, when it runs once each has ended. Pure: the caller reads the statuses.
import type { JobStatus } from "./statuses.ts";
import { isFinal } from "./statuses.ts";

/** what is known of one job waited for: its status, or "gone" (no record of it here any more) */
export type DepStatus = JobStatus | "gone";

export type AfterVerdict =
  /** each has ended as it must: the job may take its turn */
  | { state: "ready" }
  /** some have not ended yet: their ids and statuses, in the order given */
  | { state: "held"; on: { id: string; status: DepStatus }[] }
  /** one ended otherwise (or is gone): the job is cancelled, for this reason */
  | { state: "cancel"; why: string };

/** what a job waiting for `deps` (id → status, in the order given) may do now */
export function afterVerdict(deps: readonly { id: string; status: DepStatus }[], anyEnd: boolean): AfterVerdict {
  for (const d of deps) {
    if (d.status === "gone") return { state: "cancel", why: `job ${d.id}, which it runs after, is gone (no record of it)` };
    if (!anyEnd && isFinal(d.status) && d.status !== "completed") return { state: "cancel", why: `job ${d.id}, which it runs after, ended ${d.status}` };
  }
  const on = deps.filter((d) => !isFinal(d.status as JobStatus));
  return on.length === 0 ? { state: "ready" } : { state: "held", on };
}

/** "job 1a2b3c4d (running)", "jobs 1a2b3c4d (running) and 5e6f7a8b (queued)" */
export function heldWords(on: readonly { id: string; status: DepStatus }[], anyEnd: boolean): string {
  const each = on.map((d) => `${d.id} (${d.status})`);
  const list = each.length === 1 ? `job ${each[0]}` : `jobs ${each.slice(0, -1).join(", ")} and ${each.at(-1)}`;
  const many = on.length > 1;
  return `after ${list} ${anyEnd ? (many ? "end" : "ends") : many ? "complete" : "completes"}`;
}

/** the ids of `--after`: comma-separated, repeatable; each once, in the order given */
export function parseAfter(words: readonly string[]): string[] {
  const out: string[] = [];
  for (const w of words) for (const id of w.split(",").map((x) => x.trim()).filter(Boolean)) if (!out.includes(id)) out.push(id);
  return out;
}
