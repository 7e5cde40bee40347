// What a token holder or a stranger on the broker can send the daemon and the waiters (issue 23,
// security review 2026-12): a signed event with a huge seq (BUG-1), a remote event whose seq another
// origin already used (BUG-4), deeply nested and oversized payloads (BUG-7, R6), floods of bad
// events (R5). A real Mosquitto, the compiled binary, jobs registered in temp workspaces.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import mqtt from "mqtt";
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { canonicalJson } from "../../lib/jobs/canonical.ts";
import { type JobEvent, signEvent } from "../../lib/jobs/event.ts";
import { type JobRecord, type JobSpec, readJournal, readRecord, registerJob } from "../../lib/jobs/store.ts";
import { mosquittoPath, startMosquitto, type TestBroker } from "../helpers/brokers.ts";
import { logText, startSubscriber, type Subscriber, waitForLog } from "../helpers/daemon.ts";
import { MAM_CMD, runMam } from "../helpers/mam.ts";
import { recordServerMessages } from "../helpers/mcp-client.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";

let sb: Sandbox;
let mosq: TestBroker;
beforeAll(async () => {
  expect(mosquittoPath()).toBeDefined(); // CI installs it: never skipped silently
  sb = makeSandbox("mam-hard-");
  mosq = await startMosquitto(join(sb.root, "mosq"));
});
afterAll(async () => {
  await mosq?.stop();
  await sb?.cleanup();
});

let wsNo = 0;
/** a fresh workspace with its env (the broker, quick polls) */
function workspace(): { ws: string; env: Record<string, string>; mam(args: string[], extra?: Record<string, string>): ReturnType<typeof runMam> } {
  const ws = join(sb.root, `ws${++wsNo}`);
  mkdirSync(ws, { recursive: true });
  const env = sb.with({ ...mosq.env, RECONCILE_POLL_INTERVAL: "1", MAM_BROKER_RETRY_S: "1" });
  return { ws, env, mam: (args, extra = {}) => runMam([...args, "--workspace", ws], { env: { ...env, ...extra }, cwd: ws }) };
}

const spec = (over: Partial<JobSpec> = {}): JobSpec => ({
  agent_session: "wrk", agent: "claude", prompt: "do it", delegator: null, type: "single", reviewer_session: null,
  max_iterations: null, timeout_sec: 0, idle_timeout_sec: 0, expected_artifacts: [], topic_prefix_base: "mam/jobs", ...over,
});

/** an event as a token holder signs it (python's ev.py of the review) */
function signed(job: JobRecord, over: Partial<JobEvent>): string {
  return canonicalJson(signEvent({ schema_version: 1, seq: 1, origin: "remote0000000001", job_id: job.job_id, event: "progress", timestamp: "2026-12-01T00:00:00Z", detail: "x", source: "r", data: {}, ...over }, job.auth_token));
}

async function publisher() {
  const c = await mqtt.connectAsync({ protocol: "mqtt", host: "127.0.0.1", port: mosq.port, clientId: `t-pub-${Math.random().toString(16).slice(2, 10)}`, reconnectPeriod: 0 } as never);
  return {
    pub: (topic: string, payload: string | Buffer) => c.publishAsync(topic, payload, { qos: 1 }),
    close: () => c.endAsync(),
  };
}

async function daemonFor(ws: string, env: Record<string, string>): Promise<Subscriber> {
  const log = join(sb.root, `daemon-${wsNo}.log`);
  const d = startSubscriber({ ...sb, ws }, log, env);
  expect(await waitForLog(log, /MQTT Monitor: subscribed to /, 20_000), logText(log)).toBe(true);
  return d;
}

