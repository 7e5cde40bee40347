// watchAgents (SPEC §7.4): the daemon's watch over the agents of unfinished jobs, and reactToJobs
// (jobs put to rest among them), in-process on temp workspaces with a scripted pane state and a
// fake runtime.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JobRuntime } from "../../lib/jobs/runtime.ts";
import { appendEvent, jobStore, type JobSpec, readJournal, readRecord, registerJob } from "../../lib/jobs/store.ts";
import { type AgentLook, type AgentState, type CursorState, type ReactorContext, reactedToAll, reactToJobs, watchAgents } from "../../lib/ops/react/reactor.ts";
import { JournalCache } from "../../lib/jobs/journal-index.ts";

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));
function tempWs(): string {
  const d = mkdtempSync(join(tmpdir(), "mam-react-"));
  roots.push(d);
  return d;
}
const spec: JobSpec = {
  agent_session: "wrk", agent: "claude", prompt: "do it", delegator: "lead", type: "single", reviewer_session: null,
  max_iterations: null, timeout_sec: 3600, idle_timeout_sec: 120, expected_artifacts: [], topic_prefix_base: "mam/jobs",
};
const runtime: JobRuntime = { findSession: async () => undefined, prompt: async () => undefined };
function ctx(ws: string): ReactorContext & { lines: string[]; published: string[] } {
  const lines: string[] = [];
  const published: string[] = [];
  return { ws, jobs: jobStore(ws), runtime, lines, published, log: (l) => lines.push(l), publish: async (t) => (published.push(t), true) };
}
const seen = (ws: string, id: string) => readJournal(ws, id).map((e) => `${e.event}:${e.source}:${e.detail}`);

test("an agent gone while its job is pending or running → error (agent exited), once, published", async () => {
  const ws = tempWs();
  const pending = await registerJob(ws, spec);
  const running = await registerJob(ws, spec);
  await appendEvent(ws, running.job_id, { event: "started", detail: "go", source: "wrk" });
  const c = ctx(ws);
  const gone = async (): Promise<AgentState> => "gone";
  await watchAgents(c, gone, new Map());
  await watchAgents(c, gone, new Map());
  expect(seen(ws, pending.job_id)).toEqual(["error:monitor:agent exited"]);
  expect(seen(ws, running.job_id)).toEqual(["started:wrk:go", "error:monitor:agent exited"]);
  expect(readRecord(ws, pending.job_id)!.status).toBe("error");
  expect(c.published.sort()).toEqual([`mam/jobs/${pending.job_id}/events`, `mam/jobs/${running.job_id}/events`].sort());
});

test("finished jobs are left alone; an unknown state (server unreachable) is not a death", async () => {
  const ws = tempWs();
  const done = await registerJob(ws, spec);
  await appendEvent(ws, done.job_id, { event: "completed", detail: "ok", source: "wrk" });
  await watchAgents(ctx(ws), async (): Promise<AgentState> => "gone", new Map());
  expect(seen(ws, done.job_id)).toEqual(["completed:wrk:ok"]);
  const ws2 = tempWs();
  const j = await registerJob(ws2, spec);
  await watchAgents(ctx(ws2), async (): Promise<AgentState> => "unknown", new Map());
  expect(seen(ws2, j.job_id)).toEqual([]);
});

test("blocked → one permission_required per blocked spell", async () => {
  const ws = tempWs();
  const j = await registerJob(ws, spec);
  const blocked = new Map<string, string>();
  const c = ctx(ws);
  let state: AgentState = "blocked";
  const stateOf = async () => state;
  await watchAgents(c, stateOf, blocked);
  await watchAgents(c, stateOf, blocked);
  state = "alive";
  await watchAgents(c, stateOf, blocked);
  state = "blocked";
  await watchAgents(c, stateOf, blocked);
  expect(seen(ws, j.job_id)).toEqual(["permission_required:monitor:wrk is waiting for a decision (blocked)", "permission_required:monitor:wrk is waiting for a decision (blocked)"]);
  expect(readRecord(ws, j.job_id)!.status).toBe("running"); // not an end
});

