// A team across two sites (docs/machines.md "Several sites: bridged brokers", issue 24): two real
// Mosquittos bridged on `mam/#` both ways at QoS 1 (startBridgedMosquittos), host A and C on the
// first, host B on the second, each with its own MAM_HOST, HOME, workspace, tmux server, demo
// agents and daemon. What crosses the bridge: presence, deliveries (retained until received), job
// events and acks. What the bridge adds: after every reconnection each broker sends the other its
// retained messages again, to live subscribers as plain messages (tests/helpers/brokers.ts).
//
//   * a loop job, lead on A, worker on B, reviewer on C: every stage once, in order, on A; no
//     delivery left retained on either broker;
//   * the bridge cut mid-job and restored: nothing lost, nothing doubled, the job completes;
//   * a job offered while the bridge is cut is delivered once it is back, typed once although
//     the bridge sends its retained delivery again.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { type BridgedMosquittos, mosquittoPath, retainedTopics, startBridgedMosquittos } from "../helpers/brokers.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { doubled, expectWhole, formTeam, hasStage, type Host, loopStages, makeHost, occurrences as count, ofOrigin, stages, threeHostStory, until as waitUntil, untilAnnounced } from "../helpers/team.ts";
import { TMUX_BIN } from "../helpers/tmux.ts";

const SKIP = !mosquittoPath() ? "mosquitto is not installed (apt-get install mosquitto)" : !TMUX_BIN ? "tmux is not installed (apt-get install tmux)" : undefined;
if (SKIP) console.log(`team bridge tests skipped: ${SKIP}`);

let sb: Sandbox;
let br: BridgedMosquittos;
let A: Host;
let B: Host;
let C: Host;

const story = (id?: string) => threeHostStory(A, B, C, id);

const has = hasStage;
const until = (what: string, cond: () => boolean | Promise<boolean>, timeoutMs: number, id?: string) => waitUntil(what, cond, timeoutMs, () => story(id));
const assertWhole = (id: string, session: string) => expectWhole(A, B, id, session, story(id));

async function submit(h: Host, args: string[]): Promise<string> {
  const out = await h.ok(["job", "submit", ...args]);
  expect(out).toMatch(/^[0-9a-f]{8}\n$/);
  return out.trim();
}

/** the deliveries still retained on a broker */
const retainedDeliveries = (port: number) => retainedTopics(port, "mam/team/lab/deliver/#");

