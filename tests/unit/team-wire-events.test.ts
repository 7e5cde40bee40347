// What a delegator takes from the broker of the events only mam journals (lib/jobs/delivery.ts,
// wireRefusal), and which retained deliveries its daemon clears (offeredTopic, outstandingTopics):
// a token holder cannot make it clear a topic of its choosing (security review T9). Pure.
import { describe, expect, test } from "bun:test";
import { offeredTopic, outstandingTopics, wireRefusal } from "../../lib/jobs/delivery.ts";
import type { JobEvent } from "../../lib/jobs/event.ts";
import type { EventName } from "../../lib/jobs/statuses.ts";
import { deliveryTopic } from "../../lib/team/messages.ts";

const tp = "mam/team/lab";
const topicOf = (h: string, w: string, d: string) => deliveryTopic(tp, h, w, d);
const D = "abc12345.0a0b0c0d";
const WS = "0123456789ab";
const ev = (event: EventName, source: string, data: Record<string, unknown> = {}): JobEvent =>
  ({ schema_version: 1, seq: 1, job_id: "abc12345", event, timestamp: "2026-01-01T00:00:00Z", detail: "", source, data }) as JobEvent;
/** the delegator's own journal of a job offered to w@hostB */
const offered = ev("offered", "mam", { delivery: D, topic: topicOf("hostB", WS, D), host: "hostB", ws_id: WS, purpose: "job" });
const mine = [offered];

describe("wireRefusal: mam's events from the broker, on a job of this host's", () => {
  test("a token holder's `offered` naming any topic is refused (only this host journals offered)", () => {
    expect(wireRefusal(mine, ev("offered", "mam", { delivery: "abc12345.0000beef", topic: "home/alarm/state" }))).toContain("only this host, the job's own, journals offered");
  });

  test("`received` for a delivery this host never offered, or from another host than it went to: refused", () => {
    expect(wireRefusal(mine, ev("received", "mam@hostB", { delivery: "abc12345.0000beef" }))).toContain("which this host did not offer");
    expect(wireRefusal(mine, ev("received", "mam@hostC", { delivery: D }))).toContain("which went to hostB");
    expect(wireRefusal(mine, ev("delivered", "w@hostB", { delivery: D }))).toContain("which went to hostB");
  });

  test("the stages from the host the delivery went to are taken", () => {
    for (const e of ["received", "delivered", "uncertain"] as const) expect(wireRefusal(mine, ev(e, "mam@hostB", { delivery: D }))).toBeUndefined();
    for (const e of ["queued", "dispatched"] as const) expect(wireRefusal(mine, ev(e, "mam@hostB", { to: "w" }))).toBeUndefined();
    expect(wireRefusal(mine, ev("usage", "mam", { usage: {} }))).toBeUndefined();
    expect(wireRefusal(mine, ev("approved", "mam", { host: "hostB" }))).toBeUndefined();
  });

  test("queue stages and answers from a host the job never went to, and any mam event on a job never offered: refused", () => {
    expect(wireRefusal(mine, ev("queued", "mam@hostC"))).toContain("not from a host the job was offered to (hostB)");
    expect(wireRefusal(mine, ev("dispatched", "mam"))).toContain("not from a host the job was offered to");
    expect(wireRefusal(mine, ev("denied", "mam", { host: "hostC" }))).toContain("not one the job was offered to");
    for (const e of ["received", "queued", "usage", "approved", "budget_exceeded"] as const) expect(wireRefusal([], ev(e, "mam@hostB", { delivery: D }))).toContain("never offered to another host");
  });

  test("an agent's own reports are not this check's business", () => {
    for (const e of ["started", "progress", "completed", "error", "permission_required"] as const) expect(wireRefusal([], ev(e, "w@hostB"))).toBeUndefined();
  });
});

describe("the topics the delegator clears: made again from its own offers", () => {
  test("received: the offered delivery's topic, whatever data.topic says", () => {
    const lying = ev("offered", "mam", { delivery: D, topic: "home/alarm/state", host: "hostB", ws_id: WS });
    expect(offeredTopic([lying], D, topicOf)).toBe(topicOf("hostB", WS, D));
    expect(offeredTopic([lying], "abc12345.0000beef", topicOf)).toBeUndefined();
  });

  test("an offer whose host or workspace is not well-formed clears nothing", () => {
    const bad = ev("offered", "mam", { delivery: D, topic: "x", host: "../#", ws_id: WS });
    expect(offeredTopic([bad], D, topicOf)).toBeUndefined();
    expect(outstandingTopics([bad], topicOf)).toEqual([]);
  });

  test("the job's end: the offers not received yet", () => {
    const D2 = "abc12345.0e0e0e0e";
    const evs = [offered, ev("received", "mam@hostB", { delivery: D }), ev("offered", "mam", { delivery: D2, topic: "home/x", host: "hostC", ws_id: WS })];
    expect(outstandingTopics(evs, topicOf)).toEqual([topicOf("hostC", WS, D2)]);
  });
});
