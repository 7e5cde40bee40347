// The names of job events and statuses, and which of them end a job: constants only, so that a
// command's definition can name them without loading the event code (docs/jobs.md).
export const EVENT_NAMES = ["started", "permission_required", "progress", "completed", "error", "cancelled", "timeout"] as const;
export type EventName = (typeof EVENT_NAMES)[number];
export const TERMINAL_EVENTS: readonly EventName[] = ["completed", "error", "cancelled", "timeout"];

export const JOB_STATUSES = ["pending", "running", "completed", "error", "cancelled", "timeout"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const FINAL_STATUSES: readonly JobStatus[] = ["completed", "error", "cancelled", "timeout"];

export const isEventName = (s: string): s is EventName => (EVENT_NAMES as readonly string[]).includes(s);
export const isFinal = (s: JobStatus): boolean => FINAL_STATUSES.includes(s);
