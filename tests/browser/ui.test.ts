// `mam ui` in a real browser (Debian's chromium via puppeteer-core): the page loads, a job
// submitted from the CLI appears and its events arrive live, a blocked agent shows as blocked (a
// claude look-alike drawing claude's permission dialog in a real tmux), the token and the Host
// are required, actions work only with --allow-actions, the demo's loop job reads on its
// timeline, and what a job and an agent cost shows with the team's spend per hour. Screenshots of the main views go to tests/browser/artifacts/ (git-ignored).
// Run by `npm run test:browser`, not by `npm test`.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { readJournal } from "../../lib/jobs/store.ts";
import { CLAUDE_LOOKALIKE } from "../helpers/agent-screens.ts";
import { CHROMIUM, launchBrowser, rawGet, type RunningUi, snap, startUiProcess } from "../helpers/browser.ts";
import { ROOT, run, runMam } from "../helpers/mam.ts";
import { killAndWait } from "../helpers/daemon.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName, writeScript } from "../helpers/tmux.ts";

if (!CHROMIUM) console.error("\n*** SKIPPING the browser tests: chromium is not installed (apt-get install -y chromium, or MAM_CHROMIUM=/path) ***\n");
if (!TMUX_BIN) console.error("\n*** SKIPPING the browser tests: tmux is not installed ***\n");
const it = CHROMIUM && TMUX_BIN ? test : test.skip;

