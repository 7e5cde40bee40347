// A job's journal, .mam/jobs/<id>.events.ndjson (append-only, fsynced; SPEC §7.1): parsing it,
// the identity of this machine's events (<id>.origin), and appending an event while moving the
// record's cached status (under the jobs lock of lib/jobs/record-file.ts). Use cases, reactions,
// the dashboard and the CLI reach it through the JobStore (lib/jobs/store.ts).
import { readFileSync } from "node:fs";
import { errCode, EXIT, MamError, notFound } from "../sys/errors.ts";
import { isValidJobId } from "../sys/names.ts";
import { isoUtc } from "../sys/time.ts";
import type { Json } from "./canonical.ts";
import { canonicalJson } from "./canonical.ts";
import { appendLineDurable, atomicWriteFile, splitLines } from "../sys/atomic.ts";
import { foldStatus, foldStep, type JobEvent, MAX_EVENT_BYTES, MAX_SEQ, signEvent } from "./event.ts";
import { type EventName, type JobStatus, isEventName } from "./statuses.ts";
import { newOrigin, ORIGIN_RE } from "./identity.ts";
import { type JobRecord, jobsDir, journalPath, originPath, readRecord, withJobsLock, writeRecord } from "./record-file.ts";

const isInt = (v: unknown) => Number.isSafeInteger(v);

/** a journal line is an event when it is a JSON object with a positive integer seq and a known event */
export function parseEventLine(line: string): JobEvent | undefined {
  if (!line.startsWith("{")) return undefined;
  try {
    const v = JSON.parse(line) as JobEvent;
    if (typeof v !== "object" || v === null || !isInt(v.seq) || v.seq < 1 || typeof v.event !== "string" || !isEventName(v.event)) return undefined;
    if (typeof v.detail !== "string") v.detail = String(v.detail ?? "");
    if (typeof v.source !== "string") v.source = String(v.source ?? "");
    return v;
  } catch {
    return undefined;
  }
}

/** the events of a journal text; a torn last line (a killed writer) and any garbage line are skipped */
export function parseJournal(text: string): { events: JobEvent[]; skipped: number } {
  const { lines, tail } = splitLines(text);
  if (tail !== "") lines.push(tail);
  const events: JobEvent[] = [];
  let skipped = 0;
  for (const l of lines) {
    if (l === "") continue;
    const ev = parseEventLine(l);
    if (ev) events.push(ev);
    else skipped++;
  }
  return { events, skipped };
}

export function readJournal(ws: string, id: string): JobEvent[] {
  let text: string;
  try {
    text = readFileSync(journalPath(ws, id), "utf8");
  } catch (e) {
    if (errCode(e) === "ENOENT") return [];
    throw new MamError(`cannot read job journal ${journalPath(ws, id)} (${(e as Error).message})`, EXIT.FAIL);
  }
  return parseJournal(text).events;
}


export interface EventInput {
  event: EventName;
  detail: string;
  source: string;
  data?: { [k: string]: Json };
}

export interface Appended {
  /** the signed payload, as journalled (and to be published) */
  payload: JobEvent;
  /** its canonical JSON text (the journal line and the wire payload) */
  line: string;
  /** the record after the update (undefined: a worker on another machine, journal only) */
  record?: JobRecord;
  /** lazy: the record on disk was left as it was (same status, same second: only last_seq lags) */
  deferred?: boolean;
  statusBefore: JobStatus;
  statusAfter: JobStatus;
}

/** keep a torn tail only if it is a whole event */
const keepTail = (tail: string) => parseEventLine(tail) !== undefined;

/** the fold of a journal so far: how many events, the status they fold to (pending if none), their highest seq */
export interface Folded {
  count: number;
  status: JobStatus;
  maxSeq?: number;
}

export const foldedOf = (events: readonly JobEvent[], rec?: JobRecord): Folded => ({ count: events.length, status: foldStatus(events, rec) });

/**
 * Append one journal line and move the record's cached status (call under the jobs lock). `lazy`
 * (the daemon, many events a second): leave the record on disk as it is when neither its status
 * nor its updated_at second would change; its last_seq then lags until settleLastSeq.
 */
export function journalAndUpdate(ws: string, id: string, rec: JobRecord | undefined, prior: Folded, ev: JobEvent, line: string, now: number, lazy = false): Appended {
  appendLineDurable(journalPath(ws, id), line, { mode: 0o600, keepTail });
  const before = rec && prior.count === 0 ? rec.status : prior.status;
  const after = foldStep(prior.status, ev, rec);
  let record: JobRecord | undefined;
  let deferred = false;
  if (rec) {
    const stamp = isoUtc(Math.floor(now));
    record = { ...rec, status: after, last_seq: Math.max(rec.last_seq, prior.maxSeq ?? 0, ev.seq), updated_at: stamp };
    if (lazy && after === rec.status && stamp === rec.updated_at) deferred = true;
    else writeRecord(ws, record);
  }
  return { payload: ev, line, record, statusBefore: before, statusAfter: after, ...(deferred ? { deferred } : {}) };
}

