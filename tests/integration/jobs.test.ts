// mam job … through the compiled binary, no broker (SPEC §7): journals, status, wait, cancel,
// bad input, read-only commands, crash safety.
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type JobSpec, journalPath, readJournal, readRecord, recordPath, registerJob } from "../../lib/jobs/store.ts";
import { MAM_CMD, runMam } from "../helpers/mam.ts";
import { makeSandbox, waitFor } from "../helpers/sandbox.ts";

const sb = makeSandbox("mam-job-");
afterAll(() => sb.cleanup());
const mam = (...args: string[]) => runMam([...args, "--workspace", sb.ws], { env: sb.env, cwd: sb.ws });
const reg = async (over: Partial<JobSpec> = {}) =>
  registerJob(sb.ws, {
    agent_session: "wrk", agent: "claude", prompt: "do it", delegator: "lead", type: "single", reviewer_session: null,
    max_iterations: null, timeout_sec: 3600, idle_timeout_sec: 120, expected_artifacts: ["out.md"], topic_prefix_base: "mam/jobs", ...over,
  });

function emptyWs(name: string): string {
  const d = join(sb.root, name);
  mkdirSync(d, { recursive: true });
  return d;
}

describe("job event, status, list, logs", () => {
  test("no broker configured (MQTT_BROKER unset): the event is journalled and nothing at all is printed", async () => {
    const r = await reg();
    // the local default 127.0.0.1:<port> does not answer either: still silent
    const e = await runMam(["job", "event", r.job_id, "started", "--detail", "x", "--workspace", sb.ws], { env: sb.with({ MQTT_BROKER: undefined, MQTT_PORT: "9" }) });
    expect(e.code).toBe(0);
    expect(e.stdout).toBe("");
    expect(e.stderr).toBe("");
    expect(readJournal(sb.ws, r.job_id).map((x) => x.event)).toEqual(["started"]);
  });

  test("event → journal line + record status; a configured broker down: one NOTE on stderr (nothing reads as a failure), exit 0, nothing on stdout", async () => {
    const r = await reg();
    const e = await mam("job", "event", r.job_id, "started", "--source", "wrk", "--detail", "héllo wörld");
    expect(e.code).toBe(0);
    expect(e.stdout).toBe("");
    expect(e.stderr).toBe(`NOTE: job ${r.job_id} event #1 is saved in the journal, where mam's daemon reads it; broker 127.0.0.1:9 unreachable (ECONNREFUSED), so it was not sent live\n`);
    const evs = readJournal(sb.ws, r.job_id);
    expect(evs).toHaveLength(1);
    expect(evs[0]).toMatchObject({ schema_version: 1, seq: 1, job_id: r.job_id, event: "started", detail: "héllo wörld", source: "wrk" });
    expect(evs[0]!.data.hmac_sig).toMatch(/^[0-9a-f]{64}$/);
    expect(readRecord(sb.ws, r.job_id)).toMatchObject({ status: "running", last_seq: 1 });

    await mam("job", "event", r.job_id, "progress", "--data", '{"files":2,"names":["a","b"]}');
    const s = await mam("job", "status", r.job_id, "--json");
    expect(s.code).toBe(0);
    const v = JSON.parse(s.stdout);
    expect(v).not.toHaveProperty("auth_token");
    expect(v).toMatchObject({ job_id: r.job_id, status: "running", events: 2, last_event: { seq: 2, event: "progress", data: { files: 2, names: ["a", "b"] } } });
    expect(v.last_event.data).not.toHaveProperty("hmac_sig");

    const h = await mam("job", "status", r.job_id);
    expect(h.stdout).toContain(`job      ${r.job_id}\nstatus   running\n`);
    // aligned columns; how long ago by default, the UTC time stamps with --utc
    const l = await mam("job", "logs", r.job_id);
    expect(l.stdout.trim().split("\n")).toEqual([
      expect.stringMatching(/^\d+s ago {2}#1 {2}started {3}wrk: héllo wörld$/),
      expect.stringMatching(/^\d+s ago {2}#2 {2}progress {2}agent {2}\{"files":2,"names":\["a","b"\]\}$/),
    ]);
    const u = await mam("job", "logs", r.job_id, "--utc");
    expect(u.stdout.trim().split("\n")).toEqual([
      expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ {2}#1 {2}started {3}wrk: héllo wörld$/),
      expect.stringMatching(/^\S+Z {2}#2 {2}progress {2}agent {2}\{"files":2,"names":\["a","b"\]\}$/),
    ]);
  });

  test("list, --status filter, --json", async () => {
    const a = await reg();
    const b = await reg();
    await mam("job", "event", b.job_id, "error", "--detail", "boom");
    const all = JSON.parse((await mam("job", "list", "--json")).stdout);
    expect(all.workspace).toBe(sb.ws);
    const ids = all.jobs.map((j: { job_id: string }) => j.job_id);
    expect(ids).toContain(a.job_id);
    expect(ids).toContain(b.job_id);
    const errs = JSON.parse((await mam("job", "list", "--status", "error", "--json")).stdout).jobs;
    expect(errs.map((j: { job_id: string }) => j.job_id)).toEqual([b.job_id]);
    expect(errs[0]).not.toHaveProperty("auth_token");
    const human = await mam("job", "list");
    expect(human.stdout).toMatch(/^JOB\s+STATUS\s+TYPE\s+TO\s+FROM\s+CREATED\s+EVENTS\s+COST\s+LAST$/m);
    expect((await mam("job", "list", "--status", "weird")).code).toBe(2);
  });

  test("list: newest first, as the dashboard (issue 39 item 11)", async () => {
    const ws = emptyWs("order-ws");
    const spec: JobSpec = { agent_session: "wrk", agent: "claude", prompt: "do it", delegator: "lead", type: "single", reviewer_session: null, max_iterations: null, timeout_sec: 3600, idle_timeout_sec: 120, expected_artifacts: [], topic_prefix_base: "mam/jobs" };
    const [x, y, z] = (await Promise.all([1, 2, 3].map(() => registerJob(ws, { ...spec })))).map((r) => r.job_id).sort();
    // the ids' order is not the times': x newest, then z, then y
    const at: Record<string, string> = { [x!]: "2026-12-01T10:00:03Z", [z!]: "2026-12-01T10:00:02Z", [y!]: "2026-12-01T10:00:01Z" };
    for (const [id, t] of Object.entries(at)) writeFileSync(recordPath(ws, id), JSON.stringify({ ...JSON.parse(readFileSync(recordPath(ws, id), "utf8")), created_at: t }));
    const list = JSON.parse((await runMam(["job", "list", "--json", "--workspace", ws], { env: sb.env })).stdout);
    expect(list.jobs.map((j: { job_id: string }) => j.job_id)).toEqual([x, z, y]);
    const text = (await runMam(["job", "list", "--workspace", ws], { env: sb.env })).stdout.trim().split("\n").slice(1);
    expect(text.map((l) => l.slice(0, 8))).toEqual([x, z, y]);
  });

  test("cancel appends cancelled (source mam); a second cancel changes nothing", async () => {
    const r = await reg();
    const c = await mam("job", "cancel", r.job_id);
    expect(c.code).toBe(0);
    expect(readJournal(sb.ws, r.job_id).map((e) => [e.event, e.source])).toEqual([["cancelled", "mam"]]);
    expect(readRecord(sb.ws, r.job_id)!.status).toBe("cancelled");
    const again = await mam("job", "cancel", r.job_id);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain("has already ended (cancelled)");
    expect(readJournal(sb.ws, r.job_id)).toHaveLength(1);
    // a late worker event is journalled but the status stays
    const late = await mam("job", "event", r.job_id, "completed");
    expect(late.stderr).toContain("had already ended (cancelled)");
    expect(JSON.parse((await mam("job", "status", r.job_id, "--json")).stdout).status).toBe("cancelled");
  });

  test("logs --follow prints new events and ends with the job", async () => {
    const r = await reg();
    const p = Bun.spawn([...MAM_CMD, "job", "logs", r.job_id, "--follow", "--workspace", sb.ws], { env: sb.env, stdout: "pipe", stderr: "pipe" });
    await mam("job", "event", r.job_id, "started");
    await mam("job", "event", r.job_id, "completed", "--detail", "fin");
    const code = await Promise.race([p.exited, Bun.sleep(15_000).then(() => -1)]);
    expect(code).toBe(0);
    const text = await new Response(p.stdout).text();
    // --follow keeps fixed columns (its lines come one by one)
    expect(text).toMatch(/ago {2}#1 {4}started {14}agent\n[\s\S]*ago {2}#2 {4}completed {12}agent: fin/);
  });

  test("an event from another machine: --token / MAM_JOB_TOKEN, journal only there", async () => {
    const r = await reg();
    const remote = emptyWs("remote-ws");
    const noTok = await runMam(["job", "event", r.job_id, "started", "--workspace", remote], { env: sb.env });
    expect(noTok.code).toBe(3);
    expect(existsSync(join(remote, ".mam"))).toBe(false);
    const e1 = await runMam(["job", "event", r.job_id, "started", "--workspace", remote, "--token", r.auth_token], { env: sb.env });
    expect(e1.code).toBe(0);
    const e2 = await runMam(["job", "event", r.job_id, "progress", "--workspace", remote], { env: { ...sb.env, MAM_JOB_TOKEN: r.auth_token } });
    expect(e2.code).toBe(0);
    expect(readJournal(remote, r.job_id).map((e) => e.seq)).toEqual([1, 2]);
    expect(existsSync(recordPath(remote, r.job_id))).toBe(false);
  });
});

describe("bad input changes nothing", () => {
  test("invalid ids and events: exit 2 before any side effect", async () => {
    const ws = emptyWs("bad-ws");
    for (const args of [
      ["job", "event", "../etc/x", "started"],
      ["job", "event", "ABCDEF12", "started"],
      ["job", "event", "abc1234", "started"],
      ["job", "event", "abc12345", "exploded"],
      ["job", "event", "abc12345", "started", "--data", "[1]"],
      ["job", "event", "abc12345", "started", "--data", '{"x":1.5}'],
      ["job", "event", "abc12345", "started", "--data", '{"hmac_sig":"x"}'],
      ["job", "status", "abc;rm -rf"],
      ["job", "wait", "abc12345", "nothex!!"],
      ["job", "wait", "abc12345", "--timeout", "soon"],
      ["job", "cancel", "zzzzzzzz"],
      ["job", "logs", "abc12345", "extra"],
      ["job", "submit", "--to", "a/b", "--prompt", "x"],
      ["job", "submit", "--to", "w", "--prompt", "x", "--type", "loop"],
      ["job", "submit", "--to", "w", "--prompt", "x", "--max-iterations", "2"],
      ["job", "submit", "--to", "w"],
      ["job", "submit", "--to", "w", "--prompt", "x", "--timeout", "-1"],
    ]) {
      const r = await runMam([...args, "--workspace", ws], { env: sb.env });
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toMatch(/^ERROR: /);
      expect(r.stdout).toBe("");
    }
    expect(existsSync(join(ws, ".mam"))).toBe(false);
  });

  test("unknown jobs: exit 3; read-only commands create no file or folder", async () => {
    const ws = emptyWs("ro-ws");
    for (const args of [["job", "status", "abc12345"], ["job", "logs", "abc12345"], ["job", "wait", "abc12345"], ["job", "cancel", "abc12345"], ["job", "event", "abc12345", "started"]]) {
      const r = await runMam([...args, "--workspace", ws], { env: sb.env });
      expect({ args, code: r.code }).toEqual({ args, code: 3 });
      expect(r.stderr).toContain("no job abc12345");
    }
    const l = await runMam(["job", "list", "--json", "--workspace", ws], { env: sb.env });
    expect(l.code).toBe(0);
    expect(JSON.parse(l.stdout).jobs).toEqual([]);
    expect(existsSync(join(ws, ".mam"))).toBe(false);
  });

  test("submit to a session that does not exist: exit 3, nothing written", async () => {
    const ws = emptyWs("submit-ws");
    const r = await runMam(["job", "submit", "--to", "ghost", "--prompt", "hello", "--workspace", ws], { env: sb.env });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("no running session named 'ghost'");
    expect(r.stdout).toBe("");
    expect(existsSync(join(ws, ".mam"))).toBe(false);
  });

  test("a job file that is not JSON: exit 1 with the file named, never overwritten", async () => {
    const r = await reg();
    writeFileSync(recordPath(sb.ws, r.job_id), "{broken");
    for (const args of [["job", "status", r.job_id], ["job", "event", r.job_id, "started"], ["job", "cancel", r.job_id], ["job", "list"]]) {
      const x = await mam(...args);
      expect({ args, code: x.code }).toEqual({ args, code: 1 });
      expect(x.stderr).toContain(`job file ${recordPath(sb.ws, r.job_id)} is not valid JSON`);
    }
    expect(readFileSync(recordPath(sb.ws, r.job_id), "utf8")).toBe("{broken");
    expect(existsSync(journalPath(sb.ws, r.job_id))).toBe(false);
    // put it back so the other tests can list
    writeFileSync(recordPath(sb.ws, r.job_id), JSON.stringify(r));
  });
});

describe("job wait", () => {
  const spawnWait = (...args: string[]) =>
    Bun.spawn([...MAM_CMD, "job", "wait", ...args, "--workspace", sb.ws], { env: sb.env, stdout: "pipe", stderr: "pipe" });

  test("A B C: returns when all three have ended; exit 0 when all completed", async () => {
    const [a, b, c] = [await reg(), await reg(), await reg()];
    const p = spawnWait(a.job_id, b.job_id, c.job_id, "--json");
    for (const j of [a, b]) await mam("job", "event", j.job_id, "completed", "--detail", `done ${j.job_id}`);
    await Bun.sleep(600);
    expect(p.exitCode).toBeNull(); // still waiting for C
    await mam("job", "event", c.job_id, "completed");
    expect(await p.exited).toBe(0);
    const out = JSON.parse(await new Response(p.stdout).text());
    expect(out.outcome).toBe("done");
    expect(out.jobs.map((j: { status: string }) => j.status)).toEqual(["completed", "completed", "completed"]);
  });

  test("exit 1 when one ended in error or cancelled", async () => {
    const [a, b] = [await reg(), await reg()];
    await mam("job", "event", a.job_id, "completed");
    await mam("job", "cancel", b.job_id);
    const r = await mam("job", "wait", a.job_id, b.job_id);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(`${a.job_id} completed\n${b.job_id} cancelled: cancelled by mam job cancel\n`);
  });

  test("--any returns with the first job that ends", async () => {
    const [a, b] = [await reg(), await reg()];
    const p = spawnWait(a.job_id, b.job_id, "--any");
    await Bun.sleep(300);
    await mam("job", "event", b.job_id, "completed", "--detail", "first");
    expect(await p.exited).toBe(0);
    expect(await new Response(p.stdout).text()).toBe(`${a.job_id} pending\n${b.job_id} completed: first\n`);
    const q = spawnWait(a.job_id, "--any");
    await mam("job", "event", a.job_id, "error", "--detail", "bad");
    expect(await q.exited).toBe(1);
  });

  test("--timeout: exit 5 with the jobs still open named", async () => {
    const a = await reg();
    const r = await mam("job", "wait", a.job_id, "--timeout", "0.3");
    expect(r.code).toBe(5);
    expect(r.stdout).toBe(`${a.job_id} pending\n`);
    expect(r.stderr).toBe(`ERROR: timed out after 0.3 s waiting for job ${a.job_id}\n`);
  });

  test("SIGTERM → 143, SIGINT → 130", async () => {
    const a = await reg();
    for (const [sig, code] of [["SIGTERM", 143], ["SIGINT", 130]] as const) {
      const p = spawnWait(a.job_id);
      await Bun.sleep(400);
      p.kill(sig);
      expect(await p.exited).toBe(code);
    }
  });
});

describe("crash safety", () => {
  test("kill -9 of a writer mid-append leaves a readable journal that later appends extend", async () => {
    const r = await reg();
    const j = journalPath(sb.ws, r.job_id);
    for (let round = 0; round < 3; round++) {
      const w = Bun.spawn([process.execPath, join(import.meta.dir, "..", "fixtures", "journal-writer.ts"), sb.ws, r.job_id], { stdout: "pipe", stderr: "inherit" });
      expect(await waitFor(() => existsSync(j) && readFileSync(j).length > (round + 1) * 1_000_000, 20_000, 5)).toBe(true);
      w.kill("SIGKILL");
      await w.exited;
    }
    // whatever the writer left, readers see whole events only
    const before = readJournal(sb.ws, r.job_id);
    expect(before.length).toBeGreaterThan(5);
    const e = await mam("job", "event", r.job_id, "completed", "--detail", "after the kills");
    expect(e.code).toBe(0);
    const text = readFileSync(j, "utf8");
    expect(text.endsWith("\n")).toBe(true);
    const lines = text.split("\n").filter(Boolean);
    const seqs = lines.map((l) => JSON.parse(l).seq as number); // every line parses
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(seqs.at(-1)).toBe(before.length + 1);
    expect(JSON.parse((await mam("job", "status", r.job_id, "--json")).stdout)).toMatchObject({ status: "completed", events: before.length + 1 });
  });

  test("a torn tail (simulated) is cut by the next append", async () => {
    const r = await reg();
    await mam("job", "event", r.job_id, "started");
    appendFileSync(journalPath(sb.ws, r.job_id), '{"data":{"hmac_');
    expect((await mam("job", "logs", r.job_id)).stdout.split("\n").filter(Boolean)).toHaveLength(1);
    await mam("job", "event", r.job_id, "completed");
    expect(readJournal(sb.ws, r.job_id).map((e) => e.seq)).toEqual([1, 2]);
    expect(readFileSync(journalPath(sb.ws, r.job_id), "utf8")).not.toContain("hmac_\n");
  });
});
