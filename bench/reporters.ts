// bench area `reporters` (issue 14, SPEC §7.2 event identity): 4 reporters × 250 events at once into one
// job, through a local Mosquitto, into the delegator's journal (its daemon, `mam daemon ensure`);
// then the same with the broker restarted in the middle. Each reporter is what a long-lived worker
// on another machine would be: an in-process MQTT client with an origin of its own, numbering seq
// 1..250, signing with the job token, publishing QoS 1 one event after the other; it reads the
// daemon's signed acks (retained, <prefix>/<id>/acks) and, after losing the broker or at the end,
// sends again its events past its mark until the ack covers them all.
// Measured: events/s into the delegator's journal (first publish → last distinct event
// journalled), lost (distinct events missing), doubled (identities journalled twice).
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MqttClient } from "mqtt";
import { readAck } from "../lib/jobs/acks.ts";
import { canonicalJson } from "../lib/jobs/canonical.ts";
import { type JobEvent, signEvent } from "../lib/jobs/event.ts";
import { eventKey, newOrigin } from "../lib/jobs/identity.ts";
import { ingestEvent } from "../lib/jobs/ingest.ts";
import { JournalCache } from "../lib/jobs/journal-index.ts";
import { journalPath, type JobRecord } from "../lib/jobs/store.ts";
import { mosquittoPath, startMosquitto, type TestBroker } from "../tests/helpers/brokers.ts";
import { baseEnv, newJob, type Row, startDaemon, stopDaemon } from "./common.ts";

const REPORTERS = 4;
const EVENTS = 250;

class Reporter {
  readonly origin = newOrigin();
  readonly lines: string[];
  private client?: MqttClient;
  private mark = 0;
  resent = 0;

  constructor(
    private job: JobRecord,
    private port: () => number,
    private n: number,
  ) {
    const ts = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    this.lines = Array.from({ length: EVENTS }, (_, i) =>
      canonicalJson(
        signEvent(
          { schema_version: 1, seq: i + 1, origin: this.origin, job_id: job.job_id, event: i === 0 ? "started" : "progress", timestamp: ts, detail: `reporter ${n} event ${i + 1}`, source: `bench-${n}`, data: {} },
          job.auth_token,
        ),
      ),
    );
  }

  private get topic() {
    return `${this.job.topic_prefix}/events`;
  }

  /** connect (retrying until deadline) and read the retained ack */
  private async connect(deadline: number): Promise<MqttClient> {
    const mqtt = await import("mqtt");
    for (;;) {
      try {
        const c = await mqtt.connectAsync({ protocol: "mqtt", host: "127.0.0.1", port: this.port(), clientId: `bench-rep-${this.n}-${this.origin.slice(0, 6)}`, reconnectPeriod: 0, connectTimeout: 2000 } as never);
        c.on("error", () => {});
        c.on("message", (_t, p) => {
          const a = readAck(p, this.job.job_id, this.job.auth_token);
          if (a) this.mark = Math.max(this.mark, a.acked[this.origin] ?? 0);
        });
        await c.subscribeAsync(`${this.job.topic_prefix}/acks`, { qos: 1 });
        this.client = c;
        return c;
      } catch {
        if (Date.now() > deadline) throw new Error(`reporter ${this.n}: no broker within the deadline`);
        await Bun.sleep(100);
      }
    }
  }

  private async send(line: string): Promise<boolean> {
    const c = this.client;
    if (!c?.connected) return false;
    return Promise.race([
      c.publishAsync(this.topic, line, { qos: 1 }).then(
        () => true,
        () => false,
      ),
      Bun.sleep(2000).then(() => false),
    ]);
  }

  /** send events (from, to] again, in order; false when the connection failed */
  private async resend(upTo: number): Promise<boolean> {
    for (let s = this.mark + 1; s <= upTo; s++) {
      this.resent++;
      if (!(await this.send(this.lines[s - 1]!))) return false;
    }
    return true;
  }

  private async reconnect(sent: number, deadline: number): Promise<void> {
    this.client?.end(true);
    this.client = undefined;
    await this.connect(deadline);
    await Bun.sleep(150); // the retained ack (Nagle on the broker side holds it ~40 ms)
    if (!(await this.resend(sent))) await this.reconnect(sent, deadline);
  }

