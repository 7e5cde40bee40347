// Failover's pure decisions (docs/unattended.md#failover): the targets a flag names, which free
// agent takes a job, that the limited agent never does (unless it is the only one left),
// failover_waiting said once, what the new agent is told, and where a job may go by the row.
import { describe, expect, test } from "bun:test";
import { ANY_AGENT, failoverPreface, heldBefore, parseFailover, pickFailover, reportedSoFar, waitingSaid } from "../../lib/jobs/failover.ts";
import { targetsOf } from "../../lib/ops/job/failover.ts";
import type { Row } from "../../lib/registry/types.ts";

const ev = (event: string, data: Record<string, unknown> = {}, source = "mam", detail = "") => ({ event, data, source, detail }) as never;
const c = (name: string, role: string | null, kind: string | null) => ({ name, role, kind });

describe("parseFailover", () => {
  test("roles, kinds or names, in order, without repeats; none is nowhere", () => {
    expect(parseFailover("worker, codex,worker,,b-2")).toEqual(["worker", "codex", "b-2"]);
    expect(parseFailover("none")).toEqual([]);
    expect(parseFailover("")).toEqual([]);
    expect(() => parseFailover("worker,a b")).toThrow("{{failover}} 'a b' is not a role, agent kind or session name");
    expect(() => parseFailover("*")).toThrow("is not a role");
  });
});

describe("pickFailover", () => {
  const free = [c("z-codex", "helper", "codex"), c("b-claude", "worker", "claude"), c("a-gemini", "worker", "gemini")];
  test("the first target a free agent matches by name, role or kind; the first by name among them", () => {
    expect(pickFailover(["codex"], "x", free, new Set())).toBe("z-codex");
    expect(pickFailover(["worker"], "x", free, new Set())).toBe("a-gemini");
    expect(pickFailover(["nobody", "b-claude", "worker"], "x", free, new Set())).toBe("b-claude");
    expect(pickFailover(["helper", "worker"], "x", free, new Set())).toBe("z-codex");
    expect(pickFailover(["nobody"], "x", free, new Set())).toBeUndefined();
    expect(pickFailover([ANY_AGENT], "x", free, new Set())).toBe("a-gemini");
  });
  test("never the limited agent itself", () => {
    expect(pickFailover(["worker"], "a-gemini", free, new Set())).toBe("b-claude");
    expect(pickFailover(["a-gemini"], "a-gemini", free, new Set())).toBeUndefined();
  });
  test("an agent that held the job before only when no other is left", () => {
    expect(pickFailover(["worker"], "x", free, new Set(["a-gemini"]))).toBe("b-claude");
    expect(pickFailover(["worker"], "x", free, new Set(["a-gemini", "b-claude"]))).toBe("a-gemini");
    expect(pickFailover(["a-gemini", "codex"], "x", free, new Set(["a-gemini"]))).toBe("z-codex");
  });
  test("heldBefore: the agents the job was taken from", () => {
    expect([...heldBefore([ev("failover", { from: "a", to: "b" }), ev("progress"), ev("failover", { from: "b", to: "c" })])]).toEqual(["a", "b"]);
  });
});

describe("failover_waiting once", () => {
  test("said for this agent since the job last moved", () => {
    expect(waitingSaid([], "a")).toBe(false);
    expect(waitingSaid([ev("failover_waiting", { from: "a" })], "a")).toBe(true);
    expect(waitingSaid([ev("failover_waiting", { from: "a" })], "b")).toBe(false);
    expect(waitingSaid([ev("failover_waiting", { from: "a" }), ev("failover", { from: "a", to: "b" })], "a")).toBe(false);
    expect(waitingSaid([ev("failover", { from: "a", to: "b" }), ev("failover_waiting", { from: "b" }), ev("progress")], "b")).toBe(true);
  });
});

describe("what the new agent is told", () => {
  test("the agents' own started and progress details, the last ten, long ones cut", () => {
    const evs = [ev("queued", {}, "mam", "x"), ev("started", {}, "a", "reading"), ev("progress", {}, "mam@h", "no"), ev("progress", {}, "a", ""), ...Array.from({ length: 11 }, (_, i) => ev("progress", {}, "a", `step ${i}`)), ev("progress", {}, "a", "y".repeat(500))];
    const r = reportedSoFar(evs);
    expect(r).toHaveLength(10);
    expect(r[0]).toEqual({ source: "a", event: "progress", detail: "step 2" });
    expect(r[9]!.detail).toBe(`${"y".repeat(400)}…`);
  });
  test("the preface names both agents, the reason and what was reported", () => {
    const t = failoverPreface("0123abcd", "a", "b", "You've hit your limit", [{ source: "a", event: "progress", detail: "half done" }]);
    expect(t.split("\n")).toEqual([
      "[mam] Job 0123abcd comes to you (b) from a, which reached a usage limit before finishing it (You've hit your limit).",
      "What was reported on it so far:",
      "  - a (progress): half done",
      "Continue where it stopped: check what is already done before you redo anything.",
    ]);
    expect(failoverPreface("0123abcd", "a", "b", "r", [])).toContain("a reported no progress on it.");
  });
});

describe("targetsOf", () => {
  const row = (o: Partial<Row>): Row => ({ name: "a", status: "running", ...o }) as Row;
  test("the job's own targets first; else the row's --on-limit failover: its role, then anyone; else nowhere", () => {
    expect(targetsOf({ failover: ["codex"] }, row({ on_limit: "failover", role: "worker" }))).toEqual(["codex"]);
    expect(targetsOf({}, row({ on_limit: "failover", role: "worker" }))).toEqual(["worker", ANY_AGENT]);
    expect(targetsOf({}, row({ on_limit: "failover" }))).toEqual([ANY_AGENT]);
    expect(targetsOf({}, row({ on_limit: "resume", role: "worker" }))).toEqual([]);
    expect(targetsOf({}, row({ role: "worker" }))).toEqual([]);
    expect(targetsOf({ failover: [] }, row({}))).toEqual([]);
  });
});
