// Event identity (SPEC §7.2 since 0.2): the index a receiver keeps, the daemon's incremental
// journal index, acks, and the log of repeats, as plain functions on temp folders.
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ackHolds, ackTopicOf, readAck, signedAck } from "../../lib/jobs/acks.ts";
import { canonicalJson } from "../../lib/jobs/canonical.ts";
import { type JobEvent, MAX_SEQ, signEvent } from "../../lib/jobs/event.ts";
import { type EventName } from "../../lib/jobs/statuses.ts";
import { EventIndex, eventKey, MAX_ACK_RANGES, newOrigin, ORIGIN_RE } from "../../lib/jobs/identity.ts";
import { ingestEvent, RepeatLog } from "../../lib/jobs/ingest.ts";
import { JournalCache, JournalIndex } from "../../lib/jobs/journal-index.ts";
import { appendEvent, importJob, journalPath, nextIdentity, originPath, readJournal, readRecord, registerJob, settleLastSeq } from "../../lib/jobs/store.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempWs = () => {
  const d = mkdtempSync(join(tmpdir(), "mam-ident-"));
  dirs.push(d);
  return d;
};
const spec = {
  agent_session: "wrk", agent: "claude", prompt: "p", delegator: null, type: "single" as const, reviewer_session: null,
  max_iterations: null, timeout_sec: 0, idle_timeout_sec: 0, expected_artifacts: [], topic_prefix_base: "mam/jobs",
};
const ev = (origin: string | undefined, seq: number, event: EventName = "progress"): JobEvent =>
  signEvent({ schema_version: 1, seq, ...(origin ? { origin } : {}), job_id: "abc12345", event, timestamp: "2026-01-01T00:00:00Z", detail: `${origin} ${seq}`, source: "w", data: {} }, "tok");

describe("EventIndex", () => {
  test("identities, positions, per-origin max and contiguous marks (holes hold the mark back)", () => {
    const A = "aaaaaaaaaaaaaaaa";
    const ix = EventIndex.of([ev(A, 1), ev(undefined, 1), ev(A, 3), ev(A, 2), ev(A, 5)]);
    expect(ix.count).toBe(5);
    expect(ix.positionOf(eventKey({ origin: A, seq: 3 }))).toBe(2);
    expect(ix.has({ seq: 1 })).toBe(true);
    expect(ix.has({ seq: 2 })).toBe(false);
    expect(ix.maxSeq(A)).toBe(5);
    expect(ix.maxSeq(undefined)).toBe(1);
    expect(ix.acked()).toEqual({ [A]: 3 }); // senders without origin read no acks
    ix.add(ev(A, 4));
    expect(ix.acked()).toEqual({ [A]: 5 });
  });

  test("new origins are 16 hex digits, and differ", () => {
    const a = newOrigin();
    expect(a).toMatch(/^[0-9a-f]{16}$/);
    expect(ORIGIN_RE.test(a)).toBe(true);
    expect(newOrigin()).not.toBe(a);
  });
});

