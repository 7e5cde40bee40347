// limit.failover (docs/unattended.md#failover): a job whose agent reached a usage limit goes to a
// free agent its submitter allowed (`job submit --failover`, or the agent's `create --on-limit
// failover`), with what was reported on it so far (lib/ops/job/failover.ts): `failover` is
// journalled and published, then the job's text is typed into the new agent beside the hooks, as
// the queue's dispatch types (only at its prompt, never into a dialog). Before queue.dispatch: a
// job under way comes before a job that waits its turn.
import { defineReaction } from "./reaction.ts";

export const limitFailover = defineReaction({
  name: "limit.failover",
  on: ["watch"],
  alone: { watch: "failover failed" },
  state: () => ({}),
  async run(deps, _st, { ctx }, shared) {
    const [{ failoverLimited }, { typeDispatched }] = await Promise.all([import("../job/failover.ts"), import("../job/queue.ts")]);
    const pass = await failoverLimited(deps, shared.team?.host);
    for (const w of pass.waiting) {
      ctx.log(`job ${w.job_id}: ${w.appended.payload.detail}`);
      await ctx.publish(`${w.record.topic_prefix}/events`, w.appended.line);
    }
    for (const d of pass.moved) {
      ctx.log(`job ${d.job_id}: ${d.appended.payload.detail}`);
      await ctx.publish(`${d.record.topic_prefix}/events`, d.appended.line);
      ctx.aside(`tell:${d.to}`, `failover of job ${d.job_id}`, async (c) => {
        const r = await typeDispatched(deps, d);
        c.log(r.log.replace("its turn came", "failed over"));
        if (r.appended) await c.publish(`${d.record.topic_prefix}/events`, r.appended.line);
      });
    }
  },
});
