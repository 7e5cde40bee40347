// The merge queue's pure decisions (lib/ops/job/merge-plan.ts): which entry goes next, what a job's
// end makes of an entry waiting on it, and what each merge outcome leads to.
import { describe, expect, test } from "bun:test";
import { afterOutcome, MAX_FIXES, MAX_TRIES, type MergeEntry, nextMerge, positions, promote, readyTargets } from "../../lib/ops/job/merge-plan.ts";
import { demoSteps, worktreeOfPrompt } from "../../lib/agents/demo-agent.ts";

const entry = (job_id: string, o: Partial<MergeEntry> = {}): MergeEntry => ({ job_id, session: `s-${job_id}`, branch: `b-${job_id}`, worktree: `/wt/${job_id}`, target: "main", state: "queued", order: 1, since: 0, fixes: 0, tries: 0, ...o });

describe("queue order", () => {
  test("first in line goes first; one left merging by a dead runner goes before any", () => {
    const es = [entry("c", { order: 3 }), entry("a", { order: 1 }), entry("b", { order: 2 }), entry("x", { order: 0, target: "dev" })];
    expect(nextMerge(es, "main", 100)?.job_id).toBe("a");
    expect(nextMerge([...es, entry("m", { order: 9, state: "merging" })], "main", 100)?.job_id).toBe("m");
    expect(nextMerge(es, "dev", 100)?.job_id).toBe("x");
    expect([...positions(es, "main")]).toEqual([
      ["a", 1],
      ["b", 2],
      ["c", 3],
    ]);
  });

  test("an entry waiting to be retried is passed over until its time; waiting, fixing and done ones never go", () => {
    const es = [entry("a", { order: 1, retry_at: 200 }), entry("b", { order: 2 }), entry("w", { order: 0, state: "awaiting" }), entry("f", { order: 0, state: "fixing" }), entry("d", { order: 0, state: "merged" })];
    expect(nextMerge(es, "main", 100)?.job_id).toBe("b");
    expect(nextMerge(es, "main", 200)?.job_id).toBe("a");
    expect(readyTargets([entry("a", { retry_at: 200 }), entry("w", { state: "awaiting", target: "dev" })], 100)).toEqual([]);
    expect(readyTargets([entry("a", { retry_at: 200 }), entry("m", { state: "merging", target: "dev" })], 100)).toEqual(["dev"]);
  });
});

describe("a job's end", () => {
  test("completed puts it in line; a failed end drops it; still running changes nothing", () => {
    expect(promote(entry("a", { state: "awaiting" }), "completed")?.to).toBe("queued");
    expect(promote(entry("a", { state: "awaiting" }), "running")).toBeUndefined();
    expect(promote(entry("a", { state: "awaiting" }), "queued")).toBeUndefined();
    for (const s of ["error", "cancelled", "timeout", "budget_exceeded"] as const) expect(promote(entry("a", { state: "awaiting" }), s)).toMatchObject({ to: "dropped" });
    expect(promote(entry("a", { state: "fixing", fix_job: "ffff0000" }), "completed")).toEqual({ to: "queued", note: "fix job ffff0000 completed" });
    expect(promote(entry("a", { state: "fixing", fix_job: "ffff0000" }), "error")?.note).toContain("fix job ffff0000 ended error");
    expect(promote(entry("a", { state: "queued" }), "completed")).toBeUndefined();
    expect(promote(entry("a", { state: "awaiting" }), undefined)?.to).toBe("dropped");
  });
});