test("one permission_required per dialog: the reason is the detail; a new question while still blocked is a new dialog", async () => {
  const ws = tempWs();
  const j = await registerJob(ws, spec);
  const blocked = new Map<string, string>();
  const c = ctx(ws);
  let look: AgentLook = { state: "blocked", reason: "Bash command: touch x — Do you want to proceed?" };
  const stateOf = async () => look;
  for (let i = 0; i < 3; i++) await watchAgents(c, stateOf, blocked); // three polls, one dialog
  look = { state: "blocked", reason: "Bash command: rm y — Do you want to proceed?" };
  await watchAgents(c, stateOf, blocked);
  await watchAgents(c, stateOf, blocked);
  look = { state: "unknown" }; // a failed look ends nothing
  await watchAgents(c, stateOf, blocked);
  look = { state: "blocked", reason: "Bash command: rm y — Do you want to proceed?" };
  await watchAgents(c, stateOf, blocked);
  expect(seen(ws, j.job_id)).toEqual([
    "permission_required:monitor:wrk: Bash command: touch x — Do you want to proceed?",
    "permission_required:monitor:wrk: Bash command: rm y — Do you want to proceed?",
  ]);
});

test("an agent's own usage-limit menu (dialog limit) is no permission asked: nothing journalled; a permission prompt after it is one", async () => {
  const ws = tempWs();
  const j = await registerJob(ws, spec);
  const blocked = new Map<string, string>();
  const c = ctx(ws);
  // as the real claude 2.1.197 shows it at a subscriber's limit (fixtures/screens/claude/blocked-real-limit-options)
  let look: AgentLook = { state: "blocked", dialog: "limit", reason: "usage limit: What do you want to do? (Stop and wait for limit to reset)" };
  const stateOf = async () => look;
  for (let i = 0; i < 3; i++) await watchAgents(c, stateOf, blocked);
  expect(seen(ws, j.job_id)).toEqual([]);
  look = { state: "blocked", dialog: "permission", reason: "Bash command: touch x — Do you want to proceed?" };
  await watchAgents(c, stateOf, blocked);
  expect(seen(ws, j.job_id)).toEqual(["permission_required:monitor:wrk: Bash command: touch x — Do you want to proceed?"]);
});

test("a loop job waits on its reviewer from the worker's hand-in to the verdict", async () => {
  const ws = tempWs();
  const j = await registerJob(ws, { ...spec, type: "loop", reviewer_session: "rev", max_iterations: 3 });
  const states: Record<string, AgentState> = { wrk: "alive", rev: "gone" };
  const stateOf = async (s: string) => states[s] ?? "unknown";
  // the worker's turn: the reviewer's pane may come and go
  await appendEvent(ws, j.job_id, { event: "started", detail: "go", source: "wrk" });
  await watchAgents(ctx(ws), stateOf, new Map());
  expect(seen(ws, j.job_id)).toEqual(["started:wrk:go"]);
  // handed in: now the reviewer's death ends the job, and the worker's pane does not matter
  await appendEvent(ws, j.job_id, { event: "completed", detail: "done", source: "wrk" });
  states.wrk = "gone";
  states.rev = "blocked";
  await watchAgents(ctx(ws), stateOf, new Map());
  expect(seen(ws, j.job_id).at(-1)).toBe("permission_required:monitor:rev is waiting for a decision (blocked)");
  states.rev = "gone";
  await watchAgents(ctx(ws), stateOf, new Map());
  expect(seen(ws, j.job_id).at(-1)).toBe("error:monitor:agent exited");
  // after the reviewer's feedback it is the worker's turn again
  const k = await registerJob(ws, { ...spec, type: "loop", reviewer_session: "rev", max_iterations: 3 });
  for (const [event, source] of [["started", "wrk"], ["completed", "wrk"], ["completed", "rev"]] as const) await appendEvent(ws, k.job_id, { event, detail: "x", source });
  await watchAgents(ctx(ws), async (s) => (s === "wrk" ? "gone" : "alive"), new Map());
  expect(seen(ws, k.job_id).at(-1)).toBe("error:monitor:agent exited");
});

