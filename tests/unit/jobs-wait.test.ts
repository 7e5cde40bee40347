// waitJobs' reports for the MCP tool wait_jobs: one onEvent per event that arrives during the
// wait (none for those journalled before), and stopOn ending the wait with outcome attention.
import { afterAll, describe, expect, test } from "bun:test";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalJson } from "../../lib/jobs/canonical.ts";
import { type JobEvent, signEvent } from "../../lib/jobs/event.ts";
import { appendEvent, type JobSpec, journalPath, registerJob } from "../../lib/jobs/store.ts";
import { publicWait, waitJobs } from "../../lib/jobs/wait.ts";

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));
function tempWs(): string {
  const d = mkdtempSync(join(tmpdir(), "mam-waitu-"));
  roots.push(d);
  return d;
}
const spec: JobSpec = {
  agent_session: "wrk", agent: "claude", prompt: "do it", delegator: null, type: "single", reviewer_session: null,
  max_iterations: null, timeout_sec: 3600, idle_timeout_sec: 120, expected_artifacts: [], topic_prefix_base: "mam/jobs",
};
const ev = (event: "started" | "progress" | "permission_required" | "completed", detail = "") => ({ event, detail, source: "wrk" });

describe("waitJobs onEvent / stopOn", () => {
  test("events journalled before the wait are not reported; those after are, once each, in order", async () => {
    const ws = tempWs();
    const r = await registerJob(ws, spec);
    await appendEvent(ws, r.job_id, ev("started"));
    const seen: string[] = [];
    const waiting = waitJobs(ws, [r], { any: false, timeoutMs: 10_000, onEvent: (e: JobEvent) => void seen.push(`${e.seq}:${e.event}`) });
    await Bun.sleep(300);
    await appendEvent(ws, r.job_id, ev("progress", "half"));
    await Bun.sleep(300);
    await appendEvent(ws, r.job_id, ev("completed", "ok"));
    const res = await waiting;
    expect(res.outcome).toBe("done");
    expect(seen).toEqual(["2:progress", "3:completed"]);
    expect(res.jobs[0]!.status).toBe("completed");
  });

  test("stopOn ends the wait at once with outcome attention and that event; publicWait leaves out signatures", async () => {
    const ws = tempWs();
    const r = await registerJob(ws, spec);
    await appendEvent(ws, r.job_id, ev("permission_required", "old")); // before the wait: not news
    const waiting = waitJobs(ws, [r], { any: false, timeoutMs: 10_000, stopOn: (e) => e.event === "permission_required" });
    await Bun.sleep(300);
    await appendEvent(ws, r.job_id, ev("progress"));
    await appendEvent(ws, r.job_id, ev("permission_required", "allow rm?"));
    const res = await waiting;
    expect(res.outcome).toBe("attention");
    expect(res.event).toMatchObject({ seq: 3, event: "permission_required", detail: "allow rm?" });
    expect(res.jobs[0]!.status).toBe("running");
    const pub = publicWait(res);
    expect(pub.event!.data.hmac_sig).toBeUndefined();
    expect(pub.jobs[0]!.last_event!.data.hmac_sig).toBeUndefined();
    expect(res.event!.data.hmac_sig).toBeDefined();
  });

  test("an event is news by its identity (origin, seq): a remote's permission_required with a seq this machine already used ends the wait (BUG-4)", async () => {
    const ws = tempWs();
    const r = await registerJob(ws, spec);
    for (const e of [ev("started"), ev("progress"), ev("progress")]) await appendEvent(ws, r.job_id, e);
    const seen: string[] = [];
    const waiting = waitJobs(ws, [r], { any: false, timeoutMs: 5_000, onEvent: (e) => void seen.push(`${e.origin}:${e.seq}:${e.event}`), stopOn: (e) => e.event === "permission_required" });
    await Bun.sleep(300);
    // the daemon journals a remote worker's first event: seq 1, as the local started
    const remote = signEvent({ schema_version: 1, seq: 1, origin: "remote0000000002", job_id: r.job_id, event: "permission_required", timestamp: "2026-12-01T00:00:00Z", detail: "allow rm?", source: "wrk", data: {} }, r.auth_token);
    appendFileSync(journalPath(ws, r.job_id), `${canonicalJson(remote)}\n`);
    const res = await waiting;
    expect(res.outcome).toBe("attention");
    expect(res.event).toMatchObject({ origin: "remote0000000002", seq: 1, event: "permission_required", detail: "allow rm?" });
    expect(seen).toEqual(["remote0000000002:1:permission_required"]);
  });
});
