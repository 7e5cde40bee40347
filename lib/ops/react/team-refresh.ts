// team.refresh (docs/machines.md): with every poll, the team's presence looks again at the agents
// and publishes what changed, the events of copies their delegators miss are sent again, and so
// are the deliveries not received yet, every minute (./team.ts, ./forward.ts,
// lib/team/kept-offers.ts). Last in the poll: after the jobs and the meter have moved.
import { defineReaction } from "./reaction.ts";

export const teamRefresh = defineReaction({
  name: "team.refresh",
  on: ["poll"],
  state: () => ({}),
  async run(_deps, _st, { ctx }, shared) {
    if (!shared.team) return;
    await shared.team.tick(ctx, "refresh");
    await shared.team.forward(ctx);
  },
});
