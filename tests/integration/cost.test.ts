// What jobs and agents cost (docs/cost.md), through the compiled binary: fake claude and codex
// agents on the fake herdr write each mam text and one answer with a known usage into their
// conversation files as the real CLIs do (tests/fakes/agents/fake-agent, "Usage"); the workspace's
// daemon meters them. Job status / list / mam status in text and JSON, budgets that end a job
// (budget_exceeded once, job wait's own exit code, the agent and the delegator told), a budget that
// cannot be checked, the user's prices, a daily cap, and bad input that changes nothing; the same
// numbers in the MCP results and the dashboard's state (with the team's spend per hour).
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createAgent, type E2E, ensureDaemon, journalEvents, monitorLog, newWorkspace, openGate, startE2E, typed, waitTyped, type Ws, submitJob } from "../helpers/jobs-e2e.ts";
import { startUiProcess } from "../helpers/browser.ts";
import { MAM_CMD } from "../helpers/mam.ts";
import { waitFor } from "../helpers/sandbox.ts";

let e: E2E;
beforeAll(async () => {
  e = await startE2E("mam-cost-");
});
afterAll(async () => {
  await e.cleanup();
});

const started: Ws[] = [];
afterEach(async () => {
  for (const w of started.splice(0)) {
    openGate(w.dir, "progress", "completed"); // job-agents waiting at a gate finish
    await w.mam(["daemon", "stop"]);
  }
});

const daemon = (w: Ws) => ensureDaemon(w, "polling", started);

const submit = submitJob;

const usage = (w: Ws, spec: string) => writeFileSync(join(w.dir, ".agent-usage"), `${spec}\n`);
const status = async (w: Ws, id: string) => JSON.parse((await w.mam(["job", "status", id, "--json"])).stdout);

/** wait until the job's usage has `total` tokens (the daemon meters within a poll) */
async function metered(w: Ws, id: string, total: number): Promise<any> {
  let v: any;
  const ok = await waitFor(async () => (v = await status(w, id)).usage.tokens?.total === total, 20_000, 200);
  if (!ok) throw new Error(`job ${id} never showed ${total} tokens: ${JSON.stringify(v?.usage)}\n${monitorLog(w.dir)}`);
  return v;
}

