// The daemon's reactions, run in process (lib/ops/react, tests/helpers/reactions.ts): each with
// testDeps of a temp workspace, no daemon and no broker. And the feed (lib/daemon/feed.ts) on a
// synthetic table: the order of the table, a reaction failing alone, an event taken by one.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { reactionHooks } from "../../lib/daemon/feed.ts";
import { appendEvent, type JobSpec, registerJob } from "../../lib/jobs/store.ts";
import type { HookContext } from "../../lib/ops/react/context.ts";
import { notifyQueued, overdueQueued, queuedMinutes } from "../../lib/ops/react/notify-queued.ts";
import { queueDispatch } from "../../lib/ops/react/queue-dispatch.ts";
import { defineReaction } from "../../lib/ops/react/reaction.ts";
import { testDeps } from "../helpers/ops.ts";
import { reactionRun } from "../helpers/reactions.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

let sb: Sandbox;
beforeEach(() => {
  sb = makeSandbox("mam-react-");
});
afterEach(async () => {
  await sb.cleanup();
});

const spec: JobSpec = {
  agent_session: "w1", agent: "demo", prompt: "x", delegator: null, type: "single", reviewer_session: null,
  max_iterations: null, timeout_sec: 3600, idle_timeout_sec: 120, expected_artifacts: [], topic_prefix_base: "mam/jobs",
};

