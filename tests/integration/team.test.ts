// A team across machines (docs/machines.md, issue 24), with real processes that stand for
// machines: three hosts on one machine, each with its own MAM_HOST, HOME, workspace, tmux server
// and daemon, one real Mosquitto, demo agents doing the work. A lead on A delegates a loop job to
// a worker on B with a reviewer on C; a job offered while B's daemon is down is delivered when it
// returns; a cancel reaches B's agent. Refused and logged, with nothing typed on any host: a
// delivery sealed by a host outside the team (a real mam with its own team of the same name, and
// a made-up secret), forged ones (a made-up ciphertext, an envelope naming another sender, a body
// naming another sender than the sealer, one moved to another delivery's topic, one for another
// host's session, one past its deadline), a replay (before and after B's daemon restarts), and one
// for an agent that does not exist (the job ends in error).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { MqttClient } from "mqtt";
import { type Team } from "../../lib/team/config.ts";
import { deliveryTopic, workspaceId } from "../../lib/team/messages.ts";
import { seal } from "../../lib/team/seal.ts";
import { signEvent } from "../../lib/jobs/event.ts";
import { mosquittoPath, startMosquitto, type TestBroker } from "../helpers/brokers.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { doubled, formTeam, type Host, journalled, makeHost, stages, untilAnnounced } from "../helpers/team.ts";
import { TMUX_BIN } from "../helpers/tmux.ts";

const skip = !mosquittoPath() || !TMUX_BIN;

let sb: Sandbox;
let broker: TestBroker;
let A: Host;
let B: Host;
let C: Host;

const teamOf = (h: Host): Team => JSON.parse(readFileSync(join(h.home, ".local", "state", "mam", "team.json"), "utf8")) as Team;
const count = (hay: string, needle: string) => hay.split(needle).length - 1;

async function submit(h: Host, args: string[]): Promise<string> {
  const out = await h.ok(["job", "submit", ...args]);
  expect(out).toMatch(/^[0-9a-f]{8}\n$/);
  return out.trim();
}

/** the record of a job no host made (an attacker's) */
const rec = (id: string, to: string) => ({
  schema_version: 1,
  job_id: id,
  agent_session: to,
  agent: "demo",
  prompt: "rm -rf / (an attack)",
  delegator: "lead@hostA",
  type: "single",
  reviewer_session: null,
  max_iterations: null,
  iteration: 1,
  timeout_sec: 3600,
  idle_timeout_sec: 120,
  expected_artifacts: [],
  status: "pending",
  created_at: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
  updated_at: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
  last_seq: 0,
  topic_prefix: `mam/jobs/${id}`,
  auth_token: "f".repeat(64),
});
/** a delivery of it, as a delegator on hostA would send it (to B's workspace, on its topic, unless `more` says otherwise) */
const delivery = (id: string, to: string, more: Record<string, unknown> = {}) => {
  const wsId = workspaceId(B.ws);
  return { id: `${id}.0a0b0c0d`, job: rec(id, to), to, purpose: "job", from_host: "hostA", deadline: Math.floor(Date.now() / 1000) + 3600, ws_id: wsId, topic: deliveryTopic("mam/team/lab", "hostB", wsId, `${id}.0a0b0c0d`), ...more };
};

/** a raw MQTT client on the test's broker (an outsider, or a replayer) */
async function client(): Promise<MqttClient> {
  const mqtt = await import("mqtt");
  return mqtt.connectAsync({ host: "127.0.0.1", port: broker.port, protocolVersion: 4, clean: true, reconnectPeriod: 0 } as never);
}

/** B's daemon comes back: the job offered while it was away completes, each stage on A once, typed on B once */
async function backOnB(id: string): Promise<void> {
  await B.ok(["daemon", "ensure"]);
  const waited = await A.mam(["job", "wait", id, "--timeout", "30"], {}, 60_000);
  expect(waited.code, `${A.log()}\n${B.log()}`).toBe(0);
  // job wait may hear the end from the broker before A's daemon has journalled it
  await waitFor(() => A.journal(id).some((e) => e.event === "completed"), 5000);
  const evs = A.journal(id);
  expect(doubled(evs)).toEqual([]);
  expect(stages(evs)).toEqual(["offered mam", "received mam@hostB", "delivered mam@hostB", "started w@hostB", "progress w@hostB", "completed w@hostB"]);
  expect(count(B.screen("w"), `[mam] Job ${id} delegated`)).toBe(1);
}

