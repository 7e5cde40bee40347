// bench entry `jobs` (SPEC §10): job event latency, from the start of `mam job event` to
//   (a) the line visible to a `job wait`-style journal watcher, no broker;
//   (b) the message received by a subscriber on a local Mosquitto.
// The full row "published → in the delegator's journal" also needs the daemon's ingest step.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { registerJob } from "../lib/jobs/store.ts";
import { JournalReader, JournalWatch } from "../lib/jobs/wait.ts";
import { mosquittoPath, startMosquitto } from "../tests/helpers/brokers.ts";
import type { Row } from "./bench.ts";

interface Fmt {
  pct: (xs: number[], p: number) => number;
  ms: (x: number) => string;
}

async function newJob(ws: string) {
  return registerJob(ws, {
    agent_session: "bench", agent: "shell", prompt: "bench", delegator: null, type: "single", reviewer_session: null,
    max_iterations: null, timeout_sec: 0, idle_timeout_sec: 0, expected_artifacts: [], topic_prefix_base: "mam/jobs",
  });
}

export async function benchJobs(bin: string, f: Fmt): Promise<Row[]> {
  const root = mkdtempSync(join(tmpdir(), "mam-bench-jobs-"));
  const rows: Row[] = [];
  try {
    const ws = join(root, "ws");
    Bun.spawnSync(["mkdir", "-p", ws]);
    const baseEnv = { ...process.env, NO_COLOR: "1", MAM_NO_SUBSCRIBER_DAEMON: "1" } as Record<string, string>;

    // (a) no broker: port 9 refuses at once, the event is journalled only
    {
      const job = await newJob(ws);
      const reader = new JournalReader(ws, job.job_id);
      const watch = new JournalWatch(ws);
      const env = { ...baseEnv, MQTT_BROKER: "127.0.0.1", MQTT_PORT: "9" };
      const times: number[] = [];
      const n = 60;
      for (let i = 1; i <= n + 3; i++) {
        const t0 = performance.now();
        const p = Bun.spawn([bin, "job", "event", job.job_id, "progress", "--detail", `e${i}`, "--workspace", ws], { env, stdio: ["ignore", "ignore", "ignore"] });
        while (reader.refresh(), reader.events.length < i) await watch.sleep(1000);
        if (i > 3) times.push(performance.now() - t0);
        await p.exited;
      }
      watch.close();
      const p50 = f.pct(times, 50);
      rows.push({ what: "job event → line seen by a journal watcher, no broker (p50 / p99)", target: "≤ 300 ms p50", measured: `${f.ms(p50)} / ${f.ms(f.pct(times, 99))}`, ok: p50 <= 300 });
    }

    // (b) local Mosquitto
    if (!mosquittoPath()) {
      rows.push({ what: "job event → subscriber, local Mosquitto", target: "-", measured: "skipped: mosquitto not installed", ok: null });
    } else {
      const m = await startMosquitto(join(root, "mosq"));
      const mqtt = await import("mqtt");
      const sub = await mqtt.connectAsync({ protocol: "mqtt", host: "127.0.0.1", port: m.port, clientId: "mam-bench-sub", reconnectPeriod: 0 } as never);
      try {
        await sub.subscribeAsync("mam/jobs/+/events", { qos: 1 });
        const job = await newJob(ws);
        const env = { ...baseEnv, ...m.env };
        let got = 0;
        let wake: (() => void) | undefined;
        sub.on("message", () => {
          got++;
          wake?.();
        });
        const times: number[] = [];
        const n = 200;
        for (let i = 1; i <= n + 3; i++) {
          const t0 = performance.now();
          const p = Bun.spawn([bin, "job", "event", job.job_id, "progress", "--detail", `e${i}`, "--workspace", ws], { env, stdio: ["ignore", "ignore", "ignore"] });
          while (got < i) await new Promise<void>((r) => ((wake = r), setTimeout(r, 1000)));
          if (i > 3) times.push(performance.now() - t0);
          await p.exited;
        }
        rows.push({
          what: `job event (whole process) → received by a subscriber, local Mosquitto, ${n} events (p50 / p99)`,
          target: "-",
          measured: `${f.ms(f.pct(times, 50))} / ${f.ms(f.pct(times, 99))}`,
          ok: null,
        });
        // the transport alone, in process: connect + QoS 1 publish (as job event does) → delivered
        const { publishAll } = await import("../lib/jobs/transport.ts");
        const { brokerConfigFromEnv } = await import("../lib/jobs/broker-config.ts");
        const cfg = brokerConfigFromEnv(env);
        const tp: number[] = [];
        for (let i = 1; i <= n; i++) {
          const before = got;
          const t0 = performance.now();
          const r = await publishAll(cfg, [{ topic: `mam/jobs/${job.job_id}/events`, payload: `{"bench":${i}}` }]);
          if (!r.ok) throw new Error(r.reason);
          while (got <= before) await new Promise<void>((res) => ((wake = res), setTimeout(res, 1000)));
          tp.push(performance.now() - t0);
        }
        rows.push({
          what: `publish (connect + QoS 1 publish, in process) → received, local Mosquitto, ${n} events (p50 / p99)`,
          target: "≤ 20 ms p50, ≤ 100 ms p99",
          measured: `${f.ms(f.pct(tp, 50))} / ${f.ms(f.pct(tp, 99))}`,
          ok: f.pct(tp, 50) <= 20 && f.pct(tp, 99) <= 100,
        });
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