  async run(deadline: number): Promise<void> {
    await this.connect(deadline);
    for (let i = 0; i < EVENTS; i++) {
      if (!(await this.send(this.lines[i]!))) await this.reconnect(i + 1, deadline);
    }
    // until the delegator's ack covers every event: send again what it has not got
    let last = -1;
    let still = 0;
    while (this.mark < EVENTS) {
      if (Date.now() > deadline) throw new Error(`reporter ${this.n}: acked ${this.mark} of ${EVENTS} at the deadline`);
      await Bun.sleep(100);
      if (this.mark !== last) {
        last = this.mark;
        still = 0;
        continue;
      }
      if (++still < 10) continue; // a second without progress: resend past the mark
      still = 0;
      if (!this.client?.connected || !(await this.resend(EVENTS))) await this.reconnect(EVENTS, deadline);
    }
  }

  async close(): Promise<void> {
    await this.client?.endAsync().catch(() => this.client?.end(true));
  }
}

interface ReporterRun {
  seconds: number;
  /** broker stopped → the next event journalled after its restart (0 without a restart) */
  outage: number;
  journalled: number;
  lost: number;
  doubled: number;
  resent: number;
}

/** distinct / doubled identities of these origins in the journal */
function count(ws: string, job: JobRecord, origins: Set<string>): { distinct: number; doubled: number } {
  let text = "";
  try {
    text = readFileSync(journalPath(ws, job.job_id), "utf8");
  } catch {}
  const seen = new Set<string>();
  let doubled = 0;
  // the daemon may be appending while this reads: a last line without its newline is not whole yet
  const lines = text.split("\n");
  if (!text.endsWith("\n")) lines.pop();
  for (const l of lines) {
    if (!l.includes('"origin"')) continue;
    const ev = JSON.parse(l) as JobEvent;
    if (!ev.origin || !origins.has(ev.origin)) continue;
    const k = eventKey(ev);
    if (seen.has(k)) doubled++;
    else seen.add(k);
  }
  return { distinct: seen.size, doubled };
}

/**
 * 4 reporters × 250 events into `job` of `ws` (whose daemon is subscribed to `broker`); with
 * restart, the broker is stopped once half the events are journalled and started again on its
 * port after `downMs`.
 */
async function runReporters(ws: string, job: JobRecord, broker: { current: TestBroker; dir: string }, restart: { downMs: number } | undefined): Promise<ReporterRun> {
  const reporters = Array.from({ length: REPORTERS }, (_, i) => new Reporter(job, () => broker.current.port, i + 1));
  const origins = new Set(reporters.map((r) => r.origin));
  const total = REPORTERS * EVENTS;
  const deadline = Date.now() + 120_000;
  const t0 = performance.now();
  const runs = reporters.map((r) => r.run(deadline));
  let restarted = !restart;
  let t1 = 0;
  let down = 0;
  let downCount = 0;
  let outage = 0;
  for (;;) {
    const c = count(ws, job, origins);
    if (down && !outage && c.distinct > downCount) outage = (performance.now() - down) / 1000;
    if (!restarted && c.distinct >= total / 2) {
      restarted = true;
      down = performance.now();
      downCount = count(ws, job, origins).distinct;
      const port = broker.current.port;
      await broker.current.stop();
      await Bun.sleep(restart!.downMs);
      mkdirSync(broker.dir, { recursive: true });
      broker.current = await startMosquitto(broker.dir, { port });
    }
    if (c.distinct >= total) {
      t1 = performance.now();
      break;
    }
    if (Date.now() > deadline) break;
    await Bun.sleep(5);
  }
  await Promise.allSettled(runs);
  await Promise.all(reporters.map((r) => r.close()));
  await Bun.sleep(300); // anything still in flight lands (and would show as doubled)
  const c = count(ws, job, origins);
  return { seconds: ((t1 || performance.now()) - t0) / 1000, outage, journalled: c.distinct, lost: total - c.distinct, doubled: c.doubled, resent: reporters.reduce((n, r) => n + r.resent, 0) };
}

