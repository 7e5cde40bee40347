// Event identity across several writers (issue 14, SPEC §7.2): two workers "on other machines"
// (their own folders, `mam job event --token`, each numbering seq from its own journal) and the
// delegator's daemon (loop steps) write on one loop job through a real Mosquitto that is restarted
// in the middle. Every distinct event lands in the delegator's journal exactly once; a replay is
// dropped and logged; a sender without `origin` (old mam, the original's scripts) is still accepted
// and deduped by seq.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { canonicalJson } from "../../lib/jobs/canonical.ts";
import { type JobEvent, signEvent } from "../../lib/jobs/event.ts";
import { eventKey } from "../../lib/jobs/identity.ts";
import { mosquittoPath, startMosquitto, type TestBroker } from "../helpers/brokers.ts";
import { createAgent, type E2E, journalOf, monitorLog, newWorkspace, startE2E, type Ws } from "../helpers/jobs-e2e.ts";
import { runMam } from "../helpers/mam.ts";
import { waitFor } from "../helpers/sandbox.ts";

let e: E2E;
let mosq: TestBroker;
beforeAll(async () => {
  expect(mosquittoPath()).toBeDefined(); // CI installs it: never skipped silently
  e = await startE2E("mam-ji-");
  mosq = await startMosquitto(join(e.sb.root, "mosq"));
});
afterAll(async () => {
  await mosq?.stop();
  await e?.cleanup();
});

