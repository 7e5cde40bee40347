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
  "usage",
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
 * what mam itself journals and an agent never reports: the delivery stages, a job over its budget
 * (docs/cost.md) and the totals of a job costed on another host (`usage`)
 */
export const MAM_EVENTS: readonly EventName[] = [...DELIVERY_EVENTS, "budget_exceeded", "usage"];
/** events that say nothing about whether the job runs: they never move a pending job to running */
export const BOOKKEEPING_EVENTS: readonly EventName[] = [...DELIVERY_EVENTS, "usage"];

export const JOB_STATUSES = ["pending", "running", "completed", "error", "cancelled", "timeout", "budget_exceeded"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const FINAL_STATUSES: readonly JobStatus[] = ["completed", "error", "cancelled", "timeout", "budget_exceeded"];

export const isEventName = (s: string): s is EventName => (EVENT_NAMES as readonly string[]).includes(s);
export const isFinal = (s: JobStatus): boolean => FINAL_STATUSES.includes(s);