const REPORTER_LABEL = `${REPORTERS} reporters × ${EVENTS} events at once`;

/** the bench entry `reporters`: the two rows (a broker that stays up, one restarted in the middle) */
export async function benchReporters(bin: string): Promise<Row[]> {
  const what = (extra: string) => `${REPORTER_LABEL} into one job through local Mosquitto → the delegator's journal${extra}: events/s, lost, doubled`;
  const target = "0 lost, 0 doubled, ≥ 500 events/s";
  if (!mosquittoPath()) return [{ what: what(""), target, measured: "skipped: mosquitto not installed", ok: null }];
  const root = mkdtempSync(join(tmpdir(), "mam-bench-rep-"));
  const rows: Row[] = [];
  try {
    rows.push(await benchRepeats(root));
    for (const restart of [undefined, { downMs: 500 }]) {
      const dir = join(root, restart ? "mosq-restart" : "mosq");
      const broker = { current: await startMosquitto(dir), dir };
      const ws = join(root, restart ? "restart" : "steady");
      mkdirSync(ws);
      // a quick reconnect after the restart (MAM_BROKER_RETRY_S; default 60 s)
      const env = { ...baseEnv(root), MAM_BROKER_RETRY_S: "0.5", ...broker.current.env };
      await startDaemon(bin, ws, env, "mqtt");
      try {
        const job = await newJob(ws);
        const r = await runReporters(ws, job, broker, restart);
        const rate = r.journalled / r.seconds;
        // with a restart, the rate counts the outage too; the rate outside it is the one to hold to 500
        const outside = r.journalled / Math.max(0.001, r.seconds - r.outage);
        rows.push({
          what: what(restart ? `, the broker restarted in the middle (down ${restart.downMs} ms, no persistence; daemon retry 0.5 s)` : ""),
          target: restart ? "0 lost, 0 doubled, ≥ 500 events/s outside the outage" : target,
          measured: `${Math.round(rate)} events/s (${r.journalled} in ${r.seconds.toFixed(2)} s${restart ? `, of which ${r.outage.toFixed(2)} s without the broker: ${Math.round(outside)} events/s outside it` : ""}), ${r.lost} lost, ${r.doubled} doubled, ${r.resent} resent`,
          ok: r.lost === 0 && r.doubled === 0 && (restart ? outside : rate) >= 500,
        });
      } finally {
        stopDaemon(bin, ws, env);
        await broker.current.stop();
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return rows;
}

/**
 * What a resend costs the daemon: ingestEvent (its code path, in process) of a reporter's 250
 * events, then the same 250 again: per repeat with the daemon's index, and with none (every
 * call reads the journal: what 0.1 did); the journal must not grow.
 */
async function benchRepeats(root: string): Promise<Row> {
  const ws = join(root, "repeats");
  mkdirSync(ws);
  const job = await newJob(ws);
  const topic = `${job.topic_prefix}/events`;
  const lines = new Reporter(job, () => 0, 1).lines.map((l) => Buffer.from(l));
  const cache = new JournalCache();
  for (const l of lines) await ingestEvent(ws, topic, l, () => {}, cache, true);
  const size = () => readFileSync(journalPath(ws, job.job_id)).byteLength;
  const before = size();
  let t = performance.now();
  for (const l of lines) await ingestEvent(ws, topic, l, () => {}, cache, true);
  const indexed = (performance.now() - t) / lines.length;
  t = performance.now();
  for (const l of lines) await ingestEvent(ws, topic, l, () => {}); // no index: reads the journal each time
  const rescanned = (performance.now() - t) / lines.length;
  const grew = size() - before;
  return {
    what: `a remote's resend of its ${lines.length} journalled events → recognised as repeats by the daemon's ingest (per event: with its index / reading the journal each time, as 0.1 did)`,
    target: "journal unchanged",
    measured: `${(indexed * 1000).toFixed(0)} µs / ${(rescanned * 1000).toFixed(0)} µs per repeat; journal ${grew === 0 ? "unchanged" : `grew ${grew} bytes`}`,
    ok: grew === 0,
  };
}