describe("seq (BUG-1)", () => {
  test("a validly signed seq 2^53 − 1 is dropped at ingest; the job still takes events, and every job times out", async () => {
    const w = workspace();
    const jobs = await Promise.all([1, 2, 3, 4].map(() => registerJob(w.ws, spec({ timeout_sec: 4 }))));
    const first = [...jobs].sort((a, b) => a.job_id.localeCompare(b.job_id))[0]!;
    const d = await daemonFor(w.ws, w.env);
    const p = await publisher();
    try {
      await p.pub(`mam/jobs/${first.job_id}/events`, signed(first, { seq: 2 ** 53 - 1, event: "started" }));
      expect(await waitForLog(d.log, /seq 9007199254740991 is above 2147483647/, 10_000), logText(d.log)).toBe(true);
      expect(readJournal(w.ws, first.job_id)).toEqual([]);
      // a valid remote seq near the limit is journalled; the delegator's own seqs do not follow it
      await p.pub(`mam/jobs/${first.job_id}/events`, signed(first, { seq: 2 ** 31 - 1, event: "started" }));
      expect(await waitFor(() => readJournal(w.ws, first.job_id).length === 1, 10_000), logText(d.log)).toBe(true);
      const ev = await w.mam(["job", "event", first.job_id, "progress", "--detail", "still here"]);
      expect(ev.code, ev.stderr).toBe(0);
      expect(readJournal(w.ws, first.job_id).map((e) => e.seq)).toEqual([2 ** 31 - 1, 1]);
      // every job times out (before: `poll failed` every scan, and the jobs after the first stayed pending)
      expect(await waitFor(() => jobs.every((j) => readRecord(w.ws, j.job_id)?.status === "timeout"), 20_000), logText(d.log)).toBe(true);
      expect(logText(d.log)).not.toContain("poll failed");
    } finally {
      await p.close();
      await d.kill();
    }
  }, 60_000);

  test("a job that fails at every poll is logged once, and the scan goes on to the jobs after it", async () => {
    const w = workspace();
    const jobs = await Promise.all([1, 2, 3].map(() => registerJob(w.ws, spec({ timeout_sec: 3 }))));
    const ids = jobs.map((j) => j.job_id).sort();
    // the first job's journal cannot be read: a folder where the file should be
    mkdirSync(join(w.ws, ".mam", "jobs", `${ids[0]}.events.ndjson`));
    const d = await daemonFor(w.ws, w.env);
    try {
      expect(await waitFor(() => ids.slice(1).every((id) => readRecord(w.ws, id)?.status === "timeout"), 20_000), logText(d.log)).toBe(true);
      await Bun.sleep(2500); // two more polls
      const lines = logText(d.log).split("\n").filter((l) => l.includes(`job ${ids[0]}: timeout scan failed`));
      expect(lines, logText(d.log)).toHaveLength(1);
      expect(lines[0]).toContain("logged once");
    } finally {
      await d.kill();
    }
  }, 60_000);
});

/** a worker on another machine: its own folder, the job token in MAM_JOB_TOKEN, the broker */
function remoteWorker(env: Record<string, string>, job: JobRecord) {
  const dir = join(sb.root, `remote-${job.job_id}-${Math.random().toString(16).slice(2, 6)}`);
  mkdirSync(dir, { recursive: true });
  return (event: string, detail: string) =>
    runMam(["job", "event", job.job_id, event, "--detail", detail, "--source", "wrk", "--workspace", dir], { env: { ...env, MAM_JOB_TOKEN: job.auth_token, MAM_NO_SUBSCRIBER_DAEMON: "1" }, cwd: dir });
}

type ToolResult = { isError?: boolean; content: { type: string; text?: string }[]; structuredContent?: Record<string, unknown> };

async function mcpClient(ws: string, env: Record<string, string>) {
  const transport = new StdioClientTransport({ command: MAM_CMD[0]!, args: [...MAM_CMD.slice(1), "mcp", "--workspace", ws], env: { ...env, MAM_NO_SUBSCRIBER_DAEMON: "1" }, cwd: ws, stderr: "pipe" });
  let err = "";
  transport.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: "mam-test", version: "1.0.0" });
  await client.connect(transport);
  const raw = recordServerMessages(transport);
  return {
    raw,
    stderr: () => err,
    call: (name: string, args: Record<string, unknown>, opts?: Parameters<Client["callTool"]>[2]) => client.callTool({ name, arguments: args }, CallToolResultSchema, opts) as Promise<ToolResult>,
    close: () => client.close(),
  };
}

