// Job events (SPEC §7.2): the payload, its signature, the status fold, and the receiver's
// accept/drop decision. Pure: no I/O.
import { hmacSha256Hex, sameBytes } from "../sys/digest.ts";
import { canonicalJson, CanonicalJsonError, type Json, MAX_JSON_DEPTH, nestedDeeper } from "./canonical.ts";
import { eventKey, identityText, ORIGIN_RE, type SeenEvents } from "./identity.ts";
import { MAM_EVENTS, type EventName, isEventName, isFinal, type JobStatus, TERMINAL_EVENTS } from "./statuses.ts";

/** payloads above this are dropped by receivers and refused by publishers */
export const MAX_EVENT_BYTES = 256 * 1024;

/**
 * the highest seq an origin may use (2^31 − 1): receivers drop an event above it, and a journal
 * whose own seqs reach it takes a fresh origin. Far beyond any real job, and far below 2^53, where
 * a seq stops being an exact integer and the canonical JSON refuses it.
 */
export const MAX_SEQ = 2 ** 31 - 1;

export interface JobEvent {
  schema_version: 1;
  seq: number;
  /** the journal that numbered `seq` (since 0.2; absent from old senders): see identity.ts */
  origin?: string;
  job_id: string;
  event: EventName;
  timestamp: string;
  detail: string;
  source: string;
  data: { [k: string]: Json };
}

/** the daemon's name as an event's source: what it saw itself (an agent's dialog, a timeout, an agent that exited) */
export const DAEMON_SOURCE = "monitor";

/**
 * a question the daemon read on an agent's screen (docs/approvals.md): a `permission_required`
 * from the daemon (source monitor) or carrying a question. Only the daemon journals one: `mam job
 * event` refuses it, and one from the broker is taken only when the agent's host's daemon vouches
 * for it (lib/team/attest.ts); the notifications and `mam approve` trust no other.
 */
export function isDaemonQuestion(ev: Pick<JobEvent, "event" | "source" | "data">): boolean {
  return ev.event === "permission_required" && (ev.source === DAEMON_SOURCE || (ev.data !== null && typeof ev.data === "object" && ev.data.question !== undefined));
}

/** a journalled `permission_required` the daemon made (here, or the agent's host's daemon, vouched for on arrival) */
export const fromDaemon = (ev: Pick<JobEvent, "event" | "source">): boolean => ev.event === "permission_required" && ev.source === DAEMON_SOURCE;

/** the roles of a loop job: a `completed` is final only when it is the reviewer's PASS (§7.4) */
export interface LoopRoles {
  type: "single" | "loop";
  reviewer_session: string | null;
}

/** true when this event ends the job (loop jobs: the worker's and a failing reviewer's `completed` are steps) */
export function endsJob(ev: Pick<JobEvent, "event" | "source" | "detail">, job?: LoopRoles): boolean {
  if (!TERMINAL_EVENTS.includes(ev.event)) return false;
  if (ev.event === "completed" && job?.type === "loop") return ev.source === job.reviewer_session && reviewPassed(ev.detail);
  return true;
}

/** a reviewer's verdict: the detail contains PASS (§7.4) */
export const reviewPassed = (detail: string): boolean => detail.includes("PASS");

/**
 * A job's status as a pure fold of its journal, in journal order: the first `started` → running,
 * the first event that ends the job → its final status; nothing after that changes it.
 */
export function foldStatus(events: readonly Pick<JobEvent, "event" | "source" | "detail">[], job?: LoopRoles): JobStatus {
  let status: JobStatus = "pending";
  for (const ev of events) {
    status = foldStep(status, ev, job);
    if (isFinal(status)) return status;
  }
  return status;
}

/** one step of the fold: the status after `ev`, given the status before it */
export function foldStep(status: JobStatus, ev: Pick<JobEvent, "event" | "source" | "detail">, job?: LoopRoles): JobStatus {
  if (isFinal(status)) return status;
  if (endsJob(ev, job)) return ev.event as JobStatus;
  // waiting its turn: only its dispatch (or its end) moves it
  if (ev.event === "queued") return status === "pending" ? "queued" : status;
  if (status === "queued") return ev.event === "dispatched" ? "pending" : status;
  // the stages of a delivery or a dispatch, a user's answers and usage reports are mam's, not the
  // agent's: the job is not running yet
  return status === "pending" && ev.event !== "cancelled" && !MAM_EVENTS.includes(ev.event) ? "running" : status;
}

/** the event that decided a final status, if any */
export function finalEvent<E extends Pick<JobEvent, "event" | "source" | "detail">>(events: readonly E[], job?: LoopRoles): E | undefined {
  return events.find((e) => endsJob(e, job));
}

// ---- signing -------------------------------------------------------------------------------

/** the payload without data.hmac_sig (what the signature covers) */
export function unsigned(ev: JobEvent): JobEvent {
  const { hmac_sig: _drop, ...data } = ev.data ?? {};
  return { ...ev, data };
}

/** hex HMAC-SHA256 keyed by the token's UTF-8 bytes over the canonical JSON of the unsigned payload */
export function signature(ev: JobEvent, token: string): string {
  return hmacSha256Hex(token, canonicalJson(unsigned(ev)));
}

export function signEvent(ev: JobEvent, token: string): JobEvent {
  const u = unsigned(ev);
  return { ...u, data: { ...u.data, hmac_sig: signature(u, token) } };
}

export function signatureValid(ev: JobEvent, token: string): boolean {
  const sig = ev.data?.hmac_sig;
  if (typeof sig !== "string" || !/^[0-9a-f]{64}$/.test(sig)) return false;
  let want: string;
  try {
    want = signature(ev, token);
  } catch {
    return false;
  }
  return sameBytes(Buffer.from(sig), Buffer.from(want));
}

// ---- receiving -----------------------------------------------------------------------------

/**
 * What a receiver's connection puts in place of a message too large to hold (packet-guard.ts):
 * the message's topic and packet id with this marker as its payload, so that it is dropped as
 * oversized (and acknowledged) without its bytes ever being buffered. Not JSON, so never an event.
 */
const OVERSIZED_MARK = "\u0000mam: payload not read, bytes: ";

export const oversizedPayload = (size: number): Buffer => Buffer.from(`${OVERSIZED_MARK}${size}`, "utf8");

