// The usage meter on conversation files captured from the real CLIs (tests/fixtures/usage, written
// by tests/real-agents/capture-usage.ts against the scripted endpoint, which answered with a known
// usage on every answer): the lines' facts, the fold (whose job, once per answer), and the daemon's
// reader (incremental, a partial last line, a conversation id that changed with /clear, a codex
// rollout found by its id). The expected numbers come from the endpoint's own log (answers.json).
import { afterEach, describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KINDS } from "../../lib/agents/kinds/index.ts";
import type { Tokens, UsageFact } from "../../lib/agents/usage.ts";
import { emptyLedger, type FileCursor, readLedger } from "../../lib/cost/ledger.ts";
import { applyFact, book, deliveryOf, type MeterContext, noteJob } from "../../lib/cost/meter.ts";
import { mergeModels, tokensOf } from "../../lib/cost/tokens.ts";
import { UsageMeter } from "../../lib/ops/react/meter.ts";
import { jobStore, readRecord, writeRecord } from "../../lib/jobs/store.ts";
import { readRegistry } from "../../lib/registry/load.ts";
import { loopJob } from "../helpers/job-record.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

const FIX = join(import.meta.dir, "..", "fixtures", "usage");
const CLAUDE_MAIN = "b0d6190d-24ef-49fe-923c-3ccdbd0b78fb";
const CLAUDE_CLEARED = "3410d5ef-a684-46f7-91d6-6d1c5ab129a9";
const CODEX_ID = "01a23291-81f3-7090-8e6e-5bbd6f37a7b5";
const CLAUDE_PID = 23078;

interface Answer {
  api: "anthropic" | "openai";
  job: string | null;
  usage: Tokens;
}
interface FixtureJob {
  job_id: string;
  agent_session: string;
  ended_at: string;
}
const answers: Answer[] = JSON.parse(readFileSync(join(FIX, "answers.json"), "utf8"));
const jobs: FixtureJob[] = JSON.parse(readFileSync(join(FIX, "jobs.json"), "utf8"));
const codexFile = readdirSync(join(FIX, "codex"))[0]!;

const zero: Tokens = { input: 0, output: 0, cache_write: 0, cache_read: 0 };
const add = (a: Tokens, b: Tokens): Tokens => ({ input: a.input + b.input, output: a.output + b.output, cache_write: a.cache_write + b.cache_write, cache_read: a.cache_read + b.cache_read });
/** what an answer's usage looks like in the agent's record: codex (OpenAI) counts a cache write as input */
const asRecorded = (a: Answer): Tokens => (a.api === "openai" ? { input: a.usage.input + a.usage.cache_write, output: a.usage.output, cache_write: 0, cache_read: a.usage.cache_read } : a.usage);
/** the endpoint's sum for a job (null: the answers of no job), of one api */
const expected = (api: Answer["api"], job: string | null | "all") =>
  answers.filter((a) => a.api === api && (job === "all" || a.job === job)).map(asRecorded).reduce(add, zero);

const lines = (file: string) => readFileSync(file, "utf8").split("\n").filter((l) => l !== "");
const facts = (kind: "claude" | "codex", file: string): UsageFact[] => lines(file).map((l) => KINDS[kind]!.usage!.parse(l)).filter((f): f is UsageFact => f !== undefined);

/** the fixture's jobs, as the meter sees them */
const ctx: MeterContext = {
  job: (id) => {
    const j = jobs.find((x) => x.job_id === id);
    return j ? { agent_session: j.agent_session, reviewer_session: null, ended_ms: Date.parse(j.ended_at) + 1000 } : undefined;
  },
  isSession: (f, s) => f === s,
  now: Date.parse("2026-12-01T18:00:00Z"),
};

function fold(kind: "claude" | "codex", session: string, file: string) {
  const l = emptyLedger();
  const c: FileCursor = { session, kind, ino: 1, offset: 0, turn: { job: null, iteration: null } };
  for (const f of facts(kind, file)) {
    const a = applyFact(c, f, ctx);
    if (a.began) noteJob(l, a.began, session);
    if (a.delta) book(l, kind, a.delta);
  }
  return l;
}

