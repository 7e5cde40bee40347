// Costs (docs/cost.md), the pure parts: prices as data (shipped, the user's over them, a model's
// name with a date or a context tag), what tokens cost, budgets and daily caps, a job's and a
// session's usage as users see it, the team's rate, and job wait's exit code for a job over its
// budget.
import { afterEach, describe, expect, spyOn, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { storeEnv, type Tokens } from "../../lib/agents/usage.ts";
import { checkLimits, dailyCapCheck, dailyLimits, PRICE_HINT } from "../../lib/cost/budget.ts";
import { emptyLedger } from "../../lib/cost/ledger.ts";
import { loadPrices, MAX_PRICE_FILE, priceOf, type PriceTable, shippedPrices, usdOf } from "../../lib/cost/prices.ts";
import { jobUsageView, sessionCost, teamRate } from "../../lib/cost/summary.ts";
import { compact, dollars, shortCost, usageText, usageView } from "../../lib/cost/view.ts";
import { foldStatus } from "../../lib/jobs/event.ts";
import { waitExitCode } from "../../lib/jobs/wait.ts";
import { loopJob } from "../helpers/job-record.ts";

const t = (input: number, output = 0, cache_write = 0, cache_read = 0): Tokens => ({ input, output, cache_write, cache_read });
const shipped = shippedPrices();

describe("prices", () => {
  test("the shipped table says when and where its prices were read, and prices the models the CLIs use", () => {
    expect(shipped.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(shipped.source.length).toBeGreaterThan(0);
    for (const s of shipped.source) expect(s).toStartWith("https://");
    expect(shipped.user).toBeNull();
    // Claude Code 2.1.197 asks for claude-opus-4-8
    expect(priceOf(shipped, "claude-opus-4-8")).toEqual({ input: 5, output: 25, cache_write: 6.25, cache_read: 0.5 });
    // and 2.1.332 for claude-opus-5-5
    expect(priceOf(shipped, "claude-opus-5-5")).toEqual({ input: 4, output: 20, cache_write: 5, cache_read: 0.2 });
    expect(priceOf(shipped, "gpt-5-codex")).toEqual({ input: 1.25, output: 10, cache_write: 1.25, cache_read: 0.125 });
  });

  test("a model's name matches with a snapshot date, a context tag or -latest; nothing else is guessed", () => {
    expect(priceOf(shipped, "claude-sonnet-4-5-20250929")).toBe(priceOf(shipped, "claude-sonnet-4-5")!);
    expect(priceOf(shipped, "claude-sonnet-4-5[1m]")).toBe(priceOf(shipped, "claude-sonnet-4-5")!);
    expect(priceOf(shipped, "gpt-5-2025-08-07")).toBe(priceOf(shipped, "gpt-5")!);
    expect(priceOf(shipped, "claude-3-5-haiku-latest")).toBe(priceOf(shipped, "claude-3-5-haiku")!);
    // a longer name is another model: gpt-5-mini is not gpt-5
    expect(priceOf(shipped, "gpt-5-mini")).toBeUndefined();
    expect(priceOf(shipped, "mock-model")).toBeUndefined();
    expect(priceOf(shipped, "constructor")).toBeUndefined();
  });

  test("what tokens cost: per million, each kind at its price", () => {
    expect(usdOf({ input: 3, output: 15, cache_write: 3.75, cache_read: 0.3 }, t(1000, 200, 30, 4000))).toBeCloseTo(0.0073125, 12);
  });

  describe("the user's file", () => {
    let dir: string | undefined;
    afterEach(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = undefined;
    });
    const home = (files: Record<string, string>) => {
      dir = mkdtempSync(join(tmpdir(), "mam-prices-"));
      mkdirSync(join(dir, "mam"), { recursive: true });
      for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, "mam", f), text);
      return { XDG_CONFIG_HOME: dir, HOME: dir };
    };

    test("none: the shipped table", () => {
      expect(loadPrices(home({}))).toEqual(shipped);
    });

    test("JSON or TOML: its models replace or add to the shipped ones; cache prices default to the input price", () => {
      const j = loadPrices(home({ "prices.json": JSON.stringify({ models: { "claude-opus-4-8": { input: 1, output: 2, cache_write: 3, cache_read: 4 }, mine: { input: 0.5, output: 1 } } }) }));
      expect(j.user).toEndWith("/mam/prices.json");
      expect(priceOf(j, "claude-opus-4-8")).toEqual({ input: 1, output: 2, cache_write: 3, cache_read: 4 });
      expect(priceOf(j, "mine")).toEqual({ input: 0.5, output: 1, cache_write: 0.5, cache_read: 0.5 });
      expect(priceOf(j, "gpt-5")).toEqual(priceOf(shipped, "gpt-5")!);
      rmSync(dir!, { recursive: true });
      const tm = loadPrices(home({ "prices.toml": '[models."my.model"]\ninput = 2\noutput = 8\ncache_read = 0.2\n' }));
      expect(priceOf(tm, "my.model")).toEqual({ input: 2, output: 8, cache_write: 2, cache_read: 0.2 });
    });

    test("a file that is not a price file is an error naming it and what is wrong; two files are one too many", () => {
      const cases: [string, string, string][] = [
        ["prices.json", "{ nope", "not valid JSON: "],
        ["prices.json", "[]", "not an object"],
        ["prices.json", "{}", "no `models` table"],
        ["prices.json", '{"models": {"m": {"input": "1", "output": 2}}}', "models.m.input is not a number of dollars ≥ 0"],
        ["prices.json", '{"models": {"m": {"input": 1, "output": -2}}}', "models.m.output is not a number of dollars ≥ 0"],
        ["prices.json", '{"models": {"m": {"input": 1, "output": 2, "cache_read": null}}}', "models.m.cache_read is not a number of dollars ≥ 0"],
        ["prices.toml", "models = 3", "no `models` table"],
        ["prices.toml", "[models\n", "not valid TOML: "],
      ];
      for (const [f, text, what] of cases) {
        const env = home({ [f]: text });
        let err: Error | undefined;
        try {
          loadPrices(env);
        } catch (e) {
          err = e as Error;
        }
        expect(err?.message).toStartWith(`${join(dir!, "mam", f)} is not a valid price file (${what}`);
        expect((err as { hint?: string }).hint).toBe("fix it or remove it (see docs/cost.md)");
        rmSync(dir!, { recursive: true });
        dir = undefined;
      }
      expect(() => loadPrices(home({ "prices.json": '{"models":{}}', "prices.toml": "[models]\n" }))).toThrow(/^two price files: .*prices\.json and .*prices\.toml$/);
    });

    // review P2: Bun's TOML parse grows faster than the file (0.6 / 2.8 / 107 s for 2k / 8k / 32k
    // tables); a 10 MB file kept a running mam ui at 100 % CPU for ~50 minutes
    test("a price file over the limit is refused before it is parsed: a 10 MB file of 32k tables", () => {
      const pad = `# ${"x".repeat(280)}\n`;
      let text = "";
      for (let i = 0; i < 32_768; i++) text += `[models.m${i}]\ninput = 1\noutput = 2\n${pad}`;
      const env = home({ "prices.toml": text });
      const path = join(dir!, "mam", "prices.toml");
      const size = Buffer.byteLength(text);
      expect(size).toBeGreaterThan(10_000_000);
      let err: (Error & { hint?: string }) | undefined;
      try {
        loadPrices(env);
      } catch (e) {
        err = e as Error;
      }
      expect(err?.message).toBe(`not a valid price file: ${path} is ${size} bytes, over the limit of ${MAX_PRICE_FILE}`);
      expect(err?.hint).toContain("keep only the models you use");
      // a file just under the limit is read
      let small = "";
      for (let i = 0; small.length < MAX_PRICE_FILE - 100; i++) small += `[models.m${i}]\ninput = 1\noutput = 2\n`;
      writeFileSync(path, small);
      expect(priceOf(loadPrices(env), "m0")).toEqual({ input: 1, output: 2, cache_write: 1, cache_read: 1 });
    });

    test("something other than a file (a FIFO nobody writes) is an error, not a wait", () => {
      const env = home({});
      const path = join(dir!, "mam", "prices.toml");
      expect(Bun.spawnSync(["mkfifo", path]).exitCode).toBe(0);
      expect(() => loadPrices(env)).toThrow(`${path} is not a valid price file (not a regular file)`);
    });

    test("the file is parsed again only when it changed (mam ui, the daemon and MCP ask every second)", () => {
      const env = home({ "prices.toml": "[models.a]\ninput = 1\noutput = 2\n" });
      const path = join(dir!, "mam", "prices.toml");
      const parse = spyOn(Bun.TOML, "parse");
      try {
        for (let i = 0; i < 5; i++) expect(priceOf(loadPrices(env), "a")?.output).toBe(2);
        expect(parse).toHaveBeenCalledTimes(1);
        writeFileSync(path, "[models.a]\ninput = 1\noutput = 3\n");
        utimesSync(path, new Date(), new Date(Date.now() + 2000));
        expect(priceOf(loadPrices(env), "a")?.output).toBe(3);
        expect(priceOf(loadPrices(env), "a")?.output).toBe(3);
        expect(parse).toHaveBeenCalledTimes(2);
        // a broken file: the same error each time, parsed once
        writeFileSync(path, "[models\n");
        for (let i = 0; i < 3; i++) expect(() => loadPrices(env)).toThrow("not valid TOML");
        expect(parse).toHaveBeenCalledTimes(3);
      } finally {
        parse.mockRestore();
      }
    });
  });
});

