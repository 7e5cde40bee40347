// waitJobs' reports for the MCP tool wait_jobs: one onEvent per event that arrives during the
// wait (none for those journalled before), and stopOn ending the wait with outcome attention.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { JobEvent } from "../../lib/jobs/event.ts";
import { appendEvent, type JobSpec, registerJob } from "../../lib/jobs/store.ts";
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
});