describe("the lines of the real CLIs' files", () => {
  test("claude: each assistant line with its usage and model, each typed message as a turn; tool results and meta lines say nothing", () => {
    const f = facts("claude", join(FIX, "claude", `${CLAUDE_MAIN}.jsonl`));
    const turns = f.filter((x) => x.kind === "turn");
    const heads = ["You are wrk, a claude agent", ...jobs.filter((j) => j.agent_session === "wrk").map((j) => `[mam] Job ${j.job_id} delegated to you`)];
    expect(turns.map((t, i) => (t as { text: string }).text.startsWith(heads[i]!))).toEqual(heads.map(() => true));
    const ans = f.filter((x) => x.kind === "answer") as Extract<UsageFact, { kind: "answer" }>[];
    // an answer with a text block and a tool use is written on two lines, same id and usage
    expect(ans.length).toBe(answers.filter((a) => a.api === "anthropic").length - 1 + 3);
    expect(new Set(ans.map((a) => a.model))).toEqual(new Set(["claude-opus-4-8"]));
    expect(ans[0]).toMatchObject({ id: expect.stringMatching(/^msg_/), tokens: { input: 101, output: 8, cache_write: 3, cache_read: 1001 } });
    expect(Number.isFinite(ans[0]!.at)).toBe(true);
  });

  test("codex: token_count totals, the turn's model, typed messages", () => {
    const f = facts("codex", join(FIX, "codex", codexFile));
    expect(f.filter((x) => x.kind === "model").map((x) => (x as { model: string }).model)).toContain("mock-model");
    const totals = f.filter((x) => x.kind === "total") as Extract<UsageFact, { kind: "total" }>[];
    // the last running total is every answer of the conversation
    expect(totals.at(-1)!.tokens).toEqual(expected("openai", "all"));
    expect(f.some((x) => x.kind === "turn" && x.text.startsWith(`[mam] Job ${jobs.find((j) => j.agent_session === "cdx")!.job_id} delegated`))).toBe(true);
  });

  test("a line cut short, an empty line and a line that is not JSON say nothing", () => {
    const whole = lines(join(FIX, "claude", `${CLAUDE_MAIN}.jsonl`)).find((l) => l.includes('"type":"assistant"'))!;
    for (const kind of ["claude", "codex"] as const) {
      expect(KINDS[kind]!.usage!.parse(whole.slice(0, whole.length - 7))).toBeUndefined();
      expect(KINDS[kind]!.usage!.parse("")).toBeUndefined();
      expect(KINDS[kind]!.usage!.parse('not json "type":"assistant" "token_count"')).toBeUndefined();
    }
  });
});

describe("the demo agent's synthetic usage (it calls no model)", () => {
  test("its turns and made-up answers are read; a line not marked synthetic, or with no tokens, says nothing; its file is the session's, a bad name none", async () => {
    const { demoUsageLine, DEMO_MODEL, demoUsageFile } = await import("../../lib/agents/kinds/demo.ts");
    const { syntheticTokens } = await import("../../lib/agents/demo-agent.ts");
    const at = "2026-12-02T03:00:00.000Z";
    expect(demoUsageLine(JSON.stringify({ demo_usage: "turn", text: "[mam] Job 0badcafe delegated to you", synthetic: true, at }))).toEqual({ kind: "turn", at: Date.parse(at), text: "[mam] Job 0badcafe delegated to you" });
    expect(demoUsageLine(JSON.stringify({ demo_usage: "answer", id: "a1", input: 130, output: 15, synthetic: true, at }))).toEqual({ kind: "answer", at: Date.parse(at), model: DEMO_MODEL, id: "a1", tokens: { input: 130, output: 15, cache_write: 0, cache_read: 0 } });
    expect(demoUsageLine(JSON.stringify({ demo_usage: "answer", input: 130, output: 15, at }))).toBeUndefined();
    expect(demoUsageLine(JSON.stringify({ demo_usage: "answer", input: 0, output: 0, synthetic: true, at }))).toBeUndefined();
    expect(demoUsageLine("not json")).toBeUndefined();
    expect(KINDS.demo!.usage!.files({ cwd: "/w", ws: "/w", name: "dw", env: {} })).toEqual([demoUsageFile("/w", "dw")]);
    expect(KINDS.demo!.usage!.files({ cwd: "/w", ws: "/w", name: "../x", env: {} })).toEqual([]);
    // longer texts cost more, never nothing
    expect(syntheticTokens("", "")).toEqual({ input: 120, output: 12 });
    expect(syntheticTokens("x".repeat(400), "y".repeat(40))).toEqual({ input: 220, output: 22 });
  });
});