describe("what a job costs", () => {
  test("exact tokens and dollars per job, two jobs in a row on one agent each their own; job status, job list and mam status, text and JSON", async () => {
    const w = newWorkspace(e);
    await daemon(w);
    const wk = w.n("wk");
    await createAgent(e, w, wk, "worker");
    // claude-sonnet-4-5 is in the shipped prices: $3 input, $15 output, $3.75 cache write, $0.30 cache read per million
    usage(w, "1000,200,30,4000,claude-sonnet-4-5");
    const a = await submit(w, ["--to", wk, "--prompt", "first"]);
    expect((await w.mam(["job", "wait", a, "--timeout", "60"])).code).toBe(0);
    const va = await metered(w, a, 5230);
    expect(va.usage).toMatchObject({ known: true, tokens: { input: 1000, output: 200, cache_write: 30, cache_read: 4000, total: 5230 } });
    expect(va.usage.usd).toBeCloseTo((1000 * 3 + 200 * 15 + 30 * 3.75 + 4000 * 0.3) / 1e6, 12);
    expect(va.usage.by_session[wk].tokens.total).toBe(5230);
    expect(va).toMatchObject({ budget_usd: null, max_tokens: null });
    usage(w, "10,2,0,0,claude-sonnet-4-5");
    const b = await submit(w, ["--to", wk, "--prompt", "second"]);
    expect((await w.mam(["job", "wait", b, "--timeout", "60"])).code).toBe(0);
    const vb = await metered(w, b, 12);
    expect(vb.usage.tokens).toEqual({ input: 10, output: 2, cache_write: 0, cache_read: 0, total: 12 });
    expect((await status(w, a)).usage.tokens.total).toBe(5230);

    const text = (await w.mam(["job", "status", a])).stdout;
    expect(text).toContain("cost     5,230 tokens (input 1,000 · output 200 · cache write 30 · cache read 4,000), $0.0073");
    expect(text).toContain("budget   -");
    const list = (await w.mam(["job", "list"])).stdout.split("\n");
    expect(list[0]).toMatch(/EVENTS\s+COST\s+LAST/);
    expect(list.find((l) => l.startsWith(a))).toContain("$0.0073");
    const lj = JSON.parse((await w.mam(["job", "list", "--json"])).stdout);
    expect(lj.jobs.map((j: any) => j.usage.tokens.total).sort()).toEqual([12, 5230]);

    const st = JSON.parse((await w.mam(["status", "--json"])).stdout).sessions.find((s: any) => s.name === wk);
    expect(st.usage.total.tokens.total).toBe(5242);
    expect(st.usage.today.tokens.total).toBe(5242);
    // this job: the newest one sent to it
    expect(st.job.id).toBe(b);
    expect(st.usage.job.tokens.total).toBe(12);
    const table = (await w.mam(["status"])).stdout.split("\n");
    expect(table[0]).toMatch(/JOB\s+COST\s+DRIFT/);
    expect(table.find((l) => l.startsWith(wk))).toContain(" $0.0001/$0.0074/$0.0074 ");
  }, 120_000);

  test("the same numbers in the MCP results and on the dashboard: the job's, the agent's, the team's per hour", async () => {
    const w = newWorkspace(e);
    await daemon(w);
    const wk = w.n("wk");
    await createAgent(e, w, wk, "worker");
    usage(w, "1000,200,30,4000,claude-sonnet-4-5");
    const id = await submit(w, ["--to", wk, "--prompt", "first", "--budget-usd", "3"]);
    expect((await w.mam(["job", "wait", id, "--timeout", "60"])).code).toBe(0);
    const want = await metered(w, id, 5230);
    const usd = (1000 * 3 + 200 * 15 + 30 * 3.75 + 4000 * 0.3) / 1e6;

    const transport = new StdioClientTransport({ command: MAM_CMD[0]!, args: [...MAM_CMD.slice(1), "mcp", "--workspace", w.dir], env: { ...w.env, MAM_NO_SUBSCRIBER_DAEMON: "1" }, cwd: w.dir, stderr: "pipe" });
    const client = new Client({ name: "mam-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const call = async (name: string, args: Record<string, unknown>) => ((await client.callTool({ name, arguments: args }, CallToolResultSchema)) as { structuredContent: any }).structuredContent;
      const js = await call("job_status", { job_id: id });
      expect(js).toMatchObject({ budget_usd: 3, max_tokens: null, usage: { known: true, tokens: want.usage.tokens } });
      expect(js.usage.usd).toBeCloseTo(usd, 12);
      expect(js.usage.by_session[wk].tokens.total).toBe(5230);
      const jl = await call("job_list", {});
      expect(jl.jobs.find((j: any) => j.job_id === id).usage.tokens.total).toBe(5230);
      const ss = (await call("session_status", {})).sessions.find((s: any) => s.name === wk);
      expect(ss.usage).toMatchObject({ job: { tokens: { total: 5230 } }, today: { tokens: { total: 5230 } }, total: { tokens: { total: 5230 } } });
    } finally {
      await client.close();
    }

    const ui = await startUiProcess(e.sb, w.env, [], w.dir);
    try {
      const state = (await (await fetch(`http://127.0.0.1:${ui.port}/api/state?token=${ui.token}`)).json()) as any;
      const job = state.jobs.find((j: any) => j.id === id);
      expect(job).toMatchObject({ budget_usd: 3, max_tokens: null, usage: { known: true, tokens: { total: 5230 } } });
      expect(job.usage.usd).toBeCloseTo(usd, 12);
      expect(state.sessions.find((s: any) => s.name === wk).usage).toMatchObject({ job: { tokens: { total: 5230 } }, today: { tokens: { total: 5230 } }, total: { tokens: { total: 5230 } } });
      // the team's rate: the last 50 to 60 minutes (10-minute buckets) scaled to an hour
      const r = state.rate;
      expect(r.minutes).toBeGreaterThanOrEqual(50);
      expect(r.minutes).toBeLessThanOrEqual(60);
      expect(r.tokens_per_hour).toBeGreaterThanOrEqual(5230);
      expect(r.tokens_per_hour).toBeLessThanOrEqual(Math.ceil((5230 * 60) / 50));
      expect(r.usd_per_hour / usd).toBeCloseTo(r.tokens_per_hour / 5230, 3);
    } finally {
      await ui.stop("SIGKILL");
    }
  }, 120_000);

  test("codex: its rollout's running totals, per job", async () => {
    const w = newWorkspace(e);
    await daemon(w);
    const cx = w.n("cx");
    await createAgent(e, w, cx, "worker", { agent: "codex" });
    usage(w, "300,40,0,700,gpt-5-codex");
    const a = await submit(w, ["--to", cx, "--prompt", "one"]);
    expect((await w.mam(["job", "wait", a, "--timeout", "60"])).code).toBe(0);
    const v = await metered(w, a, 1040);
    expect(v.usage.tokens).toEqual({ input: 300, output: 40, cache_write: 0, cache_read: 700, total: 1040 });
    expect(v.usage.usd).toBeCloseTo((300 * 1.25 + 40 * 10 + 700 * 0.125) / 1e6, 12);
  }, 120_000);

  test("a kind mam cannot read says unknown, never 0; a budget on it is refused and nothing is written", async () => {
    const w = newWorkspace(e);
    await daemon(w);
    const gm = w.n("gm");
    await createAgent(e, w, gm, "worker", { agent: "gemini" });
    const r = await w.mam(["job", "submit", "--to", gm, "--prompt", "x", "--budget-usd", "1"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`ERROR: a budget needs the usage of ${gm}, and mam cannot read the records of gemini (docs/cost.md); nothing was submitted; leave out --budget-usd and --max-tokens\n`);
    expect(existsSync(join(w.dir, ".mam", "jobs")) ? readdirSync(join(w.dir, ".mam", "jobs")).filter((f) => f.endsWith(".json")) : []).toEqual([]);
    const id = await submit(w, ["--to", gm, "--prompt", "x"]);
    expect((await w.mam(["job", "wait", id, "--timeout", "60"])).code).toBe(0);
    const v = await status(w, id);
    expect(v.usage).toMatchObject({ known: false, tokens: null, usd: null, why: "mam cannot read the records of gemini" });
    expect((await w.mam(["job", "status", id])).stdout).toContain("cost     unknown (mam cannot read the records of gemini)");
    const st = JSON.parse((await w.mam(["status", "--json"])).stdout).sessions.find((s: any) => s.name === gm);
    expect(st.usage.total).toMatchObject({ known: false, tokens: null });
    // a pool job with a budget: whichever agent of the role takes it must be metered
    const pool = await w.mam(["job", "submit", "--to-role", "worker", "--prompt", "x", "--max-tokens", "100"]);
    expect({ code: pool.code, err: pool.stderr }).toEqual({ code: 2, err: `ERROR: a budget needs the usage of ${gm}, and mam cannot read the records of gemini (docs/cost.md); nothing was submitted; leave out --budget-usd and --max-tokens\n` });
    const cap = await w.mam(["create", "--agent", "gemini", "--session", w.n("gm2"), "--herdr-session", e.server, "--no-onboard", "--daily-budget-usd", "3"]);
    expect(cap.code).toBe(2);
    expect(cap.stderr).toBe("ERROR: a daily cap needs the agent's usage, and mam cannot read the records of gemini (docs/cost.md); leave out --daily-budget-usd and --daily-max-tokens\n");
  }, 120_000);

  test("bad budgets are usage errors that change nothing", async () => {
    const w = newWorkspace(e);
    for (const [flag, v, msg] of [
      ["--budget-usd", "0", "--budget-usd must be more than 0"],
      ["--budget-usd", "-2", "--budget-usd must be more than 0"],
      ["--budget-usd", "abc", "--budget-usd must be a number (got 'abc')"],
      ["--max-tokens", "0", "--max-tokens must be at least 1 (got 0)"],
      ["--max-tokens", "1.5", "--max-tokens must be a whole number (got 1.5)"],
    ]) {
      const r = await w.mam(["job", "submit", "--to", "nobody", "--prompt", "x", flag!, v!]);
      expect({ code: r.code, err: r.stderr.split("\n")[0] }).toEqual({ code: 2, err: expect.stringContaining(`ERROR: ${msg}`) });
    }
    expect(existsSync(join(w.dir, ".mam"))).toBe(false);
  }, 60_000);
});

describe("budgets", () => {
  test("over --max-tokens: budget_exceeded once, job wait exits 6, the agent is told to stop at its prompt, the delegator hears it", async () => {
    const w = newWorkspace(e, {}, { gated: true }); // the worker never reports completed by itself
    await daemon(w);
    const [wk, lead] = [w.n("wk"), w.n("lead")];
    const wp = await createAgent(e, w, wk, "worker");
    const lp = await createAgent(e, w, lead, "lead");
    usage(w, "1000,0,0,0,claude-sonnet-4-5");
    const id = await submit(w, ["--to", wk, "--from", lead, "--max-tokens", "500", "--prompt", "big"]);
    const wait = await w.mam(["job", "wait", id, "--timeout", "60"]);
    const line = `job ${id} went over its budget: 1,000 tokens of 500`;
    expect({ code: wait.code, out: wait.stdout }).toEqual({ code: 6, out: `${id} budget_exceeded: ${line}\n` });
    const evs = journalEvents(w.dir, id);
    expect(evs.filter((x) => x.event === "budget_exceeded")).toEqual([expect.objectContaining({ source: "mam", detail: line })]);
    expect(await waitTyped(e.herdr, wp, `[mam] Job ${id} is stopped: ${line}. Stop working on it.`), monitorLog(w.dir)).toBe(true);
    expect(await waitTyped(e.herdr, lp, `[mam] job ${id} budget_exceeded: ${line}`), monitorLog(w.dir)).toBe(true);
    const v = await status(w, id);
    expect(v).toMatchObject({ status: "budget_exceeded", max_tokens: 500, budget_usd: null });
    expect((await w.mam(["job", "status", id])).stdout).toContain("budget   500 tokens");
    // a late report changes nothing, and the budget is not exceeded twice
    openGate(w.dir, "progress", "completed");
    await Bun.sleep(2500);
    expect((await status(w, id)).status).toBe("budget_exceeded");
    expect(journalEvents(w.dir, id).filter((x) => x.event === "budget_exceeded")).toHaveLength(1);
    expect((await typed(e.herdr, lp)).split(`[mam] job ${id} `).length - 1).toBe(1);
  }, 120_000);

  test("a budget in dollars on a model with no price stops the job and names the price; the user's prices file prices it", async () => {
    const w = newWorkspace(e, {}, { gated: true });
    await daemon(w);
    const wk = w.n("wk");
    await createAgent(e, w, wk, "worker");
    usage(w, "100,10,0,0,mystery-model");
    const id = await submit(w, ["--to", wk, "--budget-usd", "5", "--prompt", "x"]);
    const wait = await w.mam(["job", "wait", id, "--timeout", "60"]);
    expect(wait.code).toBe(6);
    expect(wait.stdout).toBe(`${id} budget_exceeded: job ${id} cannot check its budget of $5.00: no price for mystery-model (add its price to ~/.config/mam/prices.json)\n`);
    const v = await status(w, id);
    expect(v.usage).toMatchObject({ known: true, usd: null, unpriced: ["mystery-model"], tokens: { total: 110 } });
    // the user's prices (XDG_CONFIG_HOME/mam/prices.json) price it for every reader
    mkdirSync(join(e.sb.home, ".config", "mam"), { recursive: true });
    writeFileSync(join(e.sb.home, ".config", "mam", "prices.json"), JSON.stringify({ models: { "mystery-model": { input: 10, output: 100 } } }));
    try {
      expect((await status(w, id)).usage.usd).toBeCloseTo((100 * 10 + 10 * 100) / 1e6, 12);
      writeFileSync(join(e.sb.home, ".config", "mam", "prices.json"), "{ nope");
      const bad = await w.mam(["job", "status", id]);
      expect(bad.code).toBe(1);
      expect(bad.stdout).toBe("");
      expect(bad.stderr).toStartWith(`ERROR: ${join(e.sb.home, ".config", "mam", "prices.json")} is not a valid price file (not valid JSON: `);
      expect(bad.stderr).toEndWith("; fix it or remove it (see docs/cost.md)\n");
    } finally {
      writeFileSync(join(e.sb.home, ".config", "mam", "prices.json"), JSON.stringify({ models: {} }));
    }
  }, 120_000);

  test("a daily cap: past it, the jobs it has end and it takes no new job, from a submit or from the queue", async () => {
    const w = newWorkspace(e, {}, { agent: { PASSIVE: "1" } }); // the worker reports nothing: its jobs stay open
    await daemon(w);
    const wk = w.n("capped");
    const cr = await w.mam(["create", "--agent", "claude", "--role", "worker", "--session", wk, "--herdr-session", e.server, "--no-onboard", "--daily-max-tokens", "1500"]);
    expect(cr.code, cr.stderr).toBe(0);
    usage(w, "1000,0,0,0,claude-sonnet-4-5");
    const a = await submit(w, ["--to", wk, "--prompt", "one"]);
    await metered(w, a, 1000);
    // a second job for it waits its turn: it has an unfinished job
    const b = await submit(w, ["--to", wk, "--prompt", "two"]);
    expect((await status(w, b)).status).toBe("queued");
    // it answers once more, in a's turn: 2,000 tokens today, over its cap of 1,500
    const more = await e.herdr.herdr(["agent", "prompt", wk, "[mam] one more answer"]);
    expect(more.code, more.stderr).toBe(0);
    const wait = await w.mam(["job", "wait", b, "--timeout", "30"]);
    const today = new Date().toISOString().slice(0, 10);
    expect(wait.code, `${wait.stdout}${wait.stderr}${monitorLog(w.dir)}`).toBe(6);
    // both jobs were open for it when it went over: the one it worked on and the one waiting for it
    for (const id of [a, b]) expect((await status(w, id)).status).toBe("budget_exceeded");
    expect((await status(w, a)).usage.tokens.total).toBe(2000);
    expect(wait.stdout).toBe(`${b} budget_exceeded: ${wk} went over its daily cap: 2,000 tokens of 1,500 (UTC day ${today})\n`);
    const r = await w.mam(["job", "submit", "--to", wk, "--prompt", "three"]);
    expect({ code: r.code, out: r.stdout }).toEqual({ code: 1, out: "" });
    // the day's count may already hold the agent's answer to mam's "stopped over its budget" notice
    // (typed once it is back at its prompt: 1,000 more from the fake agent), which is today's usage too
    expect(r.stderr).toMatch(new RegExp(`^ERROR: session '${wk}' went over its daily cap: (2,000|3,000) tokens of 1,500 \\(UTC day ${today}\\); nothing was submitted; it takes jobs again at 00:00 UTC\n$`));
    // nor from the queue: a pool's job passes it over (it waits), and goes to another agent of the role once there is one
    const q = await submit(w, ["--to-role", "worker", "--prompt", "four"]);
    await Bun.sleep(3000); // the daemon dispatches within a poll (1 s here)
    expect((await status(w, q)).status, monitorLog(w.dir)).toBe("queued");
    const other = w.n("other");
    await createAgent(e, w, other, "worker");
    expect(await waitFor(async () => (await status(w, q)).agent_session === other, 20_000, 200), monitorLog(w.dir)).toBe(true);
    expect(journalEvents(w.dir, q).find((x) => x.event === "dispatched")).toMatchObject({ source: "mam", data: { to: other } });
  }, 120_000);
});
