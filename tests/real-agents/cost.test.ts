// What jobs cost, with the real claude and codex (npm run test:agents; docs/cost.md): the scripted
// endpoint answers every request with its own known usage, so a job's tokens must equal exactly the
// sum of the answers of its turns (the turns mam's texts about it began: header, review request,
// feedback, a notice). Two jobs in a row on one agent each get their own; a loop job with a small
// budget stops in the iteration that crosses it, with budget_exceeded once; the daemon, idle,
// sends the endpoint nothing.
import { afterEach, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { isJobText, jobWorker, withDetail } from "../fakes/model-api/scripts.ts";
import type { Reply, Script, Turn, Usage } from "../fakes/model-api/server.ts";
import { type RealAgentWorld, realAgentWorld } from "../helpers/real-agents.ts";
import { waitFor } from "../helpers/sandbox.ts";

let w: RealAgentWorld | undefined;
afterEach(async () => {
  if (w) await w.mam(["daemon", "stop"]);
  await w?.cleanup();
  w = undefined;
});

/** every answer with a usage of its own: n-th answer → input 100+n, output 7+n, cache write 3n, cache read 1000+n */
function counted(inner: Script, each?: (n: number) => Usage): Script {
  let n = 0;
  return (t) => {
    n++;
    return { ...inner(t), usage: each ? each(n) : { input: 100 + n, output: 7 + n, cache_write: 3 * n, cache_read: 1000 + n } };
  };
}

/** what an answer's usage looks like in the agent's record (codex, OpenAI: a cache write is input) */
const recorded = (api: string, u: Usage) => (api === "openai" ? { input: u.input + u.cache_write, output: u.output, cache_write: 0, cache_read: u.cache_read } : u);

/** the endpoint's sum for the answers whose turn a mam text about `job` began (header, review, feedback, notice) */
function answered(w: RealAgentWorld, job: string, api?: string) {
  const sum = { input: 0, output: 0, cache_write: 0, cache_read: 0 };
  for (const r of w.api.requests) {
    if (!r.turn?.main || !r.usage || (api && r.api !== api)) continue;
    const t = r.turn.lastUserText.replace(/<system-reminder>[\s\S]*?<\/system-reminder>\s*/g, "").trimStart();
    if (!new RegExp(`^\\[mam\\] (Job|Review for job) ${job}\\b`).test(t)) continue;
    const u = recorded(r.api, r.usage);
    for (const k of ["input", "output", "cache_write", "cache_read"] as const) sum[k] += u[k];
  }
  return { ...sum, total: sum.input + sum.output + sum.cache_write + sum.cache_read };
}

async function create(w: RealAgentWorld, agent: string, name: string): Promise<void> {
  const c = await w.mam(["create", "--agent", agent, "--mux", "tmux", "--tmux-server", w.server, "--session", name]);
  expect(c.code, c.stdout + c.stderr).toBe(0);
}

const jobJson = async (w: RealAgentWorld, id: string) => JSON.parse((await w.mam(["job", "status", id, "--json"])).stdout);
const monitorLog = (w: RealAgentWorld) => {
  try {
    return readFileSync(join(w.sb.ws, ".mam", "monitor.log"), "utf8");
  } catch {
    return "(no log)";
  }
};

/** wait until the job's counted tokens are the endpoint's sum (the wrap-up answer comes after completed) */
async function settled(w: RealAgentWorld, id: string): Promise<any> {
  let v: any;
  const ok = await waitFor(async () => (v = await jobJson(w, id)).usage.tokens?.total === answered(w, id).total, 30_000, 250);
  if (!ok) throw new Error(`job ${id}: counted ${JSON.stringify(v?.usage?.tokens)}, the endpoint answered ${JSON.stringify(answered(w, id))}\n${monitorLog(w)}`);
  return v;
}

const DAEMON = { MAM_NO_SUBSCRIBER_DAEMON: "0", RECONCILE_POLL_INTERVAL: "1" };

test("real claude and codex: each job's tokens are exactly the endpoint's answers of its turns, two jobs in a row each their own; the idle daemon sends the endpoint nothing", async () => {
  w = await realAgentWorld({ script: counted(jobWorker({ detail: "done: job finished" })), env: DAEMON });
  await create(w, "claude", "wrk");
  await create(w, "codex", "cdx");
  const ids: Record<string, string[]> = { wrk: [], cdx: [] };
  for (const name of ["wrk", "cdx", "wrk", "cdx"]) {
    const s = await w.mam(["job", "submit", "--to", name, "--prompt", `say hello (${ids[name]!.length + 1})`]);
    expect(s.code, s.stderr).toBe(0);
    const id = s.stdout.trim();
    const wait = await w.mam(["job", "wait", id, "--timeout", "120"], 150_000);
    expect(wait.code, wait.stdout + wait.stderr).toBe(0);
    ids[name]!.push(id);
  }
  for (const [name, api] of [["wrk", "anthropic"], ["cdx", "openai"]] as const) {
    for (const id of ids[name]!) {
      const v = await settled(w, id);
      const want = answered(w, id, api);
      // three answers each: the one that ran `started`, the one that ran `completed`, the wrap-up
      expect(w.api.requests.filter((r) => r.turn?.main && r.usage && r.turn.lastUserText.includes(`Job ${id} delegated`)).length).toBe(3);
      expect(v.usage.tokens).toEqual(want);
      expect(v.usage.by_session[name].tokens).toEqual(want);
      if (api === "anthropic") {
        // the model claude asked for, in the shipped prices: claude-opus-4-8 by 2.1.197 ($5 input, $25
        // output, $6.25 cache write, $0.50 cache read), claude-opus-5-5 by 2.1.332 ($4, $20, $5, $0.20)
        const asked = [...new Set(w.api.requests.filter((r) => r.turn?.main && r.usage && r.turn.lastUserText.includes(`Job ${id} delegated`)).map((r) => String(r.body?.model)))];
        const price = ({ "claude-opus-4-8": [5, 25, 6.25, 0.5], "claude-opus-5-5": [4, 20, 5, 0.2] } as Record<string, number[]>)[asked[0]!];
        expect(asked.length === 1 && price !== undefined, asked.join(", ")).toBe(true);
        expect(Object.keys(v.usage.models)).toEqual(asked);
        const [pi, po, pw, pr] = price!;
        expect(v.usage.usd).toBeCloseTo((want.input * pi! + want.output * po! + want.cache_write * pw! + want.cache_read * pr!) / 1e6, 12);
      } else expect(v.usage).toMatchObject({ usd: null, unpriced: ["mock-model"] }); // codex's custom provider's model has no price
    }
  }
  // the sessions' totals: every answer of theirs, the onboarding's too
  const st = JSON.parse((await w.mam(["status", "--json"])).stdout);
  for (const [name, api] of [["wrk", "anthropic"], ["cdx", "openai"]] as const) {
    const all = w.api.requests.filter((r) => r.turn?.main && r.usage && r.api === api).map((r) => recorded(api, r.usage!));
    const total = all.reduce((n, u) => n + u.input + u.output + u.cache_write + u.cache_read, 0);
    const s = st.sessions.find((x: any) => x.name === name);
    expect(s.usage.total.tokens.total).toBe(total);
    expect(s.usage.today.tokens.total).toBe(total);
    expect(s.usage.job.tokens.total).toBe(answered(w, ids[name]![1]!).total);
  }
  // supervision costs nothing when idle: the daemon polls files, it never calls a model
  const before = w.api.requests.length;
  await Bun.sleep(5000);
  expect(w.api.requests.length).toBe(before);
}, 600_000);

/** a reviewer that never passes: it runs its review's feedback line */
function reviewer(): Script {
  return (t: Turn): Reply => {
    if (!t.lastUserText.includes("[mam] Review for job")) return { text: isJobText(t) ? "noted" : "ready" };
    const line = t.lastUserText.split("\n").find((l) => l.includes(" job event ") && l.includes(" completed ") && l.includes("feedback"));
    if (t.toolOutputs.length === 0 && line) return { shell: withDetail(line.trim(), "please handle the empty input too") };
    return { text: "review sent" };
  };
}

test("a loop job with a small budget stops in the iteration that crosses it: budget_exceeded once, no third iteration, the cost of each iteration", async () => {
  const worker = jobWorker({ detail: "done" });
  const rev = reviewer();
  // every answer costs 1000 tokens; iteration 1 is 5 answers (worker: started, completed, wrap-up;
  // reviewer: feedback, wrap-up), iteration 2 at least 4: a budget of 6500 is crossed in iteration 2
  const script = counted((t) => (t.userTexts.some((u) => u.includes("You are rev,")) ? rev(t) : worker(t)), () => ({ input: 1000, output: 0, cache_write: 0, cache_read: 0 }));
  w = await realAgentWorld({ script, env: DAEMON });
  await create(w, "claude", "wrk");
  await create(w, "codex", "rev");
  const s = await w.mam(["job", "submit", "--to", "wrk", "--type", "loop", "--reviewer", "rev", "--max-iterations", "3", "--max-tokens", "6500", "--prompt", "write the parser"]);
  expect(s.code, s.stderr).toBe(0);
  const id = s.stdout.trim();
  const wait = await w.mam(["job", "wait", id, "--timeout", "240"], 270_000);
  expect({ code: wait.code, out: wait.stdout }, monitorLog(w)).toEqual({ code: 6, out: expect.stringMatching(new RegExp(`^${id} budget_exceeded: job ${id} went over its budget: [0-9,]+ tokens of 6,500\\n$`)) });
  const journal = readFileSync(join(w.sb.ws, ".mam", "jobs", `${id}.events.ndjson`), "utf8").trim().split("\n").map((l) => JSON.parse(l));
  expect(journal.filter((e) => e.event === "budget_exceeded")).toHaveLength(1);
  // iteration 2 began (its feedback went out) and no third one did
  expect(journal.some((e) => e.event === "progress" && e.detail === "iteration 2: feedback sent to wrk")).toBe(true);
  expect(journal.some((e) => e.data?.iteration === 3)).toBe(false);
  const v = await settled(w, id);
  expect(v).toMatchObject({ status: "budget_exceeded", iteration: 2, max_tokens: 6500 });
  expect(v.usage.tokens.total).toBeGreaterThan(6500);
  // the cost of each iteration: the first one whole, five answers
  expect(v.usage.by_iteration["1"].tokens.total).toBe(5000);
  expect(v.usage.by_iteration["2"].tokens.total).toBeGreaterThanOrEqual(1000);
  expect(v.usage.by_session.wrk.tokens.total + v.usage.by_session.rev.tokens.total).toBe(v.usage.tokens.total);
  const text = (await w.mam(["job", "status", id])).stdout;
  // round 1 has the reviewer's answers (a model without a price): tokens only; round 2 has dollars
  // too when only the worker's answers are in yet (the reviewer may not have answered its review)
  expect(text).toMatch(/by round +1: \(5\.0k tok\) · 2: (\$\d+\.\d+ )?\(\d+\.\dk tok\)\n/);
  // the agent working on it then was told to stop at its prompt (never killed): its model saw the notice
  expect(await waitFor(() => w!.api.requests.some((r) => r.turn?.lastUserText.includes(`[mam] Job ${id} is stopped: job ${id} went over its budget`)), 30_000, 250), monitorLog(w)).toBe(true);
  expect((await w.tmux(["list-panes", "-a", "-F", "#{session_name} #{pane_dead}"])).stdout.split("\n").filter(Boolean).sort()).toEqual(["rev 0", "wrk 0"]);
}, 600_000);
