// The merge queue's decisions (docs/merge-queue.md), pure: what an entry of the queue is, which one
// goes next for a target, what a job's end makes of an entry that waits on it, and what each
// outcome of a merge makes of it (its next state, the event journalled on the job, the fix job to
// send). The I/O around them is ./merge-run.ts; the files ./merge-files.ts.
import type { Json } from "../../jobs/canonical.ts";
import type { EventName } from "../../jobs/statuses.ts";
import type { JobStatus } from "../../jobs/statuses.ts";

/**
 * awaiting: its job has not completed yet (a loop job: until the reviewer's PASS)
 * queued:   in line for its target
 * merging:  a runner has it (rebase, check, fast-forward); a runner that died leaves it so, and
 *           the next one starts it again from the start
 * fixing:   a fix job (a conflict, a red check) was sent to its agent; back in line when it completes
 * merged:   landed on the target (data: commit)
 * dropped:  out of the queue (its job failed, its fix job failed, too many tries, removed): note says why
 */
export type MergeState = "awaiting" | "queued" | "merging" | "fixing" | "merged" | "dropped";

export interface MergeEntry {
  job_id: string;
  /** the job's agent: its fix jobs go to it */
  session: string;
  branch: string;
  /** the job's worktree (where its agent works) */
  worktree: string;
  target: string;
  state: MergeState;
  /** its place in line: lower goes first */
  order: number;
  /** when it entered its state (epoch seconds) */
  since: number;
  /** the fix job it waits on (fixing), the last one sent otherwise */
  fix_job?: string;
  /** fix jobs sent so far */
  fixes: number;
  /** merges tried that ended without an outcome (an error of git, a target moved meanwhile) */
  tries: number;
  /** why it waits (the target's worktree is dirty): tried again at retry_at (epoch seconds) */
  blocked?: string;
  retry_at?: number;
  /** what happened last, in words */
  note?: string;
  /** merged: the target's new tip */
  commit?: string;
  /** merging: the check's process (a process group), for the runner after a killed one */
  check_pid?: number;
}

export interface QueueDoc {
  /** the next order number */
  next: number;
  entries: MergeEntry[];
}

/** fix jobs sent for one branch before mam gives up on it */
export const MAX_FIXES = 3;
/** merges tried without an outcome before mam gives up on it */
export const MAX_TRIES = 5;
/** how long a blocked entry waits before it is tried again */
export const BLOCKED_RETRY_S = 10;

export const isLive = (e: Pick<MergeEntry, "state">) => e.state !== "merged" && e.state !== "dropped";

/** how long a dropped entry stays in "what needs you" (mam status --needs-me): a day */
export const DROPPED_SHOWN_S = 86_400;

/**
 * the entries a person has to look at (mam status --needs-me): one in line that waits for its
 * target's checkout to be clean (blocked), and one mam gave up on within the last day: dropped
 * after a fix job (its fix jobs ran out, or one failed) or after its tries ran out ("merge it by
 * hand"), unless the same job was queued again since. An entry dropped because its own job failed
 * is that job's news, not the queue's.
 */
export function stuckMerges(entries: readonly MergeEntry[], now: number): { entry: MergeEntry; stuck: "dirty" | "dropped" }[] {
  const again = (e: MergeEntry) => entries.some((x) => x !== e && x.job_id === e.job_id && x.order > e.order);
  return entries.flatMap((e): { entry: MergeEntry; stuck: "dirty" | "dropped" }[] => {
    if (e.state === "queued" && e.blocked) return [{ entry: e, stuck: "dirty" }];
    const gaveUp = e.state === "dropped" && (e.fixes > 0 || e.tries >= MAX_TRIES);
    return gaveUp && e.since > now - DROPPED_SHOWN_S && !again(e) ? [{ entry: e, stuck: "dropped" }] : [];
  });
}

/** the targets with an entry a runner could take now */
export function readyTargets(entries: readonly MergeEntry[], now: number): string[] {
  return [...new Set(entries.filter((e) => e.state === "merging" || (e.state === "queued" && (e.retry_at ?? 0) <= now)).map((e) => e.target))];
}

