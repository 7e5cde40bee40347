// bench area `ui` (issue 16): `mam ui` on a workspace with 50 sessions (tmux rows whose server
// does not run: LIVE dead, one cheap tmux call per refresh) and 200 jobs (a quarter of them loop
// jobs, 4–9 events each), in the system's chromium driven by puppeteer-core:
//   (a) page ready: navigation start → two animation frames after the first full render (median / p90 of 10)
//   (b) an event appended to a journal → its dot on the page (p50 / p95 of 40; the page stamps
//       the moment a DOM mutation shows it, the bench the moment before the append)
//   (c) the server's RSS with a page open, and its CPU over BENCH_UI_SECONDS (default 20) with a
//       page open and with none
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { appendEvent, registerJob } from "../lib/jobs/store.ts";
import { chromiumPath, eventToPage, openUi, pageReady } from "./browser.ts";
import { baseEnv, cpuPercent, medP90, ms, pct, procUsage, type Row, secondsFrom } from "./common.ts";

const SESSIONS = 50;
const JOBS = 200;

function tmuxRegistry(n: number, server: string, ws: string): string {
  const rows: string[] = [];
  for (let i = 0; i < n; i++) {
    rows.push(
      `  - name: ui-bench-${i}`,
      "    status: running",
      `    role: ${i % 5 === 0 ? "reviewer" : "worker"}`,
      "    agent: claude",
      `    tmux_server: ${server}`,
      `    pane: {id: "%${i}", pid: ${5000 + i}, cmd: claude, cwd: ${ws}}`,
      "    last_visible_status: running",
    );
  }
  return `herdr_sessions: []\ntmux_sessions:\n${rows.join("\n")}\n`;
}

async function seedJobs(ws: string): Promise<string[]> {
  const ids: string[] = [];
  const t0 = Date.now() / 1000 - 3600;
  for (let i = 0; i < JOBS; i++) {
    const loop = i % 4 === 0;
    const worker = `ui-bench-${i % SESSIONS}`;
    const reviewer = `ui-bench-${(i + 5) % SESSIONS}`;
    const now = t0 + i * 10;
    const r = await registerJob(
      ws,
      { agent_session: worker, agent: "claude", prompt: `bench job ${i}: tidy module ${i}`, delegator: "lead", type: loop ? "loop" : "single", reviewer_session: loop ? reviewer : null, max_iterations: loop ? 3 : null, timeout_sec: 3600, idle_timeout_sec: 120, expected_artifacts: [], topic_prefix_base: "mam/jobs" },
      now,
    );
    const evs: [string, string, string, Record<string, number>?][] = [["started", worker, "on it"], ["progress", worker, "half way"]];
    if (loop) evs.push(["completed", worker, "done v1"], ["progress", "mam", "iteration 1: review requested", { iteration: 1 }], ["completed", reviewer, "needs work"], ["progress", "mam", "iteration 2: feedback sent", { iteration: 2 }], ["completed", worker, "done v2"], ["completed", reviewer, "PASS"]);
    else if (i % 3 === 0) evs.push(["completed", worker, "done"]);
    let k = 0;
    for (const [event, source, detail, data] of evs) await appendEvent(ws, r.job_id, { event: event as never, source, detail, data }, { now: now + ++k });
    ids.push(r.job_id);
  }
  return ids;
}

export async function benchUi(bin: string): Promise<Row[]> {
  const chromium = chromiumPath();
  const rowsOf = (m: string): Row[] => [{ what: "`mam ui`: page ready, event → page, RSS, idle CPU", target: "-", measured: m, ok: null }];
  if (!chromium) return rowsOf("not measured: chromium is not installed (apt-get install -y chromium)");
  const root = mkdtempSync(join(tmpdir(), "mam-bench-ui-"));
  const ws = join(root, "ws");
  mkdirSync(join(ws, ".mam"), { recursive: true });
  writeFileSync(join(ws, ".mam", "agent-sessions.yaml"), tmuxRegistry(SESSIONS, "ui-bench-none", ws));
  const seconds = secondsFrom("BENCH_UI_SECONDS", 20);
  const ids = await seedJobs(ws);
  const env = { ...baseEnv(root), TMUX_TMPDIR: root, MAM_NO_SUBSCRIBER_DAEMON: "1" };
  const open = await openUi(bin, ws, env, root, chromium);
  try {
    const { url, ui, browser } = open;
    // (a) page ready, a fresh page each time (chromium itself warm)
    const ready = await pageReady(browser, url, JOBS, 10);
    // (b) event → page, on a single job still running
    const { lat, page } = await eventToPage(browser, url, ws, ids[1]!, "ui-bench-1", 40);

    // (c) RSS and CPU, with this page open, then with none
    await Bun.sleep(3000);
    const a = procUsage(ui.pid);
    await Bun.sleep(seconds * 1000);
    const b = procUsage(ui.pid);
    await page.close();
    await Bun.sleep(2000);
    const c = procUsage(ui.pid);
    await Bun.sleep(seconds * 1000);
    const d = procUsage(ui.pid);
    const openCpu = cpuPercent(a, b, seconds);
    const none = cpuPercent(c, d, seconds);
    const rss = Math.max(b.rssKiB, d.rssKiB) / 1024;
    const p50 = pct(ready, 50);
    const e95 = pct(lat, 95);
    return [
      { what: `\`mam ui\`: page ready (navigation → first full render in chromium), ${SESSIONS} sessions / ${JOBS} jobs (median / p90)`, target: "≤ 300 ms", measured: medP90(ready), ok: p50 <= 300 },
      { what: "`mam ui`: event appended to a journal → visible on the page (p50 / p95 of 40)", target: "≤ 500 ms p95", measured: `${ms(pct(lat, 50))} / ${ms(e95)}`, ok: e95 <= 500 },
      { what: `\`mam ui\` server: RSS (max) / CPU over ${seconds} s idle with a page open (LIVE every 2 s) / with none`, target: "≤ 80 MiB, ≤ 1 % of one core", measured: `${rss.toFixed(1)} MiB / ${openCpu.toFixed(2)} % / ${none.toFixed(2)} %`, ok: rss <= 80 && openCpu <= 1 && none <= 1 },
    ];
  } finally {
    await open.close();
    rmSync(root, { recursive: true, force: true });
  }
}
