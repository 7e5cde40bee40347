// What the subscriber daemon does with job events (SPEC §7.4): ingest a received payload
// (verify, journal once, move the status) and scan for timeouts. The daemon owns the broker
// connection, the notifications and the loop prompts; these functions own the files.
import { existsSync } from "node:fs";
import { canonicalJson } from "./canonical.ts";
import { wireRefusal } from "./delivery.ts";
import { DAEMON_SOURCE, isDaemonQuestion, type JobEvent, MAX_EVENT_BYTES, oversizedSize, verifyEvent, type DropReason } from "./event.ts";
import { isFinal, type JobStatus } from "./statuses.ts";
import { EventIndex, identityText } from "./identity.ts";
import { JournalCache, type JournalIndex } from "./journal-index.ts";
import { type Appended, appendEvent, effectiveStatus, journalAndUpdate, listJobIds, readJournal, readRecord, recordPath, type JobRecord, withJobsLock } from "./store.ts";
import { MamError } from "../sys/errors.ts";
import type { LogOnce } from "../sys/log-once.ts";

export type Ingested =
  /** verified and appended: the daemon notifies the delegator when `terminal` */
  | { outcome: "appended"; job: JobRecord; event: JobEvent; statusBefore: JobStatus; status: JobStatus; terminal: boolean; gap?: string; /** the record's last_seq lags (settleLastSeq) */ deferred?: boolean }
  /**
   * an exact replay of a journalled event (the broker's redelivery, a remote's resend, the echo of
   * an event published from this machine): dropped; `log` says so, the caller logs it
   */
  | { outcome: "duplicate"; job: JobRecord; event: JobEvent; status: JobStatus; terminal: boolean; log: string; /** this journal's own event, back from the broker */ echo: boolean }
  | { outcome: "dropped"; reason: DropReason | "topic-mismatch" | "bad-record" | "not-vouched" | "not-from-its-host"; log: string };

const TOPIC_RE = /^(.*)\/([0-9a-f]{8})\/events$/;

/**
 * Verify a payload received on `topic`, append it once to the job's journal (dedupe by event
 * identity under the jobs lock) and move the record's status. `log` gets one line per drop, gap
 * or append; a repeat's line is in the result (the daemon folds bursts of them, see RepeatLog).
 * `terminal` is true when this event is the one that ended the job (notify the delegator once).
 * `cache` keeps the journals' indexes between calls (the daemon's); without it, each call reads
 * the journal. `lazy`: see journalAndUpdate (then call settleLastSeq within a second).
 */
export async function ingestEvent(
  ws: string,
  topic: string,
  payload: Buffer,
  log: (line: string) => void,
  cache: JournalCache = new JournalCache(),
  lazy = false,
  /** where drop lines go (default: log); the daemon limits them per topic and reason (DropLog) */
  logDrop: (line: string, topic: string, reason: string) => void = log,
  /**
   * a daemon's question (isDaemonQuestion) heard on the broker: why it is not taken, or undefined
   * when the agent's host's daemon vouches for it (the daemon's team part); none is taken without
   */
  vouched: (rec: JobRecord, ev: JobEvent) => string | undefined = () => "this workspace is in no team",
): Promise<Ingested> {
  const drop = (reason: Ingested & { outcome: "dropped" }): Ingested => {
    // every drop line names the topic it came on
    logDrop(reason.log.includes(topic) ? reason.log : `${reason.log} (on ${topic})`, topic, reason.reason);
    return reason;
  };
  const size = oversizedSize(payload) ?? payload.byteLength;
  if (size > MAX_EVENT_BYTES) {
    return drop({ outcome: "dropped", reason: "oversized", log: `dropped event on ${topic}: payload of ${size} bytes exceeds ${MAX_EVENT_BYTES}` });
  }
  const m = TOPIC_RE.exec(topic);
  // unknown jobs never touch the disk (and never create .mam/jobs)
  const id0 = m?.[2];
  if (id0 === undefined || !existsSync(recordPath(ws, id0))) {
    const v = verifyEvent(payload, () => undefined, () => new EventIndex());
    return drop({ outcome: "dropped", reason: v.ok ? "unknown-job" : v.reason, log: v.ok ? `dropped event on ${topic}: unknown job` : v.log });
  }
  // a repeat (a remote's resends, the broker's redelivery) is known from the index alone: the
  // journal only grows, so an identity in it stays there; no lock, no file read
  const known = cache.peek(ws, id0);
  if (known?.record) {
    const rec = known.record;
    const v = verifyEvent(payload, (id) => (id === rec.job_id ? rec.auth_token : undefined), () => known.index);
    if (!v.ok && v.reason === "repeat") return duplicateOf(known, rec, v.key!, `${v.log} (on ${topic})`);
  }
  return withJobsLock(ws, () => {
    let rec: JobRecord | undefined;
    try {
      rec = readRecord(ws, id0);
    } catch (e) {
      if (!(e instanceof MamError)) throw e;
      return drop({ outcome: "dropped", reason: "bad-record", log: `dropped event on ${topic}: ${e.message}` });
    }
    if (!rec) return drop({ outcome: "dropped", reason: "unknown-job", log: `dropped event on ${topic}: unknown job` });
    const j = cache.get(ws, id0, rec);
    j.record = rec;
    const v = verifyEvent(
      payload,
      (id) => (rec && id === rec.job_id ? rec.auth_token : undefined),
      () => j.index,
    );
    if (!v.ok) {
      if (v.reason === "repeat") return duplicateOf(j, rec, v.key!, `${v.log} (on ${topic})`);
      return drop({ outcome: "dropped", reason: v.reason, log: v.log });
    }
    if (v.event.job_id !== id0) {
      return drop({ outcome: "dropped", reason: "topic-mismatch", log: `dropped event on ${topic}: it names job ${v.event.job_id}` });
    }
    if (isDaemonQuestion(v.event)) {
      // only a daemon reads a dialog off a screen: a token holder's (an agent's) question is not one
      const why = vouched(rec, v.event);
      if (why) return drop({ outcome: "dropped", reason: "not-vouched", log: `dropped event (job ${id0} ${identityText(v.event)}) on ${topic}: a permission_required with a question (or from ${DAEMON_SOURCE}) is the daemon's own, and ${why}` });
    }
    // what only mam journals, on a job of ours: only from the host a delivery went to (review T9)
    const refused = rec.remote_of ? undefined : wireRefusal(j.events, v.event);
    if (refused) return drop({ outcome: "dropped", reason: "not-from-its-host", log: `dropped event on ${topic}: ${refused}` });
    // a gap says the delegator's journal may lack a report; a copy of another host's job (a team's
    // delivery) hears only what the job's other hosts publish once it exists: its gaps say nothing
    if (v.log && !rec.remote_of) log(v.log);
    const a: Appended = journalAndUpdate(ws, id0, rec, { count: j.index.count, status: j.status, maxSeq: j.index.maxAny() }, v.event, canonicalJson(v.event), Date.now() / 1000, lazy);
    j.refresh(rec);
    log(`job ${id0} ${identityText(v.event)} ${v.event.event} from ${v.event.source}: ${a.statusBefore} -> ${a.statusAfter}`);
    j.record = a.deferred ? rec : a.record;
    return {
      outcome: "appended",
      ...(a.deferred ? { deferred: true } : {}),
      job: a.record!,
      event: v.event,
      statusBefore: a.statusBefore,
      status: a.statusAfter,
      terminal: !isFinal(a.statusBefore) && isFinal(a.statusAfter),
      ...(v.gap ? { gap: v.log } : {}),
    };
  });
}

