// bench area `jobs` (SPEC §10): how fast a job event reaches the delegator's side.
//   (a) local Mosquitto: a publisher that writes nothing in the delegator's workspace (an
//       in-process client signing with the job's token, as a worker on another machine would)
//       → the line in the delegator's journal, appended by that workspace's daemon (mam daemon
//       ensure). 1,000 events, or as many as fit in BENCH_JOBS_SECONDS (default 60).
//       For reference, the same through `mam job event --token … --workspace <other folder>`.
//   (b) no broker: `mam job event` (whole process, journal only) → the line seen by a journal
//       watcher (what `job wait` does), and → the daemon has reacted to it (journal watching).
//   (c) reference: `mam job event` → received by a plain subscriber on a local Mosquitto.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, watch } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalJson } from "../lib/jobs/canonical.ts";
import { signEvent } from "../lib/jobs/event.ts";
import { type EventName } from "../lib/jobs/statuses.ts";
import { journalPath } from "../lib/jobs/store.ts";
import { mosquittoPath, startMosquitto } from "../tests/helpers/brokers.ts";
import { baseEnv, ms, NO_BROKER, newJob, pct, type Row, secondsFrom, startDaemon, stopDaemon } from "./common.ts";

/** resolves when a file in dir changes (inotify), or after ms */
class DirWatch {
  private wake?: () => void;
  private w;
  constructor(dir: string) {
    this.w = watch(dir, { persistent: false }, () => this.wake?.());
  }
  sleep(ms: number): Promise<void> {
    return new Promise((r) => {
      const t = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(t);
        self.wake = undefined;
        r();
      }
      this.wake = done;
    });
  }
  close() {
    this.w.close();
  }
}

const sizeOf = (p: string) => {
  try {
    return statSync(p).size;
  } catch {
    return 0;
  }
};

