// queue.dispatch (docs/jobs.md#the-queue): jobs waiting their turn get it as soon as their agent
// is free (lib/ops/job/queue.ts assignWaiting, typeDispatched); a copy of another host's job is
// typed as its delivery (./team.ts); a job that runs after others (docs/jobs.md#dependencies) is
// held back until they have ended, and cancelled when one ended otherwise. While none waits, only a new `queued` can make one, and
// whoever journals one touches the queue's marker: a change of the jobs folder then costs one
// stat, not a read of every job. A queued job this user's mam did not write is said once.
import { join } from "node:path";
import { defineReaction } from "./reaction.ts";
import { SkipOnce } from "./skip-once.ts";

interface QueueState {
  /** jobs waited at the last look (true at first: not known yet, look once) */
  waiting: boolean;
  /** the queue's marker at the last look */
  marker: string;
  /** per agent, the turn it last got a job at (fairness between equals) */
  served: Map<string, number>;
  turns: number;
  skip: SkipOnce;
}

export const queueDispatch = defineReaction({
  name: "queue.dispatch",
  on: ["jobsChanged", "watch"],
  alone: { watch: "dispatch failed" },
  state: (): QueueState => ({ waiting: true, marker: "", served: new Map(), turns: 0, skip: new SkipOnce() }),
  async run(deps, st, { ctx }, shared) {
    const { assignWaiting, queueMarker, typeDispatched } = await import("../job/queue.ts");
    const m = queueMarker(deps.jobs);
    if (!st.waiting && m === st.marker) return;
    st.marker = m;
    const team = shared.team;
    const { gone, left, foreign, ended } = await assignWaiting(deps, { host: team?.host, served: st.served, tick: () => ++st.turns });
    st.waiting = left > 0;
    for (const c of ended) {
      ctx.log(`job ${c.record.job_id}: ${c.appended.payload.detail}`);
      await ctx.publish(`${c.record.topic_prefix}/events`, c.appended.line);
    }
    for (const f of foreign) {
      st.skip.say(ctx, `job\u0000${f.job_id}\u0000${f.why}`, `job ${f.job_id} (${join(ctx.ws, ".mam", "jobs", `${f.job_id}.json`)}) is queued, but this user's mam did not write it: ${f.why}; it is never dispatched. If you submitted it (with an older mam), submit it again; remove the file or run mam job cancel ${f.job_id} to drop it`);
    }
    for (const d of gone) {
      await ctx.publish(`${d.record.topic_prefix}/events`, d.appended.line);
      if (d.record.remote_of && team) {
        await team.typeQueued(d, ctx);
        continue;
      }
      const r = await typeDispatched(deps, d);
      ctx.log(r.log);
      if (r.appended) await ctx.publish(`${d.record.topic_prefix}/events`, r.appended.line);
    }
  },
});
