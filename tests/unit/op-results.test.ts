// An operation states its result (lib/ops/op.ts `result`): the shape MCP publishes as the tool's
// output schema and --json prints. Here each op's actual result, from its use case run in process
// with test deps in a temp workspace, is checked against the shape its entry declares (the MCP
// tools' results are checked again by the SDK's client in tests/integration/mcp.test.ts).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import * as z from "zod/mini";
import { writeRecord } from "../../lib/jobs/store.ts";
import { OPS, opNamed } from "../../lib/ops/index.ts";
import type { AnyOp } from "../../lib/ops/op.ts";
import { mcpResult } from "../../lib/mcp/tools.ts";
import { uiActions } from "../../lib/ui/actions.ts";
import { shapeOf } from "../../lib/ops/input.ts";
import { withNoticeLines } from "../../lib/sys/notice.ts";
import { loopJob } from "../helpers/job-record.ts";
import { runOp, testDeps } from "../helpers/ops.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

/** the issues of a JSON document against the op's declared result (none: it matches) */
export function resultIssues(op: AnyOp, out: unknown): string[] {
  const doc = JSON.parse(JSON.stringify(op.json ? op.json(out) : withNoticeLines(out)));
  const r = z.safeParse(op.result(), doc);
  return r.success ? [] : r.error.issues.map((i) => `${op.name}: ${i.path.join(".")}: ${i.message}`);
}

describe("the table: every op states its result", () => {
  test("each op has a result shape; an MCP tool's is an object (its output schema)", () => {
    for (const op of OPS) {
      expect(typeof op.result, op.name).toBe("function");
      if (op.mcp) expect((mcpResult(op)._zod.def as { type: string }).type, op.name).toBe("object");
    }
  });

  test("a dashboard action names fields of its op's input, and changes something", () => {
    expect(uiActions().map((o) => o.name)).toEqual(["session.stop", "session.resume", "session.prune", "session.send", "session.approve", "job.cancel"]);
    for (const op of uiActions()) {
      const fields = Object.keys(shapeOf(op));
      for (const f of [...op.ui!.fields, ...(op.ui!.required ?? []), ...Object.keys(op.ui!.fixed ?? {})]) expect(fields, `${op.name}: ${f}`).toContain(f);
    }
  });

  test("the daemon's pid is daemon_pid in every result that gives it (create keeps watchdog_pid, the same pid, for compatibility)", () => {
    const keys = (name: string) => Object.keys((mcpResult(opNamed(name)!)._zod.def as unknown as { shape: object }).shape);
    expect(keys("session.create")).toEqual(expect.arrayContaining(["daemon_pid", "watchdog_pid"]));
    for (const op of OPS) if (op.name !== "session.create") expect(JSON.stringify(keys(op.name)), op.name).not.toContain("watchdog");
  });

  test("a result that is not the declared shape is caught", () => {
    const op = opNamed("job.cancel")!;
    expect(resultIssues(op, { job_id: "abc12345", cancelled: true, status: "cancelled", told: null, warnings: [] })).toEqual([]);
    expect(resultIssues(op, { job_id: "abc12345", cancelled: "yes", status: "cancelled", told: null, warnings: [] })[0]).toMatch(/^job\.cancel: cancelled: /);
    expect(resultIssues(op, { cancelled: true, status: "cancelled", told: null, warnings: [] }).length).toBe(1);
  });
});

describe("each op's actual result matches its declared shape (use cases with test deps)", () => {
  let sb: Sandbox;
  beforeEach(() => {
    sb = makeSandbox("mam-opres-");
  });
  afterEach(() => sb.cleanup());

  const env = () => ({ ...sb.env, MAM_NO_SUBSCRIBER_DAEMON: "1" });
  const check = async (name: string, raw: Record<string, unknown> = {}) => {
    const op = opNamed(name)!;
    const out = await runOp(op, testDeps(sb.ws, {}, env()), raw);
    expect(resultIssues(op, out)).toEqual([]);
    return out;
  };

  test("the workspace's: status, prune, worktrees, registry, daemon", async () => {
    await check("session.status");
    await check("session.prune", { dry_run: true });
    await check("worktree.list");
    await check("registry.check");
    await check("daemon.ensure");
    await check("registry.reconcile", { dry_run: true });
  });

  test("a job's: status, list, logs, cancel, wait", async () => {
    mkdirSync(join(sb.ws, ".mam", "jobs"), { recursive: true });
    writeRecord(sb.ws, loopJob({ job_id: "abc12345", status: "running", last_seq: 0 }));
    await check("job.status", { job_id: "abc12345" });
    await check("job.list");
    await check("job.list", { scheduled: true });
    await check("job.logs", { job_id: "abc12345" });
    await check("job.cancel", { job_id: "abc12345" });
    await check("job.logs", { job_id: "abc12345" });
    await check("job.wait", { job_ids: ["abc12345"], timeout_s: 1 });
  });

  test("the team's and the notifications': init, code, show, leave; add, list, test, remove", async () => {
    await check("team.init", { name: "lab", broker: "127.0.0.1:9" });
    await check("team.code");
    await check("team.leave");
    await check("notify.add", { type: "command", target: "true" });
    await check("notify.list");
    await check("notify.test");
    await check("notify.remove", { id: "1" });
  });
});
