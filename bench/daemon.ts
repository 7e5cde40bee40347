// bench area `daemon` (SPEC §10): an idle subscriber daemon started by `mam daemon ensure`, its
// RSS and CPU over BENCH_DAEMON_SECONDS (default 30) once it settled, with a local Mosquitto
// (mqtt mode) and with no broker (polling mode), both at once.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { baseEnv, cpuPercent, NO_BROKER, procUsage, type Row, secondsFrom, startDaemon, stopDaemon } from "./common.ts";

/** an idle daemon measured over `seconds` once it settled in `mode` */
async function idleDaemon(bin: string, env: Record<string, string>, mode: "mqtt" | "polling", seconds: number): Promise<{ rssMiB: number; cpuPct: number }> {
  const ws = mkdtempSync(join(tmpdir(), "mam-bench-d-"));
  try {
    const pid = await startDaemon(bin, ws, env, mode); // no MAM_NO_SUBSCRIBER_DAEMON here
    await Bun.sleep(2000); // settle: start-up work is not idle work
    const a = procUsage(pid);
    await Bun.sleep(seconds * 1000);
    const b = procUsage(pid);
    stopDaemon(bin, ws, env);
    return { rssMiB: b.rssKiB / 1024, cpuPct: cpuPercent(a, b, seconds) };
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

export async function benchDaemon(bin: string): Promise<Row[]> {
  // BENCH_DAEMON_SECONDS shortens the 30 s window for a quick look
  const seconds = secondsFrom("BENCH_DAEMON_SECONDS", 30);
  const { startMosquitto } = await import("../tests/helpers/brokers.ts");
  const dir = mkdtempSync(join(tmpdir(), "mam-bench-mq-"));
  mkdirSync(dir, { recursive: true });
  const broker = await startMosquitto(dir);
  try {
    const base = baseEnv(dir);
    const [mq, poll] = await Promise.all([idleDaemon(bin, { ...base, ...broker.env }, "mqtt", seconds), idleDaemon(bin, { ...base, ...NO_BROKER }, "polling", seconds)]);
    const row = (what: string, m: { rssMiB: number; cpuPct: number }): Row => ({
      what: `idle subscriber daemon, ${what}: RSS / CPU over ${seconds} s`,
      target: "≤ 60 MiB RSS, ≤ 1 % of one core",
      measured: `${m.rssMiB.toFixed(1)} MiB / ${m.cpuPct.toFixed(2)} %`,
      ok: m.rssMiB <= 60 && m.cpuPct <= 1,
    });
    return [row("MQTT (local Mosquitto)", mq), row("polling (no broker, RECONCILE_POLL_INTERVAL 15 s)", poll)];
  } finally {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