describe("the fold: whose turn, once per answer", () => {
  test("claude: each job gets exactly the answers of its turns (two jobs in a row each their own); the rest is the session's only", () => {
    const l = fold("claude", "wrk", join(FIX, "claude", `${CLAUDE_MAIN}.jsonl`));
    const mine = jobs.filter((j) => j.agent_session === "wrk");
    expect(mine.length).toBe(3);
    for (const j of mine) expect(tokensOf(l.jobs[j.job_id]!.by_session.wrk!)).toEqual(expected("anthropic", j.job_id));
    // the session's total: every answer in this file (the onboarding's too), each counted once
    const inFile = answers.filter((a) => a.api === "anthropic").slice(0, -1).map(asRecorded).reduce(add, zero);
    expect(tokensOf(l.sessions.wrk!.total)).toEqual(inFile);
    expect(Object.keys(l.sessions.wrk!.total)).toEqual(["claude-opus-4-8"]);
    expect(Object.keys(l.sessions.wrk!.days)).toEqual(["2026-12-01"]);
  });

  test("claude 2.1.332, whose transcript records a typed message as pasted content: each job still gets exactly the answers of its turns", () => {
    const dir = join(FIX, "claude-2.1.332");
    const ans: Answer[] = JSON.parse(readFileSync(join(dir, "answers.json"), "utf8"));
    const js: FixtureJob[] = JSON.parse(readFileSync(join(dir, "jobs.json"), "utf8"));
    const file = join(dir, readdirSync(dir).find((f) => f.endsWith(".jsonl"))!);
    expect(readFileSync(file, "utf8")).toContain('<pasted_content id=\\"');
    const c332: MeterContext = { ...ctx, job: (id) => { const j = js.find((x) => x.job_id === id); return j ? { agent_session: j.agent_session, reviewer_session: null, ended_ms: Date.parse(j.ended_at) + 1000 } : undefined; } };
    const l = emptyLedger();
    const cur: FileCursor = { session: "wrk", kind: "claude", ino: 1, offset: 0, turn: { job: null, iteration: null } };
    for (const f of facts("claude", file)) {
      const a = applyFact(cur, f, c332);
      if (a.began) noteJob(l, a.began, "wrk");
      if (a.delta) book(l, "claude", a.delta);
    }
    expect(js.length).toBe(3);
    for (const j of js) expect(tokensOf(l.jobs[j.job_id]!.by_session.wrk!)).toEqual(ans.filter((a) => a.job === j.job_id).map((a) => a.usage).reduce(add, zero));
    // the typed messages read as typed: the onboarding, then each job's header
    const turns = facts("claude", file).filter((x) => x.kind === "turn").map((x) => (x as { text: string }).text);
    expect(turns[0]).toStartWith("You are wrk, a claude agent");
    expect(turns.slice(1).map((t) => t.slice(0, 18))).toEqual(js.map((j) => `[mam] Job ${j.job_id}`));
  });

  test("codex: each job gets exactly what its turns added to the running total", () => {
    const l = fold("codex", "cdx", join(FIX, "codex", codexFile));
    for (const j of jobs.filter((x) => x.agent_session === "cdx")) expect(tokensOf(l.jobs[j.job_id]!.by_session.cdx!)).toEqual(expected("openai", j.job_id));
    expect(tokensOf(l.sessions.cdx!.total)).toEqual(expected("openai", "all"));
    expect(Object.keys(l.sessions.cdx!.total)).toEqual(["mock-model"]);
  });

  test("mam's texts name the job and the loop iteration; other texts none", () => {
    expect(deliveryOf("[mam] Job 3f9a0c1d delegated to you (w) by the user.\nTask: x")).toEqual({ job: "3f9a0c1d", iteration: 1 });
    expect(deliveryOf("[mam] Review for job 3f9a0c1d (iteration 2 of 3): w reports completed")).toEqual({ job: "3f9a0c1d", iteration: 2 });
    expect(deliveryOf("[mam] Job 3f9a0c1d iteration 3 of 3: reviewer r asks for changes")).toEqual({ job: "3f9a0c1d", iteration: 3 });
    expect(deliveryOf("[mam] Job 3f9a0c1d was cancelled: stop working on it.")).toEqual({ job: "3f9a0c1d", iteration: null });
    expect(deliveryOf("[mam] job 3f9a0c1d completed: done")).toBeUndefined(); // what a delegator is told
    expect(deliveryOf("please look at [mam] Job 3f9a0c1d delegated")).toBeUndefined();
  });

  test("a header for a job of another session, or of no job here, does not take the turn", () => {
    const c: FileCursor = { session: "other", kind: "claude", ino: 1, offset: 0, turn: { job: null, iteration: null } };
    const j = jobs[0]!;
    applyFact(c, { kind: "turn", at: Date.parse(j.ended_at) - 5000, text: `[mam] Job ${j.job_id} delegated to you (wrk)` }, ctx);
    expect(c.turn.job).toBeNull();
    applyFact(c, { kind: "turn", at: 0, text: "[mam] Job 0badc0de delegated to you (other)" }, ctx);
    expect(c.turn.job).toBeNull();
  });

  test("a message typed after the job ended (by a second) begins a turn of no job; one before it stays the job's", () => {
    const j = jobs[0]!;
    const c: FileCursor = { session: "wrk", kind: "claude", ino: 1, offset: 0, turn: { job: j.job_id, iteration: 1 } };
    applyFact(c, { kind: "turn", at: Date.parse(j.ended_at) + 500, text: "one more thing" }, ctx);
    expect(c.turn.job).toBe(j.job_id);
    applyFact(c, { kind: "turn", at: Date.parse(j.ended_at) + 1000, text: "and another" }, ctx);
    expect(c.turn).toEqual({ job: null, iteration: null });
  });

  test("a running total that goes down starts a new count; an answer repeated with more output counts only the growth", () => {
    const c: FileCursor = { session: "s", kind: "codex", ino: 1, offset: 0, turn: { job: null, iteration: null } };
    const t = (input: number, output: number): Tokens => ({ input, output, cache_write: 0, cache_read: 0 });
    expect(applyFact(c, { kind: "total", at: 1, tokens: t(100, 10) }, ctx).delta!.tokens).toEqual(t(100, 10));
    expect(applyFact(c, { kind: "total", at: 2, tokens: t(100, 10) }, ctx).delta).toBeUndefined();
    expect(applyFact(c, { kind: "total", at: 3, tokens: t(150, 12) }, ctx).delta!.tokens).toEqual(t(50, 2));
    expect(applyFact(c, { kind: "total", at: 4, tokens: t(30, 3) }, ctx).delta!.tokens).toEqual(t(30, 3));
    const a = { kind: "answer" as const, at: 5, model: "m", id: "msg_1" };
    expect(applyFact(c, { ...a, tokens: t(20, 1) }, ctx).delta!.tokens).toEqual(t(20, 1));
    expect(applyFact(c, { ...a, tokens: t(20, 1) }, ctx).delta).toBeUndefined();
    expect(applyFact(c, { ...a, tokens: t(20, 9) }, ctx).delta!.tokens).toEqual(t(0, 8));
  });
});