describe("appendEvent: this journal's origin", () => {
  test("one origin per journal, kept in <id>.origin; a fresh one when the journal starts again", async () => {
    const ws = tempWs();
    const r = await registerJob(ws, spec);
    const a = await appendEvent(ws, r.job_id, { event: "started", detail: "", source: "w" });
    const b = await appendEvent(ws, r.job_id, { event: "progress", detail: "", source: "w" });
    expect(a!.payload.origin).toMatch(/^[0-9a-f]{16}$/);
    expect(b!.payload).toMatchObject({ origin: a!.payload.origin, seq: 2 });
    rmSync(journalPath(ws, r.job_id));
    const c = await appendEvent(ws, r.job_id, { event: "progress", detail: "", source: "w" });
    expect(c!.payload.origin).not.toBe(a!.payload.origin);
    expect(c!.payload.seq).toBe(1); // a new origin counts from 1: its identities are new ones
    // the origin file lost: a new origin, from 1 again, beside the journal's events of the old one
    rmSync(originPath(ws, r.job_id));
    const d = await appendEvent(ws, r.job_id, { event: "progress", detail: "", source: "w" });
    expect(d!.payload.origin).not.toBe(c!.payload.origin);
    expect(d!.payload.seq).toBe(1);
    expect(readRecord(ws, r.job_id)!.last_seq).toBe(2); // the record still says the highest seq seen
  });

  test("a seq is never taken from another origin's (BUG-1): a remote's 2^31 − 1 leaves ours at 1, 2, …; our own seqs used up give a fresh origin", async () => {
    const ws = tempWs();
    const r = await registerJob(ws, spec);
    const a = await appendEvent(ws, r.job_id, { event: "started", detail: "", source: "w" });
    const own = a!.payload.origin!;
    const remote = signEvent({ schema_version: 1, seq: MAX_SEQ, origin: "remote0000000001", job_id: r.job_id, event: "progress", timestamp: "t", detail: "", source: "r", data: {} }, r.auth_token);
    appendFileSync(journalPath(ws, r.job_id), `${canonicalJson(remote)}\n`);
    const b = await appendEvent(ws, r.job_id, { event: "progress", detail: "", source: "w" });
    expect(b!.payload).toMatchObject({ origin: own, seq: 2 });
    expect(nextIdentity(ws, r.job_id, readJournal(ws, r.job_id))).toEqual({ origin: own, seq: 3 });
    // our own origin at the limit (a journal edited by hand, an injected event): a fresh origin, seq 1
    const mine = signEvent({ schema_version: 1, seq: MAX_SEQ, origin: own, job_id: r.job_id, event: "progress", timestamp: "t", detail: "", source: "w", data: {} }, r.auth_token);
    appendFileSync(journalPath(ws, r.job_id), `${canonicalJson(mine)}\n`);
    const c = await appendEvent(ws, r.job_id, { event: "completed", detail: "", source: "w" });
    expect(c!.payload.seq).toBe(1);
    expect(c!.payload.origin).not.toBe(own);
    expect(readFileSync(originPath(ws, r.job_id), "utf8").trim()).toBe(c!.payload.origin!);
  });
});