describe.skipIf(!!SKIP)("a team across two bridged Mosquittos", () => {
  beforeAll(async () => {
    sb = makeSandbox("mam-tbr-");
    br = await startBridgedMosquittos(join(sb.root, "brokers"), { prefix: "mam" });
    A = makeHost(sb.root, "hostA", br.first.env);
    B = makeHost(sb.root, "hostB", br.second.env);
    C = makeHost(sb.root, "hostC", br.first.env);
    await formTeam([A, B, C]);
    await A.demo("lead", "lead");
    await B.demo("w", "worker", ["--think-ms", "50"]);
    await B.demo("slow", "worker", ["--think-ms", "1500"]);
    await C.demo("r", "reviewer", ["--pass-on", "2", "--think-ms", "50"]);
    await untilAnnounced(A, ["w@hostB", "slow@hostB", "r@hostC", "lead@hostA"], 30_000);
    await untilAnnounced(B, ["lead@hostA", "r@hostC"], 30_000);
  }, 120_000);

  afterAll(async () => {
    for (const h of [A, B, C]) await h?.stop();
    await br?.stop();
    await sb?.cleanup();
  }, 60_000);

  test("a loop job across the bridge: lead on A, worker on B (the other site), reviewer on C; every stage once, in order", async () => {
    const id = await submit(A, ["--to", "w@hostB", "--from", "lead", "--type", "loop", "--reviewer", "r@hostC", "--prompt", "add a greeting"]);
    const waited = await A.mam(["job", "wait", id, "--timeout", "60"], {}, 90_000);
    expect(waited.code, `${waited.stdout}${waited.stderr}\n${story(id)}`).toBe(0);
    // job wait may hear the end from the broker before A's daemon has journalled it
    await until("A journals the reviewer's PASS", () => A.journal(id).some((e) => e.event === "completed" && e.detail.includes("PASS")), 5000, id);
    await Bun.sleep(1500); // room for a late copy to show
    const evs = A.journal(id);
    expect(doubled(evs), story(id)).toEqual([]);
    expect(stages(evs), story(id)).toEqual(loopStages("w@hostB", "r@hostC"));
    expect(evs.at(-1)!.detail).toContain("PASS");
    expect(ofOrigin(evs, B.origin(id)), story(id)).toEqual(ofOrigin(B.journal(id), B.origin(id)));
    expect(count(B.screen("w"), `[mam] Job ${id} delegated to you (w@hostB) by session lead@hostA`)).toBe(1);
    expect(count(C.screen("r"), `[mam] Review for job ${id}`)).toBe(2);
    expect(await waitFor(() => A.screen("lead").includes(`[mam] job ${id} completed`), 10_000)).toBe(true);
    // the deliveries were cleared on both sides of the bridge
    expect(await retainedDeliveries(br.first.port)).toEqual([]);
    expect(await retainedDeliveries(br.second.port)).toEqual([]);
    // B's copy ended here; B's daemon watches it until A's ack holds all of B's events, then
    // sends nothing more (before per-origin numbering B's seqs in a loop were not contiguous, and
    // an ack with only the contiguous mark never held them: they went again on every poll)
    const sent = count(B.log(), `job ${id}: sent `);
    await Bun.sleep(3000);
    expect(count(B.log(), `job ${id}: sent `), B.log()).toBe(sent);
  }, 120_000);

  test("the bridge cut mid-job and restored: every stage once, in B's order, and the job completes", async () => {
    const id = await submit(A, ["--to", "slow@hostB", "--from", "lead", "--prompt", "work across a cut bridge"]);
    await until("A sees the job delivered", () => has(A, id, "delivered mam@hostB"), 20_000, id);
    await br.cut();
    await until("B's worker reports while the bridge is down", () => has(B, id, "progress slow@hostB"), 20_000, id);
    expect(has(A, id, "started slow@hostB"), story(id)).toBe(false);
    await until("B's worker completes", () => has(B, id, "completed slow@hostB"), 20_000, id);
    await Bun.sleep(1000);
    expect(stages(A.journal(id)), story(id)).toEqual(["offered mam", "received mam@hostB", "delivered mam@hostB"]);
    await br.restore();
    await until("A has every stage", () => has(A, id, "completed slow@hostB"), 30_000, id);
    await until("A's lead hears the end", () => A.screen("lead").includes(`[mam] job ${id} completed`), 15_000, id);
    await Bun.sleep(2500);
    expect(stages(A.journal(id)), story(id)).toEqual(["offered mam", "received mam@hostB", "delivered mam@hostB", "started slow@hostB", "progress slow@hostB", "completed slow@hostB"]);
    assertWhole(id, "slow");
    expect(count(A.screen("lead"), `[mam] job ${id} completed`)).toBe(1);
  }, 90_000);

  test("a job offered while the bridge is cut is delivered once it is back, typed once though the bridge sends its delivery again", async () => {
    await br.cut();
    const id = await submit(A, ["--to", "w@hostB", "--from", "lead", "--prompt", "across a bridge that is down"]);
    await Bun.sleep(2000);
    expect(stages(A.journal(id))).toEqual(["offered mam"]);
    expect(B.journal(id)).toEqual([]);
    await br.restore();
    await until("A has every stage", () => has(A, id, "completed w@hostB"), 30_000, id);
    // a second reconnection of the bridge sends the retained messages again
    await br.cut();
    await br.restore();
    await Bun.sleep(2500);
    expect(stages(A.journal(id)), story(id)).toEqual(["offered mam", "received mam@hostB", "delivered mam@hostB", "started w@hostB", "progress w@hostB", "completed w@hostB"]);
    assertWhole(id, "w");
    expect(await retainedDeliveries(br.first.port)).toEqual([]);
    expect(await retainedDeliveries(br.second.port)).toEqual([]);
  }, 90_000);
});