/** bring a record's last_seq up to the journal's highest seq (after lazy appends) */
export async function settleLastSeq(ws: string, id: string, maxSeq: () => number): Promise<void> {
  await withJobsLock(ws, () => {
    const rec = readRecord(ws, id);
    const m = rec ? maxSeq() : 0;
    if (rec && m > rec.last_seq) writeRecord(ws, { ...rec, last_seq: m });
  });
}

/**
 * The origin id of this journal's own events (call under the jobs lock). Kept in <id>.origin; a
 * fresh one when there is none, or when the journal is empty (a journal started again must not
 * reuse the identities of the events it lost).
 */
export function ownOrigin(ws: string, id: string, journalHasEvents: boolean): string {
  if (journalHasEvents) {
    try {
      const o = readFileSync(originPath(ws, id), "utf8").trim();
      if (ORIGIN_RE.test(o)) return o;
    } catch (e) {
      if (errCode(e) !== "ENOENT") throw new MamError(`cannot read ${originPath(ws, id)} (${(e as Error).message})`, EXIT.FAIL);
    }
  }
  const o = newOrigin();
  atomicWriteFile(originPath(ws, id), `${o}\n`, { mode: 0o600, regularOnly: true });
  return o;
}

/** an event, or a decision taken under the jobs lock from the fresh record and journal (undefined = none) */
export type EventDecision = EventInput | ((rec: JobRecord | undefined, events: JobEvent[]) => EventInput | undefined);

/**
 * The identity of the next event of ours (call under the jobs lock): this journal's origin and
 * 1 + the highest seq journalled under it. Never derived from another origin's seqs (a token holder
 * could send any seq); an origin whose seqs reach MAX_SEQ is replaced by a fresh one (seq 1), so a
 * journal never runs out of identities.
 */
export function nextIdentity(ws: string, id: string, prior: readonly JobEvent[]): { origin: string; seq: number } {
  const origin = ownOrigin(ws, id, prior.length > 0);
  let max = 0;
  for (const e of prior) if (e.origin === origin && e.seq > max) max = e.seq;
  if (max < MAX_SEQ) return { origin, seq: max + 1 };
  return { origin: ownOrigin(ws, id, false), seq: 1 };
}

/**
 * Append a new event of ours: under the jobs lock take this journal's origin and the next seq of
 * that origin (nextIdentity), sign with the record's token
 * (or the given one when this machine has no record: a remote worker keeps a journal only),
 * append + fsync, update the record. Returns undefined when a decision function said no.
 */
export async function appendEvent(
  ws: string,
  id: string,
  decide: EventDecision,
  /** `vouch`: data added to the event once its identity is known, before it is signed (the daemon's attestation, lib/team/attest.ts) */
  opts: { token?: string; now?: number; vouch?: (ev: JobEvent) => { [k: string]: Json } } = {},
): Promise<Appended | undefined> {
  if (!isValidJobId(id)) throw new MamError(`invalid job id '${id}'`, EXIT.USAGE);
  // fail before creating anything when the job is unknown here
  const pre = readRecord(ws, id);
  if (!pre && opts.token === undefined) throw notFound(`no job ${id} in ${jobsDir(ws)}`, "pass --token (or MAM_JOB_TOKEN) when the job was submitted on another machine");
  return withJobsLock(ws, () => {
    const now = opts.now ?? Date.now() / 1000;
    const rec = readRecord(ws, id);
    const token = rec?.auth_token ?? opts.token;
    if (token === undefined) throw notFound(`no job ${id} in ${jobsDir(ws)}`);
    const prior = readJournal(ws, id);
    const input = typeof decide === "function" ? decide(rec, prior) : decide;
    if (input === undefined) return undefined;
    const { origin, seq } = nextIdentity(ws, id, prior);
    const bare: JobEvent = { schema_version: 1, seq, origin, job_id: id, event: input.event, timestamp: isoUtc(Math.floor(now)), detail: input.detail, source: input.source, data: input.data ?? {} };
    const ev = signEvent(opts.vouch ? { ...bare, data: { ...bare.data, ...opts.vouch(bare) } } : bare, token);
    const line = canonicalJson(ev);
    if (Buffer.byteLength(line) > MAX_EVENT_BYTES) {
      throw new MamError(`event of ${Buffer.byteLength(line)} bytes is larger than ${MAX_EVENT_BYTES} (receivers drop it)`, EXIT.USAGE, "shorten --detail / --data");
    }
    return journalAndUpdate(ws, id, rec, foldedOf(prior, rec), ev, line, now);
  });
}