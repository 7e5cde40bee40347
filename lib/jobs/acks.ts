// Acknowledgements (SPEC §7.2, since 0.2): what the delegator's journal holds of each reporting
// journal. The delegator's daemon publishes, retained, on `<topic_prefix>/acks` (next to
// `…/events`), signed like an event (hex HMAC-SHA256 with the job's token over the canonical JSON
// without data.hmac_sig):
//   {schema_version: 1, kind: "acks", job_id, acked: {<origin>: N, …}, [beyond: {<origin>: [[a, b], …], …},]
//    timestamp, data: {hmac_sig}}
// N: every seq 1..N of that origin is journalled. `beyond` (only when some origin has any): the
// seqs of that origin journalled above N + 1, as ascending inclusive ranges (at most
// MAX_ACK_RANGES, the lowest). A journal whose own seqs are not contiguous (one that numbered its
// events after other origins' seqs) is then still known to be whole, and a hole is known exactly.
// A remote reporter reads the ack before it publishes and sends again only its events the ack
// does not hold (all of its earlier ones, bounded, when there is no ack it can verify). So resends
// cover a broker that lost what it had acknowledged (restarted without persistence, the daemon not
// subscribed yet) and still cost nothing once delivered.
// Pure: no I/O.
import { hmacSha256Hex, sameBytes } from "../sys/digest.ts";
import { canonicalJson } from "./canonical.ts";
import { MAX_ACK_RANGES, ORIGIN_RE } from "./identity.ts";

export type SeqRanges = [number, number][];

export interface JobAck {
  schema_version: 1;
  kind: "acks";
  job_id: string;
  acked: Record<string, number>;
  beyond?: Record<string, SeqRanges>;
  timestamp: string;
  data: { hmac_sig?: string };
}

/** what a verified ack says the delegator's journal holds */
export interface AckMarks {
  acked: Record<string, number>;
  beyond: Record<string, SeqRanges>;
}

/** the acks topic of a job, from its events topic (`<prefix>/<id>/events` → `<prefix>/<id>/acks`) */
export const ackTopicOf = (eventsTopic: string): string => eventsTopic.replace(/\/events$/, "/acks");

type Body = Omit<JobAck, "data"> & { data: Record<string, never> };

const mac = (body: Body, token: string) => hmacSha256Hex(token, canonicalJson(body));

const bodyOf = (jobId: string, acked: Record<string, number>, beyond: Record<string, SeqRanges> | undefined, timestamp: string): Body => ({
  schema_version: 1,
  kind: "acks",
  job_id: jobId,
  acked,
  ...(beyond && Object.keys(beyond).length > 0 ? { beyond } : {}),
  timestamp,
  data: {},
});

/** the signed ack payload (canonical JSON); `beyond` only when it names an origin */
export function signedAck(jobId: string, acked: Record<string, number>, token: string, timestamp: string, beyond?: Record<string, SeqRanges>): string {
  const body = bodyOf(jobId, acked, beyond, timestamp);
  return canonicalJson({ ...body, data: { hmac_sig: mac(body, token) } });
}

const seq = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 1;

function checkRanges(v: unknown): SeqRanges | undefined {
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_ACK_RANGES) return undefined;
  const out: SeqRanges = [];
  for (const r of v) {
    if (!Array.isArray(r) || r.length !== 2 || !seq(r[0]) || !seq(r[1]) || r[0] > r[1]) return undefined;
    out.push([r[0], r[1]]);
  }
  return out;
}

/** the marks of a verified ack for this job, else undefined (not JSON, another job, malformed, bad signature) */
export function readAck(raw: Uint8Array | string, jobId: string, token: string): AckMarks | undefined {
  let v: JobAck;
  try {
    v = JSON.parse(typeof raw === "string" ? raw : Buffer.from(raw).toString("utf8")) as JobAck;
  } catch {
    return undefined;
  }
  if (typeof v !== "object" || v === null || v.schema_version !== 1 || v.kind !== "acks" || v.job_id !== jobId) return undefined;
  if (typeof v.acked !== "object" || v.acked === null || typeof v.timestamp !== "string" || typeof v.data !== "object" || v.data === null) return undefined;
  const sig = v.data.hmac_sig;
  if (typeof sig !== "string" || !/^[0-9a-f]{64}$/.test(sig)) return undefined;
  const acked: Record<string, number> = {};
  for (const [o, n] of Object.entries(v.acked)) {
    if (!ORIGIN_RE.test(o) || !Number.isSafeInteger(n) || n < 0) return undefined;
    acked[o] = n;
  }
  const beyond: Record<string, SeqRanges> = {};
  if (v.beyond !== undefined) {
    if (typeof v.beyond !== "object" || v.beyond === null || Array.isArray(v.beyond) || Object.keys(v.beyond).length === 0) return undefined;
    for (const [o, rs] of Object.entries(v.beyond)) {
      const ranges = checkRanges(rs);
      if (!ORIGIN_RE.test(o) || !ranges) return undefined;
      beyond[o] = ranges;
    }
  }
  let want: string;
  try {
    want = mac(bodyOf(jobId, v.acked, v.beyond, v.timestamp), token);
  } catch {
    return undefined;
  }
  return sameBytes(Buffer.from(sig), Buffer.from(want)) ? { acked, beyond } : undefined;
}

/** does the ack say the delegator holds this event of `origin`? (no ack: nothing is held) */
export function ackHolds(marks: AckMarks | undefined, origin: string, seq: number): boolean {
  if (!marks) return false;
  if (seq <= (marks.acked[origin] ?? 0)) return true;
  return (marks.beyond[origin] ?? []).some(([a, b]) => seq >= a && seq <= b);
}