describe("the daemon's reader on a workspace", () => {
  let sb: Sandbox | undefined;
  afterEach(async () => {
    await sb?.cleanup();
    sb = undefined;
  });

  /** a workspace with the fixture's sessions and jobs, claude's and codex's files in their homes */
  function world(o: { claudeFiles?: "main" | "both" } = {}) {
    sb = makeSandbox("mam-usage-");
    const ws = sb.ws;
    const claudeDir = join(sb.root, "claude");
    const codexHome = join(sb.root, "codex");
    const project = join(claudeDir, "projects", ws.replace(/[^A-Za-z0-9]/g, "-"));
    mkdirSync(project, { recursive: true });
    mkdirSync(join(claudeDir, "sessions"), { recursive: true });
    const day = join(codexHome, "sessions", "2026", "12", "01");
    mkdirSync(day, { recursive: true });
    copyFileSync(join(FIX, "codex", codexFile), join(day, codexFile));
    mkdirSync(join(ws, ".mam", "jobs"), { recursive: true });
    writeFileSync(join(ws, ".mam", "agent-sessions.yaml"), readFileSync(join(FIX, "agent-sessions.yaml"), "utf8").replaceAll("/tmp/mam-fixture/ws", ws));
    for (const j of jobs) {
      writeRecord(ws, loopJob({ job_id: j.job_id, type: "single", reviewer_session: null, max_iterations: null, agent_session: j.agent_session, agent: j.agent_session === "wrk" ? "claude" : "codex", topic_prefix: `mam/jobs/${j.job_id}` }));
      writeFileSync(join(ws, ".mam", "jobs", `${j.job_id}.events.ndjson`), `${JSON.stringify({ schema_version: 1, seq: 1, job_id: j.job_id, event: "completed", timestamp: j.ended_at, detail: "done", source: j.agent_session, data: {} })}\n`);
    }
    const env = { ...sb.env, CLAUDE_CONFIG_DIR: claudeDir, CODEX_HOME: codexHome };
    const path = join(ws, ".mam", "agent-sessions.yaml");
    const logs: string[] = [];
    const meter = new UsageMeter({ ws, jobs: jobStore(ws), env, registry: { path, read: (opts) => readRegistry(path, opts), mutate: () => Promise.reject(new Error("read only")) }, log: (l) => logs.push(l), now: () => Date.parse("2026-12-01T18:00:00Z") });
    const main = join(project, `${CLAUDE_MAIN}.jsonl`);
    return { ws, project, claudeDir, meter, main, logs };
  }

  test("a file read in two polls, cut in the middle of a line, counts exactly what one read does; nothing new reads nothing", async () => {
    const w = world();
    const text = readFileSync(join(FIX, "claude", `${CLAUDE_MAIN}.jsonl`));
    // cut inside the second answer's line
    const second = text.indexOf('"type":"assistant"', text.indexOf('"type":"assistant"') + 1);
    writeFileSync(w.main, text.subarray(0, second + 40));
    const p1 = await w.meter.poll();
    expect(p1.facts).toBeGreaterThan(0);
    const mid = readLedger(w.ws) as ReturnType<typeof emptyLedger>;
    expect(mid.files[w.main]!.offset).toBe(text.lastIndexOf(0x0a, second) + 1);
    writeFileSync(w.main, text);
    await w.meter.poll();
    const l = readLedger(w.ws) as ReturnType<typeof emptyLedger>;
    for (const j of jobs.filter((x) => x.agent_session === "wrk")) {
      expect(tokensOf(l.jobs[j.job_id]!.by_session.wrk!)).toEqual(expected("anthropic", j.job_id));
      // the job's record has the same counts
      expect(tokensOf(readRecord(w.ws, j.job_id)!.usage!.by_session.wrk!)).toEqual(expected("anthropic", j.job_id));
    }
    const again = await w.meter.poll();
    expect(again).toEqual({ facts: 0, jobs: [], sessions: [], stopped: [], behind: false });
    // a meter started again (a daemon restart) goes on from the offsets it saved
    const w2 = new UsageMeter({ ws: w.ws, jobs: jobStore(w.ws), env: { ...sb!.env, CLAUDE_CONFIG_DIR: w.claudeDir, CODEX_HOME: join(sb!.root, "codex") }, registry: { path: join(w.ws, ".mam", "agent-sessions.yaml"), read: (o) => readRegistry(join(w.ws, ".mam", "agent-sessions.yaml"), o), mutate: () => Promise.reject(new Error("read only")) }, log: () => {} });
    expect((await w2.poll()).facts).toBe(0);
    expect(tokensOf((readLedger(w.ws) as typeof l).sessions.wrk!.total)).toEqual(tokensOf(l.sessions.wrk!.total));
  });

  test("a conversation id changed by /clear: the meter follows the file claude names for its pid, and keeps the old one", async () => {
    const w = world();
    copyFileSync(join(FIX, "claude", `${CLAUDE_MAIN}.jsonl`), w.main);
    copyFileSync(join(FIX, "claude", `${CLAUDE_CLEARED}.jsonl`), join(w.project, `${CLAUDE_CLEARED}.jsonl`));
    const pidFile = JSON.parse(readFileSync(join(FIX, "claude", "sessions", `${CLAUDE_PID}.json`), "utf8"));
    // the row still names the first conversation; claude's own file for its pid names the new one
    expect(pidFile.sessionId).toBe(CLAUDE_CLEARED);
    writeFileSync(join(w.claudeDir, "sessions", `${CLAUDE_PID}.json`), JSON.stringify({ ...pidFile, cwd: w.ws }));
    await w.meter.poll();
    const l = readLedger(w.ws) as ReturnType<typeof emptyLedger>;
    expect(Object.keys(l.files).sort()).toEqual([join(w.project, `${CLAUDE_CLEARED}.jsonl`), w.main, expect.stringContaining(CODEX_ID)].sort());
    // every claude answer, the one after /clear too, counted once; the one after /clear is no job's
    expect(tokensOf(l.sessions.wrk!.total)).toEqual(expected("anthropic", "all"));
    expect(tokensOf(mergeModels(...Object.values(l.jobs).map((j) => j.by_session.wrk)))).toEqual(
      answers.filter((a) => a.api === "anthropic" && a.job !== null).map(asRecorded).reduce(add, zero),
    );
    // a pid file of another folder is not this session's
    rmSync(join(w.project, `${CLAUDE_CLEARED}.jsonl`));
    expect(KINDS.claude!.usage!.files({ cwd: "/elsewhere", ws: "/elsewhere", name: "w", id: CLAUDE_MAIN, pid: CLAUDE_PID, env: { CLAUDE_CONFIG_DIR: w.claudeDir } })).toEqual([join(w.claudeDir, "projects", "-elsewhere", `${CLAUDE_MAIN}.jsonl`)]);
  });

  test("codex: the rollout is found by the row's conversation id, and its jobs get exactly their answers", async () => {
    const w = world();
    await w.meter.poll();
    const l = readLedger(w.ws) as ReturnType<typeof emptyLedger>;
    for (const j of jobs.filter((x) => x.agent_session === "cdx")) expect(tokensOf(readRecord(w.ws, j.job_id)!.usage!.by_session.cdx!)).toEqual(expected("openai", j.job_id));
    expect(tokensOf(l.sessions.cdx!.total)).toEqual(expected("openai", "all"));
  });

  test("a ledger that is not JSON is moved aside and counted again from the files", async () => {
    const w = world();
    copyFileSync(join(FIX, "claude", `${CLAUDE_MAIN}.jsonl`), w.main);
    writeFileSync(join(w.ws, ".mam", "usage.json"), "{ not json");
    await w.meter.poll();
    expect(readFileSync(join(w.ws, ".mam", "usage.json.broken"), "utf8")).toBe("{ not json");
    expect(w.logs.some((x) => x.includes("was not readable"))).toBe(true);
    const l = readLedger(w.ws) as ReturnType<typeof emptyLedger>;
    expect(tokensOf(l.sessions.cdx!.total)).toEqual(expected("openai", "all"));
  });
});