// ---- reactToJobs: journal order, several writers, the cursor ---------------------------------

test("reactToJobs tells the delegator once, at the first ending event in journal order, whatever the seqs; a 0.1 cursor is read as seqs", async () => {
  const { reactToJobs, cursorPosition, cursorPath } = await import("../../lib/ops/react/reactor.ts");
  const { JournalCache } = await import("../../lib/jobs/journal-index.ts");
  const { ingestEvent } = await import("../../lib/jobs/ingest.ts");
  const { canonicalJson } = await import("../../lib/jobs/canonical.ts");
  const { signEvent } = await import("../../lib/jobs/event.ts");
  const { readFileSync, writeFileSync } = await import("node:fs");
  const ws = tempWs();
  const job = await registerJob(ws, spec);
  const told: string[] = [];
  const rt: JobRuntime = { findSession: async (n) => (n === "lead" ? ({ name: n } as never) : undefined), prompt: async (_s, text) => void told.push(text) };
  const c: ReactorContext = { ws, jobs: jobStore(ws), runtime: rt, log: () => {}, publish: async () => true, journals: new JournalCache(), cursor: { dirty: false, lastWrite: 0 } };
  // a remote's events (its own seqs 1, 2) after the local started (seq 1): the remote's seq 2 ends it
  await appendEvent(ws, job.job_id, { event: "started", detail: "", source: "wrk" });
  const remote = (seq: number, event: "progress" | "completed", detail: string) =>
    Buffer.from(canonicalJson(signEvent({ schema_version: 1, seq, origin: "cccccccccccccccc", job_id: job.job_id, event, timestamp: "2026-01-01T00:00:00Z", detail, source: "wrk", data: {} }, job.auth_token)));
  await ingestEvent(ws, `mam/jobs/${job.job_id}/events`, remote(1, "progress", "half way"), () => {}, c.journals);
  await reactToJobs(c);
  expect(told).toEqual([]);
  await ingestEvent(ws, `mam/jobs/${job.job_id}/events`, remote(2, "completed", "done on machine 2"), () => {}, c.journals);
  await reactToJobs(c);
  await reactToJobs(c);
  expect(told).toEqual([`[mam] job ${job.job_id} completed: done on machine 2`]);
  // saved at once after the action: a restarted daemon (fresh memory) does not tell again
  expect(JSON.parse(readFileSync(cursorPath(ws), "utf8"))[job.job_id]).toEqual({ at: 3 });
  await reactToJobs({ ...c, journals: new JournalCache(), cursor: undefined });
  expect(told).toHaveLength(1);
  // 0.1 wrote "the last seq reacted to"
  const evs = readJournal(ws, job.job_id);
  expect(cursorPosition(1, evs)).toBe(2);
  expect(cursorPosition({ at: 2 }, evs)).toBe(2);
  expect(cursorPosition({ at: 99 }, evs)).toBe(3);
  expect(cursorPosition("junk", evs)).toBe(0);
  writeFileSync(cursorPath(ws), `${JSON.stringify({ [job.job_id]: 1 })}\n`);
  await reactToJobs({ ...c, journals: new JournalCache(), cursor: undefined });
  expect(told).toHaveLength(2); // from a 0.1 cursor at seq 1 the ending event is still ahead: told (once more)
});

