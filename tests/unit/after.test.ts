// Dependencies between jobs (docs/jobs.md#dependencies): the pure verdict, the words a waiting job
// shows, the parse of --after, and job list --tree.
import { expect, test } from "bun:test";
import { afterVerdict, heldWords, parseAfter } from "../../lib/jobs/after.ts";
import { treeText } from "../../lib/jobs/render.ts";
import type { CostedJobView } from "../../lib/jobs/query.ts";

const d = (id: string, status: string) => ({ id, status }) as { id: string; status: any };

test("each completed: ready; one not ended: held on the ones that have not, in order", () => {
  expect(afterVerdict([d("aaaaaaaa", "completed"), d("bbbbbbbb", "completed")], false)).toEqual({ state: "ready" });
  expect(afterVerdict([d("aaaaaaaa", "running"), d("bbbbbbbb", "completed"), d("cccccccc", "queued")], false)).toEqual({ state: "held", on: [d("aaaaaaaa", "running"), d("cccccccc", "queued")] });
  expect(afterVerdict([], false)).toEqual({ state: "ready" });
});

test("one that ended otherwise cancels it, with the reason, even while others run; any-end waits for each to end", () => {
  for (const bad of ["error", "cancelled", "timeout", "budget_exceeded"]) {
    expect(afterVerdict([d("aaaaaaaa", "running"), d("bbbbbbbb", bad)], false)).toEqual({ state: "cancel", why: `job bbbbbbbb, which it runs after, ended ${bad}` });
    expect(afterVerdict([d("aaaaaaaa", "completed"), d("bbbbbbbb", bad)], true)).toEqual({ state: "ready" });
  }
  expect(afterVerdict([d("aaaaaaaa", "running"), d("bbbbbbbb", "error")], true)).toEqual({ state: "held", on: [d("aaaaaaaa", "running")] });
  // a job that is gone cannot complete: cancelled either way
  expect(afterVerdict([d("aaaaaaaa", "gone")], true)).toEqual({ state: "cancel", why: "job aaaaaaaa, which it runs after, is gone (no record of it)" });
});

test("the words: one job or several, complete or end", () => {
  expect(heldWords([d("aaaaaaaa", "running")], false)).toBe("after job aaaaaaaa (running) completes");
  expect(heldWords([d("aaaaaaaa", "running"), d("bbbbbbbb", "queued")], false)).toBe("after jobs aaaaaaaa (running) and bbbbbbbb (queued) complete");
  expect(heldWords([d("aaaaaaaa", "running"), d("bbbbbbbb", "queued"), d("cccccccc", "pending")], true)).toBe("after jobs aaaaaaaa (running), bbbbbbbb (queued) and cccccccc (pending) end");
  expect(heldWords([d("aaaaaaaa", "running")], true)).toBe("after job aaaaaaaa (running) ends");
});

test("--after: comma-separated and repeated, each once, in the order given", () => {
  expect(parseAfter(["aaaaaaaa,bbbbbbbb", "cccccccc", " bbbbbbbb , ", "aaaaaaaa"])).toEqual(["aaaaaaaa", "bbbbbbbb", "cccccccc"]);
});

const view = (job_id: string, created_at: string, after?: string[]) =>
  ({ job_id, created_at, after, status: "completed", agent_session: "w", prompt: `task ${job_id.slice(0, 1)}`, events: 0, last_event: null }) as unknown as CostedJobView;

test("job list --tree: a diamond draws D under both B and C, its followers once; others at the top, oldest first", () => {
  const views = [view("dddddddd", "2026-12-02T10:00:03Z", ["bbbbbbbb", "cccccccc"]), view("bbbbbbbb", "2026-12-02T10:00:01Z", ["aaaaaaaa"]), view("eeeeeeee", "2026-12-02T10:00:04Z", ["dddddddd"]), view("cccccccc", "2026-12-02T10:00:02Z", ["aaaaaaaa"]), view("aaaaaaaa", "2026-12-02T10:00:00Z"), view("ffffffff", "2026-12-02T09:00:00Z", ["99999999"])];
  expect(treeText(views)).toBe(
    [
      "ffffffff  completed  w  task f",
      "aaaaaaaa  completed  w  task a",
      "├─ bbbbbbbb  completed  w  task b",
      "│  └─ dddddddd  completed  w  task d",
      "│     └─ eeeeeeee  completed  w  task e",
      "└─ cccccccc  completed  w  task c",
      "   └─ dddddddd  completed  w  task d  (its followers above)",
    ].join("\n"),
  );
});

