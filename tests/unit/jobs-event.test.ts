// Status fold, signing and the receiver's drop rules (SPEC §7.2), as pure functions.
import { describe, expect, test } from "bun:test";
import { canonicalJson } from "../../lib/jobs/canonical.ts";
import { foldStatus, type JobEvent, MAX_EVENT_BYTES, MAX_SEQ, signEvent, verifyEvent } from "../../lib/jobs/event.ts";
import { type EventName } from "../../lib/jobs/statuses.ts";
import { EventIndex, eventKey } from "../../lib/jobs/identity.ts";

const TOKEN = "t0ken-of-the-job";
let seq = 0;
function ev(event: EventName, over: Partial<JobEvent> = {}): JobEvent {
  return { schema_version: 1, seq: ++seq, job_id: "abc12345", event, timestamp: "2026-01-01T00:00:00Z", detail: "", source: "worker", data: {}, ...over };
}
const fold = (names: EventName[], job?: Parameters<typeof foldStatus>[1]) => foldStatus(names.map((n) => ev(n)), job);

describe("foldStatus", () => {
  test("pending until started, running after, final at the first terminal event", () => {
    expect(fold([])).toBe("pending");
    expect(fold(["started"])).toBe("running");
    expect(fold(["started", "progress", "permission_required"])).toBe("running");
    for (const t of ["completed", "error", "cancelled", "timeout"] as const) {
      expect(fold(["started", t])).toBe(t);
      expect(fold([t])).toBe(t);
    }
  });

  test("nothing after a terminal event changes it", () => {
    expect(fold(["started", "cancelled", "completed"])).toBe("cancelled");
    expect(fold(["started", "completed", "error", "started", "progress"])).toBe("completed");
    expect(fold(["timeout", "started"])).toBe("timeout");
  });

  test("loop jobs: only the reviewer's PASS completes; steps keep it running", () => {
    const job = { type: "loop" as const, reviewer_session: "rev" };
    const evs = [ev("started"), ev("completed", { detail: "done, PASS please" }), ev("completed", { source: "rev", detail: "needs work" })];
    expect(foldStatus(evs, job)).toBe("running");
    expect(foldStatus([...evs, ev("completed", { source: "rev", detail: "PASS" })], job)).toBe("completed");
    expect(foldStatus([...evs, ev("error", { source: "mam", detail: "max iterations reached" })], job)).toBe("error");
    // the same journal read as a single job ends at the worker's completed
    expect(foldStatus(evs)).toBe("completed");
  });
});

