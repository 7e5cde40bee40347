// bun run bench [--json] [--only NAME]: measures the SPEC §10 table in one run and prints it.
import { existsSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "./build.ts";
import { benchJobs } from "./bench-jobs.ts";

const ROOT = join(import.meta.dir, "..");
const BIN = process.env.MAM_BIN ?? join(ROOT, "dist", "mam");

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
  jobs: () => benchJobs(BIN, { pct, ms }),
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
