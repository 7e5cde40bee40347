// Jobs end to end (SPEC §7, issue 7): sessions made with mam create on the fake herdr, fake agents
// that follow the job header (they run its `mam job event` lines; tests/helpers/jobs-e2e.ts) or
// the built-in demo agents, the workspace's subscriber daemon (mam daemon ensure, quick polls),
// and each kind of broker. Every test stops its daemon; the sandbox reaper checks nothing is left.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { makeCerts, mosquittoPath, startMamBroker, startMosquitto, type TestBroker } from "../helpers/brokers.ts";
import { canonicalJson } from "../../lib/jobs/canonical.ts";
import { signEvent } from "../../lib/jobs/event.ts";
import { alive } from "../helpers/daemon.ts";
import { agentLog, createAgent, type E2E, ensureDaemon as ensureShared, journalEvents, monitorLog, newWorkspace, openGate, startE2E, typed, waitTyped, type Ws, submitJob } from "../helpers/jobs-e2e.ts";
import { runMam } from "../helpers/mam.ts";
import { waitFor } from "../helpers/sandbox.ts";

let e: E2E;
beforeAll(async () => {
  e = await startE2E("mam-je-");
});
afterAll(async () => {
  await e.cleanup();
});

/** daemons started in this file: stopped after each test */
const started: Ws[] = [];
afterEach(async () => {
  for (const w of started.splice(0)) await w.mam(["daemon", "stop"]);
});

const ensureDaemon = (w: Ws, mode: "mqtt" | "polling") => ensureShared(w, mode, started);

const submit = submitJob;

const events = (w: Ws, id: string) => journalEvents(w.dir, id).map((x) => `${x.seq}:${x.event}:${x.source}`);
const count = (hay: string, needle: string) => hay.split(needle).length - 1;

/** the delegator heard about the end exactly once (checked again after two more daemon polls) */
async function expectToldOnce(w: Ws, pane: string, line: string): Promise<void> {
  expect(await waitTyped(e.herdr, pane, line, 20_000), `${line}\nmonitor log:\n${monitorLog(w.dir)}`).toBe(true);
  await Bun.sleep(2200);
  expect(count(await typed(e.herdr, pane), `] job ${line.split(" ")[2]} `)).toBe(1);
}

// ---------------------------------------------------------------------------------------------
// a job end to end on each transport
// ---------------------------------------------------------------------------------------------

