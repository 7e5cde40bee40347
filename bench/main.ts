// bun run bench (bun bench/main.ts) [--json] [--only NAME]: measures the SPEC §10 table in one run and prints it.
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { build } from "../scripts/build.ts";
import { benchJobs } from "./jobs.ts";
import { benchReporters } from "./reporters.ts";
import { benchSessions } from "./sessions.ts";
import { benchReconcile } from "./reconcile.ts";
import { benchMcp } from "./mcp.ts";
import { benchRegistry } from "./fixtures.ts";
import { benchAgentState } from "./agent-state.ts";
import { benchUi } from "./ui.ts";

const ROOT = join(import.meta.dir, "..");
const BIN = process.env.MAM_BIN ? resolve(process.env.MAM_BIN) : join(ROOT, "dist", "mam");

export interface Row {
  what: string;
  target: string;
  measured: string;
  ok: boolean | null; // null = reference row, no target
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}
const ms = (x: number) => `${x.toFixed(1)} ms`;

/** whole-process wall time of argv, n runs after 3 warm-ups; extraFd is passed as fd 9 */
function timeProcess(argv: string[], n: number, extraFd?: number): number[] {
  const stdio: (string | number)[] = ["ignore", "ignore", "inherit"];
  if (extraFd !== undefined) {
    while (stdio.length < 9) stdio.push("ignore");
    stdio.push(extraFd);
  }
  const times: number[] = [];
  for (let i = 0; i < n + 3; i++) {
    const t0 = performance.now();
    const r = Bun.spawnSync(argv, { stdio: stdio as never, env: { ...process.env, NO_COLOR: "1" } });
    const dt = performance.now() - t0;
    if (r.exitCode !== 0) throw new Error(`${argv.join(" ")} exited ${r.exitCode}`);
    if (i >= 3) times.push(dt);
  }
  return times;
}

/** utime+stime of pid in clock ticks, and its resident set in KiB */
function procUsage(pid: number): { ticks: number; rssKiB: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(f[11]) + Number(f[12]); // fields 14 and 15 of proc(5)
  const rss = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return { ticks, rssKiB: Number(rss?.[1] ?? NaN) };
}

const clockTicks = () => Number(Bun.spawnSync(["getconf", "CLK_TCK"]).stdout.toString().trim()) || 100;