/** the size of the message a marker stands for, else undefined */
export function oversizedSize(raw: Uint8Array | string): number | undefined {
  const len = typeof raw === "string" ? raw.length : raw.byteLength;
  if (len > OVERSIZED_MARK.length + 20 || raw[0] !== (typeof raw === "string" ? "\u0000" : 0)) return undefined;
  const t = typeof raw === "string" ? raw : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString("utf8");
  if (!t.startsWith(OVERSIZED_MARK)) return undefined;
  const n = Number(t.slice(OVERSIZED_MARK.length));
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

export type Verdict =
  | { ok: true; event: JobEvent; gap?: { expected: number; got: number }; log?: string }
  | { ok: false; reason: DropReason; jobId?: string; seq?: number; log: string; /** repeat, seen-seq: the identity */ key?: string };

/** `repeat`: an exact replay of a journalled event; `seen-seq`: its identity is taken by another event */
export type DropReason = "oversized" | "not-json" | "wrong-schema" | "malformed" | "unknown-job" | "bad-signature" | "repeat" | "seen-seq";

/** what the receiver knows: the job's token (undefined = unknown job) and the events it already has */
export type TokenLookup = (jobId: string) => string | undefined;
export type SeenLookup = (jobId: string) => SeenEvents;

function shape(v: unknown): string | undefined {
  const o = v as Record<string, unknown>;
  if (!Number.isSafeInteger(o.seq) || (o.seq as number) < 1) return "seq is not a positive integer";
  if ((o.seq as number) > MAX_SEQ) return `seq ${o.seq} is above ${MAX_SEQ}`;
  if ("origin" in o && (typeof o.origin !== "string" || !ORIGIN_RE.test(o.origin))) return "origin is not 8-64 characters of [A-Za-z0-9_-]";
  if (typeof o.event !== "string" || !isEventName(o.event)) return `unknown event '${String(o.event).slice(0, 40)}'`;
  for (const k of ["timestamp", "detail", "source"]) if (typeof o[k] !== "string") return `${k} is not a string`;
  if (typeof o.data !== "object" || o.data === null || Array.isArray(o.data)) return "data is not an object";
  return undefined;
}

/**
 * Decide whether a received payload is accepted (SPEC §7.2): drop oversized, non-JSON, wrong
 * schema_version, unknown job, bad or missing signature; drop an event whose identity
 * (origin, seq) is already journalled: `repeat` when it is the same event again (same signature),
 * `seen-seq` when another event holds that identity. A gap in an origin's seqs is accepted and
 * logged. Every drop comes with its log line.
 */
export function verifyEvent(raw: Uint8Array | string, tokenOf: TokenLookup, seen: SeenLookup): Verdict {
  const size = oversizedSize(raw) ?? (typeof raw === "string" ? Buffer.byteLength(raw) : raw.byteLength);
  if (size > MAX_EVENT_BYTES) return { ok: false, reason: "oversized", log: `dropped event: payload of ${size} bytes exceeds ${MAX_EVENT_BYTES}` };
  const text = typeof raw === "string" ? raw : Buffer.from(raw).toString("utf8");
  if (nestedDeeper(text)) return { ok: false, reason: "malformed", log: `dropped event: payload nested deeper than ${MAX_JSON_DEPTH} levels` };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { ok: false, reason: "not-json", log: "dropped event: payload is not JSON" };
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return { ok: false, reason: "not-json", log: "dropped event: payload is not a JSON object" };
  const o = v as Record<string, unknown>;
  const jobId = typeof o.job_id === "string" && /^[0-9a-f]{8}$/.test(o.job_id) ? o.job_id : undefined;
  const origin = typeof o.origin === "string" && ORIGIN_RE.test(o.origin) ? ` origin ${o.origin}` : "";
  const tag = `job ${jobId ?? "?"}${origin}${Number.isSafeInteger(o.seq) ? ` seq ${o.seq}` : ""}`;
  if (o.schema_version !== 1) {
    return { ok: false, reason: "wrong-schema", jobId, log: `dropped event (${tag}): schema_version ${JSON.stringify(o.schema_version)?.slice(0, 20)} is not 1` };
  }
  if (!jobId) return { ok: false, reason: "malformed", log: "dropped event: job_id is not 8 hex digits" };
  const token = tokenOf(jobId);
  if (token === undefined) return { ok: false, reason: "unknown-job", jobId, log: `dropped event (${tag}): unknown job` };
  const bad = shape(o);
  if (bad) return { ok: false, reason: "malformed", jobId, log: `dropped event (${tag}): ${bad}` };
  const ev = o as unknown as JobEvent;
  try {
    canonicalJson(ev);
  } catch (e) {
    if (!(e instanceof CanonicalJsonError)) throw e;
    return { ok: false, reason: "malformed", jobId, log: `dropped event (${tag}): ${e.message}` };
  }
  if (!signatureValid(ev, token)) return { ok: false, reason: "bad-signature", jobId, seq: ev.seq, log: `HMAC verify failed (${tag}): event dropped` };
  const known = seen(jobId);
  const key = eventKey(ev);
  const had = known.sigOf(key);
  if (had !== undefined) {
    if (had === ev.data.hmac_sig) return { ok: false, reason: "repeat", jobId, seq: ev.seq, key, log: `dropped event (${tag}): repeat of an event already journalled` };
    const what = ev.origin === undefined ? `seq ${ev.seq} already seen` : `${identityText(ev)} already seen with other content`;
    return { ok: false, reason: "seen-seq", jobId, seq: ev.seq, key, log: `dropped event (${tag}): ${what}` };
  }
  const max = known.maxSeq(ev.origin);
  if (ev.seq > max + 1) {
    const from = ev.origin === undefined ? "" : ` from origin ${ev.origin}`;
    return { ok: true, event: ev, gap: { expected: max + 1, got: ev.seq }, log: `gap in job ${jobId}${from}: expected seq ${max + 1}, got ${ev.seq}` };
  }
  return { ok: true, event: ev };
}
