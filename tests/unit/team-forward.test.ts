// What a team host's daemon sends again of its copies of other hosts' jobs (lib/ops/react/forward.ts):
// the events of its origin the delegator's ack does not hold, as a run from the oldest one
// missing; ended copies until the delegator holds them all; with a backoff on one connection.
import { describe, expect, test } from "bun:test";
import { ackHolds, readAck, signedAck } from "../../lib/jobs/acks.ts";
import { type JobEvent, signEvent } from "../../lib/jobs/event.ts";
import { EventIndex } from "../../lib/jobs/identity.ts";
import type { EventName } from "../../lib/jobs/statuses.ts";
import type { JobRecord } from "../../lib/jobs/store.ts";
import { FORWARD_AFTER_MS, FORWARD_BACKOFF_MAX_MS, FORWARD_ENDED_MS, Forwarder, unheld } from "../../lib/ops/react/forward.ts";

const B = "bbbbbbbbbbbbbbbb"; // this host's journal
const A = "aaaaaaaaaaaaaaaa"; // the delegator's
const C = "cccccccccccccccc"; // a reviewer's
const T0 = Date.parse("2026-01-01T00:00:00Z");
const at = (ms: number) => new Date(T0 + ms).toISOString().replace(/\.\d+Z$/, "Z");
const ev = (origin: string, seq: number, event: EventName = "progress", ms = 0): JobEvent =>
  signEvent({ schema_version: 1, seq, origin, job_id: "abc12345", event, timestamp: at(ms), detail: "", source: "w@b", data: {} }, "tok");
const rec = (status: JobRecord["status"], updatedMs = 0): JobRecord =>
  ({ job_id: "abc12345", status, remote_of: "a", updated_at: at(updatedMs), topic_prefix: "mam/jobs/abc12345", auth_token: "tok" }) as JobRecord;

/** what the delegator's daemon would say it holds, as B reads it */
function heldBy(delegator: JobEvent[]): (o: string, seq: number) => boolean {
  const ix = EventIndex.of(delegator);
  const marks = readAck(signedAck("abc12345", ix.acked(), "tok", "t", ix.beyond()), "abc12345", "tok");
  return (o, seq) => ackHolds(marks, o, seq);
}

const seqs = (evs: readonly JobEvent[]) => evs.map((e) => e.seq);
const LATER = 60_000;

describe("unheld: the events of ours the delegator does not hold", () => {
  test("a copy journal whose own seqs are not contiguous (a loop: A's and C's events between ours) is whole once the delegator has them all", () => {
    // B's journal of a loop job, numbered after every seq it held (before per-origin numbering)
    const mine = [1, 2, 3, 4, 5, 10, 11, 12, 13].map((n) => ev(B, n));
    const journal = [...mine.slice(0, 5), ev(A, 6), ev(A, 7), ev(C, 1), ev(C, 2), ...mine.slice(5)];
    const delegator = [ev(A, 1), ...mine.slice(0, 5), ev(A, 6), ev(A, 7), ev(C, 1), ev(C, 2), ...mine.slice(5)];
    expect(unheld(journal, B, heldBy(delegator), T0 + LATER)).toEqual([]);
    // one of ours lost on the way: exactly that one, and what follows it
    const lost = delegator.filter((e) => !(e.origin === B && e.seq === 11));
    expect(seqs(unheld(journal, B, heldBy(lost), T0 + LATER))).toEqual([11]);
    // no ack at all: every one of ours, oldest first, none of the others'
    expect(seqs(unheld(journal, B, () => false, T0 + LATER))).toEqual([1, 2, 3, 4, 5, 10, 11, 12, 13]);
  });

  test("an event gets FORWARD_AFTER_MS for the agent's own publish before it counts as missing", () => {
    const journal = [ev(B, 1, "started", 0), ev(B, 2, "progress", 5000)];
    expect(seqs(unheld(journal, B, () => false, T0 + FORWARD_AFTER_MS))).toEqual([1]);
    expect(seqs(unheld(journal, B, () => false, T0 + 5000 + FORWARD_AFTER_MS))).toEqual([1, 2]);
  });
});

