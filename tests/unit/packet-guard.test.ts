// The stream between an MQTT socket and MQTT.js's parser (lib/jobs/packet-guard.ts): a PUBLISH with
// a payload above the limit comes out as the same PUBLISH with the oversized marker as its payload,
// everything else byte for byte, however the bytes are split into chunks; and a deep or oversized
// payload is dropped by verifyEvent without a stack overflow.
import { describe, expect, test } from "bun:test";
import { canonicalJson, CanonicalJsonError, MAX_JSON_DEPTH, nestedDeeper } from "../../lib/jobs/canonical.ts";
import { oversizedPayload, oversizedSize, signEvent, verifyEvent } from "../../lib/jobs/event.ts";
import { EventIndex } from "../../lib/jobs/identity.ts";
import { PacketGuard } from "../../lib/jobs/packet-guard.ts";

function varint(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
}

/** a PUBLISH packet as a broker sends it (MQTT 3.1.1) */
function publish(topic: string, payload: Buffer, qos: 0 | 1, id = 7): Buffer {
  const t = Buffer.from(topic, "utf8");
  const variable = Buffer.concat([Buffer.from([t.length >> 8, t.length & 0xff]), t, qos ? Buffer.from([id >> 8, id & 0xff]) : Buffer.alloc(0)]);
  const remaining = variable.length + payload.length;
  return Buffer.concat([Buffer.from([0x30 | (qos << 1), ...varint(remaining)]), variable, payload]);
}

const pingresp = Buffer.from([0xd0, 0x00]);
const suback = Buffer.from([0x90, 0x03, 0x00, 0x01, 0x01]);

async function through(input: Buffer, chunk: number, limit: number): Promise<Buffer> {
  const g = new PacketGuard(limit);
  const parts: Buffer[] = [];
  g.on("data", (d: Buffer) => parts.push(d));
  const ended = new Promise((r) => g.on("end", r));
  for (let i = 0; i < input.length; i += chunk) g.write(input.subarray(i, i + chunk));
  g.end();
  await ended;
  return Buffer.concat(parts);
}

describe("PacketGuard", () => {
  const LIMIT = 100;
  const small = publish("mam/jobs/abc12345/events", Buffer.from("x".repeat(100)), 1, 1);
  const big1 = publish("mam/jobs/abc12345/events", Buffer.alloc(5000, 0x7b), 1, 2);
  const big0 = publish("mam/jobs/abc12345/events", Buffer.alloc(300_000, 0x5b), 0);
  // a long topic pushes the packet over the limit, the payload alone is not
  const longTopic = publish(`mam/${"t".repeat(200)}/events`, Buffer.from("y".repeat(50)), 1, 3);
  const empty = publish("mam/jobs/abc12345/acks", Buffer.alloc(0), 1, 4);
  const input = Buffer.concat([suback, small, big1, pingresp, big0, longTopic, empty, small]);
  const want = Buffer.concat([
    suback,
    small,
    publish("mam/jobs/abc12345/events", oversizedPayload(5000), 1, 2),
    pingresp,
    publish("mam/jobs/abc12345/events", oversizedPayload(300_000), 0),
    longTopic,
    empty,
    small,
  ]);

  for (const chunk of [1, 2, 3, 7, 64, 1000, 65536, input.length]) {
    test(`chunks of ${chunk} bytes: large payloads replaced, the rest byte for byte`, async () => {
      expect((await through(input, chunk, LIMIT)).equals(want)).toBe(true);
    });
  }

  test("a malformed remaining length goes through untouched (MQTT.js reports it)", async () => {
    const bad = Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00]);
    expect((await through(Buffer.concat([small, bad]), 3, LIMIT)).equals(Buffer.concat([small, bad]))).toBe(true);
  });

  test("the marker names the size and is dropped as oversized; a look-alike of another length is not a marker", () => {
    expect(oversizedSize(oversizedPayload(123456789))).toBe(123456789);
    expect(oversizedSize(Buffer.from('{"schema_version":1}'))).toBeUndefined();
    const v = verifyEvent(oversizedPayload(300_000), () => "tok", () => new EventIndex());
    expect(v).toMatchObject({ ok: false, reason: "oversized", log: "dropped event: payload of 300000 bytes exceeds 262144" });
  });
});

describe("deeply nested JSON (BUG-7)", () => {
  const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
  test("nestedDeeper counts brackets outside strings only", () => {
    expect(nestedDeeper(deep(MAX_JSON_DEPTH))).toBe(false);
    expect(nestedDeeper(deep(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(nestedDeeper(`{"a":"${"[".repeat(1000)}\\"{{{"}`)).toBe(false);
  });

  test("canonicalJson refuses more than MAX_JSON_DEPTH levels with its own error, never a stack overflow", () => {
    const v = JSON.parse(deep(100_000));
    expect(() => canonicalJson(v)).toThrow(CanonicalJsonError);
    expect(() => canonicalJson(v)).toThrow(/nested deeper than 64 levels/);
    expect(() => canonicalJson(JSON.parse(deep(MAX_JSON_DEPTH)))).not.toThrow();
  });

  test("verifyEvent drops a 100 000-deep data cleanly (no token needed to send one)", () => {
    const good = signEvent({ schema_version: 1, seq: 1, job_id: "abc12345", event: "progress", timestamp: "t", detail: "", source: "w", data: {} }, "tok");
    const raw = canonicalJson(good).replace('"data":{', `"data":{"deep":${deep(100_000)},`);
    const v = verifyEvent(raw, () => "tok", () => new EventIndex());
    expect(v).toMatchObject({ ok: false, reason: "malformed", log: "dropped event: payload nested deeper than 64 levels" });
  });
});
