// merge.queue (docs/merge-queue.md): the merge queue moves on its own. Each tick, entries whose job
// (or fix job) ended go in line or out of it (lib/ops/job/merge-run.ts promoteWaiting); a target with
// an entry ready gets a run (runMerges) beside the hooks, not in them: a check may take longer than a
// hook's deadline. One run at a time per daemon; each target's lock keeps a `mam merge run` (or
// another runner) out of the same line. A daemon that starts finds what a killed one left merging
// and starts it again (the reconcile event). While an entry is live, the daemon stays.
import { defineReaction } from "./reaction.ts";

interface MergeState {
  /** the run going on beside the hooks, if any */
  running?: Promise<void>;
  /** the queue file's stamp when it last held nothing live: nothing to do until it changes */
  idleAt?: string;
}

export const mergeQueue = defineReaction({
  name: "merge.queue",
  on: ["reconcile", "jobsChanged", "poll", "watch"],
  alone: { reconcile: "merge queue failed", jobsChanged: "merge queue failed", poll: "merge queue failed", watch: "merge queue failed" },
  state: (): MergeState => ({}),
  async run(deps, st, { ctx }) {
    if (st.running) return;
    const { hasQueue, queueStamp } = await import("../job/merge-files.ts");
    if (!hasQueue(deps.ws)) return;
    const stamp = queueStamp(deps.ws);
    if (st.idleAt === stamp) return;
    const { queueBusy, runMerges } = await import("../job/merge-run.ts");
    if (!queueBusy(deps)) {
      st.idleAt = stamp;
      return;
    }
    st.idleAt = undefined;
    const hooks = { log: ctx.log, publish: (t: string, p: string) => ctx.publish(t, p) };
    st.running = runMerges(deps, hooks)
      .then(
        () => undefined,
        (e: unknown) => ctx.log(`merge queue failed: ${(e as Error)?.message ?? String(e)}`),
      )
      .finally(() => {
        st.running = undefined;
      });
  },
  async busy(deps, st) {
    if (st.running) return true;
    const { queueBusy } = await import("../job/merge-run.ts");
    return queueBusy(deps);
  },
});
