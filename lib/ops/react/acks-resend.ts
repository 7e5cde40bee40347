// acks.resend: at a reconcile in MQTT mode, the acknowledgements of every unfinished job of ours
// are published again (a broker that restarted without persistence lost the retained ones;
// lib/jobs/acks.ts, ./ack-sender.ts). A copy of another host's job is acknowledged by its delegator.
import { isFinal } from "../../jobs/statuses.ts";
import { defineReaction } from "./reaction.ts";

export const acksResend = defineReaction({
  name: "acks.resend",
  on: ["reconcile"],
  state: () => ({}),
  async run(deps, _st, { ctx }, shared) {
    if (ctx.mode !== "mqtt") return;
    const acks = shared.acks(ctx);
    acks.forgetSent();
    for (const id of deps.jobs.ids()) {
      try {
        const r = deps.jobs.read(id);
        if (!r || isFinal(r.status) || r.remote_of) continue;
        shared.journals.get(ctx.ws, id, r);
        await acks.send(r, ctx.publish);
      } catch {}
    }
  },
});
