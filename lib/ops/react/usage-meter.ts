// usage.meter (docs/cost.md): the agents' token usage, read from their own files (./meter.ts, held
// in ./shared.ts: job.react counts too, before a loop's next step). With every poll; and every
// watch tick while jobs are unfinished, so that their budgets hold to within a second.
import { defineReaction } from "./reaction.ts";

export const usageMeter = defineReaction({
  name: "usage.meter",
  on: ["poll", "watch"],
  alone: { poll: "usage meter failed", watch: "usage meter failed" },
  state: () => ({}),
  async run(_deps, _st, tick, shared) {
    // no unfinished job: no meter at the watch (usage is counted by the slower poll)
    if (tick.on === "watch" && tick.watched?.size === 0) return;
    await shared.meter(tick.ctx);
  },
});
