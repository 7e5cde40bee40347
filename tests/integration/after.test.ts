// Dependencies between jobs (issue 35 item 1; docs/jobs.md#dependencies), through the compiled
// binary with fake agents on the fake herdr and the workspace's daemon: a diamond (A → B, C → D)
// runs in order, each waiting job saying what it waits for; an error in one cancels the job after
// it with the reason, and --after-any-end runs it anyway; unknown ids and a dependency that has
// already failed are refused at submit with nothing written; job list --tree draws the graph.
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { createAgent, type E2E, ensureDaemon, journalEvents, monitorLog, jobRecords, newWorkspace, openGate, startE2E, submitJob, type Ws } from "../helpers/jobs-e2e.ts";
import { waitFor } from "../helpers/sandbox.ts";
import { startUiProcess } from "../helpers/browser.ts";

let e: E2E;
beforeAll(async () => {
  e = await startE2E("mam-after-");
});
afterAll(async () => {
  await e.cleanup();
});

const started: Ws[] = [];
afterEach(async () => {
  for (const w of started.splice(0)) await w.mam(["daemon", "stop"]);
});

const status = async (w: Ws, id: string) => JSON.parse((await w.mam(["job", "status", id, "--json"])).stdout);
const at = (w: Ws, id: string, event: string) => Date.parse((journalEvents(w.dir, id).find((x) => x.event === event) as { timestamp?: string } | undefined)?.timestamp ?? "NaN");
const jobFiles = (w: Ws) => jobRecords(w.dir);

test("a diamond: B and C after A, D after both; each waits saying for what, and runs only once what it runs after has completed", async () => {
  const w = newWorkspace(e, {}, { gated: true });
  await ensureDaemon(w, "polling", started);
  const [a1, b1, c1, d1] = [w.n("a"), w.n("b"), w.n("c"), w.n("d")];
  for (const n of [a1, b1, c1, d1]) await createAgent(e, w, n, "worker");
  const A = await submitJob(w, ["--to", a1, "--prompt", "part A"]);
  expect(await waitFor(() => journalEvents(w.dir, A).some((x) => x.event === "started"), 20_000, 100)).toBe(true);
  const b = await w.mam(["job", "submit", "--to", b1, "--after", A, "--prompt", "part B"]);
  expect(b.code, b.stderr).toBe(0);
  const B = b.stdout.trim();
  expect(b.stderr).toContain(`job ${B} waits until after job ${A} (running) completes, then its turn for ${b1}`);
  const C = await submitJob(w, ["--to", c1, "--after", A, "--prompt", "part C"]);
  const d = await w.mam(["job", "submit", "--to", d1, "--after", `${B},${C}`, "--prompt", "join them", "--json"]);
  expect(d.code, d.stderr).toBe(0);
  const dj = JSON.parse(d.stdout);
  const D = dj.job_id as string;
  expect(dj).toMatchObject({ status: "queued", after: [B, C], position: null, waits_for: `after jobs ${B} (queued) and ${C} (queued) complete` });
  // they hold: nothing typed into B, C, D while A works
  await Bun.sleep(1500);
  for (const id of [B, C, D]) expect((await status(w, id)).status).toBe("queued");
  expect((await w.mam(["job", "status", D])).stdout).toContain(`queued (after jobs ${B} (queued) and ${C} (queued) complete)`);
  expect((await w.mam(["job", "status", D])).stdout).toMatch(new RegExp(`after +${B}, ${C} \\(each to complete\\)`));
  // a job for d1 without --after is not held up by D (D has no place in d1's line)
  const free = await submitJob(w, ["--to", d1, "--prompt", "something else"]);
  expect(await waitFor(() => journalEvents(w.dir, free).some((x) => x.event === "started"), 20_000, 100), monitorLog(w.dir)).toBe(true);
  const tree = (await w.mam(["job", "list", "--tree"])).stdout;
  const lines = tree.split("\n");
  expect(lines[0]).toStartWith(`${A}  running`);
  // B and C under A (in either order: they were made in the same second), D under each of them, drawn whole once
  expect(lines.filter((l) => /^[├└]─ /.test(l)).map((l) => l.slice(3, 11)).sort()).toEqual([B, C].sort());
  expect(lines.filter((l) => l.includes(`─ ${D}  queued (after jobs ${B} (queued) and ${C} (queued) complete)`))).toHaveLength(2);
  expect(lines.find((l) => l.includes(`─ ${B}`))).toContain(`queued (after job ${A} (running) completes)  ${b1}  part B`);
  expect(tree).toContain(`(its followers above)`);

  // the board: B, C, D wait (after other jobs), A and the free one work
  const board = JSON.parse((await w.mam(["status", "--jobs", "--json"])).stdout).board;
  expect(board.waiting.map((c: { job_id: string }) => c.job_id).sort()).toEqual([B, C, D].sort());
  expect(board.working.map((c: { job_id: string }) => c.job_id).sort()).toEqual([A, free].sort());
  expect(board.waiting.find((c: { job_id: string }) => c.job_id === D)).toMatchObject({ who: d1, note: `after jobs ${B} (queued) and ${C} (queued) complete`, task: "join them" });
  const boardText = (await w.mam(["status", "--jobs"])).stdout;
  expect(boardText).toContain("WAITING (3)\n");
  expect(boardText).toContain("WORKING (2)\n");
  expect(boardText).toContain(`  ${D}  ${d1}  since `);
  // the dashboard's state has each job's card as the board has it (docs/ui.md#the-board)
  const ui = await startUiProcess(e.sb, w.env, [], w.dir);
  try {
    const state = (await (await fetch(`http://127.0.0.1:${ui.port}/api/state?token=${ui.token}`)).json()) as { board_columns: string[]; jobs: { id: string; board: unknown }[] };
    expect(state.board_columns).toEqual(Object.keys(board));
    const cards = Object.entries(board as Record<string, { job_id: string; who: string; since: string; note: string }[]>).flatMap(([column, cs]) => cs.map((c) => ({ id: c.job_id, board: { column, who: c.who, since: c.since, note: c.note } })));
    expect(cards).toHaveLength(5);
    expect(state.jobs.map((j) => ({ id: j.id, board: j.board })).sort((x, y) => x.id.localeCompare(y.id))).toEqual(cards.sort((x, y) => x.id.localeCompare(y.id)));
  } finally {
    await ui.stop("SIGKILL");
  }

  // A goes on: everything flows, in order
  openGate(w.dir, "progress", "completed");
  const all = await w.mam(["job", "wait", A, B, C, D, free, "--timeout", "90"], {}, 100_000);
  expect(all.code, `${all.stdout}${all.stderr}\n${monitorLog(w.dir)}`).toBe(0);
  expect(at(w, B, "dispatched")).toBeGreaterThanOrEqual(at(w, A, "completed"));
  expect(at(w, C, "dispatched")).toBeGreaterThanOrEqual(at(w, A, "completed"));
  expect(at(w, D, "dispatched")).toBeGreaterThanOrEqual(Math.max(at(w, B, "completed"), at(w, C, "completed")));
  expect(journalEvents(w.dir, D).map((x) => x.event)).toEqual(["queued", "dispatched", "started", "progress", "completed"]);
  expect((await w.mam(["status", "--jobs"])).stdout).toStartWith("DONE (5)\n");
}, 180_000);