describe("a job end to end", () => {
  let mosq: TestBroker;
  let tls: TestBroker;
  let embedded: TestBroker;
  let certs: ReturnType<typeof makeCerts>;
  beforeAll(async () => {
    expect(mosquittoPath()).toBeDefined(); // CI installs it: never skipped silently
    certs = makeCerts(join(e.sb.root, "certs"));
    [mosq, tls, embedded] = await Promise.all([
      startMosquitto(join(e.sb.root, "mosq")),
      startMosquitto(join(e.sb.root, "mosq-tls"), { username: "team", password: "s3cr3t", tls: { ca: certs.ca, cert: certs.cert, key: certs.key } }),
      startMamBroker(e.sb.env, e.sb.root),
    ]);
  });
  afterAll(async () => {
    await Promise.all([mosq?.stop(), tls?.stop(), embedded?.stop()]);
  });

  const transports: [string, () => Record<string, string>, "mqtt" | "polling"][] = [
    ["Mosquitto", () => mosq.env, "mqtt"],
    ["Mosquitto with TLS and a password", () => tls.env, "mqtt"],
    ["the embedded mam broker", () => embedded.env, "mqtt"],
    ["no broker at all", () => ({}), "polling"],
  ];

  for (const [name, brokerEnv, mode] of transports) {
    test(name, async () => {
      const w = newWorkspace(e, brokerEnv());
      const [wk, lead] = [w.n("wk"), w.n("lead")];
      await ensureDaemon(w, mode);
      const wp = await createAgent(e, w, wk, "worker");
      const dp = await createAgent(e, w, lead, "lead");
      const id = await submit(w, ["--to", wk, "--from", lead, "--prompt", "add a --json flag"]);
      // the worker got its header with the exact commands
      expect(await typed(e.herdr, wp)).toContain(`[mam] Job ${id} delegated to you (${wk}) by session ${lead}.`);
      const wait = await w.mam(["job", "wait", id, "--timeout", "60"]);
      expect({ code: wait.code, out: wait.stdout, err: wait.stderr }).toEqual({ code: 0, out: `${id} completed: summary of the result\n`, err: "" });
      expect(events(w, id)).toEqual([`1:started:${wk}`, `2:progress:${wk}`, `3:completed:${wk}`]);
      // the worker's events went over the broker (no NOTE), or a NOTE each when the configured broker is down
      expect(await waitFor(() => count(agentLog(w.dir), " exit ") === 3, 10_000)).toBe(true); // the worker's commands have returned
      expect(count(agentLog(w.dir), "so it was not sent live")).toBe(mode === "mqtt" ? 0 : 3);
      expect(count(agentLog(w.dir), " exit 0\n")).toBe(3);
      const st = JSON.parse((await w.mam(["job", "status", id, "--json"])).stdout);
      expect(st).toMatchObject({ status: "completed", events: 3, last_seq: 3, delegator: lead, agent_session: wk, agent: "claude" });
      await expectToldOnce(w, dp, `[mam] job ${id} completed: summary of the result`);
      expect(events(w, id)).toHaveLength(3); // nothing was added by the daemon
    }, 90_000);
  }

  test("a worker on another machine: the daemon journals what only the broker carries", async () => {
    const w = newWorkspace(e, mosq.env, { agent: { PASSIVE: "1" } });
    const [wk, lead] = [w.n("wk"), w.n("lead")];
    await ensureDaemon(w, "mqtt");
    await createAgent(e, w, wk, "worker");
    const dp = await createAgent(e, w, lead, "lead");
    const id = await submit(w, ["--to", wk, "--from", lead, "--prompt", "remote work"]);
    const token = JSON.parse(await Bun.file(join(w.dir, ".mam", "jobs", `${id}.json`)).text()).auth_token as string;
    const remote = newWorkspace(e, mosq.env); // the other machine's folder: no record of the job
    for (const [ev, detail] of [["started", "remote start"], ["progress", "half way"], ["completed", "remote done"]]) {
      const r = await runMam(["job", "event", id, ev!, "--detail", detail!, "--source", "far-wk", "--token", token, "--workspace", remote.dir], { env: remote.env });
      expect({ code: r.code, err: r.stderr }).toEqual({ code: 0, err: "" });
    }
    const wait = await w.mam(["job", "wait", id, "--timeout", "30"]);
    expect(wait.code).toBe(0);
    expect(wait.stdout).toBe(`${id} completed: remote done\n`);
    expect(events(w, id)).toEqual(["1:started:far-wk", "2:progress:far-wk", "3:completed:far-wk"]);
    // byte for byte what the remote journalled and signed
    expect(await Bun.file(join(w.dir, ".mam", "jobs", `${id}.events.ndjson`)).text()).toBe(await Bun.file(join(remote.dir, ".mam", "jobs", `${id}.events.ndjson`)).text());
    await expectToldOnce(w, dp, `[mam] job ${id} completed: remote done`);
  }, 90_000);

  test("spoofed, replayed, wrong-schema, oversized and unknown-job events are dropped and logged; nothing changes", async () => {
    const w = newWorkspace(e, mosq.env, { agent: { PASSIVE: "1" } });
    const [wk, lead] = [w.n("wk"), w.n("lead")];
    await ensureDaemon(w, "mqtt");
    await createAgent(e, w, wk, "worker");
    const dp = await createAgent(e, w, lead, "lead");
    const id = await submit(w, ["--to", wk, "--from", lead, "--prompt", "be careful"]);
    const token = JSON.parse(await Bun.file(join(w.dir, ".mam", "jobs", `${id}.json`)).text()).auth_token as string;
    const topic = `mam/jobs/${id}/events`;
    const ev = (over: Record<string, unknown>, key = token) =>
      canonicalJson(signEvent({ schema_version: 1, seq: 1, job_id: id, event: "started", timestamp: "2026-10-11T00:00:00Z", detail: "ok", source: "far", data: {}, ...over } as never, key));
    const mqtt = await import("mqtt");
    const pub = await mqtt.connectAsync({ protocol: "mqtt", host: "127.0.0.1", port: mosq.port, clientId: `t-spoof-${id}`, reconnectPeriod: 0 } as never);
    try {
      const send = (t: string, payload: string) => pub.publishAsync(t, payload, { qos: 1 });
      await send(topic, ev({ event: "completed", detail: "spoofed" }, "not-the-token"));
      await send(topic, ev({ schema_version: 2, event: "completed" }));
      await send(topic, ev({ event: "completed", detail: "x".repeat(300 * 1024) }));
      await send("mam/jobs/0badc0de/events", ev({ job_id: "0badc0de" }));
      await send(topic, ev({})); // the one good event
      await send(topic, ev({ event: "completed", detail: "replayed seq" }));
      const log = () => monitorLog(w.dir);
      expect(await waitFor(() => /seq 1 already seen/.test(log()), 15_000, 100), log()).toBe(true);
      expect(log()).toContain("HMAC verify failed");
      expect(log()).toContain("schema_version 2 is not 1");
      expect(log()).toMatch(/payload of 30\d{4} bytes exceeds 262144/);
      // a job this workspace does not have is other traffic on the broker: only MAM_DEBUG=1 logs it
      expect(log()).not.toContain("unknown job");
      expect(events(w, id)).toEqual(["1:started:far"]);
      expect(JSON.parse((await w.mam(["job", "status", id, "--json"])).stdout)).toMatchObject({ status: "running", events: 1, last_seq: 1 });
      expect(await Bun.file(join(w.dir, ".mam", "jobs", "0badc0de.json")).exists()).toBe(false);
      expect(await typed(e.herdr, dp)).not.toContain(`[mam] job ${id}`);
    } finally {
      await pub.endAsync();
    }
  }, 90_000);

  test("a daemon hears its own workspace's jobs, not another's on the same broker; a report by token still reaches it", async () => {
    // MAM_DEBUG=1: the daemons log every event they hear of a job they do not have
    const [a, b] = [newWorkspace(e, { ...mosq.env, MAM_DEBUG: "1" }), newWorkspace(e, { ...mosq.env, MAM_DEBUG: "1" })];
    await Promise.all([ensureDaemon(a, "mqtt"), ensureDaemon(b, "mqtt")]);
    const [wk, lead] = [b.n("wk"), b.n("lead")];
    await createAgent(e, b, wk, "worker");
    await createAgent(e, b, lead, "lead");
    const id = await submit(b, ["--to", wk, "--from", lead, "--prompt", "b's own work"]);
    const rec = JSON.parse(await Bun.file(join(b.dir, ".mam", "jobs", `${id}.json`)).text());
    // <prefix>/<host>/<12 hex digits of the workspace's path>/<id>
    expect(rec.topic_prefix).toMatch(new RegExp(`^mam/jobs/[A-Za-z0-9][A-Za-z0-9._-]*/[0-9a-f]{12}/${id}$`));
    expect((await b.mam(["job", "wait", id, "--timeout", "60"])).code).toBe(0);
    expect(events(b, id)).toEqual([`1:started:${wk}`, `2:progress:${wk}`, `3:completed:${wk}`]);
    // b's daemon heard them on the broker (its own publishes come back to it as echoes)
    expect(await waitFor(() => monitorLog(b.dir).includes(`${rec.topic_prefix}/events`), 10_000, 100), monitorLog(b.dir)).toBe(true);
    // a's daemon never did; a report by token (no record: the old topic) reaches both, and a logs it
    const token = rec.auth_token as string;
    const far = newWorkspace(e, mosq.env);
    const r = await runMam(["job", "event", id, "progress", "--detail", "by token", "--source", "far", "--token", token, "--workspace", far.dir], { env: far.env });
    expect(r.code).toBe(0);
    expect(await waitFor(() => monitorLog(a.dir).includes(`: unknown job (on mam/jobs/${id}/events)`), 15_000, 100), monitorLog(a.dir)).toBe(true);
    expect(monitorLog(a.dir)).not.toContain(rec.topic_prefix);
    expect(await waitFor(() => events(b, id).length === 4, 15_000, 100)).toBe(true);
    expect(events(b, id)[3]).toBe("1:progress:far"); // numbered by the reporter's own journal
    // as it stops, each daemon says what the broker handed it: a, the report by token alone
    await Promise.all([a.mam(["daemon", "stop"]), b.mam(["daemon", "stop"])]);
    const got = (w: Ws) => Number(/MQTT Monitor: received (\d+) job event\(s\) and \d+ other message\(s\)/.exec(monitorLog(w.dir))?.[1]);
    expect(got(a), monitorLog(a.dir)).toBe(1);
    expect(got(b), monitorLog(b.dir)).toBeGreaterThanOrEqual(4);
  }, 90_000);
});

