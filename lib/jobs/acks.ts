// Acknowledgements (SPEC §7.2, since 0.2): what the delegator's journal holds of each reporting
// journal. The delegator's daemon publishes, retained, on `<topic_prefix>/acks` (next to
// `…/events`), signed like an event (hex HMAC-SHA256 with the job's token over the canonical JSON
// without data.hmac_sig):
//   {schema_version: 1, kind: "acks", job_id, acked: {<origin>: N, …}, timestamp, data: {hmac_sig}}
// N: every seq 1..N of that origin is journalled. A remote reporter reads it before it publishes
// and sends again only its events past its mark (all of its earlier ones, bounded, when there is
// no ack it can verify). So resends cover a broker that lost what it had acknowledged (restarted
// without persistence, the daemon not subscribed yet) and still cost nothing once delivered.
// Pure: no I/O.
import { hmacSha256Hex, sameBytes } from "../sys/digest.ts";
import { canonicalJson } from "./canonical.ts";
import { ORIGIN_RE } from "./identity.ts";

export interface JobAck {
  schema_version: 1;
  kind: "acks";
  job_id: string;
  acked: Record<string, number>;
  timestamp: string;
  data: { hmac_sig?: string };
}

/** the acks topic of a job, from its events topic (`<prefix>/<id>/events` → `<prefix>/<id>/acks`) */
export const ackTopicOf = (eventsTopic: string): string => eventsTopic.replace(/\/events$/, "/acks");

const mac = (body: Omit<JobAck, "data"> & { data: Record<string, never> }, token: string) =>
  hmacSha256Hex(token, canonicalJson(body));

/** the signed ack payload (canonical JSON) */
export function signedAck(jobId: string, acked: Record<string, number>, token: string, timestamp: string): string {
  const body = { schema_version: 1 as const, kind: "acks" as const, job_id: jobId, acked, timestamp, data: {} };
  return canonicalJson({ ...body, data: { hmac_sig: mac(body, token) } });
}

/** the marks of a verified ack for this job, else undefined (not JSON, another job, bad signature) */
export function readAck(raw: Uint8Array | string, jobId: string, token: string): Record<string, number> | undefined {
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
  let want: string;
  try {
    want = mac({ schema_version: 1, kind: "acks", job_id: jobId, acked: v.acked, timestamp: v.timestamp, data: {} }, token);
  } catch {
    return undefined;
  }
  return sameBytes(Buffer.from(sig), Buffer.from(want)) ? acked : undefined;
}
