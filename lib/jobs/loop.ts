// Worker–reviewer loop jobs (SPEC §7.4): a pure state machine deciding the next step from an
// accepted event, and the apply step (journal marker, iteration, prompt) the daemon runs.
import { endsJob, type JobEvent, reviewPassed } from "./event.ts";
import { isFinal } from "./statuses.ts";
import { feedbackRequest, reviewRequest } from "./header.ts";
import type { Notice } from "../sys/notice.ts";
import type { JobRuntime } from "./runtime.ts";
import { type Appended, appendEvent, type EventInput, type JobRecord, mutateRecord } from "./store.ts";

export type LoopAction =
  | { kind: "none" }
  /** the reviewer's PASS: its `completed` already ended the job */
  | { kind: "done" }
  /** the worker completed: prompt the reviewer (marker: a progress event, source mam) */
  | { kind: "review"; session: string; text: string; detail: string; marker: EventInput }
  /** the reviewer asked for changes: iteration + 1, prompt the worker */
  | { kind: "feedback"; session: string; text: string; detail: string; iteration: number; marker: EventInput }
  /** the reviewer asked for changes at the last iteration: the job ends in error */
  | { kind: "fail"; event: EventInput };

/**
 * Decide the loop's next step after an accepted event. `job` is the record as it is after the
 * event was journalled (its status includes the event). Only `completed` events move a loop: the
 * reviewer's (source = reviewer_session) is a verdict, anyone else's is the worker's hand-in.
 */
export function loopNext(job: JobRecord, event: JobEvent, ws: string): LoopAction {
  if (job.type !== "loop" || event.event !== "completed" || !job.reviewer_session) return { kind: "none" };
  if (endsJob(event, job)) return { kind: "done" };
  if (isFinal(job.status)) return { kind: "none" }; // cancelled, timed out or failed before
  const max = job.max_iterations ?? 1;
  if (event.source === job.reviewer_session) {
    if (reviewPassed(event.detail)) return { kind: "done" };
    if (job.iteration >= max) {
      return { kind: "fail", event: { event: "error", detail: "max iterations reached", source: "mam", data: { iteration: job.iteration } } };
    }
    const next = job.iteration + 1;
    return {
      kind: "feedback",
      session: job.agent_session,
      iteration: next,
      detail: event.detail,
      text: feedbackRequest({ ...job, iteration: next }, ws, event.detail, next),
      marker: { event: "progress", detail: `iteration ${next}: feedback sent to ${job.agent_session}`, source: "mam", data: { iteration: next } },
    };
  }
  return {
    kind: "review",
    session: job.reviewer_session,
    text: reviewRequest(job, ws, event.detail),
    detail: event.detail,
    marker: { event: "progress", detail: `iteration ${job.iteration}: review requested from ${job.reviewer_session}`, source: "mam", data: { iteration: job.iteration } },
  };
}

export interface LoopApplied {
  /** events appended (publish them) */
  appended: Appended[];
  /**
   * the prompt could not be delivered (the session is gone, it waits at a dialog: the job was
   * ended with error), or it may have stayed in the agent's input box (the job goes on)
   */
  undelivered?: string;
}

/** apply a loop step: journal it, bump the iteration, prompt the session through the runtime */
export async function applyLoop(ws: string, job: JobRecord, action: LoopAction, runtime: JobRuntime): Promise<LoopApplied> {
  const appended: Appended[] = [];
  const add = async (input: EventInput) => {
    // never act on a job that ended in the meantime
    const a = await appendEvent(ws, job.job_id, (r, evs) => (r && !evs.some((e) => endsJob(e, r)) ? input : undefined));
    if (a) appended.push(a);
    return a;
  };
  if (action.kind === "none" || action.kind === "done") return { appended };
  if (action.kind === "fail") {
    await add(action.event);
    return { appended };
  }
  // the marker first: a job that ended meanwhile (cancelled, over its budget) gets neither it nor a new iteration
  if (!(await add(action.marker))) return { appended };
  if (action.kind === "feedback") await mutateRecord(ws, job.job_id, (r) => ({ ...r, iteration: action.iteration }));
  const s = await runtime.findSession(action.session);
  let problem: string | undefined;
  let unsure: Notice | undefined;
  if (!s) problem = `session ${action.session} not found`;
  else {
    try {
      // typed, but it may wait in the agent's input box: the job goes on, the daemon says so
      // a session on another host builds the text itself, from the job and the detail
      const job2 = action.kind === "feedback" ? { ...job, iteration: action.iteration } : job;
      unsure = await runtime.prompt(s, action.text, { purpose: action.kind, job: job2, detail: action.detail, ...(action.kind === "feedback" ? { iteration: action.iteration } : {}) });
    } catch (e) {
      problem = `could not prompt ${action.session} (${(e as Error).message})`;
    }
  }
  if (problem) {
    await add({ event: "error", detail: problem, source: "mam" });
    return { appended, undelivered: problem };
  }
  return unsure ? { appended, undelivered: unsure.text } : { appended };
}

/**
 * The session a job waits on: its agent; in a loop job, the reviewer from the worker's hand-in
 * (a `completed` not from the reviewer) until the reviewer's verdict.
 */
export function busySession(rec: Pick<JobRecord, "type" | "agent_session" | "reviewer_session">, events: readonly JobEvent[]): string {
  if (rec.type !== "loop" || !rec.reviewer_session) return rec.agent_session;
  const last = [...events].reverse().find((e) => e.event === "completed");
  return last && last.source !== rec.reviewer_session ? rec.reviewer_session : rec.agent_session;
}
