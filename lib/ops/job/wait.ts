// Waiting for jobs (docs/jobs.md): until all (or any) end, from their journals and the broker;
// each arriving event is a line of progress, and a permission question can end the wait early
// (what an agent waiting over MCP wants: it can act and wait again).
import { brokerConfigFromEnv } from "../../jobs/broker-config.ts";
import { isFinal } from "../../jobs/statuses.ts";
import { eventNote } from "../../jobs/render.ts";
import { publicWait, type WaitResult, waitExitCode, waitJobs } from "../../jobs/wait.ts";
import { failure, type Notice } from "../../sys/notice.ts";
import type { Deps } from "../deps.ts";
import type { OpContext } from "../op.ts";

export interface WaitInput {
  job_ids: string[];
  mode: "all" | "any";
  /** undefined: no limit */
  timeout_s?: number;
  /** return as soon as an agent reports permission_required */
  return_on_permission: boolean;
}

export interface Waited extends WaitResult {
  /** every job completed (any: the ended ones) */
  all_completed: boolean;
  /** what the command's exit code says: 0 completed, 6 over budget, 1 one ended otherwise, 5 timed out */
  exit_code: number;
  timeout_s: number | null;
  warnings: Notice[];
}

export async function waitForJobs(deps: Deps, i: WaitInput, ctx: OpContext): Promise<Waited> {
  const ids = [...new Set(i.job_ids)];
  const records = ids.map((id) => deps.jobs.require(id));
  const r = await waitJobs(deps.ws, records, {
    any: i.mode === "any",
    timeoutMs: i.timeout_s === undefined ? undefined : i.timeout_s * 1000,
    signal: ctx.signal,
    broker: brokerConfigFromEnv(deps.env),
    onEvent: (e) => ctx.progress(eventNote(e)),
    stopOn: (e) => i.return_on_permission && e.event === "permission_required",
  });
  const exit = waitExitCode(r, i.mode === "any");
  const warnings: Notice[] = [];
  if (r.outcome === "timeout") {
    const open = r.jobs.filter((j) => !isFinal(j.status)).map((j) => j.job_id);
    warnings.push(failure(`timed out after ${i.timeout_s} s waiting for job${open.length > 1 ? "s" : ""} ${open.join(", ")}`));
  }
  return { ...publicWait(r), all_completed: r.outcome === "done" && exit === 0, exit_code: exit, timeout_s: i.timeout_s ?? null, warnings };
}
