// notify.queued (docs/notifications.md): a job that has waited in the queue (docs/jobs.md#the-queue)
// longer than MAM_NOTIFY_QUEUED_MIN minutes is a "queued" notification to the user's sinks, once
// per job (in memory: a daemon that starts again may tell it once more; the sinks' keys hold it
// back when it is the same notification). Unset or not a positive number: off, and no job is read.
// With every poll; the decision (overdueQueued) is pure.
import type { JobEvent } from "../../jobs/event.ts";
import { effectiveStatus } from "../../jobs/store.ts";
import type { Env } from "../../sys/paths.ts";
import { defineReaction } from "./reaction.ts";

/** MAM_NOTIFY_QUEUED_MIN as minutes, or undefined (off) */
export function queuedMinutes(env: Env): number | undefined {
  const raw = env.MAM_NOTIFY_QUEUED_MIN?.trim();
  if (!raw || !/^\d+(\.\d+)?$/.test(raw)) return undefined;
  const n = Number(raw);
  return n > 0 ? n : undefined;
}

/** a job waiting its turn: since when (its last `queued` event, epoch seconds) */
export interface Waiting {
  job_id: string;
  session: string;
  since: number;
}

/** the jobs to tell of now: waiting longer than `minutes`, not told before */
export function overdueQueued(waiting: readonly Waiting[], now: number, minutes: number, told: ReadonlySet<string>): Waiting[] {
  return waiting.filter((w) => !told.has(w.job_id) && now - w.since >= minutes * 60);
}

/** when a queued job got in line: its last `queued` event */
export function queuedSince(events: readonly JobEvent[]): number | undefined {
  const q = events.findLast((e) => e.event === "queued");
  return q ? Date.parse(q.timestamp) / 1000 : undefined;
}

export const notifyQueued = defineReaction({
  name: "notify.queued",
  on: ["poll"],
  alone: { poll: "queued notifications failed" },
  /** the jobs told of */
  state: () => new Set<string>(),
  async run(deps, told, { ctx }, shared) {
    const minutes = queuedMinutes(deps.env);
    if (minutes === undefined) return;
    const waiting: Waiting[] = [];
    for (const id of deps.jobs.ids()) {
      if (told.has(id) || shared.journals.quiet(ctx.ws, id)) continue;
      try {
        const r = deps.jobs.read(id);
        if (!r || r.remote_of) continue;
        const events = deps.jobs.journal(id);
        const since = effectiveStatus(r, events) === "queued" ? queuedSince(events) : undefined;
        if (since !== undefined) waiting.push({ job_id: id, session: r.agent_session, since });
      } catch {} // a broken record is reported by job status
    }
    const due = overdueQueued(waiting, deps.clock.epoch(), minutes, told);
    if (due.length === 0) return;
    const n = await shared.notes();
    for (const w of due) {
      told.add(w.job_id);
      await n.queued(w.job_id, w.session, minutes, ctx.log);
    }
  },
});
