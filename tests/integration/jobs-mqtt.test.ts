// Job events over MQTT (SPEC §7.3): published to a real Mosquitto (plain; TLS + password) and to
// the embedded `mam broker`, received with a valid signature; `job wait` hears the broker.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import mqtt from "mqtt";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { verifyEvent } from "../../lib/jobs/event.ts";
import { EventIndex } from "../../lib/jobs/identity.ts";
import { type JobRecord, readJournal, registerJob } from "../../lib/jobs/store.ts";
import { makeCerts, mosquittoPath, startMamBroker, startMosquitto, type TestBroker } from "../helpers/brokers.ts";
import { MAM_CMD, runMam } from "../helpers/mam.ts";
import { makeSandbox } from "../helpers/sandbox.ts";

const sb = makeSandbox("mam-jobmq-");
afterAll(() => sb.cleanup());
const reg = async (ws = sb.ws): Promise<JobRecord> =>
  registerJob(ws, {
    agent_session: "wrk", agent: "claude", prompt: "do it", delegator: "lead", type: "single", reviewer_session: null,
    max_iterations: null, timeout_sec: 3600, idle_timeout_sec: 120, expected_artifacts: [], topic_prefix_base: "mam/jobs",
  });

/** subscribe like the daemon does (wildcard, QoS 1) and collect payloads */
async function listen(opts: Record<string, unknown>) {
  const c = await mqtt.connectAsync({ ...opts, clientId: `t-${Math.random().toString(16).slice(2, 12)}`, reconnectPeriod: 0, connectTimeout: 5000 } as never);
  await c.subscribeAsync("mam/jobs/+/events", { qos: 1 });
  const got: { topic: string; payload: Buffer; retain: boolean; qos: number }[] = [];
  const waiters: (() => void)[] = [];
  c.on("message", (topic, payload, packet) => {
    got.push({ topic, payload, retain: packet.retain, qos: packet.qos });
    waiters.splice(0).forEach((w) => w());
  });
  return {
    got,
    async next(timeoutMs = 10_000) {
      if (got.length) return got.shift()!;
      await Promise.race([new Promise<void>((r) => waiters.push(r)), Bun.sleep(timeoutMs)]);
      if (!got.length) throw new Error("no message");
      return got.shift()!;
    },
    close: () => c.endAsync(),
  };
}

async function roundTrip(b: TestBroker, clientOpts: Record<string, unknown>, extraEnv: Record<string, string> = {}) {
  const r = await reg();
  const l = await listen(clientOpts);
  try {
    const env = { ...sb.env, ...b.env, ...extraEnv };
    const e = await runMam(["job", "event", r.job_id, "completed", "--detail", "über done", "--source", "wrk", "--workspace", sb.ws], { env });
    expect(e.code).toBe(0);
    expect(e.stderr).toBe(""); // no warning: the broker took it
    const m = await l.next();
    expect(m.topic).toBe(`mam/jobs/${r.job_id}/events`);
    expect(m.retain).toBe(false);
    expect(m.qos).toBe(1);
    const v = verifyEvent(m.payload, (id) => (id === r.job_id ? r.auth_token : undefined), () => new EventIndex());
    expect(v.ok).toBe(true);
    if (v.ok) expect(v.event).toMatchObject({ seq: 1, event: "completed", detail: "über done", source: "wrk" });
    // the wire payload is the journal line, byte for byte
    expect(`${m.payload.toString("utf8")}\n`).toBe((await Bun.file(join(sb.ws, ".mam", "jobs", `${r.job_id}.events.ndjson`)).text()));
  } finally {
    await l.close();
  }
}

describe("publishing job events", () => {
  let mosq: TestBroker | undefined;
  beforeAll(async () => {
    expect(mosquittoPath()).toBeDefined(); // CI installs it: never skipped silently
    mosq = await startMosquitto(join(sb.root, "mosq"));
  });
  afterAll(() => mosq?.stop());

  test("to Mosquitto: QoS 1, not retained, signed, identical to the journal line", async () => {
    await roundTrip(mosq!, { protocol: "mqtt", host: "127.0.0.1", port: mosq!.port });
  });

  test("to Mosquitto with TLS and a password", async () => {
    const certs = makeCerts(join(sb.root, "certs"));
    const m = await startMosquitto(join(sb.root, "mosq-tls"), { username: "team", password: "s3cr3t", tls: { ca: certs.ca, cert: certs.cert, key: certs.key } });
    try {
      const ca = await Bun.file(certs.ca).text();
      await roundTrip(m, { protocol: "mqtts", host: "127.0.0.1", port: m.port, ca, username: "team", password: "s3cr3t" });
      // a wrong password: the event stays in the journal, a NOTE, exit 0
      const r = await reg();
      const bad = await runMam(["job", "event", r.job_id, "started", "--workspace", sb.ws], { env: { ...sb.env, ...m.env, MQTT_PASSWORD: "nope" } });
      expect(bad.code).toBe(0);
      expect(bad.stderr).toMatch(new RegExp(`^NOTE: job ${r.job_id} event #1 is saved in the journal, where mam's daemon reads it; broker 127\\.0\\.0\\.1:${m.port} unreachable \\(.*\\), so it was not sent live\\n$`));
      expect(readJournal(sb.ws, r.job_id)).toHaveLength(1);
      // without the CA the server certificate is refused
      const noCa = await runMam(["job", "event", r.job_id, "progress", "--workspace", sb.ws], { env: { ...sb.env, ...m.env, MQTT_CA_CERTS: "" } });
      expect(noCa.code).toBe(0);
      expect(noCa.stderr).toContain("so it was not sent live");
    } finally {
      await m.stop();
    }
  });

  test("to the embedded mam broker", async () => {
    const b = await startMamBroker(sb.env, sb.ws);
    try {
      await roundTrip(b, { protocol: "mqtt", host: "127.0.0.1", port: b.port });
    } finally {
      await b.stop();
    }
  });

  test("job wait hears an event that only the broker carries (a worker on another machine)", async () => {
    const r = await reg();
    const env = { ...sb.env, ...mosq!.env };
    const p = Bun.spawn([...MAM_CMD, "job", "wait", r.job_id, "--timeout", "30", "--workspace", sb.ws], { env, stdout: "pipe", stderr: "pipe" });
    const remote = join(sb.root, "remote");
    mkdirSync(remote, { recursive: true });
    // wait's subscription comes up in the background: the remote worker reports until wait has heard it
    for (let i = 0; i < 40 && p.exitCode === null; i++) {
      const e = await runMam(["job", "event", r.job_id, "completed", "--detail", "remote done", "--workspace", remote, "--token", r.auth_token], { env });
      expect(e.code).toBe(0);
      await Promise.race([p.exited, Bun.sleep(500)]);
    }
    expect(await p.exited).toBe(0);
    expect(await new Response(p.stdout).text()).toBe(`${r.job_id} completed: remote done\n`);
    expect(readJournal(sb.ws, r.job_id)).toHaveLength(0); // wait is read-only: the daemon journals it
  });
});
