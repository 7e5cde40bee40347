// notices.later: the notices held for agents that sat at a dialog (a job over its budget, a copy
// cancelled by its host: ./reactor.ts putAside) are typed once the agent is back at its prompt.
// Before queue.dispatch: the notice about the job that stopped comes before the agent's next job.
import { defineReaction } from "./reaction.ts";

export const noticesLater = defineReaction({
  name: "notices.later",
  on: ["watch"],
  alone: { watch: "held notices failed" },
  state: () => ({}),
  async run(deps, _st, { ctx }, shared) {
    if (shared.later.length === 0) return;
    const { tellLater } = await import("./reactor.ts");
    shared.later = await tellLater({ runtime: deps.runtime, log: ctx.log }, shared.later);
  },
});