describe("a copy of another host's job (a team's delivery)", () => {
  // A copy also journals what it hears of the job from its other hosts once it exists (the
  // delegator's cancel, a loop's progress and offers, the reviewer's reports), never what came
  // before (the delegator's `offered`).
  test("its own events stay 1, 2, 3, … among the others' (the delegator's acks cover them all); it logs no gap in the others'", async () => {
    const wsA = tempWs();
    const wsB = tempWs();
    const r = await registerJob(wsA, spec);
    const topic = `mam/jobs/${r.job_id}/events`;
    // as the team writes them: the delegator's offer names the delivery and where it went; its stages come from mam@hostB
    const delivery = `${r.job_id}.0a0b0c0d`;
    await appendEvent(wsA, r.job_id, { event: "offered", detail: "the job for w@hostB", source: "mam", data: { delivery, host: "hostB", ws_id: "0123456789ab" } });
    expect(await importJob(wsB, readRecord(wsA, r.job_id)!, "hostA")).toBe(true);
    const fromB: string[] = [];
    for (const event of ["received", "delivered"] as const) fromB.push((await appendEvent(wsB, r.job_id, { event, detail: "", source: "mam@hostB", data: { delivery } }))!.line);
    fromB.push((await appendEvent(wsB, r.job_id, { event: "started", detail: "", source: "w@hostB" }))!.line);
    for (const l of fromB) expect((await ingestEvent(wsA, topic, Buffer.from(l), () => {})).outcome).toBe("appended");
    // the delegator's own event mid-job (a loop's progress), heard by B, which never had its seq 1
    const mid = (await appendEvent(wsA, r.job_id, { event: "progress", detail: "iteration 1 of 3", source: "mam" }))!;
    expect(mid.payload.seq).toBe(2);
    const logsB: string[] = [];
    expect((await ingestEvent(wsB, topic, Buffer.from(mid.line), (l) => logsB.push(l))).outcome).toBe("appended");
    expect(logsB.filter((l) => l.includes("gap"))).toEqual([]);
    const done = (await appendEvent(wsB, r.job_id, { event: "completed", detail: "done", source: "w@hostB" }))!;
    const originB = done.payload.origin!;
    expect(readJournal(wsB, r.job_id).filter((e) => e.origin === originB).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    const logs: string[] = [];
    expect((await ingestEvent(wsA, topic, Buffer.from(done.line), (l) => logs.push(l))).outcome).toBe("appended");
    expect(logs.filter((l) => l.includes("gap"))).toEqual([]);
    expect(EventIndex.of(readJournal(wsA, r.job_id)).acked()[originB]).toBe(4);
    // the delegator still logs a gap in a reporter's events: it may lack a report
    const lost = signEvent({ schema_version: 1, seq: 9, origin: originB, job_id: r.job_id, event: "progress", timestamp: "2026-01-01T00:00:00Z", detail: "", source: "w@hostB", data: {} }, r.auth_token);
    logs.length = 0;
    await ingestEvent(wsA, topic, Buffer.from(canonicalJson(lost)), (l) => logs.push(l));
    expect(logs.filter((l) => l.includes("gap"))).toEqual([`gap in job ${r.job_id} from origin ${originB}: expected seq 5, got 9`]);
  });
});

describe("JournalIndex", () => {
  test("reads only what was appended, whole lines only; a replaced journal is read again", async () => {
    const ws = tempWs();
    const r = await registerJob(ws, spec);
    const j = new JournalIndex(ws, r.job_id).refresh(r);
    expect(j.events).toEqual([]);
    await appendEvent(ws, r.job_id, { event: "started", detail: "", source: "w" });
    expect(j.refresh(r).events.map((e) => e.event)).toEqual(["started"]);
    expect(j.status).toBe("running");
    // a line still being written is not read yet
    const line = canonicalJson(ev("bbbbbbbbbbbbbbbb", 1, "completed"));
    appendFileSync(journalPath(ws, r.job_id), line.slice(0, 20));
    expect(j.refresh(r).events).toHaveLength(1);
    appendFileSync(journalPath(ws, r.job_id), `${line.slice(20)}\n`);
    expect(j.refresh(r).events).toHaveLength(2);
    expect(j).toMatchObject({ status: "completed", endAt: 1 });
    writeFileSync(journalPath(ws, r.job_id) + ".new", `${line}\n`);
    rmSync(journalPath(ws, r.job_id));
    writeFileSync(journalPath(ws, r.job_id), `${line}\n`);
    expect(j.refresh(r).events).toHaveLength(1);
    expect(j.index.count).toBe(1);
  });

  test("JournalCache: one index per job; peek does not read; forget drops it", async () => {
    const ws = tempWs();
    const r = await registerJob(ws, spec);
    const cache = new JournalCache();
    expect(cache.peek(ws, r.job_id)).toBeUndefined();
    const j = cache.get(ws, r.job_id, r);
    expect(cache.get(ws, r.job_id, r)).toBe(j);
    expect(cache.ids()).toEqual([r.job_id]);
    cache.forget(r.job_id);
    expect(cache.peek(ws, r.job_id)).toBeUndefined();
  });

  test("JournalCache.rest: the index goes; quiet while the journal stays the same file and size; a change, get or forget ends it", async () => {
    const ws = tempWs();
    const r = await registerJob(ws, spec);
    await appendEvent(ws, r.job_id, { event: "completed", detail: "", source: "w" });
    const cache = new JournalCache();
    expect(cache.quiet(ws, r.job_id)).toBe(false); // never put to rest
    cache.get(ws, r.job_id, r);
    cache.rest(r.job_id);
    expect(cache.peek(ws, r.job_id)).toBeUndefined();
    expect(cache.ids()).toEqual([]);
    expect(cache.quiet(ws, r.job_id)).toBe(true);
    expect(cache.quiet(tempWs(), r.job_id)).toBe(false); // another workspace's job of that id
    // a late event: no longer quiet, and not again until it is put to rest again
    await appendEvent(ws, r.job_id, { event: "progress", detail: "late", source: "w" });
    expect(cache.quiet(ws, r.job_id)).toBe(false);
    expect(cache.get(ws, r.job_id, r).events).toHaveLength(2);
    cache.rest(r.job_id);
    expect(cache.quiet(ws, r.job_id)).toBe(true);
    cache.get(ws, r.job_id, r);
    expect(cache.quiet(ws, r.job_id)).toBe(false);
    cache.rest(r.job_id);
    cache.forget(r.job_id);
    expect(cache.quiet(ws, r.job_id)).toBe(false);
    // a journal replaced by another file
    cache.get(ws, r.job_id, r);
    cache.rest(r.job_id);
    const text = readJournal(ws, r.job_id).map((e) => canonicalJson(e)).join("\n");
    writeFileSync(`${journalPath(ws, r.job_id)}.new`, `${text}\n`);
    renameSync(`${journalPath(ws, r.job_id)}.new`, journalPath(ws, r.job_id));
    expect(cache.quiet(ws, r.job_id)).toBe(false);
  });

  test("JournalCache.rest: a journal with a line being written, or grown since it was read, is forgotten, not put to rest; keepResting drops the others", async () => {
    const ws = tempWs();
    const a = await registerJob(ws, spec);
    const b = await registerJob(ws, spec);
    for (const r of [a, b]) await appendEvent(ws, r.job_id, { event: "completed", detail: "", source: "w" });
    const cache = new JournalCache();
    cache.get(ws, a.job_id, a);
    appendFileSync(journalPath(ws, a.job_id), canonicalJson(ev("bbbbbbbbbbbbbbbb", 9)).slice(0, 30));
    cache.rest(a.job_id);
    expect(cache.quiet(ws, a.job_id)).toBe(false);
    cache.get(ws, b.job_id, b);
    await appendEvent(ws, b.job_id, { event: "progress", detail: "unread", source: "w" });
    cache.rest(b.job_id);
    expect(cache.quiet(ws, b.job_id)).toBe(false);
    cache.get(ws, b.job_id, b);
    cache.rest(b.job_id);
    expect(cache.quiet(ws, b.job_id)).toBe(true);
    cache.keepResting(new Set([a.job_id]));
    expect(cache.quiet(ws, b.job_id)).toBe(false);
  });
});

describe("ingestEvent, lazy (the daemon)", () => {
  test("in one second with no status change the record is left as it is; settleLastSeq brings last_seq up", async () => {
    const ws = tempWs();
    const r = await registerJob(ws, spec);
    const cache = new JournalCache();
    const topic = `mam/jobs/${r.job_id}/events`;
    const B = "bbbbbbbbbbbbbbbb";
    const mk = (seq: number, event: EventName = "progress") =>
      Buffer.from(canonicalJson(signEvent({ schema_version: 1, seq, origin: B, job_id: r.job_id, event, timestamp: "2026-01-01T00:00:00Z", detail: `${seq}`, source: "w", data: {} }, r.auth_token)));
    const first = await ingestEvent(ws, topic, mk(1, "started"), () => {}, cache, true);
    expect(first).toMatchObject({ outcome: "appended", status: "running" });
    expect(first).not.toHaveProperty("deferred"); // the status changed: written
    // the record is written when its updated_at second changes: the last event that was not
    // deferred is what last_seq shows (a second boundary may fall inside this loop)
    let lastWritten = 1;
    for (let s = 2; s <= 6; s++) {
      const a = await ingestEvent(ws, topic, mk(s), () => {}, cache, true);
      expect(a.outcome).toBe("appended");
      if (a.outcome === "appended" && !a.deferred) lastWritten = s;
    }
    expect(readJournal(ws, r.job_id)).toHaveLength(6);
    const rec = readRecord(ws, r.job_id)!;
    expect(rec.status).toBe("running");
    expect(rec.last_seq).toBe(lastWritten); // what lags is last_seq only (and only within a second)
    await settleLastSeq(ws, r.job_id, () => cache.peek(ws, r.job_id)!.index.maxAny());
    expect(readRecord(ws, r.job_id)!.last_seq).toBe(6);
    // a status change is never deferred
    const end = await ingestEvent(ws, topic, mk(7, "completed"), () => {}, cache, true);
    expect(end).not.toHaveProperty("deferred");
    expect(readRecord(ws, r.job_id)).toMatchObject({ status: "completed", last_seq: 7 });
    // a repeat is known from the index alone
    expect(await ingestEvent(ws, topic, mk(3), () => {}, cache, true)).toMatchObject({ outcome: "duplicate", event: { seq: 3, origin: B } });
  });
});

describe("acks", () => {
  test("signed with the job's token; anything else reads as no ack", () => {
    const A = "aaaaaaaaaaaaaaaa";
    const raw = signedAck("abc12345", { [A]: 7 }, "tok", "2026-01-01T00:00:00Z");
    expect(raw).not.toContain("beyond"); // only when some origin has seqs above its mark
    expect(readAck(raw, "abc12345", "tok")).toEqual({ acked: { [A]: 7 }, beyond: {} });
    expect(readAck(Buffer.from(raw), "abc12345", "tok")).toEqual({ acked: { [A]: 7 }, beyond: {} });
    expect(readAck(raw, "abc12345", "other token")).toBeUndefined();
    expect(readAck(raw, "deadbeef", "tok")).toBeUndefined();
    expect(readAck(raw.replace('":7', '":9'), "abc12345", "tok")).toBeUndefined();
    expect(readAck("not json", "abc12345", "tok")).toBeUndefined();
    expect(readAck(signedAck("abc12345", { "bad origin": 1 }, "tok", "t"), "abc12345", "tok")).toBeUndefined();
    expect(ackTopicOf("mam/jobs/abc12345/events")).toBe("mam/jobs/abc12345/acks");
  });

  test("seqs held above the mark travel as signed ranges: a journal whose own seqs are not contiguous is known whole", () => {
    const A = "aaaaaaaaaaaaaaaa";
    const B = "bbbbbbbbbbbbbbbb";
    // B numbered its events after other origins' seqs: 1-5, then 10-13 and 16; A's journal holds them all
    const ix = EventIndex.of([1, 2, 3, 4, 5, 10, 11, 12, 13, 16].map((n) => ev(B, n)).concat([ev(A, 1), ev(A, 3)]));
    expect(ix.acked()).toEqual({ [A]: 1, [B]: 5 });
    expect(ix.beyond()).toEqual({ [A]: [[3, 3]], [B]: [[10, 13], [16, 16]] });
    const raw = signedAck("abc12345", ix.acked(), "tok", "2026-01-01T00:00:00Z", ix.beyond());
    const marks = readAck(raw, "abc12345", "tok");
    expect(marks).toEqual({ acked: { [A]: 1, [B]: 5 }, beyond: { [A]: [[3, 3]], [B]: [[10, 13], [16, 16]] } });
    expect([1, 5, 10, 13, 16].every((n) => ackHolds(marks, B, n))).toBe(true);
    expect([6, 9, 14, 15, 17].some((n) => ackHolds(marks, B, n))).toBe(false);
    expect(ackHolds(marks, A, 2)).toBe(false);
    expect(ackHolds(marks, A, 3)).toBe(true);
    expect(ackHolds(undefined, B, 1)).toBe(false);
    // the ranges are signed: moved, dropped or malformed, the ack does not read
    expect(readAck(raw.replace("[16,16]", "[16,17]"), "abc12345", "tok")).toBeUndefined();
    expect(readAck(raw.replace(',"beyond":{"aaaaaaaaaaaaaaaa":[[3,3]],"bbbbbbbbbbbbbbbb":[[10,13],[16,16]]}', ""), "abc12345", "tok")).toBeUndefined();
    expect(readAck(signedAck("abc12345", {}, "tok", "t", { [B]: [[3, 2]] }), "abc12345", "tok")).toBeUndefined();
    expect(readAck(signedAck("abc12345", {}, "tok", "t", { [B]: [[0, 2]] }), "abc12345", "tok")).toBeUndefined();
    expect(readAck(signedAck("abc12345", {}, "tok", "t", { "bad origin": [[1, 2]] }), "abc12345", "tok")).toBeUndefined();
    // at most MAX_ACK_RANGES ranges per origin, the lowest ones
    const holes = EventIndex.of(Array.from({ length: 200 }, (_, i) => ev(B, 2 * i + 3)));
    expect(holes.beyond()[B]).toHaveLength(MAX_ACK_RANGES);
    expect(holes.beyond()[B]![0]).toEqual([3, 3]);
    expect(readAck(signedAck("abc12345", holes.acked(), "tok", "t", holes.beyond()), "abc12345", "tok")?.beyond[B]).toHaveLength(MAX_ACK_RANGES);
  });
});

describe("AckSender (the daemon's acks)", () => {
  test("retained and signed; once per burst; again only when the marks change or after a reconnect", async () => {
    const { AckSender } = await import("../../lib/ops/react/ack-sender.ts");
    const ws = tempWs();
    const r = await registerJob(ws, spec);
    const cache = new JournalCache();
    const topic = `mam/jobs/${r.job_id}/events`;
    const O = "dddddddddddddddd";
    const mk = (seq: number) =>
      Buffer.from(canonicalJson(signEvent({ schema_version: 1, seq, origin: O, job_id: r.job_id, event: "progress", timestamp: "2026-01-01T00:00:00Z", detail: "", source: "w", data: {} }, r.auth_token)));
    const sent: { topic: string; payload: string; retain: boolean }[] = [];
    const publish = async (t: string, payload: string, o: { retain: boolean }) => (sent.push({ topic: t, payload, retain: o.retain }), true);
    const acks = new AckSender(ws, cache, 30);
    for (const s of [1, 2, 4]) {
      await ingestEvent(ws, topic, mk(s), () => {}, cache);
      acks.note(r, publish);
    }
    await Bun.sleep(100);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ topic: `mam/jobs/${r.job_id}/acks`, retain: true });
    expect(readAck(sent[0]!.payload, r.job_id, r.auth_token)).toEqual({ acked: { [O]: 2 }, beyond: { [O]: [[4, 4]] } }); // 3 is missing
    expect(await acks.send(r, publish)).toBe(false); // nothing new
    await ingestEvent(ws, topic, mk(3), () => {}, cache);
    expect(await acks.send(r, publish)).toBe(true);
    expect(readAck(sent[1]!.payload, r.job_id, r.auth_token)).toEqual({ acked: { [O]: 4 }, beyond: {} });
    acks.forgetSent();
    expect(await acks.send(r, publish)).toBe(true);
    acks.close();
  });
});

describe("RepeatLog", () => {
  test("the first repeat of a burst in full, then one line for the rest", async () => {
    const lines: string[] = [];
    const rl = new RepeatLog((l) => lines.push(l), 30);
    rl.repeat("dropped event (job x origin o seq 1): repeat of an event already journalled");
    rl.repeat("dropped event (job x origin o seq 2): repeat of an event already journalled");
    rl.repeat("dropped event (job x origin o seq 3): repeat of an event already journalled");
    expect(lines).toEqual(["dropped event (job x origin o seq 1): repeat of an event already journalled"]);
    await Bun.sleep(80);
    expect(lines[1]).toBe("dropped 2 more repeats of journalled events (the first: (job x origin o seq 2): repeat of an event already journalled)");
    rl.repeat("dropped event (job x origin o seq 9): repeat of an event already journalled");
    rl.flush();
    expect(lines).toHaveLength(3);
  });
});