const lines = (path: string): string[] => {
  try {
    return readFileSync(path, "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
};

/** a worker on another machine: its own folder, the job token, the broker's settings */
function remote(name: string, w: Ws, id: string, token: string) {
  const dir = join(e.sb.root, name);
  mkdirSync(dir, { recursive: true });
  const env = { ...w.env, MAM_JOB_TOKEN: token, MAM_NO_SUBSCRIBER_DAEMON: "1" };
  return {
    dir,
    journal: () => lines(journalOf(dir, id)),
    async report(event: string, detail: string, source: string) {
      const r = await runMam(["job", "event", id, event, "--detail", detail, "--source", source, "--workspace", dir], { env, cwd: dir, timeoutMs: 60_000 });
      if (r.code !== 0) throw new Error(`${name}: mam job event exited ${r.code}: ${r.stderr}`);
      return r;
    },
  };
}

describe("several writers on one job through Mosquitto", () => {
  test("two remote reporters and the daemon's loop steps, broker restarted mid-way: each distinct event once, replays dropped and logged, old senders deduped by seq", async () => {
    const w = newWorkspace(e, { ...mosq.env, MAM_BROKER_RETRY_S: "0.5" }, { agent: { PASSIVE: "1" } });
    const [wk, rv, lead] = [w.n("id-wk"), w.n("id-rv"), w.n("id-lead")];
    await createAgent(e, w, wk, "worker");
    await createAgent(e, w, rv, "reviewer");
    await createAgent(e, w, lead, "lead");
    const sub = await w.mam(["job", "submit", "--to", wk, "--from", lead, "--type", "loop", "--reviewer", rv, "--max-iterations", "5", "--prompt", "two machines, one job"]);
    expect(sub.code, sub.stderr).toBe(0);
    const id = sub.stdout.trim();
    try {
      expect((await w.mam(["daemon", "ensure"])).code).toBe(0);
      const mqttMode = async () => {
        const s = await w.mam(["daemon", "status", "--json"]);
        return s.code === 0 && JSON.parse(s.stdout).mode === "mqtt";
      };
      expect(await waitFor(mqttMode, 20_000, 100), monitorLog(w.dir)).toBe(true);
      const token = (JSON.parse(readFileSync(join(w.dir, ".mam", "jobs", `${id}.json`), "utf8")) as { auth_token: string }).auth_token;
      const r1 = remote("machine-1", w, id, token);
      const r2 = remote("machine-2", w, id, token);
      const delegator = () => lines(journalOf(w.dir, id));

      // first half, both at once: the worker hands in on machine 1 (the daemon writes the loop step)
      await Promise.all([
        (async () => {
          await r1.report("started", "m1 started", wk);
          for (let i = 1; i <= 3; i++) await r1.report("progress", `m1 step ${i}`, wk);
          await r1.report("completed", "m1 hands in", wk);
        })(),
        (async () => {
          for (let i = 1; i <= 4; i++) await r2.report("progress", `m2 step ${i}`, wk);
        })(),
      ]);
      expect(await waitFor(() => delegator().some((l) => l.includes("review requested")), 20_000, 100), monitorLog(w.dir)).toBe(true);

      // the broker goes away: reports land in the remote journals only
      await mosq.stop();
      const down = await r1.report("progress", "m1 while the broker is down", wk);
      expect(down.stderr).toContain("it is sent again with your next report");
      await r2.report("progress", "m2 while the broker is down", wk);
      mosq = await startMosquitto(join(e.sb.root, "mosq"), { port: mosq.port });
      expect(await waitFor(async () => (monitorLog(w.dir).match(/MQTT Monitor: subscribed to /g) ?? []).length >= 2, 20_000, 100), monitorLog(w.dir)).toBe(true);

      // a resend of what the daemon already holds, made certain: whether a report finds the
      // daemon's retained ack depends on timing (the broker lost it; the daemon says it again on
      // its reconnection, and after each burst of events within 100 ms), so the test waits for that
      // ack, then clears it as a broker losing it would: machine 1's next report, alone, resends
      // every event it has, and the daemon must take the ones it holds as repeats
      const o1 = (JSON.parse(r1.journal()[0]!) as JobEvent).origin!;
      const o2 = (JSON.parse(r2.journal()[0]!) as JobEvent).origin!;
      const { readAck } = await import("../../lib/jobs/acks.ts");
      const mqttLib = await import("mqtt");
      const watcher = await mqttLib.connectAsync({ protocol: "mqtt", host: "127.0.0.1", port: mosq.port, clientId: `t-acks-${id}`, reconnectPeriod: 0 } as never);
      try {
        let said: Record<string, number> | undefined;
        watcher.on("message", (_t, p) => void (p.length > 0 && (said = readAck(p, id, token)?.acked)));
        await watcher.subscribeAsync(`mam/jobs/${id}/acks`, { qos: 1 });
        expect(await waitFor(() => said?.[o1] === 5 && said?.[o2] === 4, 20_000, 50), JSON.stringify(said)).toBe(true);
        await watcher.publishAsync(`mam/jobs/${id}/acks`, "", { qos: 1, retain: true });
      } finally {
        await watcher.endAsync();
      }
      const logBefore = monitorLog(w.dir).length;
      await r1.report("progress", "m1 step 4", wk);
      expect(await waitFor(() => /repeat of an event already journalled/.test(monitorLog(w.dir).slice(logBefore)), 20_000, 100), monitorLog(w.dir).slice(logBefore)).toBe(true);

      // second half: machine 2 answers as the reviewer (another loop step), both report on
      await Promise.all([
        (async () => {
          for (let i = 5; i <= 6; i++) await r1.report("progress", `m1 step ${i}`, wk);
        })(),
        (async () => {
          await r2.report("completed", "needs work", rv);
          for (let i = 5; i <= 6; i++) await r2.report("progress", `m2 step ${i}`, wk);
        })(),
      ]);

      // every event of both remote journals is in the delegator's journal exactly once, byte for byte
      const mine = [...r1.journal(), ...r2.journal()];
      expect(r1.journal()).toHaveLength(9);
      expect(r2.journal()).toHaveLength(8);
      expect(o1).toMatch(/^[0-9a-f]{16}$/);
      expect(o2).toMatch(/^[0-9a-f]{16}$/);
      expect(o1).not.toBe(o2);
      expect(await waitFor(() => mine.every((l) => delegator().includes(l)), 20_000, 100), `missing: ${mine.filter((l) => !delegator().includes(l)).join("\n")}\n${monitorLog(w.dir)}`).toBe(true);
      expect(await waitFor(() => delegator().some((l) => l.includes("feedback sent")), 20_000, 100), monitorLog(w.dir)).toBe(true);
      const journal = delegator();
      const keys = journal.map((l) => eventKey(JSON.parse(l) as JobEvent));
      expect(new Set(keys).size).toBe(keys.length);
      for (const l of mine) expect(journal.filter((x) => x === l)).toHaveLength(1);
      // the daemon's own steps: signed events of the delegator's origin, after the events they answer
      const steps = journal.map((l) => JSON.parse(l) as JobEvent).filter((x) => x.source === "mam");
      expect(steps.map((x) => x.detail)).toEqual([`iteration 1: review requested from ${rv}`, `iteration 2: feedback sent to ${wk}`]);
      expect(new Set(steps.map((x) => x.origin)).size).toBe(1);
      expect([o1, o2]).not.toContain(steps[0]!.origin);
      expect(journal.length).toBe(mine.length + steps.length);
      // the seqs collide across writers (each numbers from its own journal): identity is what tells them apart
      expect(JSON.parse(r1.journal()[0]!).seq).toBe(1);
      expect(JSON.parse(r2.journal()[0]!).seq).toBe(1);
      const st = JSON.parse((await w.mam(["job", "status", id, "--json"])).stdout);
      expect(st).toMatchObject({ status: "running", iteration: 2, events: journal.length });

      // an exact replay (the same bytes again on the wire) is dropped and logged
      const mqtt = await import("mqtt");
      const pub = await mqtt.connectAsync({ protocol: "mqtt", host: "127.0.0.1", port: mosq.port, clientId: `t-replay-${id}`, reconnectPeriod: 0 } as never);
      try {
        const topic = `mam/jobs/${id}/events`;
        await Bun.sleep(1200); // let a burst of resends end: the next repeat is logged in full
        const logAt = monitorLog(w.dir).length;
        await pub.publishAsync(topic, r2.journal()[2]!, { qos: 1 });
        const replay = JSON.parse(r2.journal()[2]!) as JobEvent;
        const line = `dropped event (job ${id} origin ${replay.origin} seq ${replay.seq}): repeat of an event already journalled`;
        expect(await waitFor(() => monitorLog(w.dir).slice(logAt).includes(line), 10_000, 100), monitorLog(w.dir).slice(logAt)).toBe(true);
        expect(delegator()).toEqual(journal);

        // a sender without origin (old mam, the original's scripts): accepted, deduped by seq
        const old = (seq: number, detail: string) =>
          canonicalJson(signEvent({ schema_version: 1, seq, job_id: id, event: "progress", timestamp: "2026-01-01T00:00:00Z", detail, source: "old-script", data: {} }, token));
        await pub.publishAsync(topic, old(1, "old sender 1"), { qos: 1 });
        expect(await waitFor(() => delegator().length === journal.length + 1, 10_000, 100), monitorLog(w.dir)).toBe(true);
        expect(delegator().at(-1)).toBe(old(1, "old sender 1"));
        const at2 = monitorLog(w.dir).length;
        await pub.publishAsync(topic, old(1, "another old sender, seq 1 again"), { qos: 1 });
        expect(await waitFor(() => monitorLog(w.dir).slice(at2).includes(`dropped event (job ${id} seq 1): seq 1 already seen`), 10_000, 100), monitorLog(w.dir).slice(at2)).toBe(true);
        await pub.publishAsync(topic, old(2, "old sender 2"), { qos: 1 });
        expect(await waitFor(() => delegator().length === journal.length + 2, 10_000, 100), monitorLog(w.dir)).toBe(true);
        expect(delegator().filter((l) => l.includes("old-script"))).toEqual([old(1, "old sender 1"), old(2, "old sender 2")]);

        // resends stay cheap: once the daemon's signed, retained ack covers a remote's events, its
        // next report carries only the new one
        const seen: string[] = [];
        let ack: Record<string, number> | undefined;
        pub.on("message", (t, p) => (t.endsWith("/acks") ? (ack = readAck(p, id, token)?.acked) : seen.push(p.toString())));
        await pub.subscribeAsync([topic, `mam/jobs/${id}/acks`], { qos: 1 });
        expect(await waitFor(() => ack?.[o1] === 9 && ack?.[o2] === 8, 10_000, 50), JSON.stringify(ack)).toBe(true);
        const last = await r1.report("progress", "m1 last", wk);
        expect(last.stderr).toBe("");
        expect(await waitFor(() => delegator().length === journal.length + 3, 10_000, 100)).toBe(true);
        expect(seen.filter((l) => l.includes(`"origin":"${o1}"`))).toEqual([r1.journal().at(-1)!]);
        expect(await waitFor(() => ack?.[o1] === 10, 10_000, 50), JSON.stringify(ack)).toBe(true);
      } finally {
        await pub.endAsync();
      }
    } finally {
      await w.mam(["daemon", "stop"]);
    }
  }, 240_000);
});