test("job list --tree: a loop in hand-edited records is drawn once, not for ever", () => {
  const t = treeText([view("aaaaaaaa", "2026-12-02T10:00:00Z", ["bbbbbbbb"]), view("bbbbbbbb", "2026-12-02T10:00:01Z", ["aaaaaaaa"])]);
  expect(t.split("\n")).toHaveLength(3);
});

// ---- the board (mam status --jobs) ----------------------------------------------------------

import { boardOf, boardText, cardOf } from "../../lib/jobs/board.ts";
import type { JobRecord } from "../../lib/jobs/store.ts";

const rec = (o: Partial<JobRecord> = {}) => ({ job_id: "aaaaaaaa", created_at: "2026-12-02T10:00:00Z", agent_session: "w", reviewer_session: null, type: "single", prompt: "Fix   the\nlogin", iteration: 1, max_iterations: null, ...o }) as JobRecord;
const ev = (event: string, source: string, timestamp: string, detail = "") => ({ event, source, timestamp, detail, seq: 1, data: {} }) as any;

test("the board: each job in its column, who has it and since when", () => {
  expect(cardOf(rec(), [], "queued", "after job bbbbbbbb (running) completes")).toMatchObject({ column: "waiting", who: "w", since: "2026-12-02T10:00:00Z", task: "Fix the login", note: "after job bbbbbbbb (running) completes" });
  expect(cardOf(rec({ to_role: "worker", agent_session: "role:worker" }), [ev("queued", "mam", "2026-12-02T10:00:01Z", "no worker is free")], "queued", undefined)).toMatchObject({ column: "queued", who: "a free worker", since: "2026-12-02T10:00:01Z" });
  const loop = rec({ type: "loop", reviewer_session: "rev", max_iterations: 3 });
  expect(cardOf(loop, [ev("started", "w", "2026-12-02T10:00:02Z")], "running", undefined)).toMatchObject({ column: "working", who: "w", note: "round 1 of 3" });
  expect(cardOf(loop, [ev("started", "w", "2026-12-02T10:00:02Z"), ev("completed", "w", "2026-12-02T10:00:05Z")], "running", undefined)).toMatchObject({ column: "in_review", who: "rev", since: "2026-12-02T10:00:05Z" });
  const done = [ev("completed", "w", "2026-12-02T10:00:05Z")];
  expect(cardOf(rec(), done, "completed", undefined)).toMatchObject({ column: "done", since: "2026-12-02T10:00:05Z", note: "" });
  expect(cardOf(rec(), [...done, ev("merge_conflict", "mam", "2026-12-02T10:00:07Z", "in a.txt")], "completed", undefined)).toMatchObject({ column: "merging", who: "merge queue", note: "merge_conflict: in a.txt" });
  expect(cardOf(rec(), [...done, ev("merge_queued", "mam", "2026-12-02T10:00:06Z"), ev("merged", "mam", "2026-12-02T10:00:09Z", "main at 1234567")], "completed", undefined)).toMatchObject({ column: "done", since: "2026-12-02T10:00:09Z", note: "merged: main at 1234567" });
  expect(cardOf(rec(), [ev("error", "w", "2026-12-02T10:00:03Z", "the build broke")], "error", undefined)).toMatchObject({ column: "failed", note: "error: the build broke", since: "2026-12-02T10:00:03Z" });
});

test("the board as text: only columns that hold jobs, newest first, done cut to the newest five", () => {
  const cards = Array.from({ length: 7 }, (_, i) => cardOf(rec({ job_id: `0000000${i}` }), [ev("completed", "w", `2026-12-02T10:00:0${i}Z`)], "completed", undefined));
  const t = boardText(boardOf([...cards, cardOf(rec({ job_id: "ffffffff" }), [], "queued", "after job 00000001 (completed) completes")]));
  const lines = t.split("\n");
  expect(lines[0]).toBe("WAITING (1)");
  expect(lines[2]).toBe("DONE (7, the newest 5)");
  expect(lines[3]).toStartWith("  00000006  w  since 2026-12-02T10:00:06Z  Fix the login");
  expect(lines).toHaveLength(8);
  expect(boardText(boardOf([]))).toBe("no jobs");
});
