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

/** what this host offered of a job: each delivery with the host and workspace it went to (from its `offered` events) */
export interface Offer {
  delivery: string;
  host: string;
  ws_id: string;
}

const HOST_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const WS_ID_RE = /^[0-9a-f]{12}$/;

/**
 * the deliveries the job's `offered` events name, well-formed ones only (a delivery id, a host
 * name, a workspace id). Every `offered` in a delegator's journal is its own: one from the wire is
 * refused (wireRefusal).
 */
export function offersOf(events: readonly Pick<JobEvent, "event" | "data">[]): Offer[] {
  const out: Offer[] = [];
  for (const e of events) {
    if (e.event !== "offered") continue;
    const d = deliveryOf(e);
    const host = e.data?.host;
    const ws = e.data?.ws_id;
    if (d && DELIVERY_ID_RE.test(d) && typeof host === "string" && HOST_RE.test(host) && typeof ws === "string" && WS_ID_RE.test(ws)) out.push({ delivery: d, host, ws_id: ws });
  }
  return out;
}

/** the retained topic of a delivery, made from the host, workspace and id it went to (lib/team/messages.ts deliveryTopic) */
export type TopicOf = (host: string, wsId: string, delivery: string) => string;

/**
 * an offered delivery's retained topic, made again from what this host offered (never a topic
 * an event names: security review T9); undefined when this host did not offer it
 */
export function offeredTopic(events: readonly Pick<JobEvent, "event" | "data">[], delivery: string, topicOf: TopicOf): string | undefined {
  const o = offersOf(events).find((x) => x.delivery === delivery);
  return o ? topicOf(o.host, o.ws_id, o.delivery) : undefined;
}

/** the retained topics of deliveries offered and not received yet, made again as offeredTopic does */
export function outstandingTopics(events: readonly Pick<JobEvent, "event" | "data">[], topicOf: TopicOf): string[] {
  const received = new Set(events.filter((e) => e.event === "received").map(deliveryOf));
  return offersOf(events)
    .filter((o) => !received.has(o.delivery))
    .map((o) => topicOf(o.host, o.ws_id, o.delivery));
}

/**
 * Pure: why an event that only mam journals (MAM_EVENTS), arriving from the broker on a job of
 * this host's own (not a copy of another host's), is refused; undefined when it is taken. Job
 * events are signed with the job's token, which the agent's host and its agent both hold: what
 * can be checked is that the event could have come from the host a delivery went to, never
 * from anywhere else (security review T9):
 *   - `offered`: only this host journals it (its own comes back as a repeat);
 *   - `received`, `delivered`, `uncertain`: for a delivery this host offered, from `mam@<the host it went to>`;
 *   - `queued`, `dispatched`: from `mam@<a host the job was offered to>`;
 *   - `approved`, `denied`: naming (data.host) a host the job was offered to;
 *   - `usage`, `budget_exceeded`, `limited`, `unlimited`, `restarted`, `restart_gave_up`: only on a
 *     job offered to another host (its agent's host reports them).
 */
export function wireRefusal(events: readonly Pick<JobEvent, "event" | "data">[], ev: Pick<JobEvent, "event" | "source" | "data">): string | undefined {
  const what = `a ${ev.event} event from ${ev.source.slice(0, 80)}`;
  switch (ev.event) {
    case "offered":
      return `${what}: only this host, the job's own, journals offered`;
    case "received":
    case "delivered":
    case "uncertain":
    case "queued":
    case "dispatched":
    case "approved":
    case "denied":
    case "usage":
    case "budget_exceeded":
    case "limited":
    case "unlimited":
    case "restarted":
    case "restart_gave_up":
      break;
    default:
      return undefined;
  }
  const offers = offersOf(events);
  if (offers.length === 0) return `${what} on a job this host never offered to another host (only mam here journals it)`;
  const hosts = [...new Set(offers.map((o) => o.host))];
  if (ev.event === "received" || ev.event === "delivered" || ev.event === "uncertain") {
    const d = deliveryOf(ev);
    const o = offers.find((x) => x.delivery === d);
    if (!o) return `${what} for delivery ${String(d).slice(0, 40)}, which this host did not offer`;
    if (ev.source !== `mam@${o.host}`) return `${what} for delivery ${o.delivery}, which went to ${o.host}`;
    return undefined;
  }
  if (ev.event === "queued" || ev.event === "dispatched") {
    if (!ev.source.startsWith("mam@") || !hosts.includes(ev.source.slice(4))) return `${what}, not from a host the job was offered to (${hosts.join(", ")})`;
    return undefined;
  }
  if (ev.event === "approved" || ev.event === "denied") {
    const h = ev.data?.host;
    if (typeof h !== "string" || !hosts.includes(h)) return `${what} naming host ${String(h).slice(0, 64)}, not one the job was offered to (${hosts.join(", ")})`;
  }
  return undefined;
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