test("reactToJobs goes on past a job whose reaction fails: the jobs after it are told, the failure is logged once", async () => {
  const { reactToJobs } = await import("../../lib/ops/react/reactor.ts");
  const { JournalCache } = await import("../../lib/jobs/journal-index.ts");
  const { LogOnce } = await import("../../lib/sys/log-once.ts");
  const ws = tempWs();
  const jobs = await Promise.all([1, 2, 3].map(() => registerJob(ws, spec)));
  for (const j of jobs) await appendEvent(ws, j.job_id, { event: "completed", detail: `done ${j.job_id}`, source: "wrk" });
  const ids = jobs.map((j) => j.job_id).sort();
  const told: string[] = [];
  const rt: JobRuntime = { findSession: async (n) => ({ name: n }) as never, prompt: async (_s, text) => void told.push(text) };
  const lines: string[] = [];
  // the first job's journal cannot be read (a reaction that throws, not a prompt that fails)
  const journals = new JournalCache();
  const get = journals.get.bind(journals);
  journals.get = (w, id, roles) => {
    if (id === ids[0]) throw new Error("journal unreadable");
    return get(w, id, roles);
  };
  const c: ReactorContext = { ws, jobs: jobStore(ws), runtime: rt, log: (l) => lines.push(l), publish: async () => true, journals, cursor: { dirty: false, lastWrite: 0 }, once: new LogOnce((l) => lines.push(l)) };
  await reactToJobs(c);
  await reactToJobs(c);
  expect(told.sort()).toEqual(ids.slice(1).map((id) => `[mam] job ${id} completed: done ${id}`).sort());
  expect(lines.filter((l) => l.startsWith(`job ${ids[0]}: reaction failed: journal unreadable`))).toHaveLength(1);
});

test("a shell delegator is never typed into (it would run the end line: a `;` in a detail would be a command); the log says so", async () => {
  const { reactToJobs } = await import("../../lib/ops/react/reactor.ts");
  const ws = tempWs();
  const job = await registerJob(ws, spec);
  const told: string[] = [];
  const rt: JobRuntime = { findSession: async (n) => (n === "lead" ? ({ name: n, agent: "shell" } as never) : undefined), prompt: async (_s, text) => void told.push(text) };
  const c = { ...ctx(ws), runtime: rt };
  await appendEvent(ws, job.job_id, { event: "completed", detail: "done; touch pwned", source: "wrk" });
  await reactToJobs(c);
  expect(told).toEqual([]);
  expect(c.lines).toContain(`job ${job.job_id}: completed; delegator lead is a shell session, not told (it would run the text)`);
});

test("reactToJobs: says how many events it went through; an ended job put to rest is skipped until its journal changes", async () => {
  const ws = tempWs();
  const j = await registerJob(ws, { ...spec, delegator: null });
  await appendEvent(ws, j.job_id, { event: "started", detail: "go", source: "wrk" });
  await appendEvent(ws, j.job_id, { event: "completed", detail: "done", source: "wrk" });
  const journals = new JournalCache();
  const c = { ...ctx(ws), journals, cursor: { dirty: false, lastWrite: 0 } as CursorState };
  expect(await reactToJobs(c)).toBe(2);
  expect(c.lines).toEqual([`job ${j.job_id}: completed; no delegator session to tell`]);
  expect(reactedToAll(c, j.job_id, journals.peek(ws, j.job_id)!.events)).toBe(true);
  journals.rest(j.job_id);
  expect(await reactToJobs(c)).toBe(0);
  expect(journals.peek(ws, j.job_id)).toBeUndefined(); // not read again
  // a late event is news again
  await appendEvent(ws, j.job_id, { event: "progress", detail: "late", source: "wrk" });
  expect(await reactToJobs(c)).toBe(1);
  expect(c.lines).toHaveLength(1); // told once
});

test("reactedToAll: not before the daemon's cursor is at the end of the job's events", async () => {
  const ws = tempWs();
  const j = await registerJob(ws, spec);
  await appendEvent(ws, j.job_id, { event: "completed", detail: "done", source: "wrk" });
  const events = readJournal(ws, j.job_id);
  expect(reactedToAll({ cursor: { dirty: false, lastWrite: 0 } }, j.job_id, events)).toBe(false); // no cursor read yet
  expect(reactedToAll({ cursor: { dirty: false, lastWrite: 0, cursor: {} } }, j.job_id, events)).toBe(false);
  expect(reactedToAll({ cursor: { dirty: false, lastWrite: 0, cursor: { [j.job_id]: { at: 1 } } } }, j.job_id, events)).toBe(true);
});