function duplicateOf(j: JournalIndex, rec: JobRecord, key: string, log: string): Ingested {
  const at = j.index.positionOf(key)!;
  const status = j.index.count ? j.status : rec.status;
  const event = j.events[at]!;
  return { outcome: "duplicate", job: rec, event, status, terminal: isFinal(status) && j.endAt === at, log, echo: event.origin !== undefined && event.origin === j.ownOrigin() };
}

/**
 * The daemon's log of repeats: the first of a burst in full, the rest counted, and one summary
 * line when the burst ends (the next other line, or a quiet second). A remote reporter without an
 * ack resends its earlier events with every report; one line each would bury the log.
 */
export class RepeatLog {
  private pending = 0;
  private first = "";
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private log: (line: string) => void,
    private quietMs = 1000,
  ) {}

  repeat(line: string): void {
    if (this.pending === 0) this.log(line);
    else if (this.pending === 1) this.first = line;
    this.pending++;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.flush(), this.quietMs);
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** end the burst: one line for the repeats not logged yet */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const more = this.pending - 1;
    this.pending = 0;
    if (more > 0) this.log(`dropped ${more} more repeat${more > 1 ? "s" : ""} of journalled events (the first: ${this.first.replace(/^dropped event /, "")})`);
  }
}

/**
 * The daemon's log of dropped events, limited per sender as far as MQTT lets us tell one (it
 * does not say who sent a message): per topic (the job a sender names) and reason (a bad
 * signature, not JSON, …). In each window (a minute) the first `perTopic` drops of a topic and
 * reason are logged in full, and at most `total` drops in all; the rest are counted, and when the
 * window ends one line per topic and reason says how many more were dropped (the busiest first,
 * at most `summaries` lines, then one line for the others). A flood of 5000 forged events costs a
 * few lines, not 5000, while different problems on one job each still get their own line.
 */
