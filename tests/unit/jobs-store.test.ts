// Records, journals, ingestion, timeouts applied, submit and the loop apply step, in-process on
// temp workspaces (no daemon, no registry: a fake JobRuntime).
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalJson } from "../../lib/jobs/canonical.ts";
import { signEvent, type JobEvent } from "../../lib/jobs/event.ts";
import { ingestEvent, scanJobs } from "../../lib/jobs/ingest.ts";
import { applyLoop, loopNext } from "../../lib/jobs/loop.ts";
import type { JobRuntime, SessionRef } from "../../lib/jobs/runtime.ts";
import { appendEvent, type JobSpec, journalPath, listJobIds, readJournal, readRecord, recordPath, registerJob } from "../../lib/jobs/store.ts";
import { jobSubmit } from "../../lib/ops/table/job.ts";
import type { Submitted } from "../../lib/ops/job/submit.ts";
import { runOp, testDeps } from "../helpers/ops.ts";
import { agentMam } from "../../lib/sys/agent-mam.ts";
import { MamError } from "../../lib/sys/errors.ts";
import { LogOnce } from "../../lib/sys/log-once.ts";

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));
function tempWs(): string {
  const d = mkdtempSync(join(tmpdir(), "mam-jobu-"));
  roots.push(d);
  return d;
}
const spec = (over: Partial<JobSpec> = {}): JobSpec => ({
  agent_session: "wrk", agent: "claude", prompt: "do it", delegator: "lead", type: "single", reviewer_session: null,
  max_iterations: null, timeout_sec: 3600, idle_timeout_sec: 120, expected_artifacts: [], topic_prefix_base: "mam/jobs", ...over,
});
const snap = (ws: string, id: string) => [readFileSync(recordPath(ws, id), "utf8"), existsSync(journalPath(ws, id)) ? readFileSync(journalPath(ws, id), "utf8") : ""];