describe("usage as users see it", () => {
  test("a count by model: tokens by kind, dollars; a model without a price leaves dollars unknown, not 0", () => {
    const v = usageView({ "claude-sonnet-4-5": t(1000, 200, 30, 4000), "gpt-5": t(1000) }, shipped);
    expect(v.tokens).toEqual({ input: 2000, output: 200, cache_write: 30, cache_read: 4000, total: 6230 });
    expect(v.usd).toBeCloseTo(0.0073125 + 0.00125, 12);
    const u = usageView({ "claude-sonnet-4-5": t(10), odd: t(5) }, shipped);
    expect(u).toMatchObject({ known: true, usd: null, unpriced: ["odd"] });
    expect(u.models["claude-sonnet-4-5"]!.usd).toBeCloseTo(0.00003, 12);
    // a model with no tokens needs no price
    expect(usageView({ odd: t(0) }, shipped)).toMatchObject({ usd: 0, tokens: { total: 0 } });
    expect(usageText(u)).toBe("15 tokens (input 15 · output 0 · cache write 0 · cache read 0), $ unknown (no price for odd)");
    expect(shortCost(u)).toBe("15 tok");
    expect(shortCost(v)).toBe("$0.0086");
    expect(shortCost(undefined)).toBe("?");
    expect([dollars(0), dollars(0.004), dollars(12.345)]).toEqual(["$0.00", "$0.0040", "$12.35"]);
    expect([compact(999), compact(1000), compact(12_345), compact(4_100_000), compact(41_000_000)]).toEqual(["999", "1.0k", "12k", "4.1M", "41M"]);
  });

  const rec = (over = {}) => loopJob({ type: "single", reviewer_session: null, max_iterations: null, ...over });

  test("a job: unknown with why when nothing can be counted; its own counts, by session and iteration; another host's reports", () => {
    expect(jobUsageView(rec({ agent: "gemini" }), [], shipped)).toMatchObject({ known: false, tokens: null, why: "mam cannot read the records of gemini" });
    expect(jobUsageView(rec(), [], shipped)).toMatchObject({ known: false, why: "not metered yet: the workspace's daemon counts usage" });
    expect(jobUsageView(rec({ agent_session: "w@build" }), [], shipped)).toMatchObject({ known: false, why: "costed on build: no report yet" });
    const usage = { by_session: { wrk: { "claude-sonnet-4-5": t(100, 10) } }, by_iteration: { "1": { "claude-sonnet-4-5": t(100, 10) } } };
    const own = jobUsageView(rec({ usage }), [], shipped);
    expect(own).toMatchObject({ known: true, tokens: { total: 110 } });
    expect(own.by_session.wrk!.tokens!.total).toBe(110);
    expect(own.why).toBeUndefined();
    // a loop whose reviewer's kind mam cannot read: counted, and says what is not
    const loop = jobUsageView(loopJob({ usage, reviewer_agent: "gemini" }), [], shipped);
    expect(loop).toMatchObject({ known: true, tokens: { total: 110 }, why: "not counted: rev: mam cannot read the records of gemini" });
    // the agent's host reports its counts: the last report of each origin counts
    const report = (n: number, origin = "o1") => ({
      event: "usage",
      source: "mam",
      origin,
      data: { usage: { by_session: { "w@build": { "gpt-5": t(n) } }, by_iteration: { "1": { "gpt-5": t(n) } } } },
    });
    const remote = jobUsageView(rec({ agent_session: "w@build" }), [report(5), report(40), { event: "progress", source: "w@build", data: {} }], shipped);
    expect(remote).toMatchObject({ known: true, tokens: { total: 40 } });
    expect(remote.by_iteration["1"]!.tokens!.total).toBe(40);
    // not from mam: not a report
    expect(jobUsageView(rec({ agent_session: "w@build" }), [{ ...report(7), source: "w@build" }], shipped).known).toBe(false);
  });

  test("the meter looks for an agent's records where the agent keeps them: its own CLAUDE_CONFIG_DIR etc., not the daemon's (issue 39 #3)", () => {
    const daemon = { HOME: "/home/u", PATH: "/bin", CODEX_HOME: "/d/codex" };
    const agent = { MAM_SESSION: "wrk", HOME: "/home/u", CLAUDE_CONFIG_DIR: "/fresh/claude" };
    const e = storeEnv(daemon, agent, "wrk");
    expect(e).toMatchObject({ CLAUDE_CONFIG_DIR: "/fresh/claude", HOME: "/home/u", PATH: "/bin" });
    // unset for the agent is unset here: the daemon's own CODEX_HOME is not the agent's
    expect(e.CODEX_HOME).toBeUndefined();
    // not that session's process (its pid taken by another since), or nothing read: the daemon's
    expect(storeEnv(daemon, { ...agent, MAM_SESSION: "other" }, "wrk")).toBe(daemon);
    expect(storeEnv(daemon, undefined, "wrk")).toBe(daemon);
  });

  test("unknown, not 0: a session that reported on the job while the meter counted none of its answers (issue 39 #3)", () => {
    const said = [{ event: "started", source: "agent", data: {} }, { event: "completed", source: "agent", data: {} }];
    const zero = { by_session: { wrk: {} }, by_iteration: {} };
    // the meter read the header's turn but no answer: the agent reported, so it answered; not a known 0
    const v = jobUsageView(rec({ usage: zero }), said, shipped);
    expect(v).toMatchObject({ known: false, tokens: null, why: expect.stringContaining("wrk: it reported on the job, but mam has found none of its answers") });
    // nothing found at all (its conversation not where the meter looked): says so, not "not metered yet"
    expect(jobUsageView(rec(), said, shipped)).toMatchObject({ known: false, why: expect.stringContaining("wrk: it reported on the job") });
    // mam's and the daemon's own events are not the agent's: a job it never answered is a true 0
    const mams = [{ event: "queued", source: "mam", data: {} }, { event: "permission_required", source: "monitor", data: {} }, { event: "cancelled", source: "mam", data: {} }];
    expect(jobUsageView(rec({ usage: zero }), mams, shipped)).toMatchObject({ known: true, tokens: { total: 0 } });
    // counted answers stay known
    const usage = { by_session: { wrk: { m: t(5) } }, by_iteration: {} };
    expect(jobUsageView(rec({ usage }), said, shipped)).toMatchObject({ known: true, tokens: { total: 5 } });
    // a loop: the reviewer reported, none of its answers were found; the worker's are counted and the reviewer's part is named
    const loop = jobUsageView(loopJob({ usage: { by_session: { wrk: { m: t(5) }, rev: {} }, by_iteration: {} }, reviewer_agent: "claude" }), [...said, { event: "completed", source: "rev", data: {} }], shipped);
    expect(loop).toMatchObject({ known: true, tokens: { total: 5 }, why: expect.stringContaining("not counted: rev: it reported on the job") });
    expect(loop.by_session.rev).toBeUndefined();
  });

  test("a session: this job, today, in all from the ledger; unknown for a kind mam cannot read or before the daemon counted", () => {
    const now = Date.parse("2026-12-01T12:00:00Z");
    const l = emptyLedger();
    l.sessions.wrk = { kind: "claude", total: { m: t(500) }, days: { "2026-12-01": { m: t(300) }, "2026-11-30": { m: t(200) } }, recent: {} };
    l.jobs.abc12345 = { by_session: { wrk: { m: t(120) } }, by_iteration: {} };
    const c = sessionCost(l, "wrk", "claude", "abc12345", shipped, now);
    expect([c.job!.tokens!.total, c.today.tokens!.total, c.total.tokens!.total]).toEqual([120, 300, 500]);
    expect(sessionCost(l, "wrk", "claude", null, shipped, now).job).toBeNull();
    expect(sessionCost(l, "g", "gemini", null, shipped, now).total).toMatchObject({ known: false, why: "mam cannot read the records of gemini" });
    expect(sessionCost("none", "wrk", "claude", "abc12345", shipped, now).job).toMatchObject({ known: false });
    expect(sessionCost("broken", "wrk", "claude", null, shipped, now).today.why).toContain("usage.json is not readable");
    expect(sessionCost(l, "other", "codex", null, shipped, now).total.why).toBe("not metered yet: the workspace's daemon counts usage");
  });

  test("the team's rate: what every session used in the last hour, per hour", () => {
    const now = Date.parse("2026-12-01T12:00:00Z");
    const l = emptyLedger();
    l.sessions.a = { kind: "claude", total: {}, days: {}, recent: { "2026-12-01T11:10": { "gpt-5": t(1000) }, "2026-12-01T10:50": { "gpt-5": t(99999) } } };
    l.sessions.b = { kind: "codex", total: {}, days: {}, recent: { "2026-12-01T11:50": { "gpt-5": t(1000) } } };
    const r = teamRate(l, shipped, now);
    // the buckets from 11:10 on: 50 minutes
    expect(r).toMatchObject({ minutes: 50, tokens_per_hour: 2400 });
    expect(r.usd_per_hour).toBeCloseTo((2000 * 1.25) / 1e6 * (60 / 50), 12);
    expect(teamRate("none", shipped, now)).toEqual({ usd_per_hour: 0, tokens_per_hour: 0, minutes: 0 });
  });
});

