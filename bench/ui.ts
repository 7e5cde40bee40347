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
  const chromium = process.env.MAM_CHROMIUM || Bun.which("chromium") || Bun.which("chromium-browser");
  const rowsOf = (m: string): Row[] => [{ what: "`mam ui`: page ready, event → page, RSS, idle CPU", target: "-", measured: m, ok: null }];
  if (!chromium) return rowsOf("not measured: chromium is not installed (apt-get install -y chromium)");
  const root = mkdtempSync(join(tmpdir(), "mam-bench-ui-"));
  const ws = join(root, "ws");
  mkdirSync(join(ws, ".mam"), { recursive: true });
  writeFileSync(join(ws, ".mam", "agent-sessions.yaml"), tmuxRegistry(SESSIONS, "ui-bench-none", ws));
  const seconds = secondsFrom("BENCH_UI_SECONDS", 20);
  const ids = await seedJobs(ws);
  const env = { ...baseEnv(root), TMUX_TMPDIR: root, MAM_NO_SUBSCRIBER_DAEMON: "1" };
  const ui = Bun.spawn([bin, "ui", "--workspace", ws], { env, stdout: "pipe", stderr: "ignore", stdin: "ignore" });
  const { default: puppeteer } = await import("puppeteer-core");
  const browser = await puppeteer.launch({ executablePath: chromium, headless: true, userDataDir: join(root, "chromium"), args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"] });
  try {
    const reader = (ui.stdout as ReadableStream<Uint8Array>).getReader();
    let buf = "";
    while (!buf.includes("\n")) {
      const r = await reader.read();
      if (r.done) throw new Error(`mam ui exited ${await ui.exited}`);
      buf += new TextDecoder().decode(r.value);
    }
    const url = buf.split("\n")[0]!.trim();

    // (a) page ready, a fresh page each time (chromium itself warm)
    const ready: number[] = [];
    for (let i = 0; i < 12; i++) {
      const page = await browser.newPage();
      await page.goto(url, { waitUntil: "domcontentloaded" });
      // the page marks mam:painted two animation frames after it drew the first full state
      await page.waitForFunction(`performance.getEntriesByName("mam:painted").length > 0`, { timeout: 30_000, polling: 10 });
      const t = (await page.evaluate(`performance.getEntriesByName("mam:painted")[0].startTime`)) as number; // since navigation start
      const shown = (await page.$$eval("[data-job]", (xs) => xs.length)) as number;
      if (shown !== JOBS) throw new Error(`the page shows ${shown} jobs, not ${JOBS}`);
      if (i >= 2) ready.push(t);
      await page.close();
    }

    // (b) event → page
    const page = await browser.newPage();
    await page.goto(url);
    await page.waitForSelector("body[data-ready='1']");
    const lat: number[] = [];
    const id = ids[1]!; // a single job still running
    for (let i = 0; i < 40; i++) {
      const n = ((await page.$eval(`[data-job='${id}']`, (e) => Number((e as unknown as { dataset: { events: string } }).dataset.events))) as number) + 1;
      // a page-side function (a string: this file is not compiled with the DOM's types)
      const seen = page.waitForFunction(`(() => { const e = document.querySelector("[data-job='${id}']"); return e && Number(e.dataset.events) >= ${n} ? Date.now() : false; })()`, { polling: "mutation", timeout: 10_000 });
      const t0 = Date.now();
      await appendEvent(ws, id, { event: "progress", source: "ui-bench-1", detail: `step ${i}` });
      lat.push(((await (await seen).jsonValue()) as number) - t0);
      await Bun.sleep(50);
    }

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
    const open = cpuPercent(a, b, seconds);
    const none = cpuPercent(c, d, seconds);
    const rss = Math.max(b.rssKiB, d.rssKiB) / 1024;
    const p50 = pct(ready, 50);
    const e95 = pct(lat, 95);
    return [
      { what: `\`mam ui\`: page ready (navigation → first full render in chromium), ${SESSIONS} sessions / ${JOBS} jobs (median / p90)`, target: "≤ 300 ms", measured: medP90(ready), ok: p50 <= 300 },
      { what: "`mam ui`: event appended to a journal → visible on the page (p50 / p95 of 40)", target: "≤ 500 ms p95", measured: `${ms(pct(lat, 50))} / ${ms(e95)}`, ok: e95 <= 500 },
      { what: `\`mam ui\` server: RSS (max) / CPU over ${seconds} s idle with a page open (LIVE every 2 s) / with none`, target: "≤ 80 MiB, ≤ 1 % of one core", measured: `${rss.toFixed(1)} MiB / ${open.toFixed(2)} % / ${none.toFixed(2)} %`, ok: rss <= 80 && open <= 1 && none <= 1 },
    ];
  } finally {
    await browser.close().catch(() => {});
    ui.kill("SIGTERM");
    await ui.exited;
    rmSync(root, { recursive: true, force: true });
  }
}
