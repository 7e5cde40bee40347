// The queue's decisions (lib/jobs/queue.ts): priorities with aging, the submitters' turns, one job
// per agent, and the places in line; and the fold of a job that waits its turn.
import { describe, expect, test } from "bun:test";
import { foldStatus } from "../../lib/jobs/event.ts";
import { decideTimeout } from "../../lib/jobs/ingest.ts";
import { freeNow, plan, positions, rank, type Waiting } from "../../lib/jobs/queue.ts";
import type { JobRecord } from "../../lib/jobs/store.ts";

const w = (job_id: string, o: Partial<Waiting> = {}): Waiting => ({ job_id, to: null, role: "worker", priority: "normal", by: "", since: 1000, ...o });
const free = (...names: string[]) => names.map((name) => ({ name, role: "worker" }));
const counter = () => {
  let n = 0;
  return () => ++n;
};

describe("plan", () => {
  test("each free agent takes one job, the best first; agents by name", () => {
    const got = plan([w("a"), w("b", { priority: "high" }), w("c")], free("w2", "w1"), 1000, 300, new Map(), counter());
    expect(got).toEqual([
      { job_id: "b", to: "w1" },
      { job_id: "a", to: "w2" },
    ]);
  });

  test("a job for a named agent waits for that agent only; a pool job takes any of its role", () => {
    const got = plan([w("x", { to: "w2", role: null }), w("p")], free("w1"), 1000, 300, new Map(), counter());
    expect(got).toEqual([{ job_id: "p", to: "w1" }]);
    expect(plan([w("x", { to: "w2", role: null })], [{ name: "w2", role: "reviewer" }], 1000, 300, new Map(), counter())).toEqual([{ job_id: "x", to: "w2" }]);
    expect(plan([w("p", { role: "reviewer" })], free("w1"), 1000, 300, new Map(), counter())).toEqual([]);
  });

  test("aging: a low job waiting 2 × aging ranks with a fresh high one, and the older goes first", () => {
    expect(rank({ priority: "low", since: 0 }, 600, 300)).toBe(2);
    expect(rank({ priority: "high", since: 600 }, 600, 300)).toBe(2);
    const got = plan([w("high", { priority: "high", since: 600 }), w("low", { priority: "low", since: 0 })], free("w1"), 600, 300, new Map(), counter());
    expect(got).toEqual([{ job_id: "low", to: "w1" }]);
    // before that the high one goes first
    expect(plan([w("high", { priority: "high", since: 500 }), w("low", { priority: "low", since: 0 })], free("w1"), 500, 300, new Map(), counter())).toEqual([{ job_id: "high", to: "w1" }]);
  });

  test("fair between submitters: a burst of one does not hold up another's jobs", () => {
    const jobs = [...[1, 2, 3, 4].map((i) => w(`a${i}`, { by: "alice", since: 1000 + i })), ...[1, 2].map((i) => w(`b${i}`, { by: "bob", since: 1010 + i }))];
    const served = new Map<string, number>();
    const tick = counter();
    const order: string[] = [];
    let left = jobs;
    while (left.length) {
      const [got] = plan(left, free("w1"), 1020, 300, served, tick);
      order.push(got!.job_id);
      left = left.filter((j) => j.job_id !== got!.job_id);
    }
    expect(order).toEqual(["a1", "b1", "a2", "b2", "a3", "a4"]);
  });
});

test("positions: per agent and per role, in the order they would go", () => {
  const pos = positions([w("a", { since: 3 }), w("b", { since: 1 }), w("c", { priority: "high", since: 5 }), w("x", { to: "w1", role: null })], 10, 300);
  expect(Object.fromEntries(pos)).toEqual({ c: 1, b: 2, a: 3, x: 1 });
});