describe("budgets", () => {
  const view = (m: Record<string, Tokens>) => usageView(m, shipped);
  const check = (m: Record<string, Tokens>, usd: number | null, tokens: number | null) => checkLimits(view(m), { usd, tokens }, "its budget", PRICE_HINT);

  test("over means more than the limit, in tokens or in dollars", () => {
    expect(check({ "gpt-5": t(500) }, null, 500)).toEqual({ over: false });
    expect(check({ "gpt-5": t(501) }, null, 500)).toEqual({ over: true, detail: "went over its budget: 501 tokens of 500", data: { tokens: 501, usd: "0.000626", max_tokens: 500 } });
    // $1.25 per million input tokens
    expect(check({ "gpt-5": t(800_000) }, 1, null)).toEqual({ over: false });
    expect(check({ "gpt-5": t(800_001) }, 1, null)).toMatchObject({ over: true, detail: "went over its budget: $1.00 of $1.00", data: { usd: "1.000001", budget_usd: "1" } });
  });

  test("a limit in dollars on a model with no price cannot be checked: over, naming the price to add", () => {
    expect(check({ mystery: t(10) }, 5, null)).toEqual({
      over: true,
      detail: "cannot check its budget of $5.00: no price for mystery (add its price to ~/.config/mam/prices.json)",
      data: { tokens: 10, budget_usd: "5", unpriced: "mystery" },
    });
    // in tokens it can
    expect(check({ mystery: t(10) }, null, 100)).toEqual({ over: false });
    // unknown usage is never over
    expect(checkLimits({ known: false, why: "x", tokens: null, usd: null, models: {} }, { usd: 1, tokens: 1 }, "its budget", PRICE_HINT)).toEqual({ over: false });
  });

  test("a row's daily cap: positive numbers only", () => {
    expect(dailyLimits({ daily_budget_usd: 2.5, daily_max_tokens: 1000 })).toEqual({ usd: 2.5, tokens: 1000 });
    expect(dailyLimits({ daily_budget_usd: "2", daily_max_tokens: 1.5 })).toEqual({ usd: null, tokens: null });
    expect(dailyLimits({ daily_budget_usd: -1, daily_max_tokens: 0 })).toEqual({ usd: null, tokens: null });
  });

  test("a session's daily cap: what it used on the UTC day of now, over means more than the cap", () => {
    const l = emptyLedger();
    l.sessions.w = { kind: "claude", total: {}, days: { "2026-11-30": { "gpt-5": t(9000) }, "2026-12-01": { "gpt-5": t(1000) } }, recent: {} };
    const now = Date.parse("2026-12-01T23:59:00Z");
    expect(dailyCapCheck(l, "w", { usd: null, tokens: 1000 }, shipped, now)).toEqual({ over: false });
    expect(dailyCapCheck(l, "w", { usd: null, tokens: 999 }, shipped, now)).toMatchObject({ over: true, detail: "went over its daily cap: 1,000 tokens of 999" });
    // a new UTC day starts from nothing; so do a session with nothing counted, no ledger, no cap
    expect(dailyCapCheck(l, "w", { usd: null, tokens: 999 }, shipped, Date.parse("2026-12-02T00:00:00Z"))).toEqual({ over: false });
    expect(dailyCapCheck(l, "other", { usd: null, tokens: 1 }, shipped, now)).toEqual({ over: false });
    expect(dailyCapCheck("none", "w", { usd: null, tokens: 1 }, shipped, now)).toEqual({ over: false });
    expect(dailyCapCheck(l, "w", { usd: null, tokens: null }, shipped, now)).toEqual({ over: false });
  });

  test("budget_exceeded ends a job (nothing after it changes the status); a usage report never starts one, nor moves a queued job", () => {
    const ev = (event: string, source = "w") => ({ event, source, detail: "" }) as never;
    expect(foldStatus([ev("started"), ev("budget_exceeded", "mam"), ev("completed")])).toBe("budget_exceeded");
    expect(foldStatus([ev("usage", "mam")])).toBe("pending");
    expect(foldStatus([ev("usage", "mam"), ev("started")])).toBe("running");
    expect(foldStatus([ev("queued", "mam"), ev("usage", "mam")])).toBe("queued");
    expect(foldStatus([ev("queued", "mam"), ev("budget_exceeded", "mam")])).toBe("budget_exceeded");
  });

  test("a pool job no agent has taken yet: its usage is unknown, saying so", () => {
    const v = jobUsageView({ job_id: "abc12345", agent: null, agent_session: "role:worker", reviewer_session: null, to_role: "worker" }, [], shipped);
    expect(v).toMatchObject({ known: false, tokens: null, usd: null, why: "no agent of worker has taken it yet" });
  });

  test("job wait: 6 when every job that did not complete went over its budget, 1 when one ended otherwise", () => {
    const jobs = (...s: string[]) => s.map((status, i) => ({ job_id: `0000000${i}`, status, last_event: null })) as never;
    expect(waitExitCode({ outcome: "done", jobs: jobs("completed", "completed") }, false)).toBe(0);
    expect(waitExitCode({ outcome: "done", jobs: jobs("completed", "budget_exceeded") }, false)).toBe(6);
    expect(waitExitCode({ outcome: "done", jobs: jobs("budget_exceeded", "error") }, false)).toBe(1);
    expect(waitExitCode({ outcome: "done", jobs: jobs("budget_exceeded", "running") }, true)).toBe(6);
    expect(waitExitCode({ outcome: "timeout", jobs: jobs("budget_exceeded", "running") }, false)).toBe(5);
    expect(waitExitCode({ outcome: "interrupted", jobs: jobs("completed", "running") }, false)).toBe(1);
  });
});

// the table's shape: the same as the prices a user writes
test("the shipped prices are a valid price file", () => {
  const p: PriceTable = shippedPrices();
  for (const [m, price] of Object.entries(p.models)) {
    expect(m).toMatch(/^[a-z0-9.-]+$/);
    for (const k of ["input", "output", "cache_write", "cache_read"] as const) expect(price[k]).toBeGreaterThanOrEqual(0);
    expect(price.output).toBeGreaterThanOrEqual(price.input);
    expect(price.cache_read).toBeLessThanOrEqual(price.input);
  }
});