describe("new events are known by (origin, seq) (BUG-4)", () => {
  test("MCP job_wait: a remote permission_required whose seq this machine already used ends the wait with outcome attention, and is reported as progress", async () => {
    const w = workspace();
    const job = await registerJob(w.ws, spec());
    for (const [ev, d] of [["started", "go"], ["progress", "a"], ["progress", "b"]]) expect((await w.mam(["job", "event", job.job_id, ev!, "--detail", d!])).code).toBe(0);
    const d = await daemonFor(w.ws, w.env);
    const c = await mcpClient(w.ws, w.env);
    try {
      const waiting = c.call("job_wait", { job_ids: [job.job_id], timeout_s: 30 }, { onprogress: () => {} });
      await Bun.sleep(1000);
      const r = await remoteWorker(w.env, job)("permission_required", "allow rm -rf build?");
      expect(r.code, r.stderr).toBe(0);
      const res = await waiting;
      expect(res.structuredContent, JSON.stringify(res) + logText(d.log)).toMatchObject({ outcome: "attention", event: { seq: 1, event: "permission_required", detail: "allow rm -rf build?" } });
      expect((res.structuredContent!.event as { origin: string }).origin).not.toBe(readJournal(w.ws, job.job_id)[0]!.origin);
      // sent as progress before the call's response
      const notes = c.raw.filter((m) => m.method === "notifications/progress").map((m) => m.params?.message ?? "");
      expect(notes.join("\n")).toContain(`job ${job.job_id} permission_required: allow rm -rf build?`);
      const at = c.raw.findIndex((m) => m.method === "notifications/progress" && m.params?.message?.includes("permission_required"));
      const response = c.raw.findIndex((m) => m.method === undefined && m.id !== undefined);
      expect(at).toBeGreaterThanOrEqual(0);
      expect(at).toBeLessThan(response);
    } finally {
      await c.close();
      await d.kill();
    }
  }, 60_000);

  test("mam job wait: a remote completed whose seq this machine already used, heard on the broker only (no daemon), ends the wait with it", async () => {
    const w = workspace();
    const job = await registerJob(w.ws, spec());
    for (const [ev, d] of [["started", "go"], ["progress", "a"]]) expect((await w.mam(["job", "event", job.job_id, ev!, "--detail", d!])).code).toBe(0);
    const p = Bun.spawn([...MAM_CMD, "job", "wait", job.job_id, "--timeout", "30", "--json", "--workspace", w.ws], { env: w.env, cwd: w.ws, stdout: "pipe", stderr: "pipe" });
    const report = remoteWorker(w.env, job);
    // wait's subscription comes up in the background: the remote reports until wait has heard it
    for (let i = 0; i < 40 && p.exitCode === null; i++) {
      const r = await report(i === 0 ? "completed" : "progress", i === 0 ? "remote done" : `still ${i}`);
      expect(r.code, r.stderr).toBe(0);
      if (i === 0) continue;
      await Promise.race([p.exited, Bun.sleep(500)]);
    }
    expect(await p.exited).toBe(0);
    const out = JSON.parse(await new Response(p.stdout).text());
    expect(out).toMatchObject({ outcome: "done", jobs: [{ job_id: job.job_id, status: "completed", last_event: { seq: 1, event: "completed", detail: "remote done" } }] });
    expect(readJournal(w.ws, job.job_id)).toHaveLength(2); // wait is read-only
  }, 60_000);
});

/** peak resident memory of a running process, in bytes */
function peakRss(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0) * 1024;
}

/** a job's event with a 100 000-deep `data`: no token needed, the job id is in the topic */
const deepEvent = (id: string) =>
  canonicalJson({ schema_version: 1, seq: 5, job_id: id, event: "completed", timestamp: "t", detail: "x", source: "r", data: { hmac_sig: "0".repeat(64) } }).replace('"data":{', `"data":{"deep":${"[".repeat(100_000)}${"]".repeat(100_000)},`);

