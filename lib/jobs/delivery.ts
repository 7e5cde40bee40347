// The stages of a job delivered to another machine (docs/machines.md), as its journal shows them.
// The delegator's host journals `offered` (data: delivery, topic, host, ws_id, purpose); the
// agent's host journals `received` when it takes the delivery, then one outcome: `delivered`
// (typed and seen to leave the input box, or the agent reported on the job), `uncertain` (typed,
// not confirmed) or `error` (nothing typed). Every one of them names its delivery in data.delivery.
// Pure: no I/O.
import type { JobEvent } from "./event.ts";

/** a delivery id: `<job id>.<8 hex digits>` */
export const DELIVERY_ID_RE = /^[0-9a-f]{8}\.[0-9a-f]{8}$/;

const deliveryOf = (e: Pick<JobEvent, "data">): string | undefined => {
  const d = e.data?.delivery;
  return typeof d === "string" ? d : undefined;
};

export type DeliveryStage = "offered" | "received" | "outcome";

/** has this journal seen that stage of that delivery? */
export function hasStage(events: readonly Pick<JobEvent, "event" | "data">[], delivery: string, stage: DeliveryStage): boolean {
  return events.some((e) => deliveryOf(e) === delivery && (stage === "outcome" ? e.event === "delivered" || e.event === "uncertain" || e.event === "error" : e.event === stage));
}

/** the deliveries received here whose outcome is not journalled yet, oldest first, with whom they are for */
export function awaitingOutcome(events: readonly Pick<JobEvent, "event" | "data">[]): { delivery: string; to: string }[] {
  const out: { delivery: string; to: string }[] = [];
  for (const e of events) {
    const d = deliveryOf(e);
    if (!d) continue;
    if (e.event === "received") out.push({ delivery: d, to: typeof e.data.to === "string" ? e.data.to : "" });
    else if (e.event === "delivered" || e.event === "uncertain" || e.event === "error") {
      const i = out.findIndex((x) => x.delivery === d);
      if (i >= 0) out.splice(i, 1);
    }
  }
  return out;
}

/** an offered delivery's retained topic, from the `offered` event that sent it */
export function offeredTopic(events: readonly Pick<JobEvent, "event" | "data">[], delivery: string): string | undefined {
  const e = events.find((x) => x.event === "offered" && deliveryOf(x) === delivery);
  const t = e?.data?.topic;
  return typeof t === "string" ? t : undefined;
}

/** the retained topics of deliveries offered and not received yet */
export function outstandingTopics(events: readonly Pick<JobEvent, "event" | "data">[]): string[] {
  const received = new Set(events.filter((e) => e.event === "received").map(deliveryOf));
  const out: string[] = [];
  for (const e of events) {
    const d = deliveryOf(e);
    const t = e.data?.topic;
    if (e.event === "offered" && d && !received.has(d) && typeof t === "string") out.push(t);
  }
  return out;
}

export { deliveryOf };

export interface DeliveryState {
  /** the delivery's id */
  delivery: string;
  /** how far it got: offered, received, then one outcome (delivered, uncertain, or error: nothing typed) */
  stage: "offered" | "received" | "delivered" | "uncertain" | "error";
  /** what it carried, when the journal says (the `offered` event does): job, review, feedback */
  purpose: string | null;
  /** the host it went to, when the journal says */
  host: string | null;
}

const STAGE_RANK: Record<string, number> = { offered: 0, received: 1, delivered: 2, uncertain: 2, error: 2 };

/**
 * the newest delivery of a job (the last to appear in the journal) and how far it got: the
 * furthest stage journalled for it, the later of two outcomes (an uncertain text that the agent
 * then reported on is delivered); undefined for a job that was never delivered across machines
 */
export function latestDelivery(events: readonly Pick<JobEvent, "event" | "data">[]): DeliveryState | undefined {
  const by = new Map<string, DeliveryState>();
  let last: string | undefined;
  for (const e of events) {
    const d = deliveryOf(e);
    const rank = STAGE_RANK[e.event];
    if (!d || rank === undefined) continue;
    const cur = by.get(d);
    if (!cur) last = d;
    const str = (k: string) => (typeof e.data[k] === "string" ? (e.data[k] as string) : null);
    const next: DeliveryState = cur ?? { delivery: d, stage: e.event as DeliveryState["stage"], purpose: null, host: null };
    if (cur && rank >= STAGE_RANK[cur.stage]!) next.stage = e.event as DeliveryState["stage"];
    next.purpose ??= str("purpose");
    next.host ??= str("host");
    by.set(d, next);
  }
  return last === undefined ? undefined : by.get(last);
}
