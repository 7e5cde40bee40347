// reconcile.pass: the reconcile pass (lib/ops/reconcile.ts), applied: at each reconcile, and in
// polling mode with every poll. A running row whose pane is gone is a notification ("died").
import { defineReaction } from "./reaction.ts";

export const reconcilePass = defineReaction({
  name: "reconcile.pass",
  on: ["reconcile", "poll"],
  alone: { poll: "reconcile pass failed" },
  state: () => ({}),
  async run(deps, _st, { on, ctx }, shared) {
    if (on === "poll" && ctx.mode !== "polling") return;
    const { reconcileOnce, describeAction } = await import("../reconcile.ts");
    const r = await reconcileOnce(deps, { dry_run: false });
    for (const a of r.actions) ctx.log(`reconcile: ${describeAction(a)}`);
    if (r.actions.some((a) => a.type === "terminate")) await (await shared.notes()).terminated(r.actions, ctx.log);
  },
});