describe("deep and huge payloads (BUG-7, R6)", () => {
  test("the daemon drops a 100 000-deep payload with a log line (no stack overflow) and journals the next event", async () => {
    const w = workspace();
    const job = await registerJob(w.ws, spec());
    const d = await daemonFor(w.ws, w.env);
    const p = await publisher();
    try {
      await p.pub(`mam/jobs/${job.job_id}/events`, deepEvent(job.job_id));
      expect(await waitForLog(d.log, /dropped event: payload nested deeper than 64 levels \(on mam\/jobs\/[0-9a-f]{8}\/events\)/, 10_000), logText(d.log)).toBe(true);
      await p.pub(`mam/jobs/${job.job_id}/events`, signed(job, { event: "started" }));
      expect(await waitFor(() => readJournal(w.ws, job.job_id).length === 1, 10_000), logText(d.log)).toBe(true);
      expect(logText(d.log)).not.toMatch(/Maximum call stack|event failed/);
    } finally {
      await p.close();
      await d.kill();
    }
  }, 60_000);

  test("mam job wait and MCP job_wait: a deep payload (retained, so it comes right after their SUBACK) is dropped; no trace, and the broker still tells them the job ended", async () => {
    const w = workspace();
    const job = await registerJob(w.ws, spec());
    const topic = `mam/jobs/${job.job_id}/events`;
    const c0 = await mqtt.connectAsync({ protocol: "mqtt", host: "127.0.0.1", port: mosq.port, clientId: `t-ret-${job.job_id}`, reconnectPeriod: 0 } as never);
    await c0.publishAsync(topic, deepEvent(job.job_id), { qos: 1, retain: true });
    const c = await mcpClient(w.ws, w.env);
    const cli = Bun.spawn([...MAM_CMD, "job", "wait", job.job_id, "--timeout", "30", "--workspace", w.ws], { env: w.env, cwd: w.ws, stdout: "pipe", stderr: "pipe" });
    try {
      const mcp = c.call("job_wait", { job_ids: [job.job_id], timeout_s: 30 });
      await Bun.sleep(1500); // both have subscribed and got the retained payload
      const report = remoteWorker(w.env, job);
      let mcpDone = false;
      void mcp.then(() => (mcpDone = true));
      // no daemon here: only the broker carries the end (the reporter resends it with each report)
      for (let i = 0; i < 20 && (cli.exitCode === null || !mcpDone); i++) {
        expect((await report(i === 0 ? "completed" : "progress", i === 0 ? "done remotely" : `and ${i}`)).code).toBe(0);
        await Promise.race([cli.exited, Bun.sleep(500)]);
      }
      const stderr = await new Response(cli.stderr).text();
      expect(await cli.exited, stderr).toBe(0);
      expect(await new Response(cli.stdout).text()).toBe(`${job.job_id} completed: done remotely\n`);
      expect(stderr).toBe("");
      const res = await mcp;
      expect(res.structuredContent).toMatchObject({ outcome: "done", jobs: [{ status: "completed" }] });
      expect(c.stderr()).not.toMatch(/RangeError|Maximum call stack/);
    } finally {
      await c0.publishAsync(topic, "", { qos: 1, retain: true });
      await c0.endAsync();
      await c.close();
      cli.kill();
    }
  }, 60_000);

  const SIZE = 64 * 1024 * 1024;
  test("a 64 MB message is never held in memory by the daemon: dropped as oversized, its peak memory grows by less than the message", async () => {
    const w = workspace();
    const job = await registerJob(w.ws, spec());
    const topic = `mam/jobs/${job.job_id}/events`;
    const d = await daemonFor(w.ws, w.env);
    const p = await publisher();
    try {
      const before = peakRss(d.pid);
      await p.pub(topic, Buffer.alloc(SIZE, 0x20));
      expect(await waitForLog(d.log, new RegExp(`payload of ${SIZE} bytes exceeds 262144`), 30_000), logText(d.log)).toBe(true);
      // holding it costs at least its size (before: 135 MB more); skipping it costs only the
      // garbage of the chunks read past, which the collector takes back in its own time
      expect(peakRss(d.pid) - before).toBeLessThan(SIZE);
      // and it is still there, journalling
      await p.pub(topic, signed(job, { event: "started" }));
      expect(await waitFor(() => readJournal(w.ws, job.job_id).length === 1, 10_000), logText(d.log)).toBe(true);
    } finally {
      await p.close();
      await d.kill();
    }
  }, 120_000);

  test("nor by mam job wait: a retained 64 MB message (it comes right after the SUBACK) leaves its peak memory near a quiet wait's", async () => {
    const w = workspace();
    const job = await registerJob(w.ws, spec());
    const topic = `mam/jobs/${job.job_id}/events`;
    const c0 = await mqtt.connectAsync({ protocol: "mqtt", host: "127.0.0.1", port: mosq.port, clientId: `t-big-${job.job_id}`, reconnectPeriod: 0 } as never);
    // the peak read from /proc while it runs (after exec, the child's own)
    const waitPeak = async () => {
      const p = Bun.spawn([...MAM_CMD, "job", "wait", job.job_id, "--timeout", "3", "--workspace", w.ws], { env: w.env, cwd: w.ws, stdout: "pipe", stderr: "pipe" });
      let peak = 0;
      while (p.exitCode === null) {
        try {
          peak = Math.max(peak, peakRss(p.pid));
        } catch {}
        await Bun.sleep(50);
      }
      expect(await p.exited).toBe(5);
      return peak;
    };
    try {
      const quiet = await waitPeak();
      await c0.publishAsync(topic, Buffer.alloc(SIZE, 0x20), { qos: 1, retain: true });
      const loud = await waitPeak();
      expect(quiet).toBeGreaterThan(10 * 1024 * 1024);
      expect(loud - quiet, `peak ${loud} bytes with the message, ${quiet} without`).toBeLessThan(SIZE);
    } finally {
      await c0.publishAsync(topic, "", { qos: 1, retain: true });
      await c0.endAsync();
    }
  }, 120_000);
});

