// What the bench areas share (bench/<area>.ts; bench/main.ts runs them and prints the table).
// Contract: a Row is one line of BENCH.md's table, its `what` text is compared across commits, so
// an area never rewords it by accident; pct/ms are the one percentile and millisecond format;
// timeProcess times whole processes after warm-ups; procUsage is the one /proc reader (CPU ticks
// and RSS of a pid); startDaemon/stopDaemon drive `mam daemon` and wait on its mode, never on a
// fixed sleep; registryYaml and newJob are the fixtures. Areas import this module and lib/ (and
// tests/helpers, which is test infrastructure), never each other or main.ts.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { registerJob } from "../lib/jobs/store.ts";

export const ROOT = join(import.meta.dir, "..");

export interface Row {
  what: string;
  target: string;
  measured: string;
  ok: boolean | null; // null = reference row, no target
}

/** the p-th percentile (nearest rank, 0–100) of xs */
export function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

export const ms = (x: number) => `${x.toFixed(1)} ms`;

/** "median / p90" of times in ms, the format of most rows */
export const medP90 = (xs: number[]) => `${ms(pct(xs, 50))} / ${ms(pct(xs, 90))}`;

/** "p50 / p99" of times in ms ("none" when there are none) */
export const pp = (xs: number[]) => (xs.length ? `${ms(pct(xs, 50))} / ${ms(pct(xs, 99))}` : "none");

/** the machine's 1-minute load average: rows that are sensitive to whatever else runs show it */
export const load1 = () => readFileSync("/proc/loadavg", "utf8").split(" ")[0]!;

/** whole-process wall time of argv, n runs after `warm` warm-ups (3); extraFd is passed as fd 9 */
export function timeProcess(argv: string[], n: number, extraFd?: number, warm = 3): number[] {
  const stdio: (string | number)[] = ["ignore", "ignore", "inherit"];
  if (extraFd !== undefined) {
    while (stdio.length < 9) stdio.push("ignore");
    stdio.push(extraFd);
  }
  const times: number[] = [];
  for (let i = 0; i < n + warm; i++) {
    const t0 = performance.now();
    const r = Bun.spawnSync(argv, { stdio: stdio as never, env: { ...process.env, NO_COLOR: "1" } });
    const dt = performance.now() - t0;
    if (r.exitCode !== 0) throw new Error(`${argv.join(" ")} exited ${r.exitCode}`);
    if (i >= warm) times.push(dt);
  }
  return times;
}

export interface Usage {
  /** utime + stime in clock ticks */
  ticks: number;
  /** cutime + cstime: the children it waited for (a daemon's tmux calls), in clock ticks */
  childTicks: number;
  /** resident set in KiB */
  rssKiB: number;
  /** its anonymous part (RssAnon: what the process holds of its own, not mapped files such as its binary) in KiB */
  anonKiB: number;
}

/**
 * CPU time and resident set of pid. lib/mux/procfs.ts parseStat reads the same file but keeps
 * only pid, comm, pgrp and tpgid; this reads fields 14 to 17 of proc(5) past the last ")"
 * (comm may hold spaces and parens).
 */
export function procUsage(pid: number): Usage {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { ticks: Number(f[11]) + Number(f[12]), childTicks: Number(f[13]) + Number(f[14]), rssKiB: kib("VmRSS"), anonKiB: kib("RssAnon") };
}

let ticksPerSecond: number | undefined;

/** % of one core a process (`children`: the children it waited for) used between two procUsage samples taken `seconds` apart */
export function cpuPercent(a: Usage, b: Usage, seconds: number, children = false): number {
  ticksPerSecond ??= Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;
  const ticks = children ? b.childTicks - a.childTicks : b.ticks - a.ticks;
  return (ticks / ticksPerSecond / seconds) * 100;
}

/** a seconds count from an env knob (BENCH_*_SECONDS), else the default */
export function secondsFrom(name: string, fallback: number): number {
  return Number(process.env[name]) > 0 ? Number(process.env[name]) : fallback;
}

/** a minimal environment for mam processes with its own HOME */
export const baseEnv = (home: string): Record<string, string> => ({ PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, NO_COLOR: "1" });

/** no broker: a port that refuses at once, so mam falls back to polling the journals */
export const NO_BROKER = { MQTT_BROKER: "127.0.0.1", MQTT_PORT: "9", MQTT_TLS: "0" };

