// bench area `daemon` (SPEC §10): an idle subscriber daemon started by `mam daemon ensure`, its
// RSS and CPU over BENCH_DAEMON_SECONDS (default 30) once it settled, with a local Mosquitto
// (mqtt mode) and with no broker (polling mode), both at once; then, alone, in mqtt mode in a
// workspace that keeps BENCH_DAEMON_JOBS (default 1000) ended jobs, as one left to work for weeks
// does (jobs are never pruned), measured once its first poll has put them to rest.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jobStore } from "../lib/jobs/store.ts";
import { baseEnv, cpuPercent, NO_BROKER, procUsage, type Row, secondsFrom, startDaemon, stopDaemon } from "./common.ts";

/** `n` ended jobs in ws, each with the journal of a single job that ran (records marked as env's user's) */
async function endedJobs(ws: string, env: Record<string, string>, n: number): Promise<void> {
  const jobs = jobStore(ws, env as never);
  for (let i = 0; i < n; i++) {
    const r = await jobs.register({
      agent_session: `worker-${i % 10}`, agent: "claude", prompt: `part ${i} of the work`, delegator: null, type: "single", reviewer_session: null,
      max_iterations: null, timeout_sec: 0, idle_timeout_sec: 0, expected_artifacts: [], topic_prefix_base: "mam/jobs",
    });
    for (const event of ["dispatched", "started", "progress", "completed"] as const) await jobs.append(r.job_id, { event, detail: `${event} ${i}`, source: event === "dispatched" ? "mam" : r.agent_session });
  }
}

/** an idle daemon measured over `seconds` once it settled (`settleMs`) in `mode`, in a workspace `prepare` filled first */
async function idleDaemon(bin: string, env: Record<string, string>, mode: "mqtt" | "polling", seconds: number, settleMs = 2000, prepare?: (ws: string) => Promise<void>): Promise<{ rssMiB: number; cpuPct: number }> {
  const ws = mkdtempSync(join(tmpdir(), "mam-bench-d-"));
  try {
    await prepare?.(ws);
    const pid = await startDaemon(bin, ws, env, mode); // no MAM_NO_SUBSCRIBER_DAEMON here
    await Bun.sleep(settleMs); // settle: start-up work is not idle work
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
    // alone, after the two above: reading the jobs at start is not idle work, and the first poll
    // (RECONCILE_POLL_INTERVAL, 15 s) puts them to rest
    const n = secondsFrom("BENCH_DAEMON_JOBS", 1000);
    const kept = await idleDaemon(bin, { ...base, ...broker.env }, "mqtt", seconds, 20_000, (ws) => endedJobs(ws, base, n));
    return [row("MQTT (local Mosquitto)", mq), row("polling (no broker, RECONCILE_POLL_INTERVAL 15 s)", poll), row(`MQTT, a workspace that keeps ${n} ended jobs`, kept)];
  } finally {
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