describe("notify.queued: a job waiting longer than MAM_NOTIFY_QUEUED_MIN is a notification, once", () => {
  test("the decision is pure: over the minutes, not told before", () => {
    const w = [
      { job_id: "a", session: "w1", since: 1000 },
      { job_id: "b", session: "w1", since: 1500 },
    ];
    expect(overdueQueued(w, 1000 + 600, 10, new Set())).toEqual([w[0]!]);
    expect(overdueQueued(w, 1500 + 600, 10, new Set(["a"]))).toEqual([w[1]!]);
    expect(overdueQueued(w, 1000 + 599, 10, new Set())).toEqual([]);
    expect([queuedMinutes({}), queuedMinutes({ MAM_NOTIFY_QUEUED_MIN: "0" }), queuedMinutes({ MAM_NOTIFY_QUEUED_MIN: "x" }), queuedMinutes({ MAM_NOTIFY_QUEUED_MIN: "2.5" })]).toEqual([undefined, undefined, undefined, 2.5]);
  });

  test("through the user's sinks: nothing before the minutes, one notification after, none again", async () => {
    const out = join(sb.root, "got.ndjson");
    const state = join(sb.home, ".local", "state", "mam");
    mkdirSync(state, { recursive: true, mode: 0o700 });
    writeFileSync(join(state, "notify.json"), JSON.stringify({ schema_version: 1, sinks: [{ id: "1", type: "command", on: ["queued"], command: `cat >> '${out}'` }] }));
    const r = await registerJob(sb.ws, spec);
    const q = await appendEvent(sb.ws, r.job_id, { event: "queued", source: "mam", detail: "waits for w1", data: { to: "w1", position: 1 } });
    const at = Date.parse(q!.payload.timestamp) / 1000;
    let now = at + 9 * 60;
    const deps = testDeps(sb.ws, { clock: { epoch: () => now, ms: () => now * 1000 } }, sb.with({ MAM_NOTIFY_QUEUED_MIN: "10" }));
    const run = reactionRun(notifyQueued, deps);
    await run.feed("poll");
    expect(existsSync(out)).toBe(false);
    now = at + 10 * 60;
    await run.feed("poll");
    await run.feed("poll");
    const got = readFileSync(out, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({ kind: "queued", job_id: r.job_id, session: "w1", title: `mam: job ${r.job_id} has waited 10 min in the queue (w1)` });
    // off without the variable: nothing is read, nothing sent
    const off = reactionRun(notifyQueued, testDeps(sb.ws, { clock: { epoch: () => now + 3600, ms: () => 0 } }, sb.with({})));
    await off.feed("poll");
    expect(readFileSync(out, "utf8").trim().split("\n")).toHaveLength(1);
  });

  test("a job no longer waiting is not told of", async () => {
    const out = join(sb.root, "got.ndjson");
    const state = join(sb.home, ".local", "state", "mam");
    mkdirSync(state, { recursive: true, mode: 0o700 });
    writeFileSync(join(state, "notify.json"), JSON.stringify({ schema_version: 1, sinks: [{ id: "1", type: "command", on: ["queued"], command: `cat >> '${out}'` }] }));
    const r = await registerJob(sb.ws, spec);
    await appendEvent(sb.ws, r.job_id, { event: "queued", source: "mam", detail: "waits", data: { to: "w1", position: 1 } });
    await appendEvent(sb.ws, r.job_id, { event: "dispatched", source: "mam", detail: "its turn", data: { to: "w1" } });
    const deps = testDeps(sb.ws, { clock: { epoch: () => Date.now() / 1000 + 3600, ms: () => 0 } }, sb.with({ MAM_NOTIFY_QUEUED_MIN: "1" }));
    await reactionRun(notifyQueued, deps).feed("poll");
    expect(existsSync(out)).toBe(false);
  });
});

describe("queue.dispatch", () => {
  test("a queued job this user's mam did not write is never dispatched, and said once, not every tick", async () => {
    // registered without the user's key: no mark, as a cloned repository's job would be
    const r = await registerJob(sb.ws, spec);
    await appendEvent(sb.ws, r.job_id, { event: "queued", source: "mam", detail: "waits", data: { to: "w1", position: 1 } });
    const run = reactionRun(queueDispatch, testDeps(sb.ws, {}, sb.with({})));
    for (let i = 0; i < 3; i++) await run.feed("watch");
    const said = run.lines.filter((l) => l.includes(`job ${r.job_id}`) && l.includes("did not write it"));
    expect(said).toHaveLength(1);
    expect(said[0]).toContain("it is never dispatched");
    expect(run.published).toEqual([]);
  });
});

describe("the feed: hook events through a table", () => {
  const ctxOf = (lines: string[]): HookContext => ({ ws: sb.ws, mode: "polling", signal: new AbortController().signal, log: (l) => void lines.push(l), debug: () => {}, publish: async () => false, aside: () => {}, settled: async () => {}, subscribe: () => {}, unsubscribe: () => {} });

  test("in the table's order; a reaction failing alone is logged once and the others go on; one without `alone` ends the run", async () => {
    const ran: string[] = [];
    const broken = defineReaction({ name: "broken", on: ["watch", "poll"], alone: { watch: "broken failed" }, state: () => ({ n: 0 }), async run(_d, st, { on }) {
      st.n++;
      ran.push(`broken ${on} ${st.n}`);
      throw new Error("no");
    } });
    const after = defineReaction({ name: "after", on: ["watch", "poll"], state: () => ({}), async run(_d, _s, { on }) {
      ran.push(`after ${on}`);
    } });
    const hooks = reactionHooks(testDeps(sb.ws, {}, sb.with({})), [broken, after]);
    const lines: string[] = [];
    await hooks.watch!(ctxOf(lines));
    await hooks.watch!(ctxOf(lines));
    expect(ran).toEqual(["broken watch 1", "after watch", "broken watch 2", "after watch"]);
    expect(lines).toEqual(["watch: broken failed: no (logged once; the daemon goes on with the rest)"]);
    await expect(hooks.poll(ctxOf(lines))).rejects.toThrow("no");
    expect(ran.at(-1)).toBe("broken poll 3");
  });

  test("an event taken by one reaction goes no further", async () => {
    const ran: string[] = [];
    const taker = defineReaction({ name: "taker", on: ["event"], state: () => ({}), async run(_d, _s, tick) {
      ran.push(`taker ${tick.topic}`);
      if (tick.topic === "mine") tick.done = true;
    } });
    const next = defineReaction({ name: "next", on: ["event"], state: () => ({}), async run(_d, _s, tick) {
      ran.push(`next ${tick.topic}`);
    } });
    const hooks = reactionHooks(testDeps(sb.ws, {}, sb.with({})), [taker, next]);
    await hooks.onEvent("mine", Buffer.from(""), ctxOf([]));
    await hooks.onEvent("other", Buffer.from(""), ctxOf([]));
    expect(ran).toEqual(["taker mine", "taker other", "next other"]);
  });
});
