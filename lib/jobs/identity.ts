// Event identity (SPEC §7.2, since 0.2): several writers report on one job (workers on other
// machines, the delegator's own commands and daemon), each numbering `seq` from its own journal.
// So an event is known by (origin, seq): `origin` is a random id of the journal that wrote it,
// signed with the rest of the payload; `seq` stays the per-journal counter the original's
// readers expect. Senders without `origin` (old mam, the original's scripts) all share the empty
// origin: they are deduped by seq among themselves, as before.
//
// EventIndex is what a receiver remembers of a journal: per identity the event's signature (an
// exact replay has the same identity and the same signature; a valid signature covers every other
// byte of the payload), per origin the highest seq (to log gaps), and what acks say of it: the
// contiguous mark and the seqs held above it (lib/jobs/acks.ts). Pure: no I/O.
import { randomBytes } from "../sys/digest.ts";

/** an origin id: what mam writes is 16 hex digits; other senders may use 8-64 of [A-Za-z0-9_-] */
export const ORIGIN_RE = /^[A-Za-z0-9_-]{8,64}$/;

export const newOrigin = (): string => randomBytes(8).toString("hex");

/** what identifies an event: its seq, and the journal it was numbered in (origin) */
type Identified = { seq: number; origin?: string };
/** an event as the index reads it (its identity and its signature) */
type Indexed = Identified & { data?: { hmac_sig?: unknown } };

/** the identity of an event: `<origin>#<seq>`, `#<seq>` for senders without origin */
export const eventKey = (ev: Identified): string => `${ev.origin ?? ""}#${ev.seq}`;

/** how log lines name an event: `origin O seq N`, or `seq N` */
export const identityText = (ev: Identified): string => (ev.origin === undefined ? `seq ${ev.seq}` : `origin ${ev.origin} seq ${ev.seq}`);

/** what a receiver knows of the events it already has */
export interface SeenEvents {
  /** the signature of the event journalled under this identity, if any */
  sigOf(key: string): string | undefined;
  /** the highest seq journalled from this origin (undefined: senders without origin); 0 if none */
  maxSeq(origin: string | undefined): number;
}

const sigOf = (ev: Indexed): string => {
  const s = ev.data?.hmac_sig;
  return typeof s === "string" ? s : "";
};

export class EventIndex implements SeenEvents {
  private byKey = new Map<string, { sig: string; at: number }>();
  private max = new Map<string, number>();
  /** per origin: every seq up to this one is here (and the ones above it that are) */
  private contiguous = new Map<string, number>();
  private above = new Map<string, Set<number>>();
  /** events added (the journal's length: repeats are never journalled) */
  count = 0;

  static of(events: Iterable<Indexed>): EventIndex {
    const ix = new EventIndex();
    for (const e of events) ix.add(e);
    return ix;
  }

  add(ev: Indexed): void {
    const k = eventKey(ev);
    if (!this.byKey.has(k)) this.byKey.set(k, { sig: sigOf(ev), at: this.count });
    const o = ev.origin ?? "";
    if (ev.seq > (this.max.get(o) ?? 0)) this.max.set(o, ev.seq);
    this.advance(o, ev.seq);
    this.count++;
  }

  private advance(o: string, seq: number): void {
    let c = this.contiguous.get(o) ?? 0;
    if (seq <= c) return;
    let up = this.above.get(o);
    if (seq !== c + 1) {
      if (!up) this.above.set(o, (up = new Set()));
      up.add(seq);
      return;
    }
    c = seq;
    while (up?.delete(c + 1)) c++;
    this.contiguous.set(o, c);
  }

  has(ev: Identified): boolean {
    return this.byKey.has(eventKey(ev));
  }

  sigOf(key: string): string | undefined {
    return this.byKey.get(key)?.sig;
  }

  /** the position in the journal of the event with this identity */
  positionOf(key: string): number | undefined {
    return this.byKey.get(key)?.at;
  }

  maxSeq(origin: string | undefined): number {
    return this.max.get(origin ?? "") ?? 0;
  }

  /** the highest seq of any origin */
  maxAny(): number {
    let m = 0;
    for (const n of this.max.values()) if (n > m) m = n;
    return m;
  }

  /** per origin (senders with one): the highest seq N such that seqs 1..N are all here */
  acked(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [o, n] of this.contiguous) if (o !== "" && n > 0) out[o] = n;
    return out;
  }

  /**
   * per origin (senders with one) that has seqs here above its acked() mark: those seqs as
   * ascending inclusive ranges, at most `maxRanges` (the lowest ones)
   */
  beyond(maxRanges = MAX_ACK_RANGES): Record<string, [number, number][]> {
    const out: Record<string, [number, number][]> = {};
    for (const [o, up] of this.above) {
      if (o === "" || up.size === 0) continue;
      out[o] = seqRanges(up, maxRanges);
    }
    return out;
  }
}

/** how many ranges of seqs above its mark an ack lists per origin (lib/jobs/acks.ts) */
export const MAX_ACK_RANGES = 64;

/** seqs as ascending inclusive ranges, the lowest `max` of them */
export function seqRanges(seqs: Iterable<number>, max = MAX_ACK_RANGES): [number, number][] {
  const out: [number, number][] = [];
  for (const s of [...seqs].sort((a, b) => a - b)) {
    const last = out.at(-1);
    if (last && s <= last[1] + 1) last[1] = Math.max(last[1], s);
    else if (out.length < max) out.push([s, s]);
    else break;
  }
  return out;
}