test("a loop job over its budget: the meter's count before the loop step ends it; no review request, no new iteration; the delegator and the working agent are told once", async () => {
  const { reactToJobs } = await import("../../lib/ops/react/reactor.ts");
  const { JournalCache } = await import("../../lib/jobs/journal-index.ts");
  const ws = tempWs();
  const job = await registerJob(ws, { ...spec, type: "loop", reviewer_session: "rev", max_iterations: 3, max_tokens: 100 });
  const told: [string, string][] = [];
  const rt: JobRuntime = { findSession: async (n) => ({ name: n }) as never, prompt: async (s, text) => void told.push([s.name, text]) };
  let metered = 0;
  // the meter finds the worker's hand-in crossed the budget: it journals budget_exceeded
  const meter = async () => {
    metered++;
    await appendEvent(ws, job.job_id, { event: "budget_exceeded", detail: `job ${job.job_id} went over its budget: 150 tokens of 100`, source: "mam", data: { tokens: 150 } });
  };
  const c: ReactorContext = { ws, jobs: jobStore(ws), runtime: rt, log: () => {}, publish: async () => true, journals: new JournalCache(), cursor: { dirty: false, lastWrite: 0 }, meter };
  await appendEvent(ws, job.job_id, { event: "started", detail: "", source: "wrk" });
  await appendEvent(ws, job.job_id, { event: "completed", detail: "done", source: "wrk" });
  await reactToJobs(c);
  await reactToJobs(c);
  expect(metered).toBe(1);
  expect(seen(ws, job.job_id)).toEqual(["started:wrk:", "completed:wrk:done", `budget_exceeded:mam:job ${job.job_id} went over its budget: 150 tokens of 100`]);
  expect(readRecord(ws, job.job_id)).toMatchObject({ status: "budget_exceeded", iteration: 1 });
  expect(told).toEqual([
    ["lead", `[mam] job ${job.job_id} budget_exceeded: job ${job.job_id} went over its budget: 150 tokens of 100`],
    // the review was never sent: the worker is the one at work on it
    ["wrk", `[mam] Job ${job.job_id} is stopped: job ${job.job_id} went over its budget: 150 tokens of 100. Stop working on it.`],
  ]);
  const { workingSession } = await import("../../lib/ops/react/reactor.ts");
  const mark = (detail: string) => ({ event: "progress", source: "mam", detail, data: { iteration: 1 } }) as never;
  expect(workingSession(job, [mark("iteration 1: review requested from rev")])).toBe("rev");
  expect(workingSession(job, [mark("iteration 1: review requested from rev"), mark("iteration 2: feedback sent to wrk")])).toBe("wrk");
  expect(workingSession({ ...job, type: "single", reviewer_session: null }, [mark("iteration 1: review requested from rev")])).toBe("wrk");
});

