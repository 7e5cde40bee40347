// The texts agents receive: the job header (submit), the review request and the feedback of a
// loop job. Each names the exact `mam job event` commands to run, with the workspace flag, and
// names mam as the agent's shell finds it (agentMam: `mam`, or this binary's absolute path). What
// others wrote in them (a prompt, a worker's or reviewer's detail) is made safe where mam types
// (deliver, lib/ops/session/at-prompt.ts). A shell session gets none of these: only shellJobLine.
import { agentMam } from "../sys/agent-mam.ts";
import { shq } from "../sys/shell.ts";
import type { EventName } from "./statuses.ts";
import type { JobRecord } from "./store.ts";

/** the exact command an agent runs to report `event`; `mam` is the words that run mam (agentMam) */
export function eventCommand(job: Pick<JobRecord, "job_id">, ws: string, event: EventName, source: string, detail: string, mam: string = agentMam()): string {
  return `${mam} job event ${job.job_id} ${event} --source ${shq(source)} --workspace ${shq(ws)} --detail "${detail}"`;
}

function taskLine(job: JobRecord): string {
  return job.brief_file !== undefined ? `Task: read the brief in ${job.brief_file} and do what it asks.` : `Task: ${job.prompt ?? ""}`;
}

/** the worker's branch, for its own header (issue 18) */
function worktreeLine(job: JobRecord, ws: string): string | undefined {
  const w = job.worktree;
  if (!w) return undefined;
  return `Work in your git worktree ${w.path} on branch ${w.branch} (made from ${w.base || w.base_commit}); commit your changes on ${w.branch} before you report completed. mam's state stays in ${ws}: the commands below say so with --workspace.`;
}

/** what a reviewer needs to find the worker's changes: the branch, the base and the exact diff */
export function reviewDiffLines(job: JobRecord, ws: string): string[] {
  const w = job.worktree;
  if (!w) return [];
  return [
    `The work is on branch ${w.branch} (from ${w.base || "its base"} at ${w.base_commit}), in the worktree ${w.path}. Read it with:`,
    `  git -C ${shq(ws)} diff ${w.base_commit}...${shq(w.branch)}`,
    `and check for changes not committed yet with:`,
    `  git -C ${shq(w.path)} status --short`,
  ];
}

function artifactsLine(job: JobRecord): string | undefined {
  return job.expected_artifacts.length ? `Expected artifacts: ${job.expected_artifacts.join(", ")}` : undefined;
}

/**
 * the one line typed into a shell session for a job to it: `mam shell-job` runs the job's command
 * and reports on it (lib/ops/job/shell-run.ts); nothing of the prompt itself is typed
 */
export function shellJobLine(job: Pick<JobRecord, "job_id">, ws: string, mam: string = agentMam()): string {
  return `${mam} shell-job ${job.job_id} --workspace ${shq(ws)}`;
}

/** the header the target agent receives when a job is submitted to it */
export function jobHeader(job: JobRecord, session: string, ws: string): string {
  const from = job.delegator ? `session ${job.delegator}` : "the user";
  const lines = [
    `[mam] Job ${job.job_id} delegated to you (${session}) by ${from}.`,
    taskLine(job),
    worktreeLine(job, ws),
    artifactsLine(job),
    job.type === "loop"
      ? `This is a review loop: when you report completed, reviewer ${job.reviewer_session} checks your work; feedback comes back to you (at most ${job.max_iterations} iterations).`
      : undefined,
    "Report with these commands, exactly as written (replace the text in quotes):",
    `  ${eventCommand(job, ws, "started", session, "what you are starting")}`,
    `  ${eventCommand(job, ws, "progress", session, "short status")}`,
    `  ${eventCommand(job, ws, "completed", session, "summary of the result")}`,
    `  ${eventCommand(job, ws, "error", session, "what went wrong")}`,
    `Run started now, progress at least every ${job.idle_timeout_sec} s while you work, and completed or error once at the end.`,
  ];
  return lines.filter((l): l is string => l !== undefined).join("\n");
}

/** what the reviewer of a loop job receives when the worker completes */
export function reviewRequest(job: JobRecord, ws: string, workerDetail: string): string {
  const r = job.reviewer_session!;
  return [
    `[mam] Review for job ${job.job_id} (iteration ${job.iteration} of ${job.max_iterations}): ${job.agent_session} reports completed: ${workerDetail}`,
    taskLine(job),
    ...reviewDiffLines(job, ws),
    artifactsLine(job),
    "Review the work, then run exactly one of these commands:",
    `  ${eventCommand(job, ws, "completed", r, "PASS")}`,
    `  ${eventCommand(job, ws, "completed", r, "your feedback: what must change")}`,
    `While reviewing, report progress at least every ${job.idle_timeout_sec} s with:`,
    `  ${eventCommand(job, ws, "progress", r, "short status")}`,
  ]
    .filter((l): l is string => l !== undefined)
    .join("\n");
}

/** what the worker of a loop job receives when the reviewer asks for changes */
export function feedbackRequest(job: JobRecord, ws: string, reviewerDetail: string, iteration: number): string {
  const w = job.agent_session;
  return [
    `[mam] Job ${job.job_id} iteration ${iteration} of ${job.max_iterations}: reviewer ${job.reviewer_session} asks for changes: ${reviewerDetail}`,
    job.worktree ? `Address the feedback in ${job.worktree.path} and commit it on branch ${job.worktree.branch}, then report with:` : "Address the feedback, then report with:",
    `  ${eventCommand(job, ws, "progress", w, "short status")}`,
    `  ${eventCommand(job, ws, "completed", w, "summary of the changes")}`,
    `  ${eventCommand(job, ws, "error", w, "what went wrong")}`,
  ].join("\n");
}
