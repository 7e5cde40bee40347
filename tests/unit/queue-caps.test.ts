// Caps on the queue and on schedules (security review 2, Q1/Q2): a flood of queued jobs for one
// agent (1 200 in the review, no cap) is refused past MAM_QUEUE_MAX_PER_AGENT (or MAM_QUEUE_MAX for
// the workspace) with a clear error and nothing written; `--every` has a floor (MAM_MIN_EVERY_S,
// one minute), where `--every 1s` made a job a second, forever.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { queueFull } from "../../lib/jobs/queue.ts";
import type { JobSpec } from "../../lib/jobs/store.ts";
import { readQueue, registerInTurn } from "../../lib/ops/job/queue.ts";
import { appendEvent, jobStore, type JobStore } from "../../lib/jobs/store.ts";
import { createSchedule } from "../../lib/ops/job/schedule.ts";
import { realDeps } from "../../lib/ops/wiring.ts";
import { MamError } from "../../lib/sys/errors.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

let sb: Sandbox;
beforeEach(() => {
  sb = makeSandbox("mam-caps-");
});
afterEach(async () => {
  await sb.cleanup();
});

const spec: JobSpec = {
  agent_session: "w1", agent: "demo", prompt: "x", delegator: null, type: "single", reviewer_session: null,
  max_iterations: null, timeout_sec: 3600, idle_timeout_sec: 120, expected_artifacts: [], topic_prefix_base: "mam/jobs",
};
const refusal = async (p: Promise<unknown>): Promise<MamError> => {
  try {
    await p;
  } catch (e) {
    if (e instanceof MamError) return e;
    throw e;
  }
  throw new Error("not refused");
};

describe("queueFull", () => {
  const line = (n: number, to: string | null, role: string | null) => Array.from({ length: n }, () => ({ to, role }));
  test("an agent's line, a role's line, the workspace's", () => {
    const caps = { perAgent: 3, total: 5 };
    expect(queueFull(line(2, "w1", null), { to: "w1" }, caps)).toBeUndefined();
    expect(queueFull(line(3, "w1", null), { to: "w1" }, caps)).toEqual({ n: 3, cap: 3, of: "agent" });
    expect(queueFull(line(3, "w1", null), { to: "w2" }, caps)).toBeUndefined();
    expect(queueFull(line(3, null, "worker"), { role: "worker" }, caps)).toEqual({ n: 3, cap: 3, of: "agent" });
    expect(queueFull([...line(2, "w1", null), ...line(2, "w2", null), ...line(1, null, "r")], { to: "w3" }, caps)).toEqual({ n: 5, cap: 5, of: "workspace" });
  });
});

describe("the queue's cap at submit", () => {
  test("past MAM_QUEUE_MAX_PER_AGENT a job is refused (exit 4), nothing registered; raising it lets it wait", async () => {
    const deps = realDeps(sb.ws, sb.with({ MAM_QUEUE_MAX_PER_AGENT: "3" }));
    for (let i = 0; i < 3; i++) expect((await registerInTurn(deps, spec, { name: "w1", working: true }, undefined)).go).toBeNull();
    const e = await refusal(registerInTurn(deps, spec, { name: "w1", working: true }, undefined));
    expect(e.exitCode).toBe(4);
    expect(e.message).toBe("3 jobs wait already for w1 (the cap: MAM_QUEUE_MAX_PER_AGENT=3); nothing was submitted");
    expect(e.hint).toContain("raise MAM_QUEUE_MAX_PER_AGENT");
    expect(deps.jobs.ids()).toHaveLength(3);
    const more = realDeps(sb.ws, sb.with({ MAM_QUEUE_MAX_PER_AGENT: "4" }));
    expect((await registerInTurn(more, spec, { name: "w1", working: true }, undefined)).position).toBe(4);
    // the workspace's cap counts every line
    const ws = realDeps(sb.ws, sb.with({ MAM_QUEUE_MAX: "4" }));
    expect((await refusal(registerInTurn(ws, spec, { name: "w2", working: true }, undefined))).message).toBe("4 jobs wait already in this workspace (the cap: MAM_QUEUE_MAX=4); nothing was submitted");
  });
});

describe("the floor of --every", () => {
  test("under a minute is a usage error naming the fix; MAM_MIN_EVERY_S moves it", async () => {
    const deps = realDeps(sb.ws, sb.env);
    const e = await refusal(createSchedule(deps, { to: "w1", prompt: "x" }, { every: "1s" }));
    expect(e.exitCode).toBe(2);
    // ({{every}}: --every on the command line, every in MCP)
    expect(e.message).toBe("{{every}} 1s is shorter than the shortest period between runs (1m)");
    expect(e.hint).toBe("give {{every}} 1m or more (MAM_MIN_EVERY_S sets the floor, in seconds)");
    // a minute passes the floor (then the target is looked for: none here)
    expect((await refusal(createSchedule(deps, { to: "w1", prompt: "x" }, { every: "1m" }))).exitCode).toBe(3);
    expect((await refusal(createSchedule(realDeps(sb.ws, sb.with({ MAM_MIN_EVERY_S: "1" })), { to: "w1", prompt: "x" }, { every: "1s" }))).exitCode).toBe(3);
  });
});

describe("the daemon's look at the queue every second", () => {
  test("reads only the jobs whose record or journal changed since its last look", async () => {
    const deps = realDeps(sb.ws, sb.env);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await registerInTurn(deps, spec, { name: "w1", working: true }, undefined)).record.job_id);
    const inner = jobStore(sb.ws, sb.env);
    const reads: string[] = [];
    const counted: JobStore = { ...inner, read: (id) => (reads.push(id), inner.read(id)), journal: (id) => (reads.push(id), inner.journal(id)) };
    const first = readQueue(counted, undefined);
    expect(first.waiting.map((w) => w.job_id).sort()).toEqual([...ids].sort());
    expect(reads.length).toBe(10);
    reads.length = 0;
    const again = readQueue(counted, undefined);
    expect(reads).toEqual([]);
    expect(again.waiting).toEqual(first.waiting);
    // one job changes: only it is read again, and what it is now counts
    await appendEvent(sb.ws, ids[2]!, { event: "cancelled", detail: "no", source: "user" });
    const after = readQueue(counted, undefined);
    expect(reads).toEqual([ids[2], ids[2]]);
    expect(after.waiting.map((w) => w.job_id)).not.toContain(ids[2]);
    expect(after.waiting).toHaveLength(4);
  });
});
