// The event hub: a ring of the last 512 lifecycle events with sequence numbers (herdr.md §3.5).
// Subscriptions read it with their own cursors; events.wait listens for new ones.

export const RING_SIZE = 512;

export interface HubEvent {
  seq: number;
  event: string;
  /** the lifecycle `data`, tagged with type = event */
  data: Record<string, unknown>;
}

export class EventHub {
  private ring: HubEvent[] = [];
  seq = 0;
  private listeners = new Set<(e: HubEvent) => void>();

  emit(event: string, data: Record<string, unknown>): HubEvent {
    const e: HubEvent = { seq: ++this.seq, event, data: { type: event, ...data } };
    this.ring.push(e);
    if (this.ring.length > RING_SIZE) this.ring.splice(0, this.ring.length - RING_SIZE);
    for (const l of this.listeners) l(e);
    return e;
  }

  /** the first event after cursor that passes pred, and the cursor to continue from */
  next(cursor: number, pred: (e: HubEvent) => boolean): { event?: HubEvent; cursor: number } {
    let c = cursor;
    for (const e of this.ring) {
      if (e.seq <= cursor) continue;
      c = e.seq;
      if (pred(e)) return { event: e, cursor: e.seq };
    }
    return { cursor: c };
  }

  listen(fn: (e: HubEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }
}
