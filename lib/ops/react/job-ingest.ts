// job.ingest: one job event from the broker (lib/jobs/ingest.ts: verify, journal once, move the
// status). A record left lazily behind by a burst gets its last_seq within a second (settling);
// the job's acknowledgements go out within ./ack-sender.ts's period; drops are logged a few per
// topic (DropLog), repeats a line per burst (RepeatLog). A dropped event goes no further; for the
// others, job.react reacts to that job next (tick.job).
import type { DropLog, RepeatLog } from "../../jobs/ingest.ts";
import { hostName } from "../../team/host.ts";
import { ackTopicOf } from "../../jobs/acks.ts";
import { type BrokerConfig, brokerConfigFromEnv, eventsTopic } from "../../jobs/broker-config.ts";
import type { Deps } from "../deps.ts";
import { defineReaction } from "./reaction.ts";
import type { Shared } from "./shared.ts";

interface IngestState {
  repeats?: RepeatLog;
  drops?: DropLog;
  /** per job, the timer that settles its record's last_seq */
  settling: Map<string, ReturnType<typeof setTimeout>>;
  /** the broker settings (the job topics' prefix), read once */
  cfg?: BrokerConfig;
}

export const jobIngest = defineReaction({
  name: "job.ingest",
  on: ["event"],
  state: (): IngestState => ({ settling: new Map() }),
  async run(deps, st, tick, shared) {
    const { ctx } = tick;
    const { DropLog, ingestEvent, RepeatLog } = await import("../../jobs/ingest.ts");
    const repeats = (st.repeats ??= new RepeatLog(ctx.log));
    // drops are limited per topic and reason: a flood of forged events costs a few lines (DropLog)
    const drops = (st.drops ??= new DropLog(ctx.log));
    // an event of a job this workspace does not have is the broker's other traffic (other
    // workspaces, the team's other hosts), not a problem: MAM_DEBUG=1 shows it
    const onDrop = (line: string, t: string, why: string) => (why === "unknown-job" ? ctx.debug(line) : (repeats.flush(), drops.drop(t, line, why)));
    const { vouchedQuestion } = await import("../../team/attest.ts");
    const team = shared.team;
    const here = team?.host ?? hostName(deps.env);
    const { journals } = shared;
    const r = await ingestEvent(ctx.ws, tick.topic!, tick.payload!, (line) => (repeats.flush(), ctx.log(line)), journals, true, onDrop, (rec, ev) => vouchedQuestion(shared.teamCfg, here, rec, ev));
    if (r.outcome === "appended" && r.deferred) settleSoon(deps, st, shared, ctx.ws, r.job.job_id);
    // the echo of an event this machine published is expected: only MAM_DEBUG=1 logs it
    if (r.outcome === "duplicate") (r.echo ? ctx.debug(r.log) : repeats.repeat(r.log));
    if (r.outcome !== "dropped" && !r.job.remote_of) {
      // a report by token came on the job's old topic: its reporter reads the acks next to it
      const old = eventsTopic((st.cfg ??= brokerConfigFromEnv(deps.env)), r.job.job_id);
      shared.acks(ctx).note(r.job, ctx.publish, tick.topic === old ? ackTopicOf(old) : undefined);
    }
    if (r.outcome === "appended") team?.jobsChanged();
    // a gap in another host's numbering of its events on our job: kept for status --fleet and doctor
    if (r.outcome === "appended" && r.gap && !r.job.remote_of && r.event.source.includes("@")) {
      const from = r.event.source.slice(r.event.source.lastIndexOf("@") + 1);
      if (from !== here) (await import("../../team/gaps.ts")).noteGap(ctx.ws, from, r.gap);
    }
    if (r.outcome === "dropped") tick.done = true;
    else tick.job = r.job.job_id;
  },
});

/** records left lazily behind by a burst of events get their last_seq within a second */
function settleSoon(deps: Deps, st: IngestState, shared: Shared, ws: string, id: string): void {
  if (st.settling.has(id)) return;
  const t = setTimeout(() => {
    st.settling.delete(id);
    void deps.jobs.settle(id, () => shared.journals.peek(ws, id)?.index.maxAny() ?? 0).catch(() => {}); // the next event settles it
  }, 1000);
  (t as { unref?: () => void }).unref?.();
  st.settling.set(id, t);
}
