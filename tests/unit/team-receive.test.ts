// What a host checks of a sealed delivery that opened (lib/ops/job/receive.ts, deliveryRefusal):
// the workspace and topic it was sealed for (security review T4), its sender, its session, its
// deadline. Pure: no broker, no daemon.
import { describe, expect, test } from "bun:test";
import type { JobRecord } from "../../lib/jobs/store.ts";
import { deliveryRefusal } from "../../lib/ops/job/receive.ts";
import { type Delivery, deliveryTopic } from "../../lib/team/messages.ts";

const tp = "mam/team/lab";
const W1 = "aaaaaaaaaaaa";
const W2 = "bbbbbbbbbbbb";
const id = "abc12345.0a0b0c0d";
const now = 1_800_000_000;
const job = { job_id: "abc12345", agent_session: "w@hostB", reviewer_session: null, topic_prefix: "mam/jobs/abc12345", auth_token: "t" } as unknown as JobRecord;
const sealedFor = (ws: string): Delivery => ({ id, job, to: "w@hostB", purpose: "job", from_host: "hostA", deadline: now + 60, ws_id: ws, topic: deliveryTopic(tp, "hostB", ws, id) });
const self = (ws: string) => ({ host: "hostB", wsId: ws, tp });

describe("deliveryRefusal: a delivery is bound to the workspace it was sealed for", () => {
  test("on its own workspace's topic it is taken", () => {
    expect(deliveryRefusal(sealedFor(W1), "hostA", deliveryTopic(tp, "hostB", W1, id), self(W1), now)).toBeUndefined();
  });

  test("moved to another workspace of its host (T4): refused, naming where it was sealed for", () => {
    const why = deliveryRefusal(sealedFor(W1), "hostA", deliveryTopic(tp, "hostB", W2, id), self(W2), now);
    expect(why).toBe(`sealed for ${deliveryTopic(tp, "hostB", W1, id)}, not this topic (moved from another workspace's or delivery's)`);
  });

  test("moved onto another delivery's topic of the same workspace: refused", () => {
    expect(deliveryRefusal(sealedFor(W1), "hostA", deliveryTopic(tp, "hostB", W1, "abc12345.0e0e0e0e"), self(W1), now)).toContain("moved");
  });

  test("an older mam's delivery, without the binding: refused, the sender must upgrade", () => {
    const { ws_id: _w, topic: _t, ...old } = sealedFor(W1);
    const why = deliveryRefusal(old as Delivery, "hostA", deliveryTopic(tp, "hostB", W1, id), self(W1), now);
    expect(why).toContain("older mam on hostA");
    expect(why).toContain("upgrade mam on hostA");
  });
});