/** an idle daemon started by `mam daemon ensure`, measured over `seconds` once it settled in `mode` */
async function idleDaemon(env: Record<string, string>, mode: "mqtt" | "polling", seconds: number): Promise<{ rssMiB: number; cpuPct: number }> {
  const ws = mkdtempSync(join(tmpdir(), "mam-bench-d-"));
  const e: Record<string, string> = { ...env, NO_COLOR: "1" }; // no MAM_NO_SUBSCRIBER_DAEMON here
  try {
    const r = Bun.spawnSync([BIN, "daemon", "ensure", "--workspace", ws], { env: e, cwd: ws });
    if (r.exitCode !== 0) throw new Error(`mam daemon ensure failed: ${r.stderr}`);
    const pid = Number(r.stdout.toString().trim());
    const deadline = Date.now() + 15_000;
    for (;;) {
      const st = Bun.spawnSync([BIN, "daemon", "status", "--json", "--workspace", ws], { env: e });
      if (st.exitCode === 0 && JSON.parse(st.stdout.toString()).mode === mode) break;
      if (Date.now() > deadline) throw new Error(`the daemon did not reach ${mode} mode: ${readFileSync(join(ws, ".mam", "monitor.log"), "utf8")}`);
      await Bun.sleep(100);
    }
    await Bun.sleep(2000); // settle: start-up work is not idle work
    const a = procUsage(pid);
    await Bun.sleep(seconds * 1000);
    const b = procUsage(pid);
    Bun.spawnSync([BIN, "daemon", "stop", "--workspace", ws], { env: e });
    return { rssMiB: b.rssKiB / 1024, cpuPct: ((b.ticks - a.ticks) / clockTicks() / seconds) * 100 };
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
}

const benches: Record<string, () => Promise<Row[]> | Row[]> = {
  startup() {
    const t = timeProcess([BIN, "--version"], 40);
    return [{ what: "`mam --version`, whole process (median / p90)", target: "-", measured: `${ms(pct(t, 50))} / ${ms(pct(t, 90))}`, ok: null }];
  },
  "pane-lock"() {
    const dir = mkdtempSync(join(tmpdir(), "mam-bench-"));
    try {
      const fd = openSync(join(dir, "free.lock"), "a");
      const t = timeProcess([BIN, "pane-lock", "acquire", "--fd", "9"], 40, fd);
      const py = timeProcess([existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3", "-c", "import fcntl; fcntl.flock(9, fcntl.LOCK_EX | fcntl.LOCK_NB); print('locked')"], 40, fd);
      const med = pct(t, 50);
      return [
        { what: "`mam pane-lock acquire` on a free lock, whole process (median / p90)", target: "≤ 15 ms median", measured: `${ms(med)} / ${ms(pct(t, 90))}`, ok: med <= 15 },
        { what: "reference: the same flock from python3 (median / p90)", target: "-", measured: `${ms(pct(py, 50))} / ${ms(pct(py, 90))}`, ok: null },
      ];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  reconcile: () => benchReconcile(BIN, { pct, ms }),
  jobs: () => benchJobs(BIN, { pct, ms }),
  reporters: () => benchReporters(BIN),
  sessions: () => benchSessions(BIN, { pct, ms }),
  mcp: () => benchMcp(BIN, { pct, ms }),
  "agent-state": () => benchAgentState(BIN, { pct, ms }),
  ui: () => benchUi(BIN, { pct, ms }),
  async daemon() {
    // BENCH_DAEMON_SECONDS shortens the 30 s window for a quick look
    const seconds = Number(process.env.BENCH_DAEMON_SECONDS) > 0 ? Number(process.env.BENCH_DAEMON_SECONDS) : 30;
    const { startMosquitto } = await import("../tests/helpers/brokers.ts");
    const dir = mkdtempSync(join(tmpdir(), "mam-bench-mq-"));
    mkdirSync(dir, { recursive: true });
    const broker = await startMosquitto(dir);
    try {
      const base = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir };
      const [mq, poll] = await Promise.all([
        idleDaemon({ ...base, ...broker.env }, "mqtt", seconds),
        idleDaemon({ ...base, MQTT_BROKER: "127.0.0.1", MQTT_PORT: "9", MQTT_TLS: "0" }, "polling", seconds),
      ]);
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
  },
};

const WRITER = join(ROOT, "tests", "fixtures", "registry-writer.ts");


/** the test writer compiled like mam (bytecode, one file), so a whole-process update costs what a mam command would */
async function compiledWriter(dir: string): Promise<string> {
  const outfile = join(dir, "registry-writer");
  const r = (await Bun.build({ entrypoints: [WRITER], bytecode: true, format: "esm", compile: { outfile }, throw: false } as never)) as unknown as { success: boolean; logs: unknown[] };
  if (!r.success) throw new Error(`cannot compile ${WRITER}: ${r.logs.join("\n")}`);
  return outfile;
}

benches.registry = async () => {
  const dir = mkdtempSync(join(tmpdir(), "mam-bench-"));
  try {
    const yaml = join(dir, ".mam", "agent-sessions.yaml");
    const env = { ...process.env, NO_COLOR: "1" };
    const w = await compiledWriter(dir);
    const t0 = performance.now();
    const procs = Array.from({ length: 20 }, (_, i) => Bun.spawn([w, yaml, "incr", String(i), "25"], { env, stdout: "ignore", stderr: "inherit" }));
    const codes = await Promise.all(procs.map((p) => p.exited));
    const secs = (performance.now() - t0) / 1000;
    if (codes.some((c) => c !== 0)) throw new Error(`registry writers exited ${codes.join(",")}`);
    const { readRegistry } = await import("../lib/registry/load.ts");
    const count = Number(readRegistry(yaml).herdr_sessions.find((r) => r.name === "counter")?.count ?? 0);
    const rate = 500 / secs;
    const lost = 500 - count;
    const single = timeProcess([w, yaml, "once"], 20);
    const big = join(dir, "big", ".mam", "agent-sessions.yaml");
    mkdirSync(join(dir, "big", ".mam"), { recursive: true });
    writeFileSync(big, benchRegistry(200, { name: "api-worker" }));
    const singleBig = timeProcess([w, big, "once"], 20);
    const check = timeProcess([BIN, "registry", "check", "--workspace", join(dir, "big"), "--json"], 20);
    const check500 = join(dir, "big500", ".mam", "agent-sessions.yaml");
    mkdirSync(join(dir, "big500", ".mam"), { recursive: true });
    writeFileSync(check500, benchRegistry(500, { name: "api-worker" }));
    const checkBig = timeProcess([BIN, "registry", "check", "--workspace", join(dir, "big500"), "--json"], 20);
    const { mutateRegistry } = await import("../lib/registry/mutate.ts");
    const inproc: number[] = [];
    for (let i = 0; i < 23; i++) {
      const t = performance.now();
      await mutateRegistry(big, (d) => {
        d.herdr_sessions[i % 200]!.last_visible_note = `bench ${i}`;
      });
      if (i >= 3) inproc.push(performance.now() - t);
    }
    return [
      { what: "registry: 20 processes × 25 updates at once (compiled writer, process start included)", target: "0 lost, ≥ 150 updates/s", measured: `${lost} lost, ${Math.round(rate)} updates/s (${secs.toFixed(2)} s)`, ok: lost === 0 && rate >= 150 },
      { what: "registry: one update, whole compiled process, 21 rows (median / p90)", target: "-", measured: `${ms(pct(single, 50))} / ${ms(pct(single, 90))}`, ok: null },
      { what: "registry: one update, whole compiled process, 200 rows (median / p90)", target: "-", measured: `${ms(pct(singleBig, 50))} / ${ms(pct(singleBig, 90))}`, ok: null },
      { what: "registry: one update in a warm process, 200 rows (median)", target: "-", measured: ms(pct(inproc, 50)), ok: null },
      { what: "`mam registry check --json` (a full read), 200 rows, whole process (median / p90)", target: "-", measured: `${ms(pct(check, 50))} / ${ms(pct(check, 90))}`, ok: null },
      { what: "`mam registry check --json` (a full read), 500 rows, whole process (median / p90)", target: "-", measured: `${ms(pct(checkBig, 50))} / ${ms(pct(checkBig, 90))}`, ok: null },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

if (import.meta.main) {
  const argv = process.argv.slice(2);
  const json = argv.includes("--json");
  const oi = argv.indexOf("--only");
  const only = oi >= 0 ? argv[oi + 1]!.split(",") : Object.keys(benches);
  if (!process.env.MAM_BIN) await build({ outfile: BIN });
  const rows: Row[] = [];
  for (const name of only) {
    const b = benches[name];
    if (!b) throw new Error(`unknown bench '${name}' (have: ${Object.keys(benches).join(", ")})`);
    console.error(`bench: ${name}…`);
    rows.push(...(await b()));
  }
  if (json) console.log(JSON.stringify({ rows }, null, 2));
  else {
    console.log("| what | target | measured | |\n|---|---|---|---|");
    for (const r of rows) console.log(`| ${r.what} | ${r.target} | ${r.measured} | ${r.ok === null ? "" : r.ok ? "pass" : "MISS"} |`);
  }
}