describe("Forwarder", () => {
  test("an ended copy is still watched until the delegator holds all of ours (its last report was made while cut off), then dropped", () => {
    const f = new Forwarder();
    const done = rec("completed");
    expect(f.wants(rec("running"), T0 + FORWARD_ENDED_MS * 10)).toBe(true);
    expect(f.wants(done, T0 + LATER)).toBe(true);
    expect(seqs(f.due(done, [ev(B, 3), ev(B, 4), ev(B, 5, "completed")], true, T0 + LATER))).toEqual([3, 4, 5]);
    expect(f.wants(done, T0 + LATER)).toBe(true);
    // settled only once a look found it whole: until then an ended copy at rest is still read
    expect(f.settled(done.job_id)).toBe(false);
    expect(f.due(done, [], true, T0 + 2 * LATER)).toEqual([]);
    expect(f.wants(done, T0 + 2 * LATER)).toBe(false);
    expect(f.settled(done.job_id)).toBe(true);
    // a late report changes the copy: watched again
    expect(f.wants(rec("completed", 3 * LATER), T0 + 3 * LATER)).toBe(true);
    expect(f.settled(done.job_id)).toBe(false);
    // an ended copy nobody acknowledges is given up after FORWARD_ENDED_MS
    const old = new Forwarder();
    expect(old.wants(done, T0 + FORWARD_ENDED_MS + 1)).toBe(false);
    expect(old.settled(done.job_id)).toBe(true);
    // a job of this workspace is not a copy: settled at the first look
    const own = { ...rec("completed"), job_id: "def67890", remote_of: undefined } as JobRecord;
    expect(f.wants(own, T0)).toBe(false);
    expect(f.settled("def67890")).toBe(true);
    expect(f.settled("0badc0de")).toBe(false); // never looked at
  });

  test("a run already sent waits a doubling backoff (capped); a new event, or a new connection, sends it at once", () => {
    const f = new Forwarder();
    const r = rec("running");
    const run = [ev(B, 3), ev(B, 4)];
    let now = T0 + LATER;
    expect(seqs(f.due(r, run, false, now))).toEqual([3, 4]);
    expect(f.due(r, run, false, now + 1000)).toEqual([]);
    // again after 2, 4, 8 … × FORWARD_AFTER_MS, never more than FORWARD_BACKOFF_MAX_MS apart
    let wait = 2 * FORWARD_AFTER_MS;
    const gaps: number[] = [];
    for (let i = 0; i < 12; i++) {
      expect(f.due(r, run, false, now + wait - 1)).toEqual([]);
      expect(seqs(f.due(r, run, false, now + wait))).toEqual([3, 4]);
      gaps.push(wait);
      now += wait;
      wait = Math.min(wait * 2, FORWARD_BACKOFF_MAX_MS);
    }
    expect(gaps.slice(0, 3)).toEqual([4000, 8000, 16_000]);
    expect(Math.max(...gaps)).toBe(FORWARD_BACKOFF_MAX_MS);
    // a new missing event: the whole run at once, oldest first
    expect(seqs(f.due(r, [...run, ev(B, 5)], false, now + 1))).toEqual([3, 4, 5]);
    expect(f.due(r, [...run, ev(B, 5)], false, now + 2)).toEqual([]);
    // a new connection: at once
    f.reset();
    expect(seqs(f.due(r, [...run, ev(B, 5)], false, now + 3))).toEqual([3, 4, 5]);
    // held at last: nothing, and the backoff starts afresh for a later loss
    expect(f.due(r, [], false, now + 4)).toEqual([]);
    expect(seqs(f.due(r, [ev(B, 6)], false, now + 5))).toEqual([6]);
  });
});
