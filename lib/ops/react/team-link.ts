// team.link (docs/machines.md): this machine's part in a team on the daemon's broker link, the
// team part (./team.ts) held in ./shared.ts. reconcile: a team config that does not load is said
// once; the first time, deliveries an earlier daemon took and never confirmed become uncertain.
// event: a message on the team's topics (a delivery, another host's online state) is taken here
// and goes no further. watch: the presence is published when the registry or a job changed or
// the heartbeat is due. connected: online, presence, and what the delegators miss.
import { defineReaction } from "./reaction.ts";

export const teamLink = defineReaction({
  name: "team.link",
  on: ["reconcile", "event", "watch", "connected"],
  alone: { watch: "team check failed" },
  state: () => ({ recovered: false }),
  async run(_deps, st, tick, shared) {
    const { ctx } = tick;
    const team = shared.team;
    if (tick.on === "reconcile") {
      if (shared.teamProblem) ctx.log(`team: ${shared.teamProblem}; this workspace takes no part in the team`);
      shared.teamProblem = undefined;
      if (team && !st.recovered) {
        st.recovered = true;
        await team.recover(ctx);
      }
    } else if (tick.on === "event") {
      if (!team?.owns(tick.topic!)) return;
      tick.done = true;
      await team.onMessage(tick.topic!, tick.payload!, ctx);
    } else if (tick.on === "watch") await team?.tick(ctx, "check");
    else if (tick.on === "connected") await team?.connected(ctx);
  },
});