test("a cancelled job: the worker is told to stop, the delegator hears it once, late reports change nothing", async () => {
  const w = newWorkspace(e, {}, { gated: true });
  const [wk, lead] = [w.n("wk"), w.n("lead")];
  await ensureDaemon(w, "polling");
  const wp = await createAgent(e, w, wk, "worker");
  const dp = await createAgent(e, w, lead, "lead");
  const id = await submit(w, ["--to", wk, "--from", lead, "--prompt", "a job to call off"]);
  expect(await waitFor(() => events(w, id).length === 1, 20_000)).toBe(true);
  const c = await w.mam(["job", "cancel", id]);
  expect(c.code).toBe(0);
  expect(await typed(e.herdr, wp)).toContain(`[mam] Job ${id} was cancelled: stop working on it.`);
  expect(await waitTyped(e.herdr, dp, `[mam] job ${id} cancelled: cancelled by mam job cancel`)).toBe(true);
  // the worker had not seen it yet and finishes anyway
  openGate(w.dir, "progress", "completed");
  expect(await waitFor(() => events(w, id).length === 4, 20_000)).toBe(true);
  expect(events(w, id)).toEqual([`1:started:${wk}`, "2:cancelled:mam", `3:progress:${wk}`, `4:completed:${wk}`]);
  // the agent logs each refusal after its `mam job event` returns: wait for the second one
  expect(await waitFor(() => count(agentLog(w.dir), "had already ended (cancelled)") === 2, 10_000), agentLog(w.dir)).toBe(true);
  const wait = await w.mam(["job", "wait", id, "--timeout", "10"]);
  expect({ code: wait.code, out: wait.stdout }).toEqual({ code: 1, out: `${id} cancelled: cancelled by mam job cancel\n` });
  expect(JSON.parse((await w.mam(["job", "status", id, "--json"])).stdout).status).toBe("cancelled");
  await Bun.sleep(2200);
  expect(count(await typed(e.herdr, dp), `] job ${id} `)).toBe(1);
}, 90_000);

