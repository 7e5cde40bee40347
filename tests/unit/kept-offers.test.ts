// Deliveries kept until received (lib/team/kept-offers.ts): when one goes again, when it is
// forgotten, and that only a delivery this host sealed for the topic its own journal names goes.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import type { JobEvent } from "../../lib/jobs/event.ts";
import type { JobRecord } from "../../lib/jobs/store.ts";
import type { Team } from "../../lib/team/config.ts";
import { forgetOffer, keepOffer, keptAt, keptOffers, keptOpens, keptVerdict, readKept, OFFERING_MS, REOFFER_FRESH_MS, REOFFER_MS } from "../../lib/team/kept-offers.ts";
import { type Delivery, deliveryTopic } from "../../lib/team/messages.ts";
import { seal } from "../../lib/team/seal.ts";
import { makeSandbox } from "../helpers/sandbox.ts";

const tp = "mam/team/lab";
const WS = "0123456789ab";
const D = "abc12345.0a0b0c0d";
const topic = deliveryTopic(tp, "hostB", WS, D);
const ev = (event: string, data: Record<string, unknown>, source = "mam") => ({ event, source, data }) as unknown as JobEvent;
const offered = ev("offered", { delivery: D, topic, host: "hostB", ws_id: WS, purpose: "job" });
const job = (events: JobEvent[], more: { final?: boolean; notOwn?: string } = {}) => ({ events, ...more });
const NOW = 1_800_000_000_000;

describe("keptVerdict", () => {
  test("not received: again once REOFFER_MS passed since it was sent (or kept); on a new connection after REOFFER_FRESH_MS", () => {
    expect(keptVerdict(D, job([offered]), tp, NOW - REOFFER_MS + 1, undefined, NOW, false)).toEqual({ do: "wait" });
    expect(keptVerdict(D, job([offered]), tp, NOW - REOFFER_MS, undefined, NOW, false)).toEqual({ do: "send", topic });
    expect(keptVerdict(D, job([offered]), tp, 0, NOW - REOFFER_FRESH_MS + 1, NOW, true)).toEqual({ do: "wait" });
    expect(keptVerdict(D, job([offered]), tp, 0, NOW - REOFFER_FRESH_MS, NOW, true)).toEqual({ do: "send", topic });
  });
  test("kept before its `offered` is journalled: left alone while the offer is under way, forgotten after OFFERING_MS", () => {
    expect(keptVerdict(D, job([]), tp, NOW - 1000, undefined, NOW, true)).toEqual({ do: "wait" });
    expect(keptVerdict(D, job([]), tp, NOW - OFFERING_MS, undefined, NOW, false)).toEqual({ do: "forget", why: "its job's journal has no offer of it" });
  });
  test("forgotten: received, its job ended, not this user's, gone, or no offer of it in the journal", () => {
    expect(keptVerdict(D, job([offered, ev("received", { delivery: D }, "mam@hostB")]), tp, 0, undefined, NOW, true)).toEqual({ do: "forget", why: "received" });
    // another delivery's `received` is not this one's
    expect(keptVerdict(D, job([offered, ev("received", { delivery: "abc12345.ffffffff" }, "mam@hostB")]), tp, 0, undefined, NOW, true).do).toBe("send");
    expect(keptVerdict(D, job([offered], { final: true }), tp, 0, undefined, NOW, true)).toEqual({ do: "forget", why: "its job has ended" });
    expect(keptVerdict(D, job([offered], { notOwn: "it was not written by this user's mam" }), tp, 0, undefined, NOW, true)).toEqual({ do: "forget", why: "it was not written by this user's mam" });
    expect(keptVerdict(D, undefined, tp, 0, undefined, NOW, true)).toEqual({ do: "forget", why: "no record of its job" });
    expect(keptVerdict(D, job([]), tp, 0, undefined, NOW, true).do).toBe("forget");
  });
  test("the topic is made from the host's own `offered`: one by a token holder, or naming a wildcard, is not taken", () => {
    expect(keptVerdict(D, job([ev("offered", { delivery: D, host: "hostB", ws_id: WS }, "w@hostB")]), tp, 0, undefined, NOW, true).do).toBe("forget");
    expect(keptVerdict(D, job([ev("offered", { delivery: D, host: "#", ws_id: WS })]), tp, 0, undefined, NOW, true).do).toBe("forget");
    expect(keptVerdict(D, job([ev("offered", { delivery: D, host: "hostB", ws_id: "+/x" })]), tp, 0, undefined, NOW, true).do).toBe("forget");
  });
});

describe("keptOpens", () => {
  const team = { team: "lab", secret: Buffer.alloc(32, 1).toString("base64url") } as unknown as Team;
  const other = { team: "lab", secret: Buffer.alloc(32, 2).toString("base64url") } as unknown as Team;
  const rec = { job_id: "abc12345", agent_session: "w@hostB", auth_token: "t" } as unknown as JobRecord;
  const d: Delivery = { id: D, job: rec, to: "w@hostB", purpose: "job", from_host: "hostA", deadline: 1, ws_id: WS, topic };
  test("a delivery hostA sealed for that topic opens; another key, sender, id or topic does not", () => {
    expect(keptOpens(team, "hostA", D, topic, seal(team, "deliver", "hostA", d))).toBe(true);
    expect(keptOpens(team, "hostA", D, topic, seal(other, "deliver", "hostA", d))).toBe(false);
    expect(keptOpens(team, "hostA", D, topic, seal(team, "deliver", "hostC", { ...d, from_host: "hostC" }))).toBe(false);
    expect(keptOpens(team, "hostA", D, deliveryTopic(tp, "hostC", WS, D), seal(team, "deliver", "hostA", d))).toBe(false);
    expect(keptOpens(team, "hostA", "abc12345.ffffffff", topic, seal(team, "deliver", "hostA", d))).toBe(false);
    expect(keptOpens(team, "hostA", D, topic, seal(team, "presence", "hostA", d))).toBe(false);
    expect(keptOpens(team, "hostA", D, topic, "not sealed")).toBe(false);
  });
});

describe("the kept files", () => {
  const sb = makeSandbox("mam-kept-");
  afterAll(() => sb.cleanup());
  test("kept 0600 under .mam/offers (0700), listed by delivery id, read, forgotten; other names are passed over", () => {
    keepOffer(sb.ws, D, "sealed text");
    keepOffer(sb.ws, "../../etc/x", "never");
    const p = join(sb.ws, ".mam", "offers", D);
    expect(statSync(p).mode & 0o777).toBe(0o600);
    expect(statSync(join(sb.ws, ".mam", "offers")).mode & 0o777).toBe(0o700);
    expect(keptOffers(sb.ws)).toEqual([D]);
    expect(readKept(sb.ws, D)).toBe("sealed text");
    expect(keptAt(sb.ws, D)).toBeGreaterThan(0);
    forgetOffer(sb.ws, D);
    expect(existsSync(p)).toBe(false);
    expect(keptOffers(sb.ws)).toEqual([]);
  });
});