/**
 * the entry to merge next into `target`: one left merging by a runner that died (it starts again),
 * else the queued one first in line that is not waiting to be retried
 */
export function nextMerge(entries: readonly MergeEntry[], target: string, now: number): MergeEntry | undefined {
  const mine = entries.filter((e) => e.target === target);
  const left = mine.find((e) => e.state === "merging");
  if (left) return left;
  return mine.filter((e) => e.state === "queued" && (e.retry_at ?? 0) <= now).sort((a, b) => a.order - b.order)[0];
}

/** the place in line of each queued or merging entry of a target (1 = next) */
export function positions(entries: readonly MergeEntry[], target: string): Map<string, number> {
  const line = entries.filter((e) => e.target === target && (e.state === "queued" || e.state === "merging")).sort((a, b) => (a.state === "merging" ? -1 : b.state === "merging" ? 1 : a.order - b.order));
  return new Map(line.map((e, i) => [e.job_id, i + 1]));
}

export type Promotion = { to: "queued"; note: string } | { to: "dropped"; note: string } | undefined;

/**
 * what a job's status makes of an entry that waits on it: awaiting (its own job) or fixing (its fix
 * job); undefined while that job has not ended. `status` undefined: the job has no record.
 */
export function promote(e: MergeEntry, status: JobStatus | undefined): Promotion {
  if (e.state !== "awaiting" && e.state !== "fixing") return undefined;
  const which = e.state === "awaiting" ? `job ${e.job_id}` : `fix job ${e.fix_job}`;
  if (status === undefined) return { to: "dropped", note: `${which} has no record any more` };
  if (status === "completed") return { to: "queued", note: e.state === "awaiting" ? `job ${e.job_id} completed` : `fix job ${e.fix_job} completed` };
  if (status === "error" || status === "cancelled" || status === "timeout" || status === "budget_exceeded") return { to: "dropped", note: `${which} ended ${status}: its branch is not merged` };
  return undefined;
}

/** what one merge attempt came to */
export type Outcome =
  | { kind: "landed"; commit: string; onto: string; noop: boolean; via: string; followed: boolean }
  | { kind: "moved"; onto: string }
  | { kind: "conflict"; onto: string; files: string[]; diff: string; commit: string }
  | { kind: "check_failed"; onto: string; rebased: string; exit: number | null; timedOut: boolean; tail: string; log: string }
  | { kind: "blocked"; why: string }
  | { kind: "error"; why: string };

/** what to do after an outcome: the entry's next fields, the event for the job's journal, a fix job to send */
export interface Step {
  set: Partial<MergeEntry>;
  event?: { event: EventName; detail: string; data: { [k: string]: Json } };
  /** send this prompt to the entry's agent as a new job; its id goes in fix_job (state fixing) */
  fix?: string;
}

const tailOf = (text: string, lines: number) => text.split("\n").filter((l, i, a) => l !== "" || i < a.length - 1).slice(-lines).join("\n");

/** the prompt of a fix job for a conflict */
export function conflictPrompt(e: MergeEntry, o: Extract<Outcome, { kind: "conflict" }>): string {
  return [
    `mam's merge queue could not rebase your branch ${e.branch} onto ${e.target} (at ${o.onto.slice(0, 12)}): ${o.commit ? `commit ${o.commit}` : "a commit"} conflicts in ${o.files.join(", ")}.`,
    `In your worktree ${e.worktree}: run git rebase ${e.target}, resolve the conflicts keeping the intent of both sides, git add the files, git rebase --continue, and commit nothing else.`,
    `Report completed once ${e.branch} sits on ${e.target} with no conflict left; mam then queues it again. Never merge ${e.target} into it and never push.`,
    "",
    "The conflict (git diff while rebasing):",
    o.diff.trimEnd(),
  ].join("\n");
}