describe("records and journal", () => {
  test("register: 8-hex id, 0600 record with every field, pending, 43-char base64url token", async () => {
    const ws = tempWs();
    const r = await registerJob(ws, spec());
    expect(r.job_id).toMatch(/^[0-9a-f]{8}$/);
    expect(statSync(recordPath(ws, r.job_id)).mode & 0o777).toBe(0o600);
    expect(statSync(join(ws, ".mam", "jobs")).mode & 0o777).toBe(0o700);
    const onDisk = JSON.parse(readFileSync(recordPath(ws, r.job_id), "utf8"));
    expect(Object.keys(onDisk)).toEqual([
      "schema_version", "job_id", "status", "created_at", "updated_at", "prompt", "agent", "agent_session", "delegator", "type",
      "reviewer_session", "max_iterations", "iteration", "topic_prefix", "timeout_sec", "idle_timeout_sec", "expected_artifacts", "last_seq", "auth_token",
    ]);
    expect(onDisk).toMatchObject({ schema_version: 1, status: "pending", last_seq: 0, topic_prefix: `mam/jobs/${r.job_id}`, timeout_sec: 3600, idle_timeout_sec: 120 });
    expect(onDisk.auth_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(onDisk.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  test("append: seq 1, 2, 3 under the lock, signed, record status and last_seq follow the fold", async () => {
    const ws = tempWs();
    const r = await registerJob(ws, spec());
    await Promise.all([1, 2, 3, 4, 5].map((i) => appendEvent(ws, r.job_id, { event: i === 1 ? "started" : "progress", detail: `n${i}`, source: "wrk" })));
    const evs = readJournal(ws, r.job_id);
    expect(evs.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(readRecord(ws, r.job_id)).toMatchObject({ status: "running", last_seq: 5 });
    const a = await appendEvent(ws, r.job_id, { event: "completed", detail: "ok", source: "wrk" });
    expect(a!.statusBefore).toBe("running");
    expect(a!.statusAfter).toBe("completed");
    expect(readFileSync(journalPath(ws, r.job_id), "utf8").split("\n").at(-2)).toBe(canonicalJson(a!.payload));
  });

  test("a torn last line is skipped by readers and cut before the next append", async () => {
    const ws = tempWs();
    const r = await registerJob(ws, spec());
    await appendEvent(ws, r.job_id, { event: "started", detail: "", source: "wrk" });
    appendFileSync(journalPath(ws, r.job_id), '{"data":{"hmac_sig":"ab');
    expect(readJournal(ws, r.job_id).map((e) => e.seq)).toEqual([1]);
    await appendEvent(ws, r.job_id, { event: "progress", detail: "after the crash", source: "wrk" });
    const text = readFileSync(journalPath(ws, r.job_id), "utf8");
    expect(text.endsWith("\n")).toBe(true);
    expect(text.split("\n").filter(Boolean).map((l) => JSON.parse(l).seq)).toEqual([1, 2]);
  });

  test("a whole last event without its newline is kept (newline added)", async () => {
    const ws = tempWs();
    const r = await registerJob(ws, spec());
    const ev = signEvent({ schema_version: 1, seq: 1, job_id: r.job_id, event: "started", timestamp: "2026-01-01T00:00:00Z", detail: "", source: "wrk", data: {} }, r.auth_token);
    writeFileSync(journalPath(ws, r.job_id), canonicalJson(ev));
    expect(readJournal(ws, r.job_id).map((e) => e.seq)).toEqual([1]);
    const a = await appendEvent(ws, r.job_id, { event: "progress", detail: "", source: "wrk" });
    // the old sender's seq 1 (no origin) and this journal's own first event: two identities
    expect(readJournal(ws, r.job_id).map((e) => [e.origin, e.seq])).toEqual([[undefined, 1], [a!.payload.origin, 1]]);
  });

  test("temp files of killed writers are swept at the next registration", async () => {
    const ws = tempWs();
    const r = await registerJob(ws, spec());
    const stale = join(ws, ".mam", "jobs", `.${r.job_id}.json.123.abcdef01.tmp`);
    writeFileSync(stale, "{");
    const { utimesSync } = await import("node:fs");
    utimesSync(stale, new Date(Date.now() - 120_000), new Date(Date.now() - 120_000));
    await registerJob(ws, spec());
    expect(existsSync(stale)).toBe(false);
  });

  test("a record that is not JSON: exit 1, never overwritten", async () => {
    const ws = tempWs();
    const r = await registerJob(ws, spec());
    writeFileSync(recordPath(ws, r.job_id), "{ not json");
    const e = await appendEvent(ws, r.job_id, { event: "started", detail: "", source: "wrk" }).catch((x) => x);
    expect(e).toBeInstanceOf(MamError);
    expect((e as MamError).exitCode).toBe(1);
    expect((e as MamError).message).toContain("is not valid JSON");
    expect(readFileSync(recordPath(ws, r.job_id), "utf8")).toBe("{ not json");
    expect(existsSync(journalPath(ws, r.job_id))).toBe(false);
  });
});

describe("listJobIds", () => {
  test("a settled folder's listing is kept for one stat; any job added or removed since is listed", async () => {
    const ws = tempWs();
    const a = await registerJob(ws, spec());
    const later = Date.now() + 10_000; // as if the folder had been unchanged for 10 s
    expect(listJobIds(ws, later)).toEqual([a.job_id]);
    // kept: a file that is not a record changes nothing, a record's name must come from a listing
    const b = await registerJob(ws, spec());
    expect(listJobIds(ws, later)).toEqual([a.job_id, b.job_id].sort());
    rmSync(recordPath(ws, a.job_id));
    expect(listJobIds(ws, later + 10_000)).toEqual([b.job_id]);
    expect(listJobIds(ws, later + 10_000)).toEqual([b.job_id]);
    // what it returns is the caller's own
    const got = listJobIds(ws, later + 10_000);
    got.push("ffffffff");
    expect(listJobIds(ws, later + 10_000)).toEqual([b.job_id]);
    rmSync(join(ws, ".mam", "jobs"), { recursive: true });
    expect(listJobIds(ws, later + 10_000)).toEqual([]);
  });

  test("a folder changed in the last seconds is listed again at every call", async () => {
    const ws = tempWs();
    const a = await registerJob(ws, spec());
    expect(listJobIds(ws)).toEqual([a.job_id]);
    // a record put in place without going through mam's writers, as another process's rename
    writeFileSync(join(ws, ".mam", "jobs", "0000000a.json"), "{}");
    expect(listJobIds(ws)).toEqual(["0000000a", a.job_id]);
  });
});

describe("ingestEvent", () => {
  async function setup() {
    const ws = tempWs();
    const r = await registerJob(ws, spec());
    await appendEvent(ws, r.job_id, { event: "started", detail: "", source: "wrk" });
    const topic = `mam/jobs/${r.job_id}/events`;
    const mk = (over: Partial<JobEvent>, token = r.auth_token) =>
      Buffer.from(canonicalJson(signEvent({ schema_version: 1, seq: 2, job_id: r.job_id, event: "progress", timestamp: "2026-01-01T00:00:00Z", detail: "remote", source: "wrk", data: {}, ...over }, token)));
    return { ws, r, topic, mk };
  }

  test("a remote event is appended once and moves the status; terminal is reported once", async () => {
    const { ws, r, topic, mk } = await setup();
    const logs: string[] = [];
    const a = await ingestEvent(ws, topic, mk({ seq: 2, event: "completed", detail: "all done" }), (l) => logs.push(l));
    expect(a).toMatchObject({ outcome: "appended", statusBefore: "running", status: "completed", terminal: true });
    expect(readRecord(ws, r.job_id)).toMatchObject({ status: "completed", last_seq: 2 });
    const again = await ingestEvent(ws, topic, mk({ seq: 2, event: "completed", detail: "all done" }), (l) => logs.push(l));
    expect(again).toMatchObject({ outcome: "duplicate", terminal: true });
    expect(readJournal(ws, r.job_id)).toHaveLength(2);
  });

  test("the local publisher's own event comes back as a duplicate, not a drop", async () => {
    const { ws, r, topic } = await setup();
    const a = await appendEvent(ws, r.job_id, { event: "error", detail: "boom", source: "wrk" });
    const res = await ingestEvent(ws, topic, Buffer.from(a!.line), () => {});
    expect(res).toMatchObject({ outcome: "duplicate", status: "error", terminal: true });
  });

  test("a gap is logged and accepted", async () => {
    const { ws, topic, mk } = await setup();
    const logs: string[] = [];
    const a = await ingestEvent(ws, topic, mk({ seq: 5 }), (l) => logs.push(l));
    expect(a.outcome).toBe("appended");
    // the local `started` has an origin; a sender without one numbers from 1 on its own
    expect(logs[0]).toMatch(/gap in job .*: expected seq 1, got 5/);
  });

  test("senders without origin are deduped by seq among themselves; the same seq from this machine's journal is another event", async () => {
    const { ws, r, topic, mk } = await setup();
    const logs: string[] = [];
    expect((await ingestEvent(ws, topic, mk({ seq: 1, detail: "old sender's first" }), (l) => logs.push(l))).outcome).toBe("appended");
    const other = await ingestEvent(ws, topic, mk({ seq: 1, detail: "another old sender's first" }), (l) => logs.push(l));
    expect(other).toMatchObject({ outcome: "dropped", reason: "seen-seq" });
    expect(logs.at(-1)).toMatch(/seq 1 already seen/);
    const again = await ingestEvent(ws, topic, mk({ seq: 1, detail: "old sender's first" }), (l) => logs.push(l));
    expect(again).toMatchObject({ outcome: "duplicate", log: expect.stringMatching(/repeat of an event already journalled/) });
    expect(readJournal(ws, r.job_id).map((e) => `${e.origin ? "o" : "-"}${e.seq}`)).toEqual(["o1", "-1"]);
  });

  const drops: [string, (s: Awaited<ReturnType<typeof setup>>) => [string, Buffer], string, RegExp][] = [
    ["spoofed token", ({ topic, mk }) => [topic, mk({ event: "completed" }, "spoofed-token")], "bad-signature", /^HMAC verify failed/],
    ["replayed identity with other content", ({ ws, r, topic, mk }) => [topic, mk({ seq: 1, origin: readJournal(ws, r.job_id)[0]!.origin, event: "completed" })], "seen-seq", /origin [0-9a-f]{16} seq 1 already seen with other content/],
    ["wrong schema", ({ topic, mk }) => [topic, Buffer.from(mk({}).toString().replace('"schema_version":1', '"schema_version":2'))], "wrong-schema", /schema_version 2 is not 1/],
    ["300 KiB payload", ({ topic, mk }) => [topic, mk({ detail: "x".repeat(300 * 1024) })], "oversized", /exceeds 262144/],
    ["unknown job", ({ mk }) => ["mam/jobs/deadbeef/events", Buffer.from(mk({}).toString().replaceAll(/"job_id":"[0-9a-f]{8}"/g, '"job_id":"deadbeef"'))], "unknown-job", /unknown job/],
    ["not JSON", ({ topic }) => [topic, Buffer.from("garbage{")], "not-json", /not JSON/],
    ["event of another job on this job's topic", ({ r, mk }) => [`mam/jobs/${r.job_id}/events`, Buffer.from(mk({}).toString().replace(`"job_id":"${r.job_id}"`, '"job_id":"deadbeef"'))], "unknown-job", /unknown job/],
  ];
  for (const [name, make, reason, log] of drops) {
    test(`drops ${name}: logged, nothing changed`, async () => {
      const s = await setup();
      const before = snap(s.ws, s.r.job_id);
      const logs: string[] = [];
      const [topic, payload] = make(s);
      const res = await ingestEvent(s.ws, topic, payload, (l) => logs.push(l));
      expect(res).toMatchObject({ outcome: "dropped", reason });
      expect(logs).toHaveLength(1);
      expect(logs[0]).toMatch(log);
      expect(snap(s.ws, s.r.job_id)).toEqual(before);
    });
  }

  test("an unknown job creates nothing on disk", async () => {
    const ws = tempWs();
    const res = await ingestEvent(ws, "mam/jobs/deadbeef/events", Buffer.from("{}"), () => {});
    expect(res.outcome).toBe("dropped");
    expect(existsSync(join(ws, ".mam"))).toBe(false);
  });
});

describe("scanJobs", () => {
  test("appends one timeout event (source monitor) to a job idle too long, and only once", async () => {
    const ws = tempWs();
    const idle = await registerJob(ws, spec({ idle_timeout_sec: 5 }));
    const fresh = await registerJob(ws, spec());
    await appendEvent(ws, idle.job_id, { event: "started", detail: "", source: "wrk" });
    const later = Date.now() / 1000 + 10;
    const res = await scanJobs(ws, later);
    expect(res.timedOut.map((a) => a.payload.job_id)).toEqual([idle.job_id]);
    expect(res.timedOut[0]!.payload).toMatchObject({ event: "timeout", source: "monitor", detail: "no event for 5 s" });
    expect(readRecord(ws, idle.job_id)!.status).toBe("timeout");
    expect(readRecord(ws, fresh.job_id)!.status).toBe("pending");
    expect((await scanJobs(ws, later + 100)).timedOut).toHaveLength(0);
  });

  test("a job with a remote's seq 2^31 − 1 (or an old daemon's 2^53 − 1) in its journal still times out, and so do the jobs after it (BUG-1)", async () => {
    const ws = tempWs();
    const jobs = await Promise.all([1, 2, 3, 4].map(() => registerJob(ws, spec({ timeout_sec: 5 }))));
    const ids = jobs.map((j) => j.job_id).sort();
    // the first job in the scan's order got a huge seq from a token holder before this fix
    const first = jobs.find((j) => j.job_id === ids[0])!;
    const huge = signEvent({ schema_version: 1, seq: 2 ** 53 - 1, origin: "remote0000000001", job_id: first.job_id, event: "started", timestamp: "t", detail: "x", source: "r", data: {} }, first.auth_token);
    writeFileSync(journalPath(ws, first.job_id), `${canonicalJson(huge)}\n`);
    const res = await scanJobs(ws, Date.now() / 1000 + 10);
    expect(res.failed).toEqual([]);
    expect(res.timedOut.map((a) => a.payload.job_id).sort()).toEqual(ids);
    expect(res.timedOut.find((a) => a.payload.job_id === first.job_id)!.payload.seq).toBe(1);
  });

  test("a job that fails is logged (once, with LogOnce) and skipped: the jobs after it still time out", async () => {
    const ws = tempWs();
    const jobs = await Promise.all([1, 2, 3].map(() => registerJob(ws, spec({ timeout_sec: 5 }))));
    const ids = jobs.map((j) => j.job_id).sort();
    // the first job's journal cannot be read (a folder where the file should be)
    mkdirSync(journalPath(ws, ids[0]!));
    const lines: string[] = [];
    const once = new LogOnce((l) => lines.push(l));
    const res = await scanJobs(ws, Date.now() / 1000 + 10, (l) => lines.push(l), once);
    expect(res.failed).toEqual([ids[0]!]);
    expect(res.timedOut.map((a) => a.payload.job_id).sort()).toEqual(ids.slice(1));
    expect(lines.filter((l) => l.startsWith(`job ${ids[0]}: timeout scan failed: `))).toHaveLength(1);
    await scanJobs(ws, Date.now() / 1000 + 20, (l) => lines.push(l), once);
    expect(lines.filter((l) => l.startsWith(`job ${ids[0]}: `))).toHaveLength(1); // once, not at every scan
  });
});

class FakeRuntime implements JobRuntime {
  prompts: [string, string][] = [];
  daemon = 0;
  constructor(private sessions: string[], private failPrompt = false) {}
  async findSession(name: string): Promise<SessionRef | undefined> {
    return this.sessions.includes(name) ? { name, backend: "herdr", server: "mam", paneId: `w1:${name}`, agent: "codex" } : undefined;
  }
  async prompt(s: SessionRef, text: string) {
    if (this.failPrompt) throw new Error("pane is gone");
    this.prompts.push([s.name, text]);
    return undefined;
  }
}

/** job.submit as the front doors run it, with a fake runtime and a daemon that says 4242 */
function submitJob(ws: string, raw: Record<string, unknown>, rt: FakeRuntime): Promise<Submitted> {
  const daemon = { ensure: async () => (rt.daemon++, { pid: 4242, started: false, disabled: false }), status: () => undefined, stop: async () => undefined };
  return runOp<Submitted>(jobSubmit, testDeps(ws, { runtime: rt, daemon }), raw);
}

describe("submitJob", () => {
  const base = {};
  test("registers, ensures the daemon, prompts the agent with the exact event commands", async () => {
    const ws = tempWs();
    const rt = new FakeRuntime(["wrk"]);
    const { record, daemon_pid } = await submitJob(ws, { ...base, to: "wrk", from: "lead", prompt: "Write hello.txt", expect: ["hello.txt"] }, rt);
    expect(daemon_pid).toBe(4242);
    expect(readRecord(ws, record.job_id)).toMatchObject({ status: "pending", agent: "codex", agent_session: "wrk", delegator: "lead", expected_artifacts: ["hello.txt"] });
    expect(rt.prompts).toHaveLength(1);
    const [who, text] = rt.prompts[0]!;
    expect(who).toBe("wrk");
    expect(text).toContain(`[mam] Job ${record.job_id} delegated to you (wrk) by session lead.`);
    expect(text).toContain("Task: Write hello.txt");
    expect(text).toContain("Expected artifacts: hello.txt");
    for (const e of ["started", "progress", "completed", "error"]) {
      expect(text).toContain(`${agentMam()} job event ${record.job_id} ${e} --source wrk --workspace ${ws} --detail "`);
    }
  });

  test("an unknown target or reviewer: exit 3, nothing written", async () => {
    const ws = tempWs();
    for (const o of [{ to: "ghost", prompt: "x" }, { to: "wrk", prompt: "x", type: "loop" as const, reviewer: "ghost" }]) {
      const e = await submitJob(ws, { ...base, ...o }, new FakeRuntime(["wrk"])).catch((x) => x);
      expect((e as MamError).exitCode).toBe(3);
      expect((e as MamError).message).toContain("no running session named 'ghost'");
    }
    expect(existsSync(join(ws, ".mam"))).toBe(false);
  });

  test("bad input: exit 2 before anything", async () => {
    const ws = tempWs();
    const bad = [
      { to: "../x", prompt: "x" },
      { to: "wrk" },
      { to: "wrk", prompt: "x", brief_file: "b.md" },
      { to: "wrk", brief_file: join(ws, "missing.md") },
      { to: "wrk", prompt: "x", reviewer: "rev" },
      { to: "wrk", prompt: "x", type: "loop" as const },
      { to: "wrk", prompt: "x", type: "loop" as const, reviewer: "wrk" },
      { to: "wrk", prompt: "x", type: "loop" as const, reviewer: "rev", max_iterations: 0 },
    ];
    for (const o of bad) {
      const e = await submitJob(ws, { ...base, ...o }, new FakeRuntime(["wrk", "rev"])).catch((x) => x);
      expect((e as MamError).exitCode).toBe(2);
    }
    expect(existsSync(join(ws, ".mam"))).toBe(false);
  });

  test("a prompt that fails: the job ends in error, exit 1", async () => {
    const ws = tempWs();
    const e = (await submitJob(ws, { ...base, to: "wrk", prompt: "x" }, new FakeRuntime(["wrk"], true)).catch((x) => x)) as MamError;
    expect(e.exitCode).toBe(1);
    const id = /job ([0-9a-f]{8})/.exec(e.message)![1]!;
    expect(readRecord(ws, id)!.status).toBe("error");
    expect(readJournal(ws, id)[0]).toMatchObject({ event: "error", source: "mam", detail: "could not prompt wrk: pane is gone" });
  });
});

describe("a loop job, driven by ingestEvent → loopNext → applyLoop", () => {
  test("worker, reviewer feedback, worker, reviewer PASS", async () => {
    const ws = tempWs();
    const rt = new FakeRuntime(["wrk", "rev"]);
    const { record } = await submitJob(ws, { to: "wrk", prompt: "x", type: "loop", reviewer: "rev", max_iterations: 2 }, rt);
    const topic = `${record.topic_prefix}/events`;
    const report = async (event: "started" | "completed", source: string, detail: string) => {
      const a = await appendEvent(ws, record.job_id, { event, detail, source });
      const res = await ingestEvent(ws, topic, Buffer.from(a!.line), () => {});
      const job = readRecord(ws, record.job_id)!;
      if (res.outcome === "dropped") throw new Error(res.log);
      return applyLoop(ws, job, loopNext(job, res.event, ws), rt);
    };
    await report("started", "wrk", "");
    await report("completed", "wrk", "v1 done");
    expect(rt.prompts.at(-1)![0]).toBe("rev");
    await report("completed", "rev", "fix the name");
    expect(rt.prompts.at(-1)![0]).toBe("wrk");
    expect(readRecord(ws, record.job_id)!.iteration).toBe(2);
    await report("completed", "wrk", "v2 done");
    await report("completed", "rev", "PASS");
    expect(readRecord(ws, record.job_id)!.status).toBe("completed");
    expect(readJournal(ws, record.job_id).map((e) => `${e.source}:${e.event}`)).toEqual([
      "wrk:started", "wrk:completed", "mam:progress", "rev:completed", "mam:progress", "wrk:completed", "mam:progress", "rev:completed",
    ]);
  });

  test("feedback at the last iteration ends the job: error max iterations reached", async () => {
    const ws = tempWs();
    const rt = new FakeRuntime(["wrk", "rev"]);
    const { record } = await submitJob(ws, { to: "wrk", prompt: "x", type: "loop", reviewer: "rev", max_iterations: 1 }, rt);
    await appendEvent(ws, record.job_id, { event: "completed", detail: "v1", source: "wrk" });
    const a = await appendEvent(ws, record.job_id, { event: "completed", detail: "no", source: "rev" });
    const job = readRecord(ws, record.job_id)!;
    const applied = await applyLoop(ws, job, loopNext(job, a!.payload, ws), rt);
    expect(applied.appended[0]!.payload).toMatchObject({ event: "error", detail: "max iterations reached", source: "mam" });
    expect(readRecord(ws, record.job_id)!.status).toBe("error");
  });
});