interface World {
  sb: Sandbox;
  server: string;
  env: Record<string, string>;
  browser: Browser;
  mam(args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  keys(session: string, text: string): Promise<void>;
  create(name: string): Promise<void>;
  ui(args?: string[]): Promise<RunningUi>;
  open(ui: RunningUi): Promise<Page>;
}

const uis: RunningUi[] = [];

async function withWorld(fn: (w: World) => Promise<void>): Promise<void> {
  const sb = makeSandbox("mam-ui-");
  writeScript(sb.bin, "claude", CLAUDE_LOOKALIKE);
  const server = tmuxServerName("mamui");
  const env = sb.with({ TMUX_TMPDIR: sb.root, MAM_AGENT_SETTLE_S: "0.3", MAM_MUX: "tmux", MAM_UI_LIVE_MS: "300", TMPDIR: sb.root });
  const browser = await launchBrowser(sb);
  const w: World = {
    sb,
    server,
    env,
    browser,
    mam: (args) => runMam(args, { env, cwd: sb.ws, timeoutMs: 60_000 }),
    async keys(session, text) {
      expect((await run([TMUX_BIN!, "-L", server, "send-keys", "-t", `=${session}:`, "-l", text], { env })).code).toBe(0);
      await run([TMUX_BIN!, "-L", server, "send-keys", "-t", `=${session}:`, "Enter"], { env });
    },
    async create(name) {
      const r = await w.mam(["create", "--agent", "claude", "--role", "worker", "--session", name, "--tmux-server", server, "--no-onboard"]);
      if (r.code !== 0) throw new Error(`create ${name} exited ${r.code}: ${r.stdout}${r.stderr}`);
    },
    async ui(args = []) {
      const u = await startUiProcess(sb, env, args);
      uis.push(u);
      return u;
    },
    async open(ui) {
      const page = await browser.newPage();
      const res = await page.goto(ui.url);
      expect(res?.status()).toBe(200);
      await page.waitForSelector("body[data-ready='1']", { timeout: 15_000 });
      return page;
    },
  };
  try {
    await fn(w);
  } finally {
    for (const u of uis.splice(0)) await u.stop("SIGKILL");
    await browser.close().catch(() => {});
    await killTmuxServer(server, env, sb.root);
    await sb.cleanup();
  }
}

/** a page function: the open screen shows this text */
const screenHas = (t: string) => `document.getElementById("screen-text")?.textContent?.includes(${JSON.stringify(t)})`;
const text = (page: Page, sel: string) => page.$eval(sel, (e) => (e as unknown as { innerText: string }).innerText);

beforeAll(() => mkdirSync(join(ROOT, "tests", "browser", "artifacts"), { recursive: true }));
afterAll(async () => {
  for (const u of uis.splice(0)) await u.stop("SIGKILL");
});

it("the page: the team, a CLI job's events arriving live, a blocked agent on top with its reason, its screen, the job's journal", async () => {
  await withWorld(async (w) => {
    await w.create("alpha");
    await w.create("bravo");
    const ui = await w.ui();
    const page = await w.open(ui);
    await page.waitForSelector("tr[data-session='alpha'][data-live='idle']", { timeout: 15_000 });
    await page.waitForSelector("tr[data-session='bravo'][data-live='idle']", { timeout: 15_000 });
    expect(await text(page, "#mode")).toBe("read-only");
    expect(await page.$$("[data-act]")).toHaveLength(0); // read-only: no action buttons

    // a job submitted from the CLI appears, and each event shows up as it is journalled
    const sub = await w.mam(["job", "submit", "--to", "bravo", "--from", "lead", "--prompt", "tidy the README"]);
    expect(sub.code).toBe(0);
    const id = sub.stdout.trim();
    await page.waitForSelector(`[data-job='${id}'][data-status='pending']`, { timeout: 10_000 });
    // jobs for bravo while it has one: they wait their turn, each showing its place in line
    const waits: string[] = [];
    for (const p of ["then this", "and this"]) waits.push((await w.mam(["job", "submit", "--to", "bravo", "--prompt", p])).stdout.trim());
    for (const [i, q] of waits.entries()) {
      await page.waitForSelector(`[data-job='${q}'][data-status='queued']`, { timeout: 10_000 });
      expect(await text(page, `[data-job='${q}'] .pill`)).toBe(`queued #${i + 1}`);
    }
    // a job after the first one: it waits with no place in a line, and says what it runs after
    const after = (await w.mam(["job", "submit", "--to", "bravo", "--after", id, "--prompt", "once tidied"])).stdout.trim();
    await page.waitForSelector(`[data-job='${after}'][data-status='queued'] [data-after='${id}']`, { timeout: 10_000 });
    expect(await text(page, `[data-job='${after}'] .pill`)).toBe("queued");
    expect(await text(page, `[data-job='${after}'] .after`)).toBe(`after ${id}`);
    await w.mam(["job", "cancel", after]);
    const seen: number[] = [];
    for (const [n, args] of [
      [1, ["started", "--detail", "reading the README"]],
      [2, ["progress", "--detail", "half way"]],
      [3, ["completed", "--detail", "README tidied"]],
    ] as const) {
      const r = await w.mam(["job", "event", id, ...args, "--source", "bravo"]);
      expect(r.code).toBe(0);
      const t0 = performance.now();
      await page.waitForSelector(`[data-job='${id}'][data-events='${n}'] g[data-seq='${n}']`, { timeout: 10_000 });
      seen.push(Math.round(performance.now() - t0));
    }
    await page.waitForSelector(`[data-job='${id}'][data-status='completed']`, { timeout: 5_000 });
    expect(await text(page, "#daemon table.last-events tr")).toContain("README tidied"); // the newest event first
    console.error(`  event → page: ${seen.join(", ")} ms (after the CLI exited)`);
    // the filter hides other statuses
    await page.click("[data-filter='running']");
    expect(await page.$(`[data-job='${id}']`)).toBeNull();
    await page.click("[data-filter='completed']");
    expect(await page.$(`[data-job='${id}']`)).not.toBeNull();
    await page.click("[data-filter='all']");

    // alpha shows claude's permission dialog: blocked, on top, with what it waits for
    await w.keys("alpha", "ask touch hello.txt");
    await page.waitForSelector("tr[data-session='alpha'][data-live='blocked']", { timeout: 15_000 });
    const first = await page.$eval("#team tbody tr", (e) => (e as unknown as { dataset: Record<string, string> }).dataset.session);
    expect(first).toBe("alpha");
    expect(await text(page, "tr[data-session='alpha'] + tr.reason-row")).toContain("touch hello.txt");
    // why it is not working, beside LIVE; and on top, what needs you now with its command
    expect(await text(page, "tr[data-session='alpha'] [data-why='blocked']")).toBe("blocked on a permission prompt: touch hello.txt");
    expect(await text(page, "tr[data-session='bravo'] [data-why='idle']")).toBe("at its prompt, no job");
    await page.waitForSelector("#needs li[data-need='permission'][data-name='alpha']", { timeout: 10_000 });
    expect(await text(page, "#needs li[data-need='permission'][data-name='alpha']")).toContain("→ mam approve alpha --fingerprint ");
    expect(await page.$$eval("#needs li", (l) => l.length)).toBe(1);
    await w.keys("bravo", "work on it");
    await page.waitForSelector("tr[data-session='bravo'][data-live='working']", { timeout: 15_000 });
    await snap(page, "team-and-jobs");

    // the agent's screen, refreshed while open
    await page.click("[data-screen='alpha']");
    await page.waitForFunction(screenHas("Do you want to proceed?"), { timeout: 10_000 });
    await snap(page, "screen");
    // the user answers in the pane (the dialog takes one key, as claude's does), then types
    await w.keys("alpha", "1");
    await w.keys("alpha", "all done here");
    await page.waitForFunction(screenHas("all done here"), { timeout: 10_000 });
    // answered: nothing needs you any more
    await page.waitForFunction(`!document.getElementById("needs")`, { timeout: 10_000 });
    await page.click("#panel-close");

    // the job's detail: its journal
    await page.click(`[data-job='${id}'] .job-head`);
    await page.waitForSelector("#panel-body table.journal tr[data-seq='3']", { timeout: 5_000 });
    expect(await text(page, "#panel-body")).toContain("README tidied");
    await snap(page, "job-detail");
    await page.click("#panel-close");

    // a damaged job file: a red line on top naming it, the rest of the page still there
    const sub2 = await w.mam(["job", "submit", "--to", "bravo", "--prompt", "second"]);
    const id2 = sub2.stdout.trim();
    await page.waitForSelector(`[data-job='${id2}']`, { timeout: 10_000 });
    writeFileSync(join(w.sb.ws, ".mam", "jobs", `${id2}.json`), "{damaged");
    await page.waitForSelector("#problems:not([hidden])", { timeout: 10_000 });
    expect(await text(page, "#problems")).toContain(`${id2}.json is not valid JSON`);
    expect(await page.$(`[data-job='${id}'][data-status='completed']`)).not.toBeNull();
    await page.close();
    expect(await ui.stop("SIGINT")).toBe(130);
  });
}, 120_000);

it("the token and the Host are required: no token, a wrong one, another Host are refused", async () => {
  await withWorld(async (w) => {
    const ui = await w.ui();
    const base = `http://127.0.0.1:${ui.port}`;
    expect((await fetch(`${base}/`)).status).toBe(403);
    expect((await fetch(`${base}/?token=${ui.token.slice(0, -2)}`)).status).toBe(403);
    expect((await fetch(`${base}/api/state`)).status).toBe(403);
    expect((await fetch(`${base}/api/events?token=nope`)).status).toBe(403);
    expect((await fetch(`${base}/api/state?token=${ui.token}`)).status).toBe(200);
    expect(await rawGet(ui.port, `/?token=${ui.token}`, `127.0.0.1:${ui.port}`)).toBe(200);
    expect(await rawGet(ui.port, `/?token=${ui.token}`, `localhost:${ui.port}`)).toBe(200);
    // DNS rebinding: a page on attacker.example that resolves to 127.0.0.1
    expect(await rawGet(ui.port, `/?token=${ui.token}`, `attacker.example:${ui.port}`)).toBe(421);
    expect(await rawGet(ui.port, `/api/state?token=${ui.token}`, `127.0.0.1`)).toBe(421);
    // in the browser too
    const page = await w.browser.newPage();
    const res = await page.goto(`${base}/?token=wrong`);
    expect(res?.status()).toBe(403);
    expect(await page.content()).not.toContain("app.js");
    await page.close();
    expect(await ui.stop("SIGTERM")).toBe(143);

    // --open hands xdg-open (here a stand-in that writes its argument down) the path of a 0600
    // page that forwards to the URL: the token never enters another process's argv
    const opened = join(w.sb.root, "opened.txt");
    writeScript(w.sb.bin, "xdg-open", `#!/usr/bin/env bash\nprintf '%s' "$1" > '${opened}'\n`);
    const o = await w.ui(["--open"]);
    expect(await waitFor(() => existsSync(opened) && readFileSync(opened, "utf8") !== "", 10_000)).toBe(true);
    const arg = readFileSync(opened, "utf8");
    expect(arg).not.toContain(o.token);
    const forward = arg.replace(/^file:\/\//, "");
    expect(statSync(forward).mode & 0o777).toBe(0o600);
    expect(readFileSync(forward, "utf8")).toContain(o.url);
    // the browser lands on the dashboard through it
    const fwdPage = await w.browser.newPage();
    await fwdPage.goto(`file://${forward}`);
    expect(await waitFor(async () => fwdPage.url().startsWith(`http://127.0.0.1:${o.port}/`), 10_000)).toBe(true);
    await fwdPage.close();
    expect(await o.stop("SIGINT")).toBe(130);
  });
}, 60_000);

it("actions only with --allow-actions: refused (403) and hidden without it; with it, stop / cancel / send each ask first and act", async () => {
  await withWorld(async (w) => {
    await w.create("alpha");
    const sub = await w.mam(["job", "submit", "--to", "alpha", "--prompt", "count to three"]);
    const id = sub.stdout.trim();
    const registryStatus = async () => JSON.parse((await w.mam(["status", "--json"])).stdout).sessions.find((s: { name: string }) => s.name === "alpha").status as string;

    // read-only: the server refuses, nothing changes
    const ro = await w.ui();
    const post = (u: RunningUi, body: object) => fetch(`http://127.0.0.1:${u.port}/api/action?token=${u.token}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const r1 = await post(ro, { action: "session.stop", input: { name: "alpha" } });
    expect(r1.status).toBe(403);
    expect(await r1.text()).toContain("--allow-actions");
    expect((await post(ro, { action: "job.cancel", input: { job_id: id } })).status).toBe(403);
    expect((await fetch(`http://127.0.0.1:${ro.port}/api/action?token=${ro.token}`)).status).toBe(405);
    expect(await registryStatus()).toBe("running");
    expect((await w.mam(["job", "status", id, "--json"])).stdout).toContain('"status": "pending"');
    const roPage = await w.open(ro);
    expect(await roPage.$$("[data-act]")).toHaveLength(0);
    await roPage.close();
    expect(await ro.stop()).toBe(143);

    // with --allow-actions
    const ui = await w.ui(["--allow-actions"]);
    // a cross-site form post is refused even with the token
    const xs = await fetch(`http://127.0.0.1:${ui.port}/api/action?token=${ui.token}`, { method: "POST", headers: { "Content-Type": "application/json", Origin: "http://attacker.example" }, body: '{"action":"session.stop","input":{"name":"alpha"}}' });
    expect(xs.status).toBe(403);
    // bad input: a clear error, nothing done
    const bad = await post(ui, { action: "session.send", input: { name: "alpha", text: "two\nlines" } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toContain("control character");
    const page = await w.open(ui);
    expect(await text(page, "#mode")).toBe("actions on");
    let answer = false;
    const questions: string[] = [];
    page.on("dialog", (d) => {
      questions.push(d.message());
      void (answer ? d.accept() : d.dismiss());
    });

    // send a line: the agent draws its permission dialog → blocked
    await page.click("[data-screen='alpha']");
    await page.waitForSelector("form[data-send='alpha'] input");
    await page.type("form[data-send='alpha'] input", "ask rm -rf build");
    answer = true;
    await page.click("form[data-send='alpha'] button");
    await page.waitForFunction(screenHas("rm -rf build"), { timeout: 10_000 });
    await page.waitForSelector("tr[data-session='alpha'][data-live='blocked']", { timeout: 10_000 });
    await snap(page, "actions-screen-send");
    await page.click("#panel-close");

    // cancel the job: dismissed first (nothing happens), then accepted
    await page.click(`[data-job='${id}'] .job-head`);
    await page.waitForSelector(`#panel-body [data-act='cancel']`);
    answer = false;
    await page.click(`#panel-body [data-act='cancel']`);
    await Bun.sleep(300);
    expect((await w.mam(["job", "status", id, "--json"])).stdout).toContain('"status": "pending"');
    answer = true;
    await page.click(`#panel-body [data-act='cancel']`);
    await page.waitForSelector(`[data-job='${id}'][data-status='cancelled']`, { timeout: 10_000 });
    const logs = await w.mam(["job", "logs", id]);
    expect(logs.stdout).toContain("cancelled  mam: cancelled by mam job cancel");
    await page.click("#panel-close");

    // the cancel notice was not typed into alpha's dialog (it would have answered it): alpha
    // still waits; the user answers it in the pane, and alpha goes idle
    expect(await w.mam(["status", "--json"]).then((r) => JSON.parse(r.stdout).sessions.find((x: { name: string }) => x.name === "alpha").live)).toBe("blocked");
    await w.keys("alpha", "1");
    // stop the session: graceful, through the same code as mam stop (the table holds still under the mouse once alpha is idle)
    await page.waitForSelector("tr[data-session='alpha'][data-live='idle']", { timeout: 10_000 });
    await page.click("tr[data-session='alpha'] [data-act='stop']");
    await waitFor(async () => (await registryStatus()) !== "running", 15_000, 200);
    expect(await registryStatus()).toBe("stopped");
    await page.waitForSelector("tr[data-session='alpha'] [data-act='resume']", { timeout: 10_000 });
    // resume: the look-alike keeps no conversation, so mam resume's own error shows, nothing changes
    await page.click("tr[data-session='alpha'] [data-act='resume']");
    await page.waitForSelector("#toast.bad:not([hidden])", { timeout: 15_000 });
    expect(await text(page, "#toast")).toMatch(/^ERROR: .*alpha/);
    expect(await registryStatus()).toBe("stopped");
    expect(questions.some((q) => q.startsWith("Resume alpha?"))).toBe(true);
    expect(questions.some((q) => q.startsWith("Stop alpha?"))).toBe(true);
    expect(questions.some((q) => q.startsWith("Cancel job"))).toBe(true);
    expect(questions.some((q) => q.includes("ask rm -rf build"))).toBe(true);
    await page.close();
    expect(await ui.stop()).toBe(143);
  });
}, 120_000);

it("approve once / deny on a blocked agent: its question and choices shown, buttons only with --allow-actions, the dialog the page shows or nothing, journalled via ui; a notification's #agent= link opens the agent", async () => {
  await withWorld(async (w) => {
    await w.create("alpha");
    const id = (await w.mam(["job", "submit", "--to", "alpha", "--prompt", "build it"])).stdout.trim();
    expect((await w.mam(["job", "event", id, "started", "--detail", "go", "--source", "alpha"])).code).toBe(0);
    const journal = async () => JSON.parse((await w.mam(["job", "logs", id, "--json"])).stdout).events as { event: string; data: Record<string, any> }[];
    await w.keys("alpha", "ask touch hello.txt");

    // read-only: the question, its choices and the command, no buttons
    const ro = await w.ui();
    const roPage = await w.open(ro);
    await roPage.waitForSelector(".question[data-question='alpha']", { timeout: 15_000 });
    const shown = await text(roPage, ".question[data-question='alpha']");
    expect(shown).toContain("alpha asks: Bash command — Do you want to proceed?");
    expect(shown).toContain("touch hello.txt");
    expect(shown).toContain("don't ask again");
    expect(shown).toContain("(always: only mam approve --choice 2)");
    const fp = await roPage.$eval(".question[data-question='alpha']", (e) => (e as unknown as { dataset: Record<string, string> }).dataset.fingerprint!);
    expect(fp).toMatch(/^[0-9a-f]{16}$/);
    expect(shown).toContain(`mam approve alpha --fingerprint ${fp}`);
    expect(await roPage.$$("[data-act='approve'],[data-act='deny']")).toHaveLength(0);
    await snap(roPage, "approve-read-only");
    await roPage.close();
    const roPost = await fetch(`http://127.0.0.1:${ro.port}/api/action?token=${ro.token}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ action: "session.approve", input: { target: "alpha", fingerprint: fp } }) });
    expect(roPost.status).toBe(403);
    expect(await ro.stop()).toBe(143);

    const ui = await w.ui(["--allow-actions"]);
    const post = (body: object) => fetch(`http://127.0.0.1:${ui.port}/api/action?token=${ui.token}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    // the page names the dialog it answers, and never picks a choice itself
    const noFp = await post({ action: "session.approve", input: { target: "alpha" } });
    expect(noFp.status).toBe(400);
    expect(((await noFp.json()) as { error: string }).error).toContain("the session.approve action needs fingerprint from the page");
    const withChoice = await post({ action: "session.approve", input: { target: "alpha", fingerprint: fp, choice: 2 } });
    expect(withChoice.status).toBe(400);
    expect(((await withChoice.json()) as { error: string }).error).toContain("takes only target, fingerprint, deny (not choice)");
    const stale = await post({ action: "session.approve", input: { target: "alpha", fingerprint: "0123456789abcdef" } });
    expect(stale.status).toBe(409);
    expect(((await stale.json()) as { error: string }).error).toContain(`to answer this one: fingerprint "${fp}"`);

    const page = await w.open(ui);
    let answer = false;
    const questions: string[] = [];
    page.on("dialog", (d) => {
      questions.push(d.message());
      void (answer ? d.accept() : d.dismiss());
    });
    await page.waitForSelector("tr.reason-row [data-act='approve'][data-name='alpha']", { timeout: 15_000 });
    expect(await page.$("tr.reason-row [data-act='deny'][data-name='alpha']")).not.toBeNull();
    await snap(page, "approve-buttons");
    // asked first: dismissed, nothing pressed
    await page.click("[data-act='approve'][data-name='alpha']");
    await Bun.sleep(500);
    expect((await journal()).some((e) => e.event === "approved")).toBe(false);
    expect(questions[0]).toContain("Approve once: alpha's dialog?");
    expect(questions[0]).toContain("Bash command: touch hello.txt");
    answer = true;
    await page.click("[data-act='approve'][data-name='alpha']");
    await page.waitForSelector("tr[data-session='alpha'][data-live='idle']", { timeout: 15_000 });
    await page.waitForFunction(`document.getElementById("toast")?.textContent?.startsWith("approved alpha's dialog")`, { timeout: 10_000 });
    const ap = (await journal()).find((e) => e.event === "approved")!;
    expect(ap.data).toMatchObject({ via: "ui", choice: { n: 1, role: "yes" }, fingerprint: fp });

    // a second dialog, denied from the page: the agent is told
    await w.keys("alpha", "ask rm -rf /tmp/x");
    await page.waitForSelector("tr.reason-row [data-act='deny'][data-name='alpha']", { timeout: 15_000 });
    await page.waitForFunction(`document.querySelector(".question[data-question='alpha'] pre.subject")?.textContent === "rm -rf /tmp/x"`, { timeout: 10_000 });
    await page.click("[data-act='deny'][data-name='alpha']");
    await page.waitForFunction(`document.getElementById("toast")?.textContent?.startsWith("denied alpha's dialog")`, { timeout: 20_000 });
    expect(await text(page, "#toast")).toContain("told alpha that the answer is no");
    const de = (await journal()).find((e) => e.event === "denied")!;
    expect(de.data).toMatchObject({ via: "ui", choice: { n: 3, role: "no" } });
    expect(questions.at(-1)).toContain("Deny: alpha's dialog?");
    await page.close();

    // a notification's link: the forwarding page with #agent=alpha opens the dashboard on alpha's screen
    const note = JSON.parse(readFileSync(join(w.sb.ws, ".mam", "ui.json"), "utf8")) as { page: string; port: number };
    expect(note.port).toBe(ui.port);
    const linked = await w.browser.newPage();
    await linked.goto(`file://${note.page}#agent=alpha`);
    await linked.waitForSelector("body[data-ready='1']", { timeout: 15_000 });
    expect(linked.url()).toContain("#agent=alpha");
    await linked.waitForFunction(`document.getElementById("screen-text")?.dataset.screenOf === "alpha"`, { timeout: 10_000 });
    await linked.close();
    expect(await ui.stop()).toBe(143);
    expect(existsSync(note.page)).toBe(false);
  });
}, 120_000);

it("mam demo --keep prints the mam ui command; the demo's loop job reads on its timeline (worker and reviewer lanes, iteration 2 marked)", async () => {
  await withWorld(async (w) => {
    const demo = await runMam(["demo", "--keep"], { env: w.env, cwd: w.sb.ws, timeoutMs: 120_000 });
    expect(demo.code).toBe(0);
    const line = demo.stdout.split("\n").find((l) => l.trim().startsWith("mam ui --workspace "));
    expect(line).toBeDefined();
    const ws = /mam ui --workspace (\S+)/.exec(line!)![1]!;
    const id = /^job ([0-9a-f]{8}):/m.exec(demo.stdout)![1]!;
    try {
      const ui = await startUiProcess(w.sb, w.env, [], ws);
      uis.push(ui);
      const page = await w.open(ui);
      const sel = `[data-job='${id}'][data-status='completed']`;
      await page.waitForSelector(sel, { timeout: 10_000 });
      const lanes = await page.$$eval(`${sel} .tl .lane-label`, (xs) => xs.map((x) => x.textContent));
      expect(lanes).toEqual(["worker", "reviewer", "mam"]);
      expect(await page.$$eval(`${sel} svg .mark-label`, (xs) => xs.map((x) => x.textContent))).toContain("iteration 2");
      expect((await page.$$(`${sel} svg g[data-seq]`)).length).toBeGreaterThanOrEqual(6);
      await page.waitForSelector("tr[data-session='demo-worker']");
      await page.waitForSelector("#daemon [data-daemon-mode='mqtt']", { timeout: 10_000 });
      await page.setViewport({ width: 1400, height: 900 });
      const shot = await snap(page, "demo");
      if (process.env.MAM_UPDATE_DOCS_IMG === "1") copyFileSync(shot, join(ROOT, "docs", "img", "ui.png"));
      await page.click(`${sel} .job-head`);
      await page.waitForSelector("#panel-body table.journal");
      expect(await text(page, "#panel-body")).toContain("PASS");
      await snap(page, "demo-job");
      await page.close();
      expect(await ui.stop()).toBe(143);
    } finally {
      await runMam(["daemon", "stop", "--workspace", ws], { env: w.env, cwd: w.sb.ws });
      const srv = /tmux -L (\S+) kill-server/.exec(demo.stdout)?.[1];
      if (srv) await killTmuxServer(srv, w.env);
      // the demo's detached broker, as its clean-up line says
      const broker = Number(/; kill (\d+);/.exec(demo.stdout)?.[1]);
      if (broker) await killAndWait([broker]);
    }
  });
}, 180_000);

it("on herdr (the fake herdr and its fake claude): LIVE from herdr's agent status, blocked on top, the screen from pane read", async () => {
  const { installFakeAgents, startFakeHerdr } = await import("../helpers/herdr.ts");
  const { anchoredPids } = await import("../helpers/sandbox.ts");
  const sb = makeSandbox("mam-uih-");
  installFakeAgents(sb.bin);
  const h = await startFakeHerdr(sb, { session: "mam" });
  const env = sb.with({ TMPDIR: sb.root, MAM_UI_LIVE_MS: "300" });
  const browser = await launchBrowser(sb);
  try {
    for (const name of ["hx", "hy"]) {
      const r = await runMam(["create", "--agent", "claude", "--herdr-session", "mam", "--session", name, "--no-onboard"], { env, cwd: sb.ws, timeoutMs: 60_000 });
      expect(r.code).toBe(0);
    }
    const ui = await startUiProcess(sb, env);
    uis.push(ui);
    const page = await browser.newPage();
    await page.goto(ui.url);
    await page.waitForSelector("tr[data-session='hx'][data-live='idle']", { timeout: 15_000 });
    await page.waitForSelector("tr[data-session='hy'][data-live='idle']", { timeout: 15_000 });
    expect(await h.herdr(["agent", "prompt", "hy", "please FAKE_BLOCK now"]).then((r) => r.code)).toBe(0);
    await page.waitForSelector("tr[data-session='hy'][data-live='blocked']", { timeout: 15_000 });
    expect(await page.$eval("#team tbody tr", (e) => (e as unknown as { dataset: Record<string, string> }).dataset.session)).toBe("hy");
    await page.click("[data-screen='hy']");
    await page.waitForFunction(screenHas("Do you want to proceed?"), { timeout: 10_000 });
    await snap(page, "herdr-screen");
    await page.close();
    expect(await ui.stop()).toBe(143);
  } finally {
    await browser.close().catch(() => {});
    await h.stop();
    await waitFor(() => anchoredPids(sb.root).length === 0, 5000);
    await sb.cleanup();
  }
}, 90_000);

it("what it costs (docs/cost.md): a job's cost and budget, its cost in its panel, each agent's COST cell, the team's spend per hour", async () => {
  const { installFakeAgents, startFakeHerdr } = await import("../helpers/herdr.ts");
  const { anchoredPids } = await import("../helpers/sandbox.ts");
  const sb = makeSandbox("mam-uic-");
  installFakeAgents(sb.bin);
  // the fake claude writes each mam text and one answer with this usage into its transcript, as claude does
  const h = await startFakeHerdr(sb, { session: "mam", env: { FAKE_AGENT_USAGE: "1000,200,30,4000,claude-sonnet-4-5" } });
  const env = sb.with({ TMPDIR: sb.root, MAM_UI_LIVE_MS: "300", MAM_NO_SUBSCRIBER_DAEMON: undefined, RECONCILE_POLL_INTERVAL: "1" });
  const mam = (args: string[]) => runMam(args, { env, cwd: sb.ws, timeoutMs: 60_000 });
  const browser = await launchBrowser(sb);
  try {
    expect((await mam(["daemon", "ensure"])).code).toBe(0);
    expect((await mam(["create", "--agent", "claude", "--herdr-session", "mam", "--session", "cw", "--no-onboard"])).code).toBe(0);
    const sub = await mam(["job", "submit", "--to", "cw", "--budget-usd", "3", "--prompt", "tidy the README"]);
    expect(sub.code, sub.stderr).toBe(0);
    const id = sub.stdout.trim();
    // $3 input, $15 output, $3.75 cache write, $0.30 cache read per million: $0.0073
    const ui = await startUiProcess(sb, env);
    uis.push(ui);
    const page = await browser.newPage();
    await page.goto(ui.url);
    await page.waitForFunction(`document.querySelector("[data-job='${id}'] .cost")?.textContent === "$0.0073"`, { timeout: 20_000 });
    expect(await text(page, `[data-job='${id}'] .job-head`)).toContain("of $3.00");
    expect(await page.$eval(`[data-job='${id}'] .cost`, (e) => e.getAttribute("title"))).toBe("5230 tokens: input 1000, output 200, cache write 30, cache read 4000");
    // the agent: this job · today · in all
    await page.waitForFunction(`document.querySelector("tr[data-session='cw'] td.spent")?.innerText === "$0.0073 · $0.0073 · $0.0073"`, { timeout: 10_000 });
    // the team's spend per hour: the last 50 to 60 minutes, scaled to an hour
    const count = await text(page, "#team-count");
    const perHour = Number(/^1 session · \$(\d+\.\d+)\/hour$/.exec(count)?.[1]);
    // ($0.0073125 × 60/60 to × 60/50, to 4 decimals)
    expect(perHour, count).toBeGreaterThanOrEqual(0.0073);
    expect(perHour, count).toBeLessThanOrEqual(0.0088);
    // its panel: the cost with its tokens by kind
    await page.click(`[data-job='${id}'] .job-head`);
    await page.waitForSelector("#panel-body .usage");
    expect(await text(page, "#panel-body .usage")).toBe("cost $0.0073 5230 tokens: input 1000, output 200, cache write 30, cache read 4000 of $3.00"); // one agent, no rounds: a single job
    await snap(page, "cost");
    await page.close();
    expect(await ui.stop()).toBe(143);
  } finally {
    await mam(["daemon", "stop"]);
    await browser.close().catch(() => {});
    await h.stop();
    await waitFor(() => anchoredPids(sb.root).length === 0, 5000);
    await sb.cleanup();
  }
}, 90_000);

it("a long job list is shown a page at a time: 25 jobs → 20 and 'show 5 more', which shows the rest (newcomer F16)", async () => {
  await withWorld(async (w) => {
    const { registerJob } = await import("../../lib/jobs/store.ts");
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) {
      const r = await registerJob(w.sb.ws, { agent_session: "worker", agent: "claude", prompt: `job ${i}`, delegator: null, type: "single", reviewer_session: null, max_iterations: null, timeout_sec: 3600, idle_timeout_sec: 120, expected_artifacts: [], topic_prefix_base: "mam/jobs" });
      ids.push(r.job_id);
    }
    const page = await w.open(await w.ui());
    await page.waitForFunction(`document.querySelectorAll("#jobs [data-job]").length === 20`, { timeout: 15_000 });
    expect(await text(page, "#jobs-count")).toBe("25 jobs");
    expect(await text(page, "#jobs [data-more-jobs]")).toBe("show 5 more");
    await page.click("#jobs [data-more-jobs]");
    await page.waitForFunction(`document.querySelectorAll("#jobs [data-job]").length === 25`, { timeout: 5_000 });
    expect(await page.$("#jobs [data-more-jobs]")).toBeNull();
    const shown = await page.$$eval("#jobs [data-job]", (es) => es.map((e) => e.getAttribute("data-job")));
    expect(new Set(shown)).toEqual(new Set(ids));
    await page.close();
  });
}, 120_000);

it("the workspace's schedules are on the page: who, how often, when next, its runs (newcomer F16)", async () => {
  await withWorld(async (w) => {
    await w.create("wrk");
    const sub = await w.mam(["job", "submit", "--to", "wrk", "--every", "1h", "--prompt", "tidy the changelog"]);
    expect(sub.code, sub.stderr).toBe(0);
    const sid = sub.stdout.trim();
    expect(sid).toMatch(/^s[0-9a-f]{7}$/);
    const page = await w.open(await w.ui());
    await page.waitForSelector(`#schedules-section:not([hidden]) tr[data-schedule='${sid}']`, { timeout: 15_000 });
    const row = await text(page, `tr[data-schedule='${sid}']`);
    expect(row).toContain("wrk");
    expect(row).toContain("every 1h");
    expect(row).toContain("tidy the changelog");
    expect(await text(page, "#schedules-count")).toBe("1 schedule");
    await page.close();
  });
}, 120_000);

it("the board (docs/ui.md#the-board): a diamond of jobs in its columns as mam status --jobs has them, moving live; an after id opens that job", async () => {
  await withWorld(async (w) => {
    // the workspace's daemon gives a job its turn once what it runs after has completed
    const env = w.sb.with({ ...w.env, MAM_NO_SUBSCRIBER_DAEMON: undefined, RECONCILE_POLL_INTERVAL: "1" });
    const mam = (args: string[]) => runMam(args, { env, cwd: w.sb.ws, timeoutMs: 60_000 });
    try {
      // demo agents; da asks in a permission dialog before its job's command, so A works until the test answers
      for (const [name, extra] of [["da", ["--dialog"]], ["db", []], ["dc", []], ["dd", []]] as const) {
        const r = await mam(["create", "--agent", "demo", "--role", "worker", "--session", name, "--tmux-server", w.server, "--no-onboard", "--", ...extra]);
        expect(r.code, `${r.stdout}${r.stderr}`).toBe(0);
      }
      const submit = async (args: string[]) => {
        const r = await mam(["job", "submit", ...args]);
        expect(r.code, r.stderr).toBe(0);
        return r.stdout.trim();
      };
      const A = await submit(["--to", "da", "--prompt", "part A"]);
      const B = await submit(["--to", "db", "--after", A, "--prompt", "part B"]);
      const C = await submit(["--to", "dc", "--after", A, "--prompt", "part C"]);
      const D = await submit(["--to", "dd", "--after", `${B},${C}`, "--prompt", "join them"]);
      const ui = await startUiProcess(w.sb, env);
      uis.push(ui);
      const page = await w.open(ui);
      await page.setViewport({ width: 1400, height: 900 });
      // the board is a button beside the list, reached and pressed from the keyboard
      await page.focus("[data-view='board']");
      await page.keyboard.press("Enter");
      await page.waitForSelector("#board:not([hidden]) [data-column]", { timeout: 5_000 });
      expect(await page.$eval("[data-view='board']", (e) => e.getAttribute("aria-pressed"))).toBe("true");
      expect(await page.$("#jobs:not([hidden])")).toBeNull();
      // A works (its agent waits in its dialog); B and C wait for A, D for both
      await page.waitForSelector("tr[data-session='da'][data-live='blocked']", { timeout: 30_000 });
      // the page reads the dialog off the screen; the daemon journals it as A's permission_required
      // in its next watch round: the cards are compared below once A's last event is that one
      expect(await waitFor(() => readJournal(w.sb.ws, A).at(-1)?.event === "permission_required", 10_000)).toBe(true);
      const inCol = (col: string, id: string) => `#board [data-column='${col}'] [data-card='${id}']`;
      await page.waitForSelector(inCol("working", A), { timeout: 10_000 });
      for (const id of [B, C, D]) await page.waitForSelector(inCol("waiting", id), { timeout: 10_000 });
      // every column, in order, the empty ones too (narrow)
      expect(await page.$$eval("#board [data-column]", (cs) => cs.map((c) => c.getAttribute("data-column")))).toEqual(["waiting", "queued", "working", "in_review", "merging", "done", "failed"]);
      expect(await page.$$eval("#board .col.empty", (cs) => cs.map((c) => c.getAttribute("data-column")))).toEqual(["queued", "in_review", "merging", "done", "failed"]);
      expect(await text(page, "#board [data-column='waiting'] [data-count]")).toBe("3");
      // each card as mam status --jobs says it: who, since, and what a waiting job waits for
      const board = JSON.parse((await mam(["status", "--jobs", "--json"])).stdout).board as Record<string, { job_id: string; who: string; since: string; note: string; task: string }[]>;
      expect(board.waiting.map((c) => c.job_id).sort()).toEqual([B, C, D].sort());
      expect(board.working.map((c) => c.job_id)).toEqual([A]);
      expect(board.waiting.find((c) => c.job_id === D)!.note).toBe(`after jobs ${B} (queued) and ${C} (queued) complete`);
      for (const c of [...board.waiting, ...board.working]) {
        const sel = `#board [data-card='${c.job_id}']`;
        await page.waitForFunction(`document.querySelector("${sel} [data-since]")?.dataset.since === ${JSON.stringify(c.since)}`, { timeout: 5_000 });
        expect(await text(page, `${sel} .card-who b`)).toBe(c.who);
        expect(await text(page, `${sel} .card-task`)).toBe(c.task);
        if (c.note) expect(await text(page, `${sel} [data-note]`)).toBe(c.note);
      }
      expect(await text(page, `${inCol("waiting", D)} .card-note`)).toBe(`waits until after jobs ${B} (queued) and ${C} (queued) complete`);
      expect(await text(page, `${inCol("waiting", D)} .after`)).toBe(`after ${B}, ${C}`);
      expect(await text(page, `${inCol("waiting", B)} .after`)).toBe(`after ${A}`);
      expect(await page.$eval(`${inCol("working", A)} [data-since]`, (e) => e.textContent)).toMatch(/^\d+[smhd] ago$/);
      await snap(page, "board");
      // an after id opens that job: from the keyboard, and with a click
      await page.focus(`${inCol("waiting", D)} .after [data-open-job='${B}']`);
      await page.keyboard.press("Enter");
      await page.waitForFunction(`document.getElementById("panel-title").textContent === "job ${B}"`, { timeout: 5_000 });
      await page.click(`${inCol("waiting", D)} .after [data-open-job='${C}']`);
      await page.waitForFunction(`document.getElementById("panel-title").textContent === "job ${C}"`, { timeout: 5_000 });
      await page.click("#panel-close");
      await page.click(`${inCol("waiting", D)} .card-head [data-open-job='${D}']`);
      await page.waitForFunction(`document.getElementById("panel-title").textContent === "job ${D}"`, { timeout: 5_000 });
      await page.click("#panel-close");

      // the user answers da's dialog: A completes, B and C take their turns, then D; the board follows
      const ok = await mam(["approve", "da"]);
      expect(ok.code, ok.stderr).toBe(0);
      await page.waitForSelector(inCol("done", A), { timeout: 30_000 });
      for (const id of [B, C, D]) await page.waitForSelector(inCol("done", id), { timeout: 60_000 });
      expect(await page.$$("#board [data-column='waiting'] [data-card]")).toHaveLength(0);
      expect(await text(page, "#board [data-column='done'] [data-count]")).toBe("4");
      expect(await text(page, `${inCol("done", D)} .after`)).toBe(`after ${B}, ${C}`);
      expect(await page.$(`${inCol("done", D)} .card-note`)).toBeNull(); // done, nothing merged: no note
      await snap(page, "board-done");
      // the list again: the choice is the page's, the jobs are the same
      await page.click("[data-view='list']");
      await page.waitForSelector(`#jobs:not([hidden]) [data-job='${D}'][data-status='completed']`, { timeout: 5_000 });
      expect(await page.$("#board:not([hidden])")).toBeNull();
      await page.close();
      expect(await ui.stop()).toBe(143);
    } finally {
      await mam(["daemon", "stop"]);
    }
  });
}, 180_000);