describe("verifyEvent", () => {
  const known = (id: string) => (id === "abc12345" ? TOKEN : undefined);
  const none = () => new EventIndex();
  /** what a receiver has journalled: events of old senders (no origin) with these seqs */
  const seqs =
    (...ns: number[]) =>
    () =>
      EventIndex.of(ns.map((n) => signEvent(ev("progress", { seq: n, detail: `other ${n}` }), TOKEN)));
  const good = signEvent(ev("progress", { seq: 3, detail: "héllo" }), TOKEN);
  const raw = (e: unknown) => Buffer.from(JSON.stringify(e));

  test("accepts a signed event, from bytes or text, in any key order", () => {
    const v = verifyEvent(raw(good), known, seqs(1, 2));
    expect(v.ok).toBe(true);
    if (v.ok) expect(v.gap).toBeUndefined();
    const reordered = Object.fromEntries(Object.entries(good).reverse());
    expect(verifyEvent(JSON.stringify(reordered, null, 2), known, none).ok).toBe(true);
  });

  test("logs a gap but accepts the event", () => {
    const v = verifyEvent(raw(good), known, seqs(1));
    expect(v).toMatchObject({ ok: true, gap: { expected: 2, got: 3 } });
    if (v.ok) expect(v.log).toBe("gap in job abc12345: expected seq 2, got 3");
  });

  const drops: [string, Uint8Array | string, string, RegExp][] = [
    ["not JSON", "{nope", "not-json", /not JSON/],
    ["a JSON array", "[1,2]", "not-json", /not a JSON object/],
    ["wrong schema_version", canonicalJson({ ...good, schema_version: 2 }), "wrong-schema", /schema_version 2 is not 1/],
    ["missing schema_version", JSON.stringify({ ...good, schema_version: undefined }), "wrong-schema", /schema_version/],
    ["unknown job", canonicalJson(signEvent({ ...good, job_id: "deadbeef" }, TOKEN)), "unknown-job", /unknown job/],
    ["missing signature", canonicalJson({ ...good, data: {} }), "bad-signature", /^HMAC verify failed/],
    ["signature of another token", canonicalJson(signEvent(good, "spoofed")), "bad-signature", /^HMAC verify failed/],
    ["tampered detail", canonicalJson({ ...good, detail: "completed!" }), "bad-signature", /^HMAC verify failed/],
    ["float in data", canonicalJson({ ...good, data: { ...good.data } }).replace('"data":{', '"data":{"x":1.5,'), "malformed", /not an integer/],
    ["unknown event name", canonicalJson(signEvent({ ...good, event: "exploded" as never }, TOKEN)), "malformed", /unknown event/],
    ["seq 0", canonicalJson(signEvent({ ...good, seq: 0 }, TOKEN)), "malformed", /seq/],
    // BUG-1: a token holder's seq 2^53 − 1 was accepted, and the next local seq was no longer exact
    ["seq 2^53 − 1, validly signed", canonicalJson(signEvent({ ...good, origin: "remote0000000001", seq: 2 ** 53 - 1 }, TOKEN)), "malformed", /seq 9007199254740991 is above 2147483647/],
    ["seq 2^31, validly signed", canonicalJson(signEvent({ ...good, seq: MAX_SEQ + 1 }, TOKEN)), "malformed", /seq 2147483648 is above 2147483647/],
    ["oversized", canonicalJson(signEvent({ ...good, detail: "x".repeat(MAX_EVENT_BYTES) }, TOKEN)), "oversized", /exceeds 262144/],
  ];
  for (const [name, payload, reason, log] of drops) {
    test(`drops ${name}`, () => {
      const v = verifyEvent(payload, known, none);
      expect(v.ok).toBe(false);
      if (!v.ok) {
        expect(v.reason).toBe(reason as never);
        expect(v.log).toMatch(log);
      }
    });
  }

  test("a sender without origin: another event with a seq already seen is dropped (as in 0.1)", () => {
    const v = verifyEvent(raw(good), known, seqs(1, 2, 3));
    expect(v).toMatchObject({ ok: false, reason: "seen-seq", seq: 3 });
    if (!v.ok) expect(v.log).toBe("dropped event (job abc12345 seq 3): seq 3 already seen");
  });

  test("an exact replay is dropped as a repeat, with its log line", () => {
    const v = verifyEvent(raw(good), known, () => EventIndex.of([good]));
    expect(v).toMatchObject({ ok: false, reason: "repeat", seq: 3 });
    if (!v.ok) expect(v.log).toBe("dropped event (job abc12345 seq 3): repeat of an event already journalled");
  });

  describe("identity (origin, seq)", () => {
    const A = "aaaaaaaaaaaaaaaa";
    const B = "bbbbbbbbbbbbbbbb";
    const from = (origin: string, n: number, over: Partial<JobEvent> = {}) => signEvent(ev("progress", { origin, seq: n, detail: `${origin} ${n}`, ...over }), TOKEN);

    test("the same seq from two origins (and from an old sender) are three events", () => {
      const journal = EventIndex.of([from(A, 1), signEvent(ev("progress", { seq: 1 }), TOKEN)]);
      const v = verifyEvent(raw(from(B, 1)), known, () => journal);
      expect(v).toMatchObject({ ok: true });
      if (v.ok) expect(v.gap).toBeUndefined();
      expect(eventKey(from(A, 1))).not.toBe(eventKey(from(B, 1)));
      expect(eventKey(from(A, 1))).not.toBe(eventKey({ seq: 1 }));
    });

    test("an exact replay of an origin's event is a repeat; other content under its identity is dropped too", () => {
      const journal = () => EventIndex.of([from(A, 1), from(A, 2)]);
      expect(verifyEvent(raw(from(A, 2)), known, journal)).toMatchObject({ ok: false, reason: "repeat", log: `dropped event (job abc12345 origin ${A} seq 2): repeat of an event already journalled` });
      expect(verifyEvent(raw(from(A, 2, { detail: "forged?" })), known, journal)).toMatchObject({
        ok: false,
        reason: "seen-seq",
        log: `dropped event (job abc12345 origin ${A} seq 2): origin ${A} seq 2 already seen with other content`,
      });
    });

    test("gaps are per origin", () => {
      const journal = () => EventIndex.of([from(A, 1), from(A, 2), from(B, 1)]);
      expect(verifyEvent(raw(from(B, 2)), known, journal)).toEqual({ ok: true, event: from(B, 2) });
      expect(verifyEvent(raw(from(B, 4)), known, journal)).toMatchObject({ ok: true, gap: { expected: 2, got: 4 }, log: `gap in job abc12345 from origin ${B}: expected seq 2, got 4` });
    });

    test("origin is signed, and must look like an id", () => {
      const e = from(A, 1);
      expect(verifyEvent(JSON.stringify({ ...e, origin: B }), known, none)).toMatchObject({ ok: false, reason: "bad-signature" });
      expect(verifyEvent(JSON.stringify({ ...e, origin: undefined }), known, none)).toMatchObject({ ok: false, reason: "bad-signature" });
      for (const bad of ["short", "x".repeat(65), "has space here", 12345678, null]) {
        expect(verifyEvent(JSON.stringify(signEvent({ ...e, origin: bad as never }, TOKEN)), known, none)).toMatchObject({ ok: false, reason: "malformed" });
      }
    });
  });
});