// ---------------------------------------------------------------------------------------------
// loop jobs, with the built-in demo agents
// ---------------------------------------------------------------------------------------------

test("a loop job passes on the second review", async () => {
  const w = newWorkspace(e);
  const lead = w.n("lead");
  await ensureDaemon(w, "polling");
  const [lw, rv] = [w.n("loop-wk"), w.n("loop-rv")];
  await createAgent(e, w, lw, "worker", { agent: "demo", agentArgs: ["--role", "worker", "--think-ms", "0"] });
  await createAgent(e, w, rv, "reviewer", { agent: "demo", agentArgs: ["--role", "reviewer", "--pass-on", "2", "--think-ms", "0"] });
  const dp = await createAgent(e, w, lead, "lead");
  const id = await submit(w, ["--to", lw, "--from", lead, "--type", "loop", "--reviewer", rv, "--max-iterations", "3", "--prompt", "write the parser"]);
  const wait = await w.mam(["job", "wait", id, "--timeout", "90"]);
  expect({ code: wait.code, out: wait.stdout }).toEqual({ code: 0, out: `${id} completed: PASS: looks good\n` });
  const evs = journalEvents(w.dir, id);
  expect(evs.map((x) => `${x.event}:${x.source}`)).toEqual([
    `started:${lw}`,
    `progress:${lw}`,
    `completed:${lw}`,
    "progress:mam", // iteration 1: review requested
    `progress:${rv}`,
    `completed:${rv}`, // feedback
    "progress:mam", // iteration 2: feedback sent
    `progress:${lw}`,
    `completed:${lw}`,
    "progress:mam", // iteration 2: review requested
    `progress:${rv}`,
    `completed:${rv}`, // PASS
  ]);
  expect(evs.map((x) => x.seq)).toEqual(evs.map((_, i) => i + 1));
  expect(evs[3]!.detail).toBe(`iteration 1: review requested from ${rv}`);
  expect(evs[5]!.detail).toContain("feedback");
  expect(evs[6]!.detail).toBe(`iteration 2: feedback sent to ${lw}`);
  expect(evs[11]!.detail).toBe("PASS: looks good");
  const st = JSON.parse((await w.mam(["job", "status", id, "--json"])).stdout);
  expect(st).toMatchObject({ status: "completed", iteration: 2, type: "loop", reviewer_session: rv });
  await expectToldOnce(w, dp, `[mam] job ${id} completed: PASS: looks good`);
}, 120_000);

