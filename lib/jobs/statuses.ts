// The names of job events and statuses, and which of them end a job: constants only, so that a
// command's definition can name them without loading the event code (docs/jobs.md).
export const EVENT_NAMES = [
  "started",
  "permission_required",
  "progress",
  "completed",
  "error",
  "cancelled",
  "timeout",
  "budget_exceeded",
  "offered",
  "received",
  "delivered",
  "uncertain",
  "queued",
  "dispatched",
  "approved",
  "denied",
  "usage",
  "limited",
  "unlimited",
  "restarted",
  "restart_gave_up",
  "merge_queued",
  "merge_checking",
  "merged",
  "merge_conflict",
  "check_failed",
  "failover",
  "failover_waiting",
  "resume_attempt",
] as const;
export type EventName = (typeof EVENT_NAMES)[number];
export const TERMINAL_EVENTS: readonly EventName[] = ["completed", "error", "cancelled", "timeout", "budget_exceeded"];
/**
 * the stages of a job delivered to another machine, journalled by mam (docs/machines.md):
 * offered (sent by this host), received (by the agent's host), delivered (typed and seen to leave
 * the input box), uncertain (typed, not confirmed: never sent again blindly)
 */
export const DELIVERY_EVENTS: readonly EventName[] = ["offered", "received", "delivered", "uncertain"];
/**
 * a job's turn (docs/jobs.md#the-queue): queued (its agent, or every agent of its pool, was busy:
 * data.position), dispatched (its turn came: data.to names the agent it went to)
 */
export const QUEUE_EVENTS: readonly EventName[] = ["queued", "dispatched"];
/**
 * a user's answer to the agent's permission dialog, journalled by `mam approve` (docs/approvals.md):
 * approved (a yes, once or always), denied (the no); data says which choice, by whom, from where
 */
export const APPROVAL_EVENTS: readonly EventName[] = ["approved", "denied"];
/**
 * the agent working on the job went to a usage or rate limit (data: session, resets_at, reason),
 * and came back from it (docs/unattended.md): journalled by the daemon on the transition; and what
 * mam did about it: failover (the job went from data.from to data.to), failover_waiting (no free
 * target yet: said once), resume_attempt (mam typed the agent's "continue" after the reset)
 */
const LIMIT_EVENTS: readonly EventName[] = ["limited", "unlimited", "failover", "failover_waiting", "resume_attempt"];
/**
 * the daemon's restarts of a job's agent that died (docs/unattended.md#dead-agents): restarted (its
 * conversation resumed; data: session, attempt, max, why), restart_gave_up (max restarts within an
 * hour: the agent stays terminated, and the job ends in error "agent exited")
 */
export const RESTART_EVENTS: readonly EventName[] = ["restarted", "restart_gave_up"];
/**
 * the merge queue's steps for a job's branch (docs/merge-queue.md), journalled after the job
 * completed: merge_queued (data.target, data.position), merge_checking (rebased cleanly onto
 * data.onto, the check runs), merged (data.commit: the target's new tip), merge_conflict
 * (data.files, data.fix_job), check_failed (data.exit, data.log, data.fix_job)
 */
export const MERGE_EVENTS: readonly EventName[] = ["merge_queued", "merge_checking", "merged", "merge_conflict", "check_failed"];
/**
 * what only mam journals (an agent's report cannot be one of these); none of them says the job
 * runs: the delivery stages, the queue's, a user's answers, a job over its budget (docs/cost.md),
 * the totals of a job costed on another host (`usage`), its agent's limits, the daemon's
 * restarts of its agent and the merge queue's steps
 */
export const MAM_EVENTS: readonly EventName[] = [...DELIVERY_EVENTS, ...QUEUE_EVENTS, ...APPROVAL_EVENTS, "budget_exceeded", "usage", ...LIMIT_EVENTS, ...RESTART_EVENTS, ...MERGE_EVENTS];

export const JOB_STATUSES = ["queued", "pending", "running", "completed", "error", "cancelled", "timeout", "budget_exceeded"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const FINAL_STATUSES: readonly JobStatus[] = ["completed", "error", "cancelled", "timeout", "budget_exceeded"];

export const isEventName = (s: string): s is EventName => (EVENT_NAMES as readonly string[]).includes(s);
export const isFinal = (s: JobStatus): boolean => FINAL_STATUSES.includes(s);

/** the columns of the jobs' board (mam status --jobs; lib/jobs/board.ts), in their order */
export const BOARD_COLUMNS = ["waiting", "queued", "working", "in_review", "merging", "done", "failed"] as const;
export type BoardColumn = (typeof BOARD_COLUMNS)[number];