/** the prompt of a fix job for a red check */
export function checkPrompt(e: MergeEntry, check: string, o: Extract<Outcome, { kind: "check_failed" }>): string {
  return [
    `mam's merge queue rebased your branch ${e.branch} onto ${e.target} (at ${o.onto.slice(0, 12)}) and ran the check \`${check}\`: it ${o.timedOut ? "ran out of time" : `failed (exit ${o.exit})`}.`,
    `Fix it on ${e.branch} in your worktree ${e.worktree} (rebase onto ${e.target} first if it needs ${e.target}'s changes) and commit; report completed once the check passes there. mam then queues it again.`,
    `The whole output: ${o.log}. Its last lines:`,
    o.tail.trimEnd(),
  ].join("\n");
}

/** the check's last lines carried by the event and the fix job */
export const TAIL_LINES = 30;
export const checkTail = (output: string) => tailOf(output, TAIL_LINES);

/** what an outcome makes of the entry (now: epoch seconds; check: the command, for the fix job's prompt) */
export function afterOutcome(e: MergeEntry, o: Outcome, now: number, check: string | undefined): Step {
  switch (o.kind) {
    case "landed":
      return {
        set: { state: "merged", since: now, commit: o.commit, note: o.noop ? `nothing to merge: ${e.target} has it all` : `merged at ${o.commit.slice(0, 12)} (${o.via})`, blocked: undefined, retry_at: undefined, check_pid: undefined },
        event: { event: "merged", detail: o.noop ? `${e.branch}: nothing to merge, ${e.target} has every commit of it` : `${e.branch} landed on ${e.target} at ${o.commit.slice(0, 12)}`, data: { target: e.target, branch: e.branch, commit: o.commit, onto: o.onto, noop: o.noop, via: o.via, branch_followed: o.followed } },
      };
    case "moved":
      // its place in line stays: it goes again at once, onto the new tip
      return tries(e, now, `${e.target} moved while it was checked; tried again onto its new tip`, { state: "queued", check_pid: undefined });
    case "blocked":
      return { set: { state: "queued", blocked: o.why, retry_at: now + BLOCKED_RETRY_S, note: o.why, check_pid: undefined } };
    case "error":
      return tries(e, now, o.why, { state: "queued", retry_at: now + BLOCKED_RETRY_S, check_pid: undefined });
    case "conflict":
    case "check_failed": {
      const what = o.kind === "conflict" ? `conflict in ${o.files.join(", ")}` : `the check ${o.timedOut ? "ran out of time" : `failed (exit ${o.exit})`}`;
      const data: { [k: string]: Json } =
        o.kind === "conflict"
          ? { target: e.target, branch: e.branch, onto: o.onto, files: o.files, commit: o.commit, diff: o.diff }
          : { target: e.target, branch: e.branch, onto: o.onto, rebased: o.rebased, exit: o.exit, timed_out: o.timedOut, log: o.log, tail: o.tail };
      const event = { event: o.kind === "conflict" ? ("merge_conflict" as const) : ("check_failed" as const), detail: `${e.branch} onto ${e.target}: ${what}`, data };
      if (e.fixes >= MAX_FIXES) {
        return { set: { state: "dropped", since: now, note: `${what}; gave up after ${e.fixes} fix jobs: merge it by hand`, check_pid: undefined, blocked: undefined }, event: { ...event, data: { ...data, gave_up: true } } };
      }
      const fix = o.kind === "conflict" ? conflictPrompt(e, o) : checkPrompt(e, check ?? "", o);
      return { set: { state: "fixing", since: now, fixes: e.fixes + 1, note: `${what}: a fix job goes to ${e.session}`, check_pid: undefined, blocked: undefined, retry_at: undefined }, event, fix };
    }
  }
}

function tries(e: MergeEntry, now: number, why: string, set: Partial<MergeEntry>): Step {
  const n = e.tries + 1;
  if (n >= MAX_TRIES) return { set: { state: "dropped", since: now, tries: n, note: `${why}; gave up after ${n} tries: merge it by hand or mam merge enqueue ${e.job_id} again` } };
  return { set: { ...set, tries: n, note: why, blocked: undefined } };
}