test("a loop job whose reviewer dies during the review → error (agent exited)", async () => {
  const w = newWorkspace(e);
  const lead = w.n("lead");
  await ensureDaemon(w, "polling");
  const [lw, rv] = [w.n("loop-wk"), w.n("loop-rv")];
  await createAgent(e, w, lw, "worker", { agent: "demo", agentArgs: ["--role", "worker", "--think-ms", "0"] });
  const rp = await createAgent(e, w, rv, "reviewer", { agent: "demo", agentArgs: ["--role", "reviewer", "--think-ms", "60000"] });
  const dp = await createAgent(e, w, lead, "lead");
  const id = await submit(w, ["--to", lw, "--from", lead, "--type", "loop", "--reviewer", rv, "--prompt", "review me"]);
  // the reviewer has its review request, submitted (the Enter follows the text), and thinks for a minute: its pane dies
  const submitted = async () => {
    const ins = await e.herdr.inputs(rp);
    const i = ins.findIndex((x) => x.kind === "text" && (x.text ?? "").includes(`[mam] Review for job ${id}`));
    return i >= 0 && ins.slice(i + 1).some((x) => x.kind === "keys");
  };
  expect(await waitFor(submitted, 30_000, 100), monitorLog(w.dir)).toBe(true);
  await e.herdr.exitPane(rp);
  const wait = await w.mam(["job", "wait", id, "--timeout", "30"]);
  expect({ code: wait.code, out: wait.stdout }).toEqual({ code: 1, out: `${id} error: agent exited\n` });
  expect(events(w, id)).toEqual([`1:started:${lw}`, `2:progress:${lw}`, `3:completed:${lw}`, "4:progress:mam", "5:error:monitor"]);
  await expectToldOnce(w, dp, `[mam] job ${id} error: agent exited`);
}, 120_000);

test("audit #1 #10: the worker's agent exits and its pane stays a shell → error (agent exited), the delegator told, a herdr notification", async () => {
  // a passive worker reads its job header and reports nothing (no hook runs)
  const w = newWorkspace(e, {}, { agent: { PASSIVE: "1" } });
  await ensureDaemon(w, "polling");
  const [lead, wk] = [w.n("lead"), w.n("shell-wk")];
  const dp = await createAgent(e, w, lead, "lead");
  const wp = await createAgent(e, w, wk, "worker");
  const id = await submit(w, ["--to", wk, "--from", lead, "--prompt", "summarise the README"]);
  // every line of the header read (lines it had not read would reach the shell after it)
  const screen = async () => String(((await e.herdr.call("pane.read", { pane_id: wp, source: "recent_unwrapped", lines: 100 })) as { read: { text: string } }).read.text);
  expect(await waitFor(async () => (await screen()).includes("got: Run started now"), 20_000, 100)).toBe(true);
  // the agent dies; herdr keeps the pane as a bare shell
  const info = (await e.herdr.call("pane.process_info", { pane_id: wp })) as { process_info: { shell_pid: number; foreground_processes: { pid: number }[] } };
  // (a short-lived child of the agent, one of its `mam job event` calls, may be gone already)
  for (const p of info.process_info.foreground_processes) {
    if (p.pid === info.process_info.shell_pid) continue;
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {}
  }
  const wait = await w.mam(["job", "wait", id, "--timeout", "30"]);
  expect({ code: wait.code, out: wait.stdout }).toEqual({ code: 1, out: `${id} error: agent exited\n` });
  expect(((await e.herdr.call("pane.list", {})) as { panes: { pane_id: string }[] }).panes.some((p) => p.pane_id === wp)).toBe(true);
  await expectToldOnce(w, dp, `[mam] job ${id} error: agent exited`);
  const notices = ((await e.herdr.state()) as { notifications: { at: number; title: string; body?: string; shown: boolean; reason: string }[] }).notifications;
  expect(notices.filter((n) => n.title === `mam: job ${id} error`)).toEqual([{ at: expect.any(Number), title: `mam: job ${id} error`, body: `${wk}: agent exited`, shown: false, reason: "disabled" }]);
}, 120_000);

// ---------------------------------------------------------------------------------------------
// trouble in the middle of a job
// ---------------------------------------------------------------------------------------------