/** `bin args…` to completion; its stdout, or an error with its stderr when it fails */
export function mamSync(bin: string, args: string[], env: Record<string, string | undefined>, cwd: string): string {
  const r = Bun.spawnSync([bin, ...args], { env, cwd, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`mam ${args.join(" ")} exited ${r.exitCode}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/** `mam daemon ensure` in ws, then wait until `mam daemon status` reports `mode`; the daemon's pid */
export async function startDaemon(bin: string, ws: string, env: Record<string, string>, mode: "mqtt" | "polling"): Promise<number> {
  const r = Bun.spawnSync([bin, "daemon", "ensure", "--workspace", ws], { env, cwd: ws });
  if (r.exitCode !== 0) throw new Error(`mam daemon ensure failed: ${r.stderr}`);
  const deadline = Date.now() + 20_000;
  for (;;) {
    const st = Bun.spawnSync([bin, "daemon", "status", "--json", "--workspace", ws], { env });
    if (st.exitCode === 0 && JSON.parse(st.stdout.toString()).mode === mode) return Number(r.stdout.toString().trim());
    if (Date.now() > deadline) throw new Error(`the daemon did not reach ${mode} mode: ${readFileSync(join(ws, ".mam", "monitor.log"), "utf8")}`);
    await Bun.sleep(100);
  }
}

export const stopDaemon = (bin: string, ws: string, env: Record<string, string>) => Bun.spawnSync([bin, "daemon", "stop", "--workspace", ws], { env });

/** a single job for agent `bench` in ws, no timeouts */
export function newJob(ws: string) {
  return registerJob(ws, {
    agent_session: "bench", agent: "shell", prompt: "bench", delegator: null, type: "single", reviewer_session: null,
    max_iterations: null, timeout_sec: 0, idle_timeout_sec: 0, expected_artifacts: [], topic_prefix_base: "mam/jobs",
  });
}

/**
 * a stub herdr's `pane list` answer: the panes of registryYaml's n rows (bench-worker-<i> in pane
 * w1:p<i>), those `alive` says, each with herdr's agent status `status(i)`
 */
export function paneListing(ws: string, n: number, o: { alive?: (i: number) => boolean; status?: (i: number) => string } = {}): string {
  const panes = [];
  for (let i = 0; i < n; i++) {
    if (o.alive && !o.alive(i)) continue;
    panes.push({
      pane_id: `w1:p${i}`,
      terminal_id: `term_${i.toString(16).padStart(12, "0")}`,
      workspace_id: "w1",
      tab_id: "w1:t1",
      focused: i === 0,
      cwd: ws,
      label: `mam:bench-worker-${i}`,
      agent: "claude",
      name: `bench-worker-${i}`,
      agent_status: o.status ? o.status(i) : "idle",
      revision: 0,
    });
  }
  return `${JSON.stringify({ id: "cli:pane:list", result: { type: "pane_list", panes } })}\n`;
}

/** a registry with n running claude rows of the usual shape on a herdr server */
export function registryYaml(n: number, o: { name?: string; server?: string; ws?: string; paneWs?: string } = {}): string {
  const name = o.name ?? "bench-worker";
  const server = o.server ?? "mam";
  const ws = o.ws ?? "/abs/workspace";
  const paneWs = o.paneWs ?? "w1";
  const rows: string[] = [];
  for (let i = 0; i < n; i++) {
    rows.push(
      `  - name: ${name}-${i}`,
      "    status: running",
      "    role: worker",
      "    agent: claude",
      `    herdr_session: ${server}`,
      `    herdr_server: ${server}`,
      '    herdr_session_created_at: "2026-10-11T00:00:00Z"',
      "    herdr_session_epoch: 1791590400",
      `    pane: {id: "${paneWs}:p${i}", index: ${i}, pid: ${4000 + i}, cmd: claude, cmd_full: claude --session-id 3f0c, cwd: ${ws}}`,
      "    session_id_source: assigned",
      `    claude_session_id_own: 3f0c1b2a-${String(i).padStart(4, "0")}-4bbb-8ccc-dddddddddddd`,
      "    last_visible_status: running",
    );
  }
  return `herdr_sessions:\n${rows.join("\n")}\ntmux_sessions: []\n`;
}

/** wait until `ok()` (looked at every 20 ms), at most `s` seconds; else fail with `bench <area>: <what()>` */
export async function until(area: string, ok: () => boolean, s: number, what: () => string): Promise<void> {
  const deadline = performance.now() + s * 1000;
  while (!ok()) {
    if (performance.now() > deadline) throw new Error(`bench ${area}: ${what()}`);
    await Bun.sleep(20);
  }
}
