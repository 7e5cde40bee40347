// Reporting a job event (docs/job-events.md), what `mam job event` runs in the agent doing the
// job: journal it under the jobs lock (signed with the job's token: the record's, else the one
// given on a machine that has no record of the job), then publish it. A worker on another machine
// (with the job's token, or a team's copy of the job) holds the only copy of its events: each
// report sends again, first, its earlier events that the delegator's journal does not hold yet
// (the daemon's signed, retained ack says which), so that one lost while the broker was down still
// arrives with the next report, and before it.
import type { BrokerConfig } from "../../jobs/broker-config.ts";
import { brokerConfigFromEnv, eventsTopic } from "../../jobs/broker-config.ts";
import { canonicalJson, type Json } from "../../jobs/canonical.ts";
import { DAEMON_SOURCE, endsJob, isDaemonQuestion, type JobEvent } from "../../jobs/event.ts";
import { usageError } from "../../sys/errors.ts";
import { field } from "../../sys/fields.ts";
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
  refuseDaemons(r);
  const cfg = brokerConfigFromEnv(deps.env); // a bad MQTT_* setting fails before anything is written
  // on a copy of another host's job, the agent's report confirms that its text arrived
  // (receive.ts): journalled before the report, and sent with it (below)
  if (deps.jobs.read(r.job_id)?.remote_of) {
    const { confirmByReport } = await import("./receive.ts");
    await deps.jobs.append(r.job_id, (rec, evs) => confirmByReport(rec, evs, r.source));
  }
  const lifted = await liftLimitByReport(deps, r);
  const a = (await deps.jobs.append(r.job_id, { event: r.event, detail: r.detail ?? "", source: r.source, data: r.data ?? {} }, { token: r.token }))!;
  if (lifted?.record && !lifted.record.remote_of) await publishJournalled(`${lifted.record.topic_prefix}/events`, lifted.line, r.job_id, lifted.payload.seq, deps.env);
  const warnings: Notice[] = [];
  if (a.record && isFinal(a.statusBefore)) warnings.push(warning(`job ${r.job_id} had already ended (${a.statusBefore}); the event is recorded, the status stays`));
  if (a.record && !a.record.remote_of) {
    const n = await publishJournalled(`${a.record.topic_prefix}/events`, a.line, r.job_id, a.payload.seq, deps.env);
    if (n) warnings.push(n);
  } else {
    // the delegator's journal is on another machine: a copy of a team job (its daemon also sends
    // what the delegator misses, once it can), or a job known here by its token only
    const topic = a.record ? `${a.record.topic_prefix}/events` : eventsTopic(cfg, r.job_id);
    const n = await publishWithResends(deps, cfg, topic, r.job_id, a.record?.auth_token ?? r.token!, a.payload, a.line, !a.record);
    if (n) warnings.push(n);
  }
  return { job_id: r.job_id, seq: a.payload.seq, event: r.event, status: a.statusAfter, warnings };
}

/**
 * an agent journalled `limited` on this job (lib/ops/react/limits-watch.ts) that reports on it again
 * has a model answering it: `unlimited` is journalled first, so the job's history closes the limit
 * before the report (which may end the job, after which the watch journals nothing on it). The
 * daemon's watch still clears the agent's row and tells the user. A cheap look at the journal first:
 * the lock is taken only when a limit is open.
 */
async function liftLimitByReport(deps: Deps, r: EventReport) {
  if (r.event === "limited" || r.event === "unlimited" || !deps.jobs.read(r.job_id)) return undefined;
  const open = (evs: readonly JobEvent[]) => {
    const last = evs.findLast((e) => (e.event === "limited" || e.event === "unlimited") && e.data?.session === r.source);
    return last?.event === "limited" ? last : undefined;
  };
  if (!open(deps.jobs.journal(r.job_id))) return undefined;
  return deps.jobs.append(r.job_id, (rec, evs) => {
    const lim = open(evs);
    if (!rec || !lim || evs.some((e) => endsJob(e, rec))) return undefined;
    const why = `it reported ${r.event} on the job`;
    return { event: "unlimited", detail: `${r.source} is no longer limited: ${why}`, source: "mam", data: { session: r.source, since: lim.data?.since ?? null, why } };
  });
}

/**
 * what only the daemon reports (docs/job-events.md): its source, and a dialog's question (it reads
 * it off the agent's screen; the notifications and `mam approve` act on it). `mam job event` is
 * granted to agents: a question from one would be a forgery of the daemon's.
 */
function refuseDaemons(r: EventReport): void {
  if (r.source === DAEMON_SOURCE) {
    throw usageError(`${field("source")} ${DAEMON_SOURCE} is the daemon's own (what it saw on the agents' screens); nothing was journalled`, `report as yourself: ${field("source")} <your session name>`);
  }
  if (isDaemonQuestion({ event: r.event, source: r.source, data: r.data ?? {} })) {
    throw usageError(
      `a permission_required with data.question is the daemon's own (it reads the dialog off the agent's screen); nothing was journalled`,
      `report without a question (say what you wait for in ${field("detail")}): the daemon reports a real dialog itself`,
    );
  }
}

/**
 * publish `line` after this journal's earlier events that the delegator's ack does not hold, in
 * order, on one connection: whichever way an event reaches the delegator (this report, an earlier
 * one, the daemon's resend), it arrives after the events before it
 */
async function publishWithResends(deps: Deps, cfg: BrokerConfig, topic: string, id: string, token: string, ev: JobEvent, line: string, remote: boolean): Promise<Notice | undefined> {
  const [{ publishReport }, { ackHolds, ackTopicOf, readAck }] = await Promise.all([import("../../jobs/transport.ts"), import("../../jobs/acks.ts")]);
  const r = await publishReport(cfg, topic, ackTopicOf(topic), (ack) => {
    const marks = ack ? readAck(ack, id, token) : undefined;
    return [...resendable(deps, id, ev, (o, seq) => ackHolds(marks, o, seq)), line];
  });
  return r.ok ? undefined : savedNote(id, ev.seq, r.reason, remote);
}

/** this journal's own events before `ev` that the ack does not hold (and any from an older mam), oldest first, at most RESEND_MAX */
function resendable(deps: Deps, id: string, ev: JobEvent, held: (origin: string, seq: number) => boolean): string[] {
  return deps.jobs
    .journal(id)
    .filter((x) => x.seq < ev.seq && (x.origin === undefined || (x.origin === ev.origin && !held(x.origin, x.seq))))
    .sort((a, b) => a.seq - b.seq)
    .slice(-RESEND_MAX)
    .map((x) => canonicalJson(x));
}
