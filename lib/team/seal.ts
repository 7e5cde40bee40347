// Sealing what crosses machines (docs/machines.md): every team message (presence, deliveries) is
// encrypted and authenticated with a key derived from the team secret (AES-256-GCM; HKDF-SHA256).
// A broker user who is not in the team can neither read a delivery (it carries a job's prompt and
// token) nor forge one; a message that fails to open is dropped and logged. The envelope names
// the team, the kind of message, the sending host, the time and an id; all of them are
// authenticated (the AAD), so none can be swapped onto another body.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { type Team, teamKey } from "./config.ts";

export interface Envelope {
  v: 1;
  team: string;
  kind: string;
  from: string;
  /** epoch ms */
  at: number;
  /** unique per message */
  id: string;
  iv: string;
  /** ciphertext and tag, base64url */
  ct: string;
}

const keyOf = (t: Team) => teamKey(t, "mam team seal v1");

const aad = (e: Pick<Envelope, "team" | "kind" | "from" | "at" | "id">) => Buffer.from(`${e.team}\u0000${e.kind}\u0000${e.from}\u0000${e.at}\u0000${e.id}`);

export function seal(t: Team, kind: string, from: string, body: unknown, at = Date.now()): string {
  const id = randomBytes(9).toString("base64url");
  const iv = randomBytes(12);
  const head = { team: t.team, kind, from, at, id };
  const c = createCipheriv("aes-256-gcm", keyOf(t), iv);
  c.setAAD(aad(head));
  const ct = Buffer.concat([c.update(JSON.stringify(body), "utf8"), c.final(), c.getAuthTag()]);
  const e: Envelope = { v: 1, ...head, iv: iv.toString("base64url"), ct: ct.toString("base64url") };
  return JSON.stringify(e);
}

export type Opened = { ok: true; envelope: Envelope; body: unknown } | { ok: false; reason: string };

/** the body of a sealed message of this team, or why it does not open */
export function open(t: Team, raw: Uint8Array | string, maxBytes = 512 * 1024): Opened {
  const text = typeof raw === "string" ? raw : Buffer.from(raw).toString("utf8");
  if (text.length > maxBytes) return { ok: false, reason: `larger than ${maxBytes} bytes` };
  let e: Envelope;
  try {
    e = JSON.parse(text) as Envelope;
  } catch {
    return { ok: false, reason: "not JSON" };
  }
  if (!e || typeof e !== "object" || e.v !== 1) return { ok: false, reason: "not a team message" };
  if (e.team !== t.team) return { ok: false, reason: `of another team (${String(e.team).slice(0, 40)})` };
  if (typeof e.kind !== "string" || typeof e.from !== "string" || typeof e.at !== "number" || typeof e.id !== "string" || typeof e.iv !== "string" || typeof e.ct !== "string") {
    return { ok: false, reason: "malformed" };
  }
  try {
    const ct = Buffer.from(e.ct, "base64url");
    if (ct.length < 16) return { ok: false, reason: "malformed" };
    const d = createDecipheriv("aes-256-gcm", keyOf(t), Buffer.from(e.iv, "base64url"));
    d.setAAD(aad(e));
    d.setAuthTag(ct.subarray(ct.length - 16));
    const plain = Buffer.concat([d.update(ct.subarray(0, ct.length - 16)), d.final()]).toString("utf8");
    return { ok: true, envelope: e, body: JSON.parse(plain) };
  } catch {
    return { ok: false, reason: "team authentication failed" };
  }
}