describe("trouble in the middle of a job", () => {
  test("the broker restarts: no event lost, journal and status agree with what the worker sent", async () => {
    const dir = join(e.sb.root, "mosq-restart");
    let broker = await startMosquitto(dir);
    const port = broker.port;
    try {
      const w = newWorkspace(e, { ...broker.env, MAM_BROKER_RETRY_S: "1" }, { gated: true });
      const [wk, lead] = [w.n("wk"), w.n("lead")];
      await ensureDaemon(w, "mqtt");
      await createAgent(e, w, wk, "worker");
      const dp = await createAgent(e, w, lead, "lead");
      const id = await submit(w, ["--to", wk, "--from", lead, "--prompt", "survive a restart"]);
      // started is journalled and published (the worker's command has returned)
      expect(await waitFor(() => count(agentLog(w.dir), " exit ") === 1, 20_000)).toBe(true);
      await broker.stop();
      // the worker reports while the broker is down: saved in the journal (a NOTE), nothing lost
      openGate(w.dir, "progress");
      expect(await waitFor(() => count(agentLog(w.dir), " exit ") === 2, 20_000)).toBe(true);
      expect(events(w, id)).toHaveLength(2);
      broker = await startMosquitto(dir, { port });
      expect(await waitFor(() => /MQTT Monitor: subscribed to .*[\s\S]*MQTT Monitor: subscribed to /.test(monitorLog(w.dir)), 20_000, 100)).toBe(true);
      openGate(w.dir, "completed");
      const wait = await w.mam(["job", "wait", id, "--timeout", "60"]);
      expect(wait.code).toBe(0);
      expect(events(w, id)).toEqual([`1:started:${wk}`, `2:progress:${wk}`, `3:completed:${wk}`]);
      expect(JSON.parse((await w.mam(["job", "status", id, "--json"])).stdout)).toMatchObject({ status: "completed", last_seq: 3, events: 3 });
      expect(count(agentLog(w.dir), "so it was not sent live")).toBe(1);
      await expectToldOnce(w, dp, `[mam] job ${id} completed: summary of the result`);
    } finally {
      await broker.stop();
    }
  }, 120_000);

  test("the broker restarts under a worker on another machine: every event it sent reaches the delegator", async () => {
    const dir = join(e.sb.root, "mosq-restart-remote");
    let broker = await startMosquitto(dir);
    const port = broker.port;
    try {
      const w = newWorkspace(e, { ...broker.env, MAM_BROKER_RETRY_S: "1" }, { agent: { PASSIVE: "1" } });
      const [wk, lead] = [w.n("wk"), w.n("lead")];
      await ensureDaemon(w, "mqtt");
      await createAgent(e, w, wk, "worker");
      await createAgent(e, w, lead, "lead");
      const id = await submit(w, ["--to", wk, "--from", lead, "--prompt", "remote, through a restart"]);
      const token = JSON.parse(await Bun.file(join(w.dir, ".mam", "jobs", `${id}.json`)).text()).auth_token as string;
      const remote = newWorkspace(e, broker.env);
      const report = (ev: string, detail: string) =>
        runMam(["job", "event", id, ev, "--detail", detail, "--source", "far-wk", "--token", token, "--workspace", remote.dir], { env: remote.env });
      expect((await report("started", "go")).stderr).toBe("");
      expect(await waitFor(() => events(w, id).length === 1, 20_000)).toBe(true);
      await broker.stop();
      for (let i = 1; i <= 12; i++) {
        const down = await report("progress", `step ${i} while the broker is down`);
        expect(down.code).toBe(0);
        expect(down.stderr).toContain("it is sent again with your next report");
      }
      broker = await startMosquitto(dir, { port });
      expect(await waitFor(() => /MQTT Monitor: subscribed to .*[\s\S]*MQTT Monitor: subscribed to /.test(monitorLog(w.dir)), 20_000, 100)).toBe(true);
      expect((await report("completed", "done")).stderr).toBe("");
      const wait = await w.mam(["job", "wait", id, "--timeout", "30"]);
      expect(wait.code).toBe(0);
      // what the worker sent, all of it, once, in order: byte for byte its own journal
      expect(events(w, id)).toEqual(["1:started:far-wk", ...Array.from({ length: 12 }, (_, i) => `${i + 2}:progress:far-wk`), "14:completed:far-wk"]);
      expect(await Bun.file(join(w.dir, ".mam", "jobs", `${id}.events.ndjson`)).text()).toBe(await Bun.file(join(remote.dir, ".mam", "jobs", `${id}.events.ndjson`)).text());
      expect(JSON.parse((await w.mam(["job", "status", id, "--json"])).stdout)).toMatchObject({ status: "completed", events: 14 });
      expect(monitorLog(w.dir)).not.toContain("gap in job");
    } finally {
      await broker.stop();
    }
  }, 120_000);

  test("the daemon is killed with -9 mid-job and ensured again: the job finishes, each event journalled once, the delegator told once", async () => {
    const broker = await startMosquitto(join(e.sb.root, "mosq-kill"));
    try {
      const w = newWorkspace(e, broker.env, { gated: true });
      const [wk, lead] = [w.n("wk"), w.n("lead")];
      const first = await ensureDaemon(w, "mqtt");
      await createAgent(e, w, wk, "worker");
      const dp = await createAgent(e, w, lead, "lead");
      const id = await submit(w, ["--to", wk, "--from", lead, "--prompt", "outlive the daemon"]);
      expect(await waitFor(() => events(w, id).length === 1, 20_000)).toBe(true);
      process.kill(first, "SIGKILL");
      expect(await waitFor(() => !alive(first), 5000)).toBe(true);
      openGate(w.dir, "progress", "completed");
      expect(await waitFor(() => events(w, id).length === 3, 20_000)).toBe(true);
      const second = await ensureDaemon(w, "mqtt");
      expect(second).not.toBe(first);
      const wait = await w.mam(["job", "wait", id, "--timeout", "60"]);
      expect(wait.code).toBe(0);
      expect(events(w, id)).toEqual([`1:started:${wk}`, `2:progress:${wk}`, `3:completed:${wk}`]);
      await expectToldOnce(w, dp, `[mam] job ${id} completed: summary of the result`);
    } finally {
      await broker.stop();
    }
  }, 120_000);

  test("the worker's pane dies mid-job → error (agent exited)", async () => {
    const w = newWorkspace(e, {}, { gated: true });
    const [wk, lead] = [w.n("wk"), w.n("lead")];
    await ensureDaemon(w, "polling");
    const wp = await createAgent(e, w, wk, "worker");
    const dp = await createAgent(e, w, lead, "lead");
    const id = await submit(w, ["--to", wk, "--from", lead, "--prompt", "crash in the middle"]);
    expect(await waitFor(() => events(w, id).length === 1, 20_000)).toBe(true);
    await e.herdr.exitPane(wp);
    const wait = await w.mam(["job", "wait", id, "--timeout", "30"]);
    expect({ code: wait.code, out: wait.stdout }).toEqual({ code: 1, out: `${id} error: agent exited\n` });
    const evs = journalEvents(w.dir, id);
    expect(evs.map((x) => `${x.seq}:${x.event}:${x.source}:${x.detail}`)).toEqual([`1:started:${wk}:what you are starting`, "2:error:monitor:agent exited"]);
    await expectToldOnce(w, dp, `[mam] job ${id} error: agent exited`);
    expect(journalEvents(w.dir, id)).toHaveLength(2);
  }, 90_000);

  test("the worker's pane dies before it reported anything → error (agent exited), not an hour-long wait", async () => {
    const w = newWorkspace(e, {}, { agent: { PASSIVE: "1" } });
    const [wk, lead] = [w.n("wk"), w.n("lead")];
    await ensureDaemon(w, "polling");
    const wp = await createAgent(e, w, wk, "worker");
    const dp = await createAgent(e, w, lead, "lead");
    const id = await submit(w, ["--to", wk, "--from", lead, "--prompt", "crash before starting"]);
    await e.herdr.exitPane(wp);
    const wait = await w.mam(["job", "wait", id, "--timeout", "30"]);
    expect({ code: wait.code, out: wait.stdout }).toEqual({ code: 1, out: `${id} error: agent exited\n` });
    expect(events(w, id)).toEqual(["1:error:monitor"]);
    await expectToldOnce(w, dp, `[mam] job ${id} error: agent exited`);
  }, 90_000);

  test("an agent that blocks on a question → permission_required (once), then the job goes on", async () => {
    const w = newWorkspace(e, {}, { gated: true, agent: { BLOCK: "1" } });
    const [wk, lead] = [w.n("wk"), w.n("lead")];
    await ensureDaemon(w, "polling");
    await createAgent(e, w, wk, "worker");
    const dp = await createAgent(e, w, lead, "lead");
    const id = await submit(w, ["--to", wk, "--from", lead, "--prompt", "ask before deleting"]);
    expect(await waitFor(() => events(w, id).some((x) => x.includes("permission_required")), 20_000, 100), monitorLog(w.dir)).toBe(true);
    const evs = journalEvents(w.dir, id);
    expect(evs.map((x) => `${x.event}:${x.source}`)).toEqual([`started:${wk}`, "permission_required:monitor"]);
    expect(evs[1]!.detail).toBe(`${wk} is waiting for a decision (blocked)`);
    const st = JSON.parse((await w.mam(["job", "status", id, "--json"])).stdout);
    expect(st.status).toBe("running"); // not an end
    // the delegator hears of the dialog (issue 12: once per dialog), as of the end later
    expect(await waitTyped(e.herdr, dp, `[mam] job ${id} permission_required: ${wk} is waiting for a decision (blocked)`, 20_000), monitorLog(w.dir)).toBe(true);
    await Bun.sleep(2200); // two more polls while still blocked: no second event
    expect(events(w, id)).toHaveLength(2);
    openGate(w.dir, "progress", "completed");
    const wait = await w.mam(["job", "wait", id, "--timeout", "30"]);
    expect(wait.code).toBe(0);
    expect(events(w, id)).toEqual([`1:started:${wk}`, "2:permission_required:monitor", `3:progress:${wk}`, `4:completed:${wk}`]);
    expect(await waitTyped(e.herdr, dp, `[mam] job ${id} completed: summary of the result`, 20_000), monitorLog(w.dir)).toBe(true);
    await Bun.sleep(2200);
    expect(count(await typed(e.herdr, dp), `] job ${id} `)).toBe(2); // the dialog once, the end once
  }, 90_000);

  test("an idle job (--idle-timeout 2) → timeout", async () => {
    const w = newWorkspace(e, {}, { gated: true });
    const [wk, lead] = [w.n("wk"), w.n("lead")];
    await ensureDaemon(w, "polling");
    await createAgent(e, w, wk, "worker");
    const dp = await createAgent(e, w, lead, "lead");
    const id = await submit(w, ["--to", wk, "--from", lead, "--idle-timeout", "2", "--prompt", "go quiet"]);
    const wait = await w.mam(["job", "wait", id, "--timeout", "30"]);
    expect({ code: wait.code, out: wait.stdout }).toEqual({ code: 1, out: `${id} timeout: no event for 2 s\n` });
    const evs = journalEvents(w.dir, id);
    expect(evs.map((x) => `${x.event}:${x.source}`)).toEqual([`started:${wk}`, "timeout:monitor"]);
    expect(JSON.parse((await w.mam(["job", "status", id, "--json"])).stdout).status).toBe("timeout");
    await expectToldOnce(w, dp, `[mam] job ${id} timeout: no event for 2 s`);
  }, 90_000);
});

