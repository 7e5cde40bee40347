// job.react (./reactor.ts, SPEC §7.4): every journal event not reacted to yet, once, in journal
// order: the delegator hears of a job's end and of its dialogs, loop jobs move on, a copy's agent
// is told to stop. reconcile and poll: every job; event: the job job.ingest journalled for;
// jobsChanged: every job, and the team's presence hears of it when there was anything new.
import { defineReaction } from "./reaction.ts";

export const jobReact = defineReaction({
  name: "job.react",
  on: ["reconcile", "event", "jobsChanged", "poll"],
  alone: { poll: "reactions failed" },
  state: () => ({}),
  async run(_deps, _st, tick, shared) {
    const { reactToJobs } = await import("./reactor.ts");
    const n = await reactToJobs(await shared.reactor(tick.ctx), tick.on === "event" ? [tick.job!] : undefined);
    // the presence's job column: a change the folder's watch saw, or events the slow tick found
    if (tick.on === "jobsChanged" && (n > 0 || tick.seen)) shared.team?.jobsChanged();
  },
});
