// The loop machine (SPEC §7.4) and the timeout decisions, as pure functions.
import { describe, expect, test } from "bun:test";
import type { JobEvent } from "../../lib/jobs/event.ts";
import type { EventName } from "../../lib/jobs/statuses.ts";
import { decideTimeout } from "../../lib/jobs/ingest.ts";
import { loopNext } from "../../lib/jobs/loop.ts";
import { agentMam } from "../../lib/sys/agent-mam.ts";
import type { JobRecord } from "../../lib/jobs/store.ts";
import { loopJob } from "../helpers/job-record.ts";
import { isoUtc } from "../../lib/sys/time.ts";

const T0 = 1_800_000_000;
function job(over: Partial<JobRecord> = {}): JobRecord {
  return loopJob({ expected_artifacts: ["out.md", "lib/x.ts"], ...over }, isoUtc(T0));
}
const ev = (event: EventName, source: string, detail = "", seq = 3): JobEvent => ({
  schema_version: 1, seq, job_id: "abc12345", event, timestamp: isoUtc(T0), detail, source, data: {},
});
const WS = "/work/my ws";

describe("loopNext", () => {
  test("worker completed → prompt the reviewer with the worker's detail and the expected artifacts", () => {
    const a = loopNext(job(), ev("completed", "wrk", "implemented in lib/x.ts"), WS);
    expect(a.kind).toBe("review");
    if (a.kind !== "review") return;
    expect(a.session).toBe("rev");
    expect(a.text).toContain("wrk reports completed: implemented in lib/x.ts");
    expect(a.text).toContain("Expected artifacts: out.md, lib/x.ts");
    expect(a.text).toContain(`${agentMam()} job event abc12345 completed --source rev --workspace '/work/my ws' --detail "PASS"`);
    expect(a.marker).toMatchObject({ event: "progress", source: "mam", detail: "iteration 1: review requested from rev" });
  });

  test("reviewer completed with PASS → done (its event completed the job)", () => {
    expect(loopNext(job({ status: "completed" }), ev("completed", "rev", "PASS — looks good"), WS)).toEqual({ kind: "done" });
  });

  test("reviewer feedback → back to the worker, iteration + 1", () => {
    const a = loopNext(job({ iteration: 1 }), ev("completed", "rev", "rename the flag"), WS);
    expect(a.kind).toBe("feedback");
    if (a.kind !== "feedback") return;
    expect(a.session).toBe("wrk");
    expect(a.iteration).toBe(2);
    expect(a.text).toContain("iteration 2 of 3: reviewer rev asks for changes: rename the flag");
    expect(a.text).toContain(`${agentMam()} job event abc12345 completed --source wrk --workspace '/work/my ws'`);
    expect(a.marker).toMatchObject({ event: "progress", source: "mam", data: { iteration: 2 } });
  });

  test("feedback at max_iterations → error 'max iterations reached'", () => {
    expect(loopNext(job({ iteration: 3 }), ev("completed", "rev", "still wrong"), WS)).toEqual({
      kind: "fail",
      event: { event: "error", detail: "max iterations reached", source: "mam", data: { iteration: 3 } },
    });
    expect(loopNext(job({ iteration: 1, max_iterations: 1 }), ev("completed", "rev", "no"), WS).kind).toBe("fail");
  });

  test("no step for non-completed events, single jobs, or jobs that already ended", () => {
    expect(loopNext(job(), ev("progress", "wrk"), WS).kind).toBe("none");
    expect(loopNext(job(), ev("error", "wrk", "boom"), WS).kind).toBe("none");
    expect(loopNext(job({ type: "single", reviewer_session: null }), ev("completed", "wrk"), WS).kind).toBe("none");
    expect(loopNext(job({ status: "cancelled" }), ev("completed", "wrk"), WS).kind).toBe("none");
    expect(loopNext(job({ status: "cancelled" }), ev("completed", "rev", "meh"), WS).kind).toBe("none");
  });
});

describe("decideTimeout", () => {
  const started = [ev("started", "wrk", "", 1)];
  test("idle: running and no event for idle_timeout_sec", () => {
    const j = job({ type: "single", updated_at: isoUtc(T0 + 100) });
    expect(decideTimeout(j, started, T0 + 219)).toBeUndefined();
    expect(decideTimeout(j, started, T0 + 220)).toEqual({ job_id: "abc12345", detail: "no event for 120 s" });
  });

  test("idle does not apply before started", () => {
    expect(decideTimeout(job({ status: "pending" }), [], T0 + 1000)).toBeUndefined();
  });

  test("overall: timeout_sec since created, pending or running", () => {
    expect(decideTimeout(job({ status: "pending", timeout_sec: 600 }), [], T0 + 600)).toEqual({ job_id: "abc12345", detail: "no final event within 600 s" });
    expect(decideTimeout(job({ timeout_sec: 600, updated_at: isoUtc(T0 + 599) }), started, T0 + 599)).toBeUndefined();
  });

  test("never for a final job (from the journal), and 0 disables a limit", () => {
    expect(decideTimeout(job({ timeout_sec: 1 }), [...started, ev("completed", "rev", "PASS", 2)], T0 + 99999)).toBeUndefined();
    expect(decideTimeout(job({ timeout_sec: 0, idle_timeout_sec: 0 }), started, T0 + 99999)).toBeUndefined();
  });
});