// ---------------------------------------------------------------------------------------------
// mam create --submit-job
// ---------------------------------------------------------------------------------------------

test("mam create --submit-job stores delegate_job_id and the job runs", async () => {
  const w = newWorkspace(e);
  const wk = w.n("wk");
  await ensureDaemon(w, "polling");
  const r = await w.mam(["create", "--agent", "claude", "--role", "worker", "--session", wk, "--herdr-session", e.server, "--no-onboard", "--submit-job", "summarise the README"]);
  expect(r.code, r.stdout + r.stderr).toBe(0);
  const m = new RegExp(`^job ([0-9a-f]{8}) submitted to ${wk}$`, "m").exec(r.stdout);
  expect(m).not.toBeNull();
  const id = m![1]!;
  const reg = Bun.YAML.parse(await Bun.file(join(w.dir, ".mam", "agent-sessions.yaml")).text()) as { herdr_sessions: Record<string, unknown>[] };
  expect(reg.herdr_sessions.find((x) => x.name === wk)).toMatchObject({ status: "running", delegate_job_id: id });
  const wait = await w.mam(["job", "wait", id, "--timeout", "30"]);
  expect(wait.code).toBe(0);
  expect(events(w, id)).toEqual([`1:started:${wk}`, `2:progress:${wk}`, `3:completed:${wk}`]);
  const st = JSON.parse((await w.mam(["job", "status", id, "--json"])).stdout);
  expect(st).toMatchObject({ status: "completed", agent_session: wk, delegator: null, prompt: "summarise the README" });
}, 90_000);