describe.skipIf(skip)("a team across machines (three hosts, one Mosquitto)", () => {
  beforeAll(async () => {
    sb = makeSandbox("mam-team-");
    broker = await startMosquitto(join(sb.root, "broker"));
    A = makeHost(sb.root, "hostA", broker.env);
    B = makeHost(sb.root, "hostB", broker.env);
    C = makeHost(sb.root, "hostC", broker.env);
    await formTeam([A, B, C]);
    await A.demo("lead", "lead");
    await B.demo("w", "worker", ["--think-ms", "50"]);
    await C.demo("r", "reviewer", ["--pass-on", "2", "--think-ms", "50"]);
    await untilAnnounced(A, ["w@hostB", "r@hostC", "lead@hostA"]);
  }, 90_000);

  afterAll(async () => {
    for (const h of [A, B, C]) await h?.stop();
    await broker?.stop();
    await sb?.cleanup();
  }, 60_000);

  test("status --fleet shows every host's agents; a bare unknown name and an unknown host are clear errors", async () => {
    const doc = JSON.parse(await A.ok(["status", "--fleet", "--json"]));
    expect(doc.team).toBe("lab");
    expect(doc.host).toBe("hostA");
    const hosts = doc.workspaces.map((w: { host: string; online: boolean }) => `${w.host}:${w.online}`);
    expect(hosts).toEqual(["hostA:true", "hostB:true", "hostC:true"]);
    const w = doc.workspaces.find((x: { host: string }) => x.host === "hostB").agents[0];
    expect(w).toMatchObject({ name: "w", address: "w@hostB", agent: "demo", role: "worker" });
    expect(JSON.stringify(doc)).not.toContain(teamOf(A).secret);

    const text = await A.ok(["status", "--fleet"]);
    expect(text).toContain("w@hostB");
    expect(text).toContain("r@hostC");

    const noHost = await A.mam(["job", "submit", "--to", "w@hostZ", "--prompt", "x"]);
    expect(noHost.code).toBe(3);
    expect(noHost.stderr).toContain("ERROR: no host 'hostZ' in team lab");
    expect(noHost.stderr).toContain("hostA, hostB, hostC");
    const noName = await A.mam(["job", "submit", "--to", "nobody@hostB", "--prompt", "x"]);
    expect(noName.code).toBe(3);
    expect(noName.stderr).toContain("ERROR: no running session 'nobody' on hostB");
    expect(noName.stderr).toContain("w@hostB");
    const bare = await A.mam(["job", "submit", "--to", "w", "--prompt", "x"]);
    expect(bare.code).toBe(3);
    expect(bare.stderr).toContain("no running session named 'w' in this workspace");
    // nothing was registered by the refusals
    expect(JSON.parse(await A.ok(["job", "list", "--json"])).jobs).toEqual([]);
  }, 60_000);

  test("a loop job: lead on A, worker on B, reviewer on C; every stage lands once, in order, on A", async () => {
    const id = await submit(A, ["--to", "w@hostB", "--from", "lead", "--type", "loop", "--reviewer", "r@hostC", "--prompt", "add a greeting"]);
    const waited = await A.mam(["job", "wait", id, "--timeout", "60"], {}, 90_000);
    expect(waited.code, `${waited.stdout}${waited.stderr}\nA:\n${A.log()}\nB:\n${B.log()}\nC:\n${C.log()}`).toBe(0);
    // job wait may hear the end from the broker before A's daemon has journalled it
    await waitFor(() => A.journal(id).some((e) => e.event === "completed" && e.detail.includes("PASS")), 5000);
    const evs = A.journal(id);
    expect(doubled(evs)).toEqual([]);
    expect(stages(evs)).toEqual([
      "offered mam",
      "received mam@hostB",
      "delivered mam@hostB",
      "started w@hostB",
      "progress w@hostB",
      "completed w@hostB",
      "progress mam",
      "offered mam",
      "received mam@hostC",
      "delivered mam@hostC",
      "progress r@hostC",
      "completed r@hostC",
      "progress mam",
      "offered mam",
      "received mam@hostB",
      "delivered mam@hostB",
      "progress w@hostB",
      "completed w@hostB",
      "progress mam",
      "offered mam",
      "received mam@hostC",
      "delivered mam@hostC",
      "progress r@hostC",
      "completed r@hostC",
    ]);
    expect(evs.at(-1)!.detail).toContain("PASS");
    // B's and C's copies journal the loop's other events too, yet number their own 1, 2, 3, …: A
    // sees no hole in them (its acks cover them, nothing is sent again), and the copies log none
    for (const h of [A, B, C]) expect(h.log()).not.toContain(`gap in job ${id}`);
    for (const h of [B, C]) expect(h.log()).not.toContain(`job ${id}: sent`);
    // the job header and the loop's texts were typed on B and C, once each, with their own workspace
    const bScreen = B.screen("w");
    expect(count(bScreen, `[mam] Job ${id} delegated to you (w@hostB) by session lead@hostA`)).toBe(1);
    expect(bScreen).toContain(`--workspace ${B.ws}`);
    expect(count(C.screen("r"), `[mam] Review for job ${id}`)).toBe(2);
    // the lead heard the end once
    expect(await waitFor(() => A.screen("lead").includes(`[mam] job ${id} completed`), 10_000)).toBe(true);
    await Bun.sleep(1500);
    expect(count(A.screen("lead"), `[mam] job ${id} completed`)).toBe(1);
    // job list names where the job ran; the copies know whose job it is
    expect(await A.ok(["job", "list"])).toContain("w@hostB");
    expect(JSON.parse(await B.ok(["job", "status", id, "--json"]))).toMatchObject({ remote_of: "hostA", agent_session: "w@hostB", delegator: "lead@hostA" });
    // the retained deliveries are gone from the broker once received
    const c = await client();
    const left: string[] = [];
    c.on("message", (t, p) => p.length && left.push(t));
    await c.subscribeAsync("mam/team/lab/deliver/#", { qos: 1 });
    await Bun.sleep(500);
    await c.endAsync();
    expect(left).toEqual([]);
  }, 120_000);

  test("a job offered while B's daemon is down is delivered when it comes back; B shows offline meanwhile", async () => {
    await B.ok(["daemon", "stop"]);
    expect(
      await waitFor(async () => {
        const d = JSON.parse(await A.ok(["status", "--fleet", "--json"]));
        return d.workspaces.some((w: { host: string; online: boolean }) => w.host === "hostB" && !w.online);
      }, 10_000, 200),
    ).toBe(true);
    expect(await A.ok(["status", "--fleet"])).toMatch(/hostB .*offline \(last seen \d+s ago\)/);
    const r = await A.mam(["job", "submit", "--to", "w@hostB", "--from", "lead", "--prompt", "while you were away"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("NOTE: w@hostB: hostB is offline; it gets the job when it returns");
    const id = r.stdout.trim();
    await Bun.sleep(1000);
    expect(stages(A.journal(id))).toEqual(["offered mam"]);
    expect(B.screen("w")).not.toContain(`Job ${id}`);
    await backOnB(id);
  }, 90_000);

  test("a delivery the broker lost before B took it (restarted without persistence) is offered again as A reconnects; B types it once, and A forgets it once received", async () => {
    await B.ok(["daemon", "stop"]);
    const id = await submit(A, ["--to", "w@hostB", "--from", "lead", "--prompt", "lost and found"]);
    const d = A.journal(id).find((e) => e.event === "offered")!.data.delivery as string;
    const kept = join(A.ws, ".mam", "offers", d);
    expect(existsSync(kept)).toBe(true);
    expect(statSync(kept).mode & 0o777).toBe(0o600);
    // the broker restarts without persistence while B is away: the retained delivery, and what
    // it queued for B's session, are gone; A's daemon connects again and sends what it kept
    await Bun.sleep(2500);
    await broker.stop();
    broker = await startMosquitto(join(sb.root, "broker"), { port: broker.port });
    expect(await waitFor(() => A.log().includes(`team: offered delivery ${d} again (not received yet)`), 20_000, 200), A.log()).toBe(true);
    await backOnB(id);
    // received: the kept copy goes (at A's next poll)
    expect(await waitFor(() => !existsSync(kept), 10_000, 200), A.log()).toBe(true);
    // the team as it was for the tests after this one: every host announced again
    await untilAnnounced(A, ["w@hostB", "r@hostC", "lead@hostA"]);
  }, 90_000);

  test("a new host's first job: its submit starts its daemon, which listens before the offer goes out; every stage lands in order", async () => {
    // F has never run a daemon (the broker keeps no session for it): were the offer out before
    // F's daemon subscribed, B's first events would pass it by and reach F later (sent again),
    // after the ones that followed them
    const F = makeHost(sb.root, "hostF", broker.env);
    try {
      await F.ok(["team", "join", (await A.ok(["team", "code"])).trim().split(/\s+/).pop()!]);
      const id = await submit(F, ["--to", "w@hostB", "--prompt", "a first job from a new host"]);
      const waited = await F.mam(["job", "wait", id, "--timeout", "30"], {}, 60_000);
      expect(waited.code, `${waited.stdout}${waited.stderr}`).toBe(0);
      await waitFor(() => F.journal(id).some((e) => e.event === "completed"), 5000);
      expect(stages(F.journal(id)), `${F.log()}\n${B.log()}`).toEqual(["offered mam", "received mam@hostB", "delivered mam@hostB", "started w@hostB", "progress w@hostB", "completed w@hostB"]);
      expect(F.log()).not.toContain(`gap in job ${id}`);
    } finally {
      await F.stop();
    }
  }, 60_000);

  test("job wait --any and --all on jobs whose agents are on two other hosts", async () => {
    await C.demo("w2", "worker", ["--think-ms", "50"]);
    await B.demo("lazy", "worker", ["--think-ms", "2500"]);
    await untilAnnounced(A, ["w2@hostC", "lazy@hostB"]);
    const quick = await submit(A, ["--to", "w2@hostC", "--prompt", "quick one"]);
    const slow = await submit(A, ["--to", "lazy@hostB", "--prompt", "slow one"]);
    const any = await A.mam(["job", "wait", slow, quick, "--any", "--timeout", "30"], {}, 60_000);
    expect(any.code, `${any.stdout}${any.stderr}`).toBe(0);
    expect(any.stdout).toContain(`${quick} completed`);
    expect(JSON.parse(await A.ok(["job", "status", slow, "--json"])).status).not.toBe("completed");
    const all = await A.mam(["job", "wait", slow, quick, "--timeout", "60"], {}, 90_000);
    expect(all.code, `${all.stdout}${all.stderr}`).toBe(0);
    const list = await A.ok(["job", "list"]);
    expect(list).toContain("w2@hostC");
    expect(list).toContain("lazy@hostB");
  }, 120_000);

  test("a job for a busy agent on B waits its turn on B, and every stage of it lands on A", async () => {
    await B.demo("busyb", "worker", ["--think-ms", "600"]);
    await untilAnnounced(A, ["busyb@hostB"]);
    const j1 = await submit(A, ["--to", "busyb@hostB", "--prompt", "first"]);
    const j2 = await submit(A, ["--to", "busyb@hostB", "--prompt", "second"]);
    const w = await A.mam(["job", "wait", j1, j2, "--timeout", "60"], {}, 90_000);
    expect(w.code, `${w.stdout}${w.stderr}\n${B.log()}`).toBe(0);
    await waitFor(() => A.journal(j2).some((e) => e.event === "completed"), 5000);
    const evs = A.journal(j2);
    expect(doubled(evs)).toEqual([]);
    expect(stages(evs)).toEqual(["offered mam", "received mam@hostB", "queued mam@hostB", "dispatched mam@hostB", "delivered mam@hostB", "started busyb@hostB", "progress busyb@hostB", "completed busyb@hostB"]);
    const end1 = A.journal(j1).find((e) => e.event === "completed")!;
    const turn2 = evs.find((e) => e.event === "dispatched")!;
    expect(Date.parse(turn2.timestamp)).toBeGreaterThanOrEqual(Date.parse(end1.timestamp));
    expect(count(B.screen("busyb"), `[mam] Job ${j2} delegated`)).toBe(1);
  }, 90_000);

  test("a job for an agent on B that runs after others waits on A and is offered once they completed; one after a cancelled job never reaches B", async () => {
    await B.demo("first", "worker", ["--think-ms", "2500"]);
    await B.demo("then", "worker", ["--think-ms", "50"]);
    await untilAnnounced(A, ["first@hostB", "then@hostB"]);
    // X runs on B (2.5 s) and Y, for another agent of B, waits on A until X has completed
    const X = await submit(A, ["--to", "first@hostB", "--prompt", "lay the ground"]);
    const y = await A.mam(["job", "submit", "--to", "then@hostB", "--after", X, "--prompt", "build on it", "--json"]);
    expect(y.code, y.stderr).toBe(0);
    const yj = JSON.parse(y.stdout);
    const Y = yj.job_id as string;
    expect(yj).toMatchObject({ status: "queued", after: [X], position: null });
    expect(yj.waits_for).toMatch(new RegExp(`^after job ${X} \\((pending|running)\\) completes$`));
    expect(y.stderr).toContain(`job ${Y} waits until after job ${X}`);
    expect(y.stderr).toContain("offers it to hostB then");
    await Bun.sleep(800);
    expect(stages(A.journal(Y))).toEqual(["queued mam"]);
    expect(B.screen("then")).not.toContain(`Job ${Y}`);
    expect(await A.ok(["job", "status", Y])).toContain(`queued (after job ${X}`);
    const w = await A.mam(["job", "wait", X, Y, "--timeout", "60"], {}, 90_000);
    expect(w.code, `${w.stdout}${w.stderr}\nA:\n${A.log()}\nB:\n${B.log()}`).toBe(0);
    await waitFor(() => A.journal(Y).some((e) => e.event === "completed"), 5000);
    const evs = A.journal(Y);
    expect(doubled(evs)).toEqual([]);
    expect(stages(evs)).toEqual(["queued mam", "dispatched mam", "offered mam", "received mam@hostB", "delivered mam@hostB", "started then@hostB", "progress then@hostB", "completed then@hostB"]);
    const xDone = A.journal(X).find((e) => e.event === "completed")!;
    expect(Date.parse(evs.find((e) => e.event === "offered")!.timestamp)).toBeGreaterThanOrEqual(Date.parse(xDone.timestamp));
    expect(count(B.screen("then"), `[mam] Job ${Y} delegated to you (then@hostB) by`)).toBe(1);

    // Z is cancelled while it runs: V, after it, is cancelled on A with the reason and never offered
    const Z = await submit(A, ["--to", "first@hostB", "--prompt", "this one is called off"]);
    const V = await submit(A, ["--to", "then@hostB", "--after", Z, "--prompt", "never needed"]);
    expect((await A.mam(["job", "cancel", Z])).code).toBe(0);
    expect(await waitFor(() => A.journal(V).some((e) => e.event === "cancelled"), 20_000, 100), A.log()).toBe(true);
    expect(A.journal(V).at(-1)).toMatchObject({ event: "cancelled", source: "mam", detail: `job ${Z}, which it runs after, ended cancelled; it never ran` });
    expect(stages(A.journal(V))).toEqual(["queued mam", "cancelled mam"]);
    await Bun.sleep(1000);
    expect(B.screen("then")).not.toContain(`Job ${V}`);
    expect(B.log()).not.toContain(V);
  }, 120_000);

  test("a pool spans the team: --to-role on A goes to a free agent of that role on C; a role nobody has is a clear error", async () => {
    await C.ok(["create", "--agent", "demo", "--role", "builder", "--session", "bld", "--mux", "tmux", "--tmux-server", C.tmux, "--", "--role", "worker", "--think-ms", "50"]);
    // A sees it announced, idle
    expect(
      await waitFor(async () => {
        const d = JSON.parse(await A.ok(["status", "--fleet", "--json"]));
        return d.workspaces.some((w: { host: string; agents: { name: string; live: string }[] }) => w.host === "hostC" && w.agents.some((a) => a.name === "bld" && a.live === "idle"));
      }, 20_000, 200),
    ).toBe(true);
    const r = await A.mam(["job", "submit", "--to-role", "builder", "--from", "lead", "--prompt", "build it"]);
    expect(r.code, r.stderr).toBe(0);
    const id = r.stdout.trim();
    expect(r.stderr).toContain(`job ${id} goes to bld@hostC (no builder is free here; bld@hostC is)`);
    const w = await A.mam(["job", "wait", id, "--timeout", "30"], {}, 60_000);
    expect(w.code, `${w.stdout}${w.stderr}\n${C.log()}`).toBe(0);
    const evs = await journalled(A, id, 6);
    expect(doubled(evs)).toEqual([]);
    expect(stages(evs)).toEqual(["offered mam", "received mam@hostC", "delivered mam@hostC", "started bld@hostC", "progress bld@hostC", "completed bld@hostC"]);
    expect(JSON.parse(await A.ok(["job", "status", id, "--json"]))).toMatchObject({ agent_session: "bld@hostC", status: "completed" });
    expect(count(C.screen("bld"), `[mam] Job ${id} delegated`)).toBe(1);

    const none = await A.mam(["job", "submit", "--to-role", "nobody", "--prompt", "x"]);
    expect(none.code).toBe(3);
    expect(none.stderr).toContain(`no running session has the role 'nobody' in this workspace (${A.ws}) or on the team's other hosts`);
    expect(none.stderr).toContain("mam status --fleet");
  }, 90_000);

  test("an older mam on a host (its presence names no team protocol): no job is sent to it, and the fleet view says to upgrade it", async () => {
    const t = teamOf(A);
    const ws = "/srv/old-mam";
    const wsId = workspaceId(ws);
    const at = Date.now();
    const presence = { host: "hostE", workspace: ws, ws_id: wsId, at, since: at, agents: [{ name: "old", agent: "demo", role: "worker", status: "running", live: "idle", job: null }] };
    const online = { online: true, at, host: "hostE", ws_id: wsId, since: at };
    const [pt, ot] = [`mam/team/lab/presence/hostE/${wsId}`, `mam/team/lab/online/hostE/${wsId}`];
    const c = await client();
    try {
      await c.publishAsync(pt, seal(t, "presence", "hostE", presence), { qos: 1, retain: true });
      await c.publishAsync(ot, seal(t, "online", "hostE", online), { qos: 1, retain: true });
      const r = await A.mam(["job", "submit", "--to", "old@hostE", "--prompt", "x"]);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain("ERROR: old@hostE runs an older mam (team protocol 1; this one speaks 2): it would not hear this host's events on its jobs (a cancel, a review's verdict); nothing was sent; upgrade mam on hostE");
      const doc = JSON.parse(await A.ok(["status", "--fleet", "--json"]));
      expect(doc.workspaces.map((w: { host: string }) => w.host)).toContain("hostE");
      expect(doc.warnings).toEqual(["WARNING: hostE runs an older mam (team protocol 1; this one speaks 2): jobs from here are not sent to it; upgrade mam on hostE"]);
      // the hosts of this mam say nothing of each other
      expect((JSON.parse(await B.ok(["status", "--fleet", "--json"])).warnings as string[]).filter((x) => !x.includes("hostE"))).toEqual([]);
      expect((JSON.parse(await A.ok(["job", "list", "--json"])).jobs as { agent_session: string }[]).filter((j) => j.agent_session === "old@hostE")).toEqual([]);
    } finally {
      await c.publishAsync(pt, "", { qos: 1, retain: true });
      await c.publishAsync(ot, "", { qos: 1, retain: true });
      await c.endAsync();
    }
  }, 60_000);

  test("a cancel on A reaches B's agent", async () => {
    // a slow worker: its started comes 4 s after the job
    await B.demo("slow", "worker", ["--think-ms", "4000"]);
    await untilAnnounced(A, ["slow@hostB"]);
    const id = await submit(A, ["--to", "slow@hostB", "--prompt", "take your time"]);
    expect(await waitFor(() => stages(A.journal(id)).includes("delivered mam@hostB"), 15_000)).toBe(true);
    const c = await A.mam(["job", "cancel", id]);
    expect(c.code).toBe(0);
    expect(c.stdout).toContain("slow@hostB");
    expect(await waitFor(() => B.screen("slow").includes(`[mam] Job ${id} was cancelled (on hostA): stop working on it.`), 15_000), B.log()).toBe(true);
    expect(JSON.parse(await B.ok(["job", "status", id, "--json"])).status).toBe("cancelled");
  }, 60_000);

  test("a job to a shell on B is its command (issue 23): B types only `mam shell-job`, the exit status ends the job on A; a loop with it is refused", async () => {
    await B.ok(["create", "--agent", "shell", "--role", "builder", "--session", "sh", "--mux", "tmux", "--tmux-server", B.tmux]);
    await untilAnnounced(A, ["sh@hostB"]);
    // (stdout and stderr come through two pipes: the pause keeps their order in the detail)
    const id = await submit(A, ["--to", "sh@hostB", "--from", "lead", "--prompt", "echo built on $MAM_HOST; sleep 0.3; echo warning >&2"]);
    const waited = await A.mam(["job", "wait", id, "--timeout", "60"], {}, 90_000);
    expect(waited.code, `${waited.stdout}${waited.stderr}\nA:\n${A.log()}\nB:\n${B.log()}`).toBe(0);
    // job wait may hear the end on the broker before A's daemon journals it
    await waitFor(() => stages(A.journal(id)).includes("completed sh@hostB"), 10_000);
    expect(stages(A.journal(id))).toEqual(["offered mam", "received mam@hostB", "delivered mam@hostB", "started sh@hostB", "completed sh@hostB"]);
    expect(A.journal(id).at(-1)!.detail).toBe("built on hostB\nwarning");
    const screen = B.screen("sh");
    expect(screen).toContain(`shell-job ${id} --workspace ${B.ws}`);
    expect(screen).not.toContain("[mam] Job");
    // the lead (a demo agent) hears the end as from any worker
    expect(await waitFor(() => A.screen("lead").includes(`[mam] job ${id} completed: built on hostB warning`), 10_000)).toBe(true);
    const loop = await A.mam(["job", "submit", "--to", "sh@hostB", "--type", "loop", "--reviewer", "r@hostC", "--prompt", "make"]);
    expect(loop.code).toBe(2);
    expect(loop.stderr).toContain("ERROR: session 'sh@hostB' is a shell session: a loop job's review and feedback are text");
  }, 90_000);

  test("refused, logged, nothing typed anywhere: outside the team, forged, replayed, for an agent that does not exist", async () => {
    const t = teamOf(A);
    const bWs = workspaceId(B.ws);
    const screens = () => ({ lead: A.screen("lead"), w: B.screen("w"), r: C.screen("r") });
    const topicB = (id: string) => deliveryTopic("mam/team/lab", "hostB", bWs, `${id}.0a0b0c0d`);
    // ids of this attempt (a retried test must not meet the deliveries of the first)
    const tag = randomBytes(3).toString("hex");
    const J = Object.fromEntries(["a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "b1", "b2"].map((k) => [k, `${tag}${k}`])) as Record<string, string>;
    const c = await client();
    const expected: string[] = [];
    const refuse = async (id: string, payload: string, why: string, topic = topicB(id)) => {
      await c.publishAsync(topic, payload, { qos: 1 });
      expected.push(`team: dropped the message on ${topic}: ${why}; nothing typed`);
    };
    // outside the team: sealed with another team's secret (a team of the same name)
    const outsider: Team = { ...t, secret: Buffer.alloc(32, 7).toString("base64url") };
    await refuse(J.a1, seal(outsider, "deliver", "hostA", delivery(J.a1, "w@hostB")), "team authentication failed");
    // forged: the team's envelope with a ciphertext made up
    const forged = JSON.parse(seal(t, "deliver", "hostA", delivery(J.a2, "w@hostB")));
    forged.ct = Buffer.from("x".repeat(80)).toString("base64url");
    await refuse(J.a2, JSON.stringify(forged), "team authentication failed");
    // forged: a real sealed delivery whose envelope now names another sender (authenticated: it no longer opens)
    const swapped = JSON.parse(seal(t, "deliver", "hostA", delivery(J.a5, "w@hostB")));
    swapped.from = "hostC";
    await refuse(J.a5, JSON.stringify(swapped), "team authentication failed");
    // forged: sealed by hostC, the body claims to come from hostA
    await refuse(J.a6, seal(t, "deliver", "hostC", delivery(J.a6, "w@hostB")), "sealed by hostC but says it is from hostA");
    // moved: a delivery published on the topic of another one
    await refuse(J.a7, seal(t, "deliver", "hostA", delivery(J.a7, "w@hostB")), `sealed for ${topicB(J.a7)}, not this topic (moved from another workspace's or delivery's)`, deliveryTopic("mam/team/lab", "hostB", bWs, `${J.a7}.0e0e0e0e`));
    // moved: sealed for another workspace of hostB (review T4), republished on this workspace's topic
    const otherWs = "0123456789ab";
    const sealedFor = deliveryTopic("mam/team/lab", "hostB", otherWs, `${J.b1}.0a0b0c0d`);
    await refuse(J.b1, seal(t, "deliver", "hostA", delivery(J.b1, "w@hostB", { ws_id: otherWs, topic: sealedFor })), `sealed for ${sealedFor}, not this topic (moved from another workspace's or delivery's)`);
    // an older mam's delivery, without the workspace it is for: refused, the sender must upgrade
    await refuse(J.b2, seal(t, "deliver", "hostA", delivery(J.b2, "w@hostB", { ws_id: undefined, topic: undefined })), "sealed by an older mam on hostA, which does not bind a delivery to its workspace: upgrade mam on hostA (a team runs one version)");
    // for a session of another host, on B's topic
    await refuse(J.a8, seal(t, "deliver", "hostA", delivery(J.a8, "r@hostC")), "for r@hostC, not a session of hostB");
    // past its deadline (a delivery held back until the job timed out)
    const past = Math.floor(Date.now() / 1000) - 60;
    await refuse(J.a9, seal(t, "deliver", "hostA", delivery(J.a9, "w@hostB", { deadline: past })), `job ${J.a9} timed out before it arrived (deadline ${new Date(past * 1000).toISOString()})`);
    // a real delivery of the team (sealed with its key) for an agent B does not run: the job ends in error
    await c.publishAsync(topicB(J.a3), seal(t, "deliver", "hostA", delivery(J.a3, "ghost@hostB")), { qos: 1 });
    expected.push(`job ${J.a3}: no running session ghost on hostB; nothing typed`);
    // a replay: a delivery B already took, published again, then again after B's daemon restarted
    const taken = seal(t, "deliver", "hostA", delivery(J.a4, "w@hostB"));
    await c.publishAsync(topicB(J.a4), taken, { qos: 1 });
    expect(await waitFor(() => B.screen("w").includes(`[mam] Job ${J.a4} delegated`), 15_000), B.log()).toBe(true);
    const replayLine = `team: dropped the message on ${topicB(J.a4)}: delivery ${J.a4}.0a0b0c0d was taken before (a repeat or a replay); nothing typed`;
    await c.publishAsync(topicB(J.a4), taken, { qos: 1 });
    // bounded waits (a loaded machine is slow), then what must never happen has had its chance
    await waitFor(() => [...expected, replayLine].every((l) => B.log().includes(l)), 15_000);
    expect([...expected, replayLine].filter((l) => !B.log().includes(l)), B.log()).toEqual([]);
    await B.ok(["daemon", "stop"]);
    await B.ok(["daemon", "ensure"]);
    const replays = count(B.log(), replayLine);
    await c.publishAsync(topicB(J.a4), taken, { qos: 1 });
    expect(await waitFor(() => count(B.log(), replayLine) > replays, 15_000), B.log()).toBe(true);
    await Bun.sleep(500);
    await c.endAsync();

    const log = B.log();
    for (const l of expected) expect(log).toContain(l);
    // nothing typed anywhere: not on B, not on the other hosts' agents
    const after = screens();
    for (const id of [J.a1, J.a2, J.a3, J.a5, J.a6, J.a7, J.a8, J.a9, J.b1, J.b2]) {
      for (const [who, s] of Object.entries(after)) expect(s, `${id} on ${who}`).not.toContain(id);
    }
    expect(count(after.w, `[mam] Job ${J.a4} delegated`)).toBe(1);
    for (const s of [after.lead, after.r]) expect(s).not.toContain(J.a4);
    // the refused ones left no job behind on B; the one for a ghost ended in error
    const ids = (JSON.parse(await B.ok(["job", "list", "--json"])).jobs as { job_id: string; status: string }[]).map((j) => `${j.job_id}:${j.status}`);
    const refused = [J.a1, J.a2, J.a5, J.a6, J.a7, J.a8, J.a9, J.b1, J.b2];
    expect(ids.filter((x) => refused.includes(x.split(":")[0]!))).toEqual([]);
    expect(ids).toContain(`${J.a3}:error`);
    for (const h of [A, C]) expect((JSON.parse(await h.ok(["job", "list", "--json"])).jobs as { job_id: string }[]).filter((j) => j.job_id.startsWith(tag))).toEqual([]);
  }, 90_000);

  test("a token holder's signed `offered` naming any topic, then `received`: refused, and no topic is cleared (review T9)", async () => {
    const id = await submit(A, ["--to", "w@hostB", "--from", "lead", "--prompt", "a job whose token leaks"]);
    expect((await A.mam(["job", "wait", id, "--timeout", "30"], {}, 60_000)).code, A.log()).toBe(0);
    const token = (JSON.parse(readFileSync(join(A.ws, ".mam", "jobs", `${id}.json`), "utf8")) as { auth_token: string }).auth_token;
    const c = await client();
    const victim = `home/alarm/${randomBytes(3).toString("hex")}/state`;
    await c.publishAsync(victim, "ARMED", { qos: 1, retain: true });
    const forged = (seq: number, event: "offered" | "received", data: Record<string, string>) =>
      JSON.stringify(signEvent({ schema_version: 1, seq, origin: "evilevilevil", job_id: id, event, timestamp: new Date().toISOString().replace(/\.\d+Z$/, "Z"), detail: "", source: event === "offered" ? "mam" : "mam@hostB", data }, token));
    const fake = `${id}.0000beef`;
    await c.publishAsync(`mam/jobs/${id}/events`, forged(1, "offered", { delivery: fake, topic: victim, host: "hostB", ws_id: workspaceId(B.ws) }), { qos: 1 });
    await c.publishAsync(`mam/jobs/${id}/events`, forged(2, "received", { delivery: fake }), { qos: 1 });
    const lines = [`dropped event on mam/jobs/${id}/events: a offered event from mam: only this host, the job's own, journals offered`, `dropped event on mam/jobs/${id}/events: a received event from mam@hostB for delivery ${fake}, which this host did not offer`];
    expect(await waitFor(() => lines.every((l) => A.log().includes(l)), 15_000), A.log()).toBe(true);
    await c.endAsync();
    expect(A.journal(id).filter((e) => e.data?.delivery === fake)).toEqual([]);
    // the retained message is still there (a fresh reader gets it)
    const r = await client();
    const got = new Promise<string>((res) => r.on("message", (t, p) => t === victim && res(p.toString())));
    await r.subscribeAsync(victim, { qos: 1 });
    expect(await Promise.race([got, Bun.sleep(5000).then(() => "(nothing retained)")])).toBe("ARMED");
    await r.publishAsync(victim, "", { qos: 1, retain: true });
    await r.endAsync();
  }, 90_000);

  test("a job too large once sealed is refused at submit, nothing written; a receiver says too large, not `not JSON` (review T11)", async () => {
    const before = (JSON.parse(await A.ok(["job", "list", "--json"])).jobs as unknown[]).length;
    // 100 000 newlines: 100 KB, under the brief limit of 128 KiB, but each one is `\n` once escaped and a third more once sealed
    const brief = join(A.ws, "newlines.md");
    await Bun.write(brief, "\n".repeat(100_000));
    const r = await A.mam(["job", "submit", "--to", "w@hostB", "--from", "lead", "--brief-file", brief]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^ERROR: the job for w@hostB is \d+ bytes once sealed, over the 262144-byte \(256 KiB\) limit of a team message; nothing was sent/m);
    expect(r.stderr).toContain("send a smaller prompt or brief");
    expect((JSON.parse(await A.ok(["job", "list", "--json"])).jobs as unknown[]).length).toBe(before);
    // an older sender's oversized delivery: B's packet guard keeps only its size, and B's log says so
    const topic = deliveryTopic("mam/team/lab", "hostB", workspaceId(B.ws), "c0c0c0c0.0a0b0c0d");
    const c = await client();
    await c.publishAsync(topic, "x".repeat(300_000), { qos: 1 });
    const line = `team: dropped the message on ${topic}: too large (300000 bytes, over the 262144-byte limit of a message;`;
    expect(await waitFor(() => B.log().includes(line), 15_000), B.log()).toBe(true);
    await c.endAsync();
  }, 60_000);

  test("a host not in the team: it sees no host of the team, reaches none, and what it seals is refused and logged", async () => {
    // D shares the broker and a team name, not the secret (its own `team init`); E is in no team
    const D = makeHost(sb.root, "hostD", broker.env);
    const E = makeHost(sb.root, "hostE", broker.env);
    await D.ok(["team", "init", "lab", "--force"]);
    // D sees only itself: every message of the team's hosts fails to open with D's key
    const fleet = JSON.parse(await D.ok(["status", "--fleet", "--json"]));
    expect(fleet.workspaces.map((w: { host: string }) => w.host)).toEqual(["hostD"]);
    const sub = await D.mam(["job", "submit", "--to", "w@hostB", "--prompt", "from outside"]);
    expect(sub.code).toBe(3);
    expect(sub.stderr).toContain("ERROR: no host 'hostB' in team lab");
    const none = await E.mam(["job", "submit", "--to", "w@hostB", "--prompt", "from nowhere"]);
    expect(none.code, none.stderr).not.toBe(0);
    expect(none.stderr).toContain("ERROR: this machine is in no team");
    // the topics are not secret: D addresses B's delivery topic by hand, with its own team's key
    const topic = deliveryTopic("mam/team/lab", "hostB", workspaceId(B.ws), "b1b1b1b1.0a0b0c0d");
    const c = await client();
    await c.publishAsync(topic, seal(teamOf(D), "deliver", "hostD", delivery("b1b1b1b1", "w@hostB", { from_host: "hostD" })), { qos: 1 });
    const line = `team: dropped the message on ${topic}: team authentication failed; nothing typed`;
    expect(await waitFor(() => B.log().includes(line), 15_000), B.log()).toBe(true);
    await Bun.sleep(500);
    await c.endAsync();
    for (const s of [A.screen("lead"), B.screen("w"), C.screen("r")]) expect(s).not.toContain("b1b1b1b1");
    for (const h of [A, B, C]) expect(JSON.stringify(JSON.parse(await h.ok(["job", "list", "--json"])).jobs)).not.toContain("b1b1b1b1");
    // the team's presence went on without D: A's fleet lists only the team's hosts
    const hosts = (JSON.parse(await A.ok(["status", "--fleet", "--json"])).workspaces as { host: string }[]).map((w) => w.host);
    expect(hosts).not.toContain("hostD");
    await D.stop();
    await E.stop();
  }, 60_000);
});