export class DropLog {
  private start: number;
  private logged = 0;
  private byTopic = new Map<string, { topic: string; logged: number; more: number; last: string }>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private log: (line: string) => void,
    private windowMs = 60_000,
    private perTopic = 3,
    private total = 30,
    private summaries = 5,
    private now: () => number = Date.now,
  ) {
    this.start = now();
  }

  drop(topic: string, line: string, reason = ""): void {
    if (this.now() - this.start >= this.windowMs) this.flush();
    const key = `${topic}\u0000${reason}`;
    let t = this.byTopic.get(key);
    if (!t) this.byTopic.set(key, (t = { topic, logged: 0, more: 0, last: "" }));
    if (t.logged < this.perTopic && this.logged < this.total) {
      t.logged++;
      this.logged++;
      this.log(line);
      return;
    }
    t.more++;
    t.last = line;
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), Math.max(0, this.start + this.windowMs - this.now()));
      (this.timer as { unref?: () => void }).unref?.();
    }
  }

  /** end the window: say how many drops were not logged, per topic */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const secs = Math.max(1, Math.round((this.now() - this.start) / 1000));
    const more = [...this.byTopic.values()].filter((t) => t.more > 0).sort((a, b) => b.more - a.more);
    for (const t of more.slice(0, this.summaries)) {
      this.log(`dropped ${t.more} more event${t.more > 1 ? "s" : ""} on ${t.topic} in ${secs} s, not logged one by one (the last: ${t.last.replace(/ \(on [^)]*\)$/, "")})`);
    }
    const rest = more.slice(this.summaries);
    if (rest.length) {
      const n = rest.reduce((a, t) => a + t.more, 0);
      const topics = new Set(rest.map((t) => t.topic)).size;
      this.log(`dropped ${n} more event${n > 1 ? "s" : ""} on ${topics} other topic${topics > 1 ? "s" : ""} in ${secs} s, not logged one by one`);
    }
    this.byTopic.clear();
    this.logged = 0;
    this.start = this.now();
  }
}

// ---- timeouts ------------------------------------------------------------------------------

export interface TimeoutDecision {
  job_id: string;
  detail: string;
}

const epochOf = (iso: string): number => Math.floor(Date.parse(iso) / 1000);

/**
 * Pure: should this job time out now? Overall: `timeout_sec` since created_at, or since its
 * dispatch when it waited its turn (pending or running; never while it waits). Idle: running and no event for `idle_timeout_sec` (the record's updated_at is the
 * local time of the last event appended). 0 disables either limit.
 */
export function decideTimeout(job: JobRecord, events: readonly JobEvent[], now: number): TimeoutDecision | undefined {
  const status = effectiveStatus(job, events);
  // a job waiting its turn has not started its clock: it runs from its dispatch
  if (isFinal(status) || status === "queued") return undefined;
  const dispatched = events.findLast((e) => e.event === "dispatched");
  const created = dispatched ? epochOf(dispatched.timestamp) : epochOf(job.created_at);
  if (job.timeout_sec > 0 && now - created >= job.timeout_sec) {
    return { job_id: job.job_id, detail: `no final event within ${job.timeout_sec} s` };
  }
  if (status === "running" && job.idle_timeout_sec > 0) {
    const last = epochOf(job.updated_at);
    if (now - last >= job.idle_timeout_sec) return { job_id: job.job_id, detail: `no event for ${job.idle_timeout_sec} s` };
  }
  return undefined;
}

export interface ScanResult {
  /** timeout events appended (publish them: `${job.topic_prefix}/events`, payload `line`) */
  timedOut: Appended[];
  /** job files that could not be read (named in the log) */
  broken: string[];
  /** jobs whose timeout could not be decided or appended (named in the log); the scan went on */
  failed: string[];
}

/**
 * Decide and apply timeouts for every job of the workspace (but those `ended` knows have ended);
 * re-decided under the lock before appending. A job that fails (a broken record, a journal that
 * cannot be read or appended to) is logged and skipped: the jobs after it are still scanned. With
 * `once` (the daemon, which scans every poll), each failure is logged once rather than at every
 * scan.
 */
export async function scanJobs(ws: string, now: number = Date.now() / 1000, log: (line: string) => void = () => {}, once?: LogOnce, ended: (id: string) => boolean = () => false): Promise<ScanResult> {
  const res: ScanResult = { timedOut: [], broken: [], failed: [] };
  const failed = (what: string, e: unknown, doing?: string) => (once ? once.failed(what, e, doing) : log(`${what}: ${doing ? `${doing}: ` : ""}${e instanceof Error ? e.message : String(e)}`));
  for (const id of listJobIds(ws)) {
    if (ended(id)) continue; // known to have ended: it cannot time out
    const what = `job ${id}`;
    let rec: JobRecord | undefined;
    try {
      rec = readRecord(ws, id);
    } catch (e) {
      res.broken.push(id);
      failed(what, e);
      continue;
    }
    once?.ok(what);
    try {
      // a copy of another host's job times out there (docs/machines.md), and we hear it
      if (!rec || rec.remote_of || !decideTimeout(rec, readJournal(ws, id), now)) {
        once?.ok(what, "timeout scan failed");
        continue;
      }
      const a = await appendEvent(
        ws,
        id,
        (r, evs) => {
          const d = r ? decideTimeout(r, evs, now) : undefined;
          return d ? { event: "timeout", detail: d.detail, source: "monitor" } : undefined;
        },
        { now },
      );
      once?.ok(what, "timeout scan failed");
      if (a) {
        log(`job ${id} timeout: ${a.payload.detail}`);
        res.timedOut.push(a);
      }
    } catch (e) {
      res.failed.push(id);
      failed(what, e, "timeout scan failed");
    }
  }
  return res;
}