test("an error in what a job runs after cancels it with the reason, never typed; --after-any-end runs anyway", async () => {
  const w = newWorkspace(e, {}, { gated: true });
  await ensureDaemon(w, "polling", started);
  const [a1, b1, c1] = [w.n("a"), w.n("b"), w.n("c")];
  for (const n of [a1, b1, c1]) await createAgent(e, w, n, "worker");
  const A = await submitJob(w, ["--to", a1, "--prompt", "part A"]);
  expect(await waitFor(() => journalEvents(w.dir, A).some((x) => x.event === "started"), 20_000, 100)).toBe(true);
  const B = await submitJob(w, ["--to", b1, "--after", A, "--prompt", "after A"]);
  const C = await submitJob(w, ["--to", c1, "--after", A, "--after-any-end", "--prompt", "after A, however"]);
  const P = await submitJob(w, ["--to-role", "worker", "--after", A, "--prompt", "a pool job after A"]);
  expect((await w.mam(["job", "status", P])).stdout).toContain(`queued (after job ${A} (running) completes)`);
  expect((await w.mam(["job", "status", C])).stdout).toContain(`queued (after job ${A} (running) ends)`);
  const r = await w.mam(["job", "event", A, "error", "--source", a1, "--detail", "the build broke"]);
  expect(r.code, r.stderr).toBe(0);
  expect(await waitFor(async () => (await status(w, B)).status === "cancelled", 20_000, 100), monitorLog(w.dir)).toBe(true);
  const cancelled = journalEvents(w.dir, B).at(-1)!;
  expect(cancelled).toMatchObject({ event: "cancelled", source: "mam", detail: `job ${A}, which it runs after, ended error; it never ran` });
  expect(journalEvents(w.dir, B).map((x) => x.event)).toEqual(["queued", "cancelled"]);
  expect(await waitFor(async () => (await status(w, P)).status === "cancelled", 20_000, 100)).toBe(true);
  // the daemon logs a cancellation after it journalled it
  expect(await waitFor(() => monitorLog(w.dir).includes(`job ${B}: job ${A}, which it runs after, ended error; it never ran`), 10_000, 50), monitorLog(w.dir)).toBe(true);
  // C runs anyway
  openGate(w.dir, "progress", "completed");
  expect((await w.mam(["job", "wait", C, "--timeout", "60"], {}, 70_000)).code).toBe(0);
  expect((await status(w, C)).status).toBe("completed");
  // a job after one that has already failed is refused: it would be cancelled at once
  const n = jobFiles(w);
  const late = await w.mam(["job", "submit", "--to", b1, "--after", A, "--prompt", "too late"]);
  expect(late.code).toBe(1);
  expect(late.stderr).toContain(`ERROR: job ${A} ended error: a job after it would be cancelled at once; nothing was submitted`);
  expect(late.stderr).toContain("--after-any-end");
  expect(jobFiles(w)).toBe(n);
}, 180_000);

test("refused at submit, nothing written: an unknown job, a malformed id, --after-any-end alone, --after with --at", async () => {
  const w = newWorkspace(e);
  started.push(w); // create starts the daemon
  const b1 = w.n("b");
  await createAgent(e, w, b1, "worker");
  const cases: [string[], number, string][] = [
    [["--after", "0badc0de"], 3, "ERROR: no job 0badc0de in "],
    [["--after", "nothex!!"], 2, "ERROR: invalid job id 'nothex!!' in --after"],
    [["--after-any-end"], 2, "ERROR: --after-any-end goes with --after"],
    [["--after", "0badc0de", "--at", "+5m"], 2, "ERROR: --after goes with a job submitted now, not with --at or --every"],
  ];
  for (const [args, code, err] of cases) {
    const r = await w.mam(["job", "submit", "--to", b1, "--prompt", "x", ...args]);
    expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(code);
    expect(r.stderr).toContain(err);
  }
  expect(jobFiles(w)).toBe(0);
}, 60_000);
