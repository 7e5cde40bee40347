// What a team host's daemon sends again of its copies of other hosts' jobs (docs/machines.md):
// the events of this host's journal (its origin) that the delegator's signed, retained ack does
// not hold (lib/jobs/acks.ts), so that a report made while this host, the broker or a bridge was
// cut off still arrives. The decisions, as plain functions and one small state; the I/O (reading
// the acks, publishing) is lib/ops/react/team.ts's.
//
//   * which copies: unfinished ones, and ended ones until their delegator holds every event of
//     ours (an agent's last report, made while cut off, ends the copy here and still has to go),
//     for at most FORWARD_ENDED_MS after the copy last changed;
//   * which events: ours that the ack does not hold, once FORWARD_AFTER_MS old (the agent's own
//     publish gets that long), oldest first; always the whole run from the oldest one missing, so
//     that the delegator journals them in this journal's order whichever copy arrives first;
//   * how often: at once on a new connection and when an event is missing that was not sent yet
//     on this one; otherwise again after a backoff that doubles from FORWARD_AFTER_MS to
//     FORWARD_BACKOFF_MAX_MS (a broker took them and its bridge, or the delegator, is away: every
//     resend waits in a queue that may be bounded).
import type { JobEvent } from "../../jobs/event.ts";
import type { JobRecord } from "../../jobs/store.ts";
import { isFinal } from "../../jobs/statuses.ts";

export const FORWARD_AFTER_MS = 2000;
export const FORWARD_BACKOFF_MAX_MS = 5 * 60_000;
export const FORWARD_ENDED_MS = 24 * 3600_000;
/** at most this many events of one job go again at once */
export const FORWARD_MAX = 200;

/** the events of `origin` that the delegator's ack does not hold, journal order, FORWARD_AFTER_MS old */
export function unheld(events: readonly JobEvent[], origin: string, held: (origin: string, seq: number) => boolean, nowMs: number): JobEvent[] {
  return events.filter((e) => e.origin === origin && !held(origin, e.seq) && nowMs - Date.parse(e.timestamp) >= FORWARD_AFTER_MS).slice(0, FORWARD_MAX);
}

interface Sent {
  /** the highest seq sent again on this connection */
  upTo: number;
  at: number;
  /** resends of the same run so far */
  n: number;
}

/** what was sent again on the current connection, per job */
export class Forwarder {
  private sent = new Map<string, Sent>();
  /** ended copies whose delegator holds all of ours (as of their record's updated_at): nothing more to do */
  private whole = new Map<string, string>();
  /** jobs found to need nothing (not copies, ended copies whole or given up): `settled` */
  private none = new Set<string>();

  /** a new connection: what went out on the old one may be lost with it */
  reset(): void {
    this.sent.clear();
  }

  /** does this copy still need its acks read? */
  wants(rec: JobRecord, nowMs: number): boolean {
    const id = rec.job_id;
    this.none.delete(id);
    if (rec.remote_of && !isFinal(rec.status)) return true;
    const changed = Date.parse(rec.updated_at);
    if (rec.remote_of && this.whole.get(id) !== rec.updated_at && (!Number.isFinite(changed) || nowMs - changed < FORWARD_ENDED_MS)) return true;
    this.none.add(id);
    return false;
  }

  /**
   * this job was found to need nothing (not a copy, or an ended copy whole at its delegator or
   * given up): a job whose journal has not changed since (the daemon's rest) needs no new look
   */
  settled(id: string): boolean {
    return this.none.has(id);
  }

  /**
   * the events of this copy to send now (empty: none missing, or not due yet). `missing` is
   * unheld()'s answer for the copy as it is (`ended`: the copy is final here).
   */
  due(rec: JobRecord, missing: readonly JobEvent[], ended: boolean, nowMs: number): readonly JobEvent[] {
    const id = rec.job_id;
    if (missing.length === 0) {
      this.sent.delete(id);
      if (ended) this.whole.set(id, rec.updated_at);
      return [];
    }
    const top = Math.max(...missing.map((e) => e.seq));
    const s = this.sent.get(id);
    const fresh = !s || top > s.upTo;
    if (!fresh && nowMs - s.at < Math.min(FORWARD_AFTER_MS * 2 ** s.n, FORWARD_BACKOFF_MAX_MS)) return [];
    this.sent.set(id, { upTo: Math.max(top, s?.upTo ?? 0), at: nowMs, n: fresh ? 1 : s.n + 1 });
    return missing;
  }
}
