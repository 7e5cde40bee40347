// job.timeouts: with every poll, the jobs over their time or idle limit end (lib/jobs/ingest.ts
// scanJobs), and what that journals is published. One job's failure does not stop the others.
import { defineReaction } from "./reaction.ts";

export const jobTimeouts = defineReaction({
  name: "job.timeouts",
  on: ["poll"],
  alone: { poll: "timeout scan failed" },
  state: () => ({}),
  async run(_deps, _st, { ctx }, shared) {
    const [{ scanJobs }, { publishAppended }] = await Promise.all([import("../../jobs/ingest.ts"), import("./reactor.ts")]);
    const rc = await shared.reactor(ctx);
    const scan = await scanJobs(ctx.ws, Date.now() / 1000, ctx.log, shared.once(ctx), (id) => shared.journals.quiet(ctx.ws, id));
    for (const a of scan.timedOut) await publishAppended(rc, a.record, [a]);
  },
});
