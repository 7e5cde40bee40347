// Reporting a job event (docs/job-events.md), what `mam job event` runs in the agent doing the
// job: journal it under the jobs lock (signed with the job's token: the record's, else the one
// given on a machine that has no record of the job), then publish it. A worker on another machine
// holds the only copy of its events: each report sends again its earlier events that the
// delegator's journal does not hold yet (the daemon's signed, retained ack says which), so that
// one lost while the broker was down still arrives with the next report.
import type { BrokerConfig } from "../../jobs/broker-config.ts";
import { brokerConfigFromEnv, eventsTopic } from "../../jobs/broker-config.ts";
import { canonicalJson, type Json } from "../../jobs/canonical.ts";
import { type JobEvent } from "../../jobs/event.ts";
import { type EventName, isFinal, type JobStatus } from "../../jobs/statuses.ts";
import { publishJournalled, savedNote } from "../../jobs/publish.ts";
import { type Notice, warning } from "../../sys/notice.ts";
import type { Deps } from "../deps.ts";

export interface EventReport {
  job_id: string;
  event: EventName;
  detail?: string;
  /** extra metadata: a JSON object (integers only in numbers) */
  data?: { [k: string]: Json };
  source: string;
  /** the job's token when this machine has no record of the job */
  token?: string;
}

export interface Reported {
  job_id: string;
  seq: number;
  event: EventName;
  /** the job's status after the event (a job that had ended keeps its status) */
  status: JobStatus;
  warnings: Notice[];
}

/** at most this many earlier events go again with a report (a bound on a long job's reports) */
const RESEND_MAX = 200;

export async function reportEvent(deps: Deps, r: EventReport): Promise<Reported> {
  const cfg = brokerConfigFromEnv(deps.env); // a bad MQTT_* setting fails before anything is written
  // on a copy of another host's job, the agent's report confirms that its text arrived (receive.ts)
  const copy = deps.jobs.read(r.job_id);
  const confirmed = copy?.remote_of
    ? await (async () => {
        const { confirmByReport } = await import("./receive.ts");
        return deps.jobs.append(r.job_id, (rec, evs) => confirmByReport(rec, evs, r.source));
      })()
    : undefined;
  if (confirmed) await publishJournalled(`${confirmed.record!.topic_prefix}/events`, confirmed.line, r.job_id, confirmed.payload.seq, deps.env);
  const a = (await deps.jobs.append(r.job_id, { event: r.event, detail: r.detail ?? "", source: r.source, data: r.data ?? {} }, { token: r.token }))!;
  const warnings: Notice[] = [];
  if (a.record && isFinal(a.statusBefore)) warnings.push(warning(`job ${r.job_id} had already ended (${a.statusBefore}); the event is recorded, the status stays`));
  if (a.record) {
    const n = await publishJournalled(`${a.record.topic_prefix}/events`, a.line, r.job_id, a.payload.seq, deps.env);
    if (n) warnings.push(n);
  } else {
    const n = await publishRemote(deps, cfg, r.job_id, r.token!, a.payload, a.line);
    if (n) warnings.push(n);
  }
  return { job_id: r.job_id, seq: a.payload.seq, event: r.event, status: a.statusAfter, warnings };
}

async function publishRemote(deps: Deps, cfg: BrokerConfig, id: string, token: string, ev: JobEvent, line: string): Promise<Notice | undefined> {
  const [{ publishReport }, { ackTopicOf, readAck }] = await Promise.all([import("../../jobs/transport.ts"), import("../../jobs/acks.ts")]);
  const topic = eventsTopic(cfg, id);
  const r = await publishReport(cfg, topic, ackTopicOf(topic), (ack) => {
    const mark = ack && ev.origin !== undefined ? (readAck(ack, id, token)?.[ev.origin] ?? 0) : 0;
    return [...resendable(deps, id, ev, mark), line];
  });
  return r.ok ? undefined : savedNote(id, ev.seq, r.reason, true);
}

/** this journal's own events before `ev` and past `mark` (and any from an older mam), oldest first, at most RESEND_MAX */
function resendable(deps: Deps, id: string, ev: JobEvent, mark: number): string[] {
  return deps.jobs
    .journal(id)
    .filter((x) => x.seq < ev.seq && (x.origin === undefined || (x.origin === ev.origin && x.seq > mark)))
    .sort((a, b) => a.seq - b.seq)
    .slice(-RESEND_MAX)
    .map((x) => canonicalJson(x));
}