export async function benchJobs(bin: string): Promise<Row[]> {
  const root = mkdtempSync(join(tmpdir(), "mam-bench-jobs-"));
  const rows: Row[] = [];
  const budgetS = secondsFrom("BENCH_JOBS_SECONDS", 60);
  const pp = (xs: number[]) => `${ms(pct(xs, 50))} / ${ms(pct(xs, 99))}`;
  try {
    const env0 = baseEnv(root);

    // (a) local Mosquitto → the delegator's daemon → its journal
    if (!mosquittoPath()) {
      rows.push({ what: "event published → in the delegator's journal, local Mosquitto", target: "≤ 20 ms p50, ≤ 100 ms p99", measured: "skipped: mosquitto not installed", ok: null });
    } else {
      const m = await startMosquitto(join(root, "mosq"));
      const ws = join(root, "delegator");
      const remote = join(root, "remote");
      mkdirSync(ws);
      mkdirSync(remote);
      const env = { ...env0, ...m.env };
      await startDaemon(bin, ws, env, "mqtt");
      const mqtt = await import("mqtt");
      const pub = await mqtt.connectAsync({ protocol: "mqtt", host: "127.0.0.1", port: m.port, clientId: "mam-bench-pub", reconnectPeriod: 0 } as never);
      try {
        const job = await newJob(ws);
        const jp = journalPath(ws, job.job_id);
        const dw = new DirWatch(join(ws, ".mam", "jobs"));
        const topic = `${job.topic_prefix}/events`;
        let seq = 0;
        let expected = 0;
        const line = (event: EventName) =>
          canonicalJson(signEvent({ schema_version: 1, seq: ++seq, job_id: job.job_id, event, timestamp: new Date().toISOString().replace(/\.\d+Z$/, "Z"), detail: `bench event ${seq}`, source: "bench-remote", data: {} }, job.auth_token));
        const times: number[] = [];
        const n = 1000;
        const stopAt = Date.now() + budgetS * 1000;
        for (let i = 0; i < n + 5 && Date.now() < stopAt; i++) {
          const payload = line(i === 0 ? "started" : "progress");
          expected += Buffer.byteLength(payload) + 1;
          const t0 = performance.now();
          await pub.publishAsync(topic, payload, { qos: 1 });
          while (sizeOf(jp) < expected) {
            await dw.sleep(20);
            if (performance.now() - t0 > 10_000) throw new Error(`event ${seq} did not reach the journal in 10 s: ${readFileSync(join(ws, ".mam", "monitor.log"), "utf8").slice(-500)}`);
          }
          if (i >= 5) times.push(performance.now() - t0);
        }
        const p50 = pct(times, 50);
        const p99 = pct(times, 99);
        rows.push({
          what: `event published (in-process publisher, job token, no write in the delegator's folder) → in the delegator's journal via its daemon, local Mosquitto, ${times.length} events (p50 / p99)`,
          target: "≤ 20 ms p50, ≤ 100 ms p99",
          measured: `${ms(p50)} / ${ms(p99)}`,
          ok: p50 <= 20 && p99 <= 100,
        });

        // reference: the worker is `mam job event --token` in another folder (a whole process each),
        // on a job of its own (a remote numbers its events from its own journal)
        const job2 = await newJob(ws);
        const jp2 = journalPath(ws, job2.job_id);
        const whole: number[] = [];
        for (let i = 0; i < 53; i++) {
          const before = sizeOf(jp2);
          const t0 = performance.now();
          const p = Bun.spawn([bin, "job", "event", job2.job_id, "progress", "--detail", `w${i}`, "--source", "bench-remote", "--token", job2.auth_token, "--workspace", remote], { env, stdio: ["ignore", "ignore", "inherit"] });
          while (sizeOf(jp2) <= before) {
            await dw.sleep(20);
            if (performance.now() - t0 > 10_000) throw new Error(`remote event ${i + 1} did not reach the journal in 10 s`);
          }
          if (i >= 3) whole.push(performance.now() - t0);
          await p.exited;
        }
        rows.push({
          what: `\`mam job event --token\` in another folder (whole process, with its resends) → in the delegator's journal, local Mosquitto, ${whole.length} events (p50 / p99)`,
          target: "-",
          measured: pp(whole),
          ok: null,
        });
        dw.close();
      } finally {
        await pub.endAsync();
        stopDaemon(bin, ws, env);
        await m.stop();
      }
    }

    // (b) no broker: a local worker appends to the journal; watchers and the daemon see it
    {
      const ws = join(root, "nobroker");
      mkdirSync(ws);
      const env = { ...env0, ...NO_BROKER };
      await startDaemon(bin, ws, env, "polling");
      try {
        const job = await newJob(ws);
        const jp = journalPath(ws, job.job_id);
        const cursor = join(ws, ".mam", "monitor.cursor.json");
        const reacted = (seq: number) => {
          try {
            return (JSON.parse(readFileSync(cursor, "utf8"))[job.job_id]?.at ?? 0) >= seq;
          } catch {
            return false;
          }
        };
        const dw = new DirWatch(join(ws, ".mam"));
        const dwj = new DirWatch(join(ws, ".mam", "jobs"));
        const seen: number[] = [];
        const daemon: number[] = [];
        const n = 100;
        for (let i = 1; i <= n + 3; i++) {
          const before = sizeOf(jp);
          const t0 = performance.now();
          const p = Bun.spawn([bin, "job", "event", job.job_id, "progress", "--detail", `e${i}`, "--workspace", ws], { env, stdio: ["ignore", "ignore", "ignore"] });
          while (sizeOf(jp) <= before) await dwj.sleep(20);
          const t1 = performance.now();
          while (!reacted(i)) {
            await dw.sleep(20);
            if (performance.now() - t0 > 10_000) throw new Error(`the daemon did not react to seq ${i} in 10 s`);
          }
          const t2 = performance.now();
          if (i > 3) {
            seen.push(t1 - t0);
            daemon.push(t2 - t0);
          }
          await p.exited;
        }
        dw.close();
        dwj.close();
        rows.push({ what: `no broker: \`mam job event\` (whole process) → line in the delegator's journal, seen by a journal watcher, ${n} events (p50 / p99)`, target: "≤ 300 ms p50", measured: pp(seen), ok: pct(seen, 50) <= 300 });
        rows.push({ what: `no broker: \`mam job event\` (whole process) → the daemon has reacted to it (journal watching), ${n} events (p50 / p99)`, target: "-", measured: pp(daemon), ok: null });
      } finally {
        stopDaemon(bin, ws, env);
      }
    }

    // (c) reference: the transport alone
    if (mosquittoPath()) {
      const m = await startMosquitto(join(root, "mosq-c"));
      const ws = join(root, "plain");
      mkdirSync(ws);
      const mqtt = await import("mqtt");
      const sub = await mqtt.connectAsync({ protocol: "mqtt", host: "127.0.0.1", port: m.port, clientId: "mam-bench-sub", reconnectPeriod: 0 } as never);
      try {
        await sub.subscribeAsync("mam/jobs/+/events", { qos: 1 });
        const job = await newJob(ws);
        const env = { ...env0, MAM_NO_SUBSCRIBER_DAEMON: "1", ...m.env };
        let got = 0;
        let wake: (() => void) | undefined;
        sub.on("message", () => {
          got++;
          wake?.();
        });
        const times: number[] = [];
        const n = 100;
        for (let i = 1; i <= n + 3; i++) {
          const t0 = performance.now();
          const p = Bun.spawn([bin, "job", "event", job.job_id, "progress", "--detail", `e${i}`, "--workspace", ws], { env, stdio: ["ignore", "ignore", "ignore"] });
          while (got < i) await new Promise<void>((r) => ((wake = r), setTimeout(r, 1000)));
          if (i > 3) times.push(performance.now() - t0);
          await p.exited;
        }
        rows.push({ what: `reference: \`mam job event\` (whole process) → received by a plain subscriber, local Mosquitto, ${n} events (p50 / p99)`, target: "-", measured: pp(times), ok: null });
      } finally {
        await sub.endAsync();
        await m.stop();
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return rows;
}