describe("after each outcome", () => {
  test("landed: merged, with the new target commit in the event", () => {
    const s = afterOutcome(entry("a"), { kind: "landed", commit: "c0ffee", onto: "01d", noop: false, via: "update-ref", followed: true }, 50, undefined);
    expect(s.set).toMatchObject({ state: "merged", commit: "c0ffee" });
    expect(s.event).toMatchObject({ event: "merged", data: { commit: "c0ffee", target: "main", onto: "01d" } });
    expect(s.fix).toBeUndefined();
  });

  test("the target moved: back in line at its place, tried again; too many tries drop it", () => {
    const s = afterOutcome(entry("a", { order: 4 }), { kind: "moved", onto: "01d" }, 50, undefined);
    expect(s.set).toMatchObject({ state: "queued", tries: 1 });
    expect(s.set.order).toBeUndefined();
    expect(s.event).toBeUndefined();
    expect(afterOutcome(entry("a", { tries: MAX_TRIES - 1 }), { kind: "moved", onto: "01d" }, 50, undefined).set.state).toBe("dropped");
  });

  test("blocked (a dirty checkout of the target): stays queued, retried later, says why", () => {
    const s = afterOutcome(entry("a"), { kind: "blocked", why: "main is checked out in /ws, which has uncommitted changes" }, 50, undefined);
    expect(s.set).toMatchObject({ state: "queued", blocked: expect.stringContaining("uncommitted"), retry_at: 60 });
    expect(s.event).toBeUndefined();
  });

  test("a conflict: merge_conflict with files and hunks, and a fix job to its agent carrying them", () => {
    const s = afterOutcome(entry("a"), { kind: "conflict", onto: "01d", files: ["x.txt"], diff: "<<<<<<< HEAD\n1\n=======\n2\n>>>>>>> c", commit: "abc fix" }, 50, undefined);
    expect(s.set).toMatchObject({ state: "fixing", fixes: 1 });
    expect(s.event).toMatchObject({ event: "merge_conflict", data: { files: ["x.txt"] } });
    expect(s.fix).toContain("conflicts in x.txt");
    expect(s.fix).toContain("<<<<<<< HEAD");
    expect(s.fix).toContain("git rebase main");
  });

  test("a red check: check_failed with its last lines, and a fix job; after MAX_FIXES, dropped", () => {
    const o = { kind: "check_failed" as const, onto: "01d", rebased: "2ed", exit: 1, timedOut: false, tail: "FAIL: test 3", log: "/l" };
    const s = afterOutcome(entry("a"), o, 50, "npm test");
    expect(s.set.state).toBe("fixing");
    expect(s.event).toMatchObject({ event: "check_failed", data: { exit: 1, tail: "FAIL: test 3" } });
    expect(s.fix).toContain("`npm test`");
    expect(s.fix).toContain("FAIL: test 3");
    const last = afterOutcome(entry("a", { fixes: MAX_FIXES }), o, 50, "npm test");
    expect(last.set.state).toBe("dropped");
    expect(last.fix).toBeUndefined();
    expect(last.event?.data.gave_up).toBe(true);
  });
});

describe("the demo agent in a worktree", () => {
  const header = (task: string) =>
    [
      `[mam] Job 0123abcd delegated to you (w1) by the user.`,
      `Task: ${task}`,
      "Work in your git worktree /ws/.mam/worktrees/w1 on branch w1 (made from main); commit your changes on w1 before you report completed.",
      "Expected artifacts: part1.txt",
      "  mam job event 0123abcd completed --source w1 --workspace /ws --detail 'x'",
    ].join("\n");

  test("writes its artifacts in its worktree and commits them; a conflict job rebases first", () => {
    expect(worktreeOfPrompt(header("x"))).toEqual({ path: "/ws/.mam/worktrees/w1", branch: "w1" });
    const steps = demoSteps(header("build part 1"), { passOn: 1 }, 0);
    expect(steps).toContainEqual({ write: "part1.txt", in: "/ws/.mam/worktrees/w1" });
    expect(steps).toContainEqual({ commit: "/ws/.mam/worktrees/w1", message: "demo agent: part1.txt" });
    const fix = demoSteps(header("mam's merge queue could not rebase your branch w1 onto main (at 01d): commit abc conflicts in x.txt."), { passOn: 1 }, 0);
    expect(fix).toContainEqual({ rebase: "/ws/.mam/worktrees/w1", onto: "main" });
  });
});