test("a job over its budget while its agent sits at a dialog: the notice is put aside and typed once the agent is back at its prompt, once", async () => {
  const { reactToJobs, tellLater } = await import("../../lib/ops/react/reactor.ts");
  const { JournalCache } = await import("../../lib/jobs/journal-index.ts");
  type Later = import("../../lib/ops/react/reactor.ts").LaterNotice;
  const ws = tempWs();
  const job = await registerJob(ws, { ...spec, max_tokens: 100 });
  const told: [string, string][] = [];
  let waiting: string | undefined = "a permission prompt";
  const rt: JobRuntime = { findSession: async (n) => ({ name: n, waiting }) as never, prompt: async (s, text) => void told.push([s.name, text]) };
  const later: Later[] = [];
  const lines: string[] = [];
  const c: ReactorContext = { ws, jobs: jobStore(ws), runtime: rt, log: (l) => lines.push(l), publish: async () => true, journals: new JournalCache(), cursor: { dirty: false, lastWrite: 0 }, later: (n) => later.push(n) };
  await appendEvent(ws, job.job_id, { event: "started", detail: "", source: "wrk" });
  await appendEvent(ws, job.job_id, { event: "budget_exceeded", detail: `job ${job.job_id} went over its budget: 150 tokens of 100`, source: "mam", data: { tokens: 150 } });
  await reactToJobs(c);
  const notice = `[mam] Job ${job.job_id} is stopped: job ${job.job_id} went over its budget: 150 tokens of 100. Stop working on it.`;
  // the delegator is told at once; the worker, at its dialog, not yet
  expect(told.map((t) => t[0])).toEqual(["lead"]);
  expect(later).toHaveLength(1);
  expect(lines).toContain(`job ${job.job_id} went over its budget; wrk waits at a permission prompt: told once it is back at its prompt`);
  // still at the dialog: kept
  let left = await tellLater(c, later);
  expect(left).toHaveLength(1);
  expect(told).toHaveLength(1);
  // back at its prompt: typed, once
  waiting = undefined;
  left = await tellLater(c, left);
  expect(left).toEqual([]);
  expect(told.at(-1)).toEqual(["wrk", notice]);
  expect(await tellLater(c, left)).toEqual([]);
  expect(told).toHaveLength(2);
  // an agent that never leaves its dialog: dropped after a day, and logged
  waiting = "a permission prompt";
  const old = [{ ...later[0]!, since: Date.now() - 25 * 3600_000 }];
  expect(await tellLater(c, old)).toEqual([]);
  expect(lines.at(-1)).toContain("still waits at a permission prompt after a day, not told");
});

test("a permission_required flood (review N5): the delegator is told once per distinct question, at most 3 a minute per job, and its typing does not hold up another job's end", async () => {
  const { DialogTells } = await import("../../lib/ops/react/reactor.ts");
  const ws = tempWs();
  const flood = await registerJob(ws, spec);
  const other = await registerJob(ws, { ...spec, delegator: "lead2" });
  const told: [string, string][] = [];
  let release = () => {};
  const held = new Promise<void>((r) => (release = r));
  // typing into lead hangs until released (a slow pane); lead2 answers at once
  const rt: JobRuntime = { findSession: async (n) => ({ name: n }) as never, prompt: async (s, text) => void (told.push([s.name, text]), s.name === "lead" ? await held : undefined) };
  const asides: Promise<void>[] = [];
  const c: ReactorContext = { ws, jobs: jobStore(ws), runtime: rt, log: () => {}, publish: async () => true, journals: new JournalCache(), cursor: { dirty: false, lastWrite: 0 }, tells: new DialogTells(), aside: (_l, _n, fn) => void asides.push(fn()) };
  for (let i = 0; i < 30; i++) await appendEvent(ws, flood.job_id, { event: "permission_required", detail: "allow rm?", source: "wrk" });
  for (const d of ["a", "b", "c", "d"]) await appendEvent(ws, flood.job_id, { event: "permission_required", detail: `allow ${d}?`, source: "wrk" });
  await appendEvent(ws, other.job_id, { event: "completed", detail: "done", source: "wrk" });
  await reactToJobs(c);
  const toLead = told.filter(([s]) => s === "lead").map(([, t]) => t);
  expect(toLead).toEqual([`[mam] job ${flood.job_id} permission_required: allow rm?`, `[mam] job ${flood.job_id} permission_required: allow a?`, `[mam] job ${flood.job_id} permission_required: allow b?`]);
  // the other job's end reached its delegator while lead's typing still hung
  expect(told).toContainEqual(["lead2", `[mam] job ${other.job_id} completed: done`]);
  release();
  await Promise.all(asides);
  // an answer makes the same question news again
  await appendEvent(ws, flood.job_id, { event: "approved", detail: "ann via cli", source: "mam" });
  const t = new DialogTells(3, () => 0);
  expect(["x", "x", "y"].map((d) => t.take("j", { source: "wrk", detail: d, data: {} }))).toEqual(["tell", "repeat", "tell"]);
  t.answered("j");
  expect(t.take("j", { source: "wrk", detail: "x", data: {} })).toBe("tell");
  expect(t.take("j", { source: "wrk", detail: "z", data: {} })).toBe("limit");
});