describe("the fold of a job that waits its turn", () => {
  const ev = (event: string, source = "mam") => ({ event, source, detail: "" }) as never;
  test("queued until dispatched; then pending until the agent reports", () => {
    expect(foldStatus([ev("queued")])).toBe("queued");
    expect(foldStatus([ev("queued"), ev("progress", "w1")])).toBe("queued");
    expect(foldStatus([ev("queued"), ev("dispatched")])).toBe("pending");
    expect(foldStatus([ev("queued"), ev("dispatched"), ev("started", "w1")])).toBe("running");
    expect(foldStatus([ev("queued"), ev("cancelled")])).toBe("cancelled");
  });

  test("its clock starts at its dispatch, and never runs while it waits", () => {
    const rec = { job_id: "12345678", status: "queued", created_at: "2026-12-01T00:00:00Z", updated_at: "2026-12-01T00:00:00Z", timeout_sec: 60, idle_timeout_sec: 0, type: "single", reviewer_session: null } as unknown as JobRecord;
    const t0 = Date.parse("2026-12-01T00:00:00Z") / 1000;
    const q = [{ event: "queued", source: "mam", detail: "", timestamp: "2026-12-01T00:00:00Z" }] as never[];
    expect(decideTimeout(rec, q, t0 + 3600)).toBeUndefined();
    const d = [...q, { event: "dispatched", source: "mam", detail: "", timestamp: "2026-12-01T00:59:00Z" }] as never[];
    expect(decideTimeout({ ...rec, status: "pending" }, d, t0 + 3590)).toBeUndefined();
    expect(decideTimeout({ ...rec, status: "pending" }, d, t0 + 3600)?.detail).toBe("no final event within 60 s");
  });
});

describe("a pool across the team: poolAgentElsewhere", () => {
  const { poolAgentElsewhere } = require("../../lib/team/roster.ts") as typeof import("../../lib/team/roster.ts");
  type A = { name: string; role: string | null; status?: string; live?: string; job?: { id: string; status: string } | null };
  const ws = (host: string, online: boolean, agents: A[]) => ({
    host,
    workspace: `/w/${host}`,
    ws_id: `id-${host}`,
    at: 0,
    seen: 0,
    protocol: 2,
    online,
    agents: agents.map((a) => ({ agent: "claude", status: "running", live: "idle", job: null, ...a })),
  });
  const fleet = (...w: ReturnType<typeof ws>[]) => ({ team: "t", reachable: true, dropped: 0, workspaces: w });

  test("the first free one of the role on another online host, by host then name", () => {
    const f = fleet(
      ws("hostC", true, [{ name: "a", role: "builder" }]),
      ws("hostB", true, [{ name: "z", role: "builder" }, { name: "m", role: "builder" }, { name: "b", role: "other" }]),
      ws("hostA", true, [{ name: "here", role: "builder" }]),
    );
    expect(poolAgentElsewhere(f, "builder", "hostA", true)).toEqual({ to: "m@hostB", free: true });
  });
  test("busy (working, an unfinished job), stopped or offline ones are not free; an ended job is no job", () => {
    const f = fleet(
      ws("hostB", true, [
        { name: "w1", role: "builder", live: "working" },
        { name: "w2", role: "builder", job: { id: "1", status: "running" } },
        { name: "w3", role: "builder", status: "stopped" },
        { name: "w4", role: "builder", job: { id: "2", status: "completed" } },
      ]),
      ws("hostC", false, [{ name: "a0", role: "builder" }]),
    );
    expect(poolAgentElsewhere(f, "builder", "hostA", true)).toEqual({ to: "w4@hostB", free: true });
  });
  test("none free: it waits here when it can; else the first of the role elsewhere, busy (its host queues it); none of the role: undefined", () => {
    const f = fleet(ws("hostB", true, [{ name: "w2", role: "builder", live: "working" }, { name: "w1", role: "builder", job: { id: "1", status: "queued" } }]));
    expect(poolAgentElsewhere(f, "builder", "hostA", true)).toBeUndefined();
    expect(poolAgentElsewhere(f, "builder", "hostA", false)).toEqual({ to: "w1@hostB", free: false });
    expect(poolAgentElsewhere(f, "nobody", "hostA", false)).toBeUndefined();
    // this host's own workspaces are never "elsewhere"
    expect(poolAgentElsewhere(fleet(ws("hostA", true, [{ name: "x", role: "builder" }])), "builder", "hostA", false)).toBeUndefined();
  });
});

describe("freeNow: an agent whose state mam cannot read (issue 39 item 1, review 2 O4)", () => {
  test("idle is free; at work, at a dialog, dead or unreachable is not", () => {
    expect(freeNow("idle", false, undefined, 100, 30)).toBe(true);
    for (const live of ["working", "blocked", "dead", "unreachable"]) expect(freeNow(live, true, 0, 100, 30)).toBe(false);
  });
  test("unknown: a shell is free (its last job ended); another kind once its screen has been still long enough", () => {
    expect(freeNow("unknown", true, undefined, 100, 30)).toBe(true);
    expect(freeNow("unknown", false, undefined, 100, 30)).toBe(false);
    expect(freeNow("unknown", false, 80, 100, 30)).toBe(false);
    expect(freeNow("unknown", false, 70, 100, 30)).toBe(true);
  });
});