describe("a bounded daemon log (R5)", () => {
  test("a flood of 5000 forged events writes three lines, not 5000; monitor.log is rotated at MAM_DAEMON_LOG_MAX_BYTES, two older parts kept", async () => {
    const MAX = 4096;
    const w = workspace();
    const env: Record<string, string> = { ...w.env, MAM_DAEMON_LOG_MAX_BYTES: String(MAX) };
    delete env.MAM_NO_SUBSCRIBER_DAEMON;
    const job = await registerJob(w.ws, spec());
    const log = join(w.ws, ".mam", "monitor.log");
    const all = () => ["monitor.log.2", "monitor.log.1", "monitor.log"].map((n) => logText(join(w.ws, ".mam", n))).join("");
    const daemon = (sub: string) => runMam(["daemon", sub, "--workspace", w.ws], { env, cwd: w.ws });
    expect((await daemon("ensure")).code).toBe(0);
    const p = await publisher();
    try {
      expect(await waitForLog(log, /MQTT Monitor: subscribed to /, 20_000), logText(log)).toBe(true);
      const topic = `mam/jobs/${job.job_id}/events`;
      const forged = (seq: number) => canonicalJson({ ...JSON.parse(signed(job, { seq })), detail: "forged" });
      const genuine = (i: number) => p.pub(topic, signed(job, { origin: "remote0000000009", seq: i, event: i === 1 ? "started" : "progress", detail: `step ${i}` }));
      // 5000 forged events in ten bursts, each followed by a genuine one that says the daemon has
      // read the burst (so the broker's queue for the daemon never overflows and drops some)
      for (let b = 0; b < 10; b++) {
        await Promise.all(Array.from({ length: 500 }, (_, i) => p.pub(topic, forged(b * 500 + i + 1))));
        await genuine(b + 1);
        expect(await waitFor(() => readJournal(w.ws, job.job_id).length === b + 1, 30_000), all()).toBe(true);
      }
      // then more genuine events (one log line each, about 120 bytes: several rotations)
      for (let i = 11; i <= 150; i++) await genuine(i);
      expect(await waitFor(() => readJournal(w.ws, job.job_id).length === 150, 30_000), all()).toBe(true);
      const text = all();
      expect(text.match(/HMAC verify failed/g)?.length ?? 0, text).toBeLessThanOrEqual(3);
      // the newest lines are there, the oldest rotated away; three files, each about MAX at most
      expect(logText(log)).toContain("seq 150 progress");
      for (const n of ["monitor.log", "monitor.log.1", "monitor.log.2"]) expect(statSync(join(w.ws, ".mam", n)).size).toBeLessThan(MAX + 300);
      expect(existsSync(join(w.ws, ".mam", "monitor.log.3"))).toBe(false);
      expect(text).not.toContain("daemon started"); // rotated away: the bound holds
      expect(statSync(join(w.ws, ".mam", "monitor.log.1")).mode & 0o777).toBe(0o600);
    } finally {
      await p.close();
      await daemon("stop");
    }
  }, 120_000);
});
