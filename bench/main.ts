// bun run bench (bun bench/main.ts) [--json] [--only NAME[,NAME]]: measures the SPEC §10 table
// in one run and prints it, as a markdown table (BENCH.md) or as {rows} JSON. Builds dist/mam
// first unless MAM_BIN names a binary. Each area lives in bench/<area>.ts and returns its rows;
// what they share is bench/common.ts. A new area is one file plus one entry in AREAS (order =
// the table's order).
import { join, resolve } from "node:path";
import { build } from "../scripts/build.ts";
import { benchAgentState } from "./agent-state.ts";
import { ROOT, type Row } from "./common.ts";
import { benchDaemon } from "./daemon.ts";
import { benchFleet } from "./fleet.ts";
import { benchJobs } from "./jobs.ts";
import { benchMcp } from "./mcp.ts";
import { benchMerge } from "./merge.ts";
import { benchNpm } from "./npm.ts";
import { benchPaneLock } from "./pane-lock.ts";
import { benchQueue } from "./queue.ts";
import { benchReconcile } from "./reconcile.ts";
import { benchRegistry } from "./registry.ts";
import { benchReporters } from "./reporters.ts";
import { benchSandbox } from "./sandbox.ts";
import { benchSessions } from "./sessions.ts";
import { benchStartup } from "./startup.ts";
import { benchTeam } from "./team.ts";
import { benchUi } from "./ui.ts";
import { benchUnattended } from "./unattended.ts";
import { benchUsage } from "./usage.ts";

const AREAS: Record<string, (bin: string) => Promise<Row[]> | Row[]> = {
  startup: benchStartup,
  "pane-lock": benchPaneLock,
  reconcile: benchReconcile,
  jobs: benchJobs,
  reporters: benchReporters,
  sessions: benchSessions,
  mcp: benchMcp,
  "agent-state": benchAgentState,
  ui: benchUi,
  daemon: benchDaemon,
  usage: benchUsage,
  registry: benchRegistry,
  team: benchTeam,
  fleet: benchFleet,
  queue: benchQueue,
  npm: benchNpm,
  unattended: benchUnattended,
  merge: benchMerge,
  sandbox: benchSandbox,
};

const argv = process.argv.slice(2);
const json = argv.includes("--json");
const oi = argv.indexOf("--only");
const only = oi >= 0 ? argv[oi + 1]!.split(",") : Object.keys(AREAS);
for (const name of only) if (!AREAS[name]) throw new Error(`unknown bench '${name}' (have: ${Object.keys(AREAS).join(", ")})`);
const bin = process.env.MAM_BIN ? resolve(process.env.MAM_BIN) : join(ROOT, "dist", "mam");
if (!process.env.MAM_BIN) await build({ outfile: bin });
const rows: Row[] = [];
for (const name of only) {
  console.error(`bench: ${name}…`);
  rows.push(...(await AREAS[name]!(bin)));
}
if (json) console.log(JSON.stringify({ rows }, null, 2));
else {
  console.log("| what | target | measured | |\n|---|---|---|---|");
  for (const r of rows) console.log(`| ${r.what} | ${r.target} | ${r.measured} | ${r.ok === null ? "" : r.ok ? "pass" : "MISS"} |`);
}
