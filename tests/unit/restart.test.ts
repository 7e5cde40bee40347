// Dead agents come back, opt-in (issue 34 item 4): the pure decision of lib/fleet/restart.ts (died vs
// stopped, the restarts counted per hour, give up after max), and the registry's check of the fields.
import { describe, expect, test } from "bun:test";
import { claimRestart, DEFAULT_MAX_RESTARTS, decideRestart, restartable, restartState, RESTART_CLAIM_STALE_S } from "../../lib/fleet/restart.ts";
import type { Row } from "../../lib/registry/types.ts";
import { validateRegistry } from "../../lib/registry/validate.ts";
import { continueText } from "../../lib/ops/react/agents-restart.ts";
import { keepingPolicy, markPolicy, policyNotOwn, policyView } from "../../lib/fleet/policy.ts";
import { recordMac } from "../../lib/sys/record-key.ts";

const NOW = 1_800_000_000;
const died = (more: Partial<Row> = {}): Row => ({ name: "w1", status: "terminated", termination_mode: "auto-detected", restart: "on-failure", ...more });

describe("decideRestart: died vs stopped", () => {
  test("a row that died with restart on-failure is restarted: attempt 1 of the default 3", () => {
    expect(decideRestart(died(), NOW)).toEqual({ kind: "restart", attempt: 1, max: DEFAULT_MAX_RESTARTS });
  });
  test("no policy, or restart no: nothing", () => {
    expect(decideRestart(died({ restart: undefined }), NOW).kind).toBe("none");
    expect(decideRestart(died({ restart: "no" }), NOW).kind).toBe("none");
  });
  test("a mam stop is no death: stopped, terminated hard, a stop in progress", () => {
    expect(decideRestart(died({ status: "stopped", termination_mode: undefined }), NOW)).toEqual({ kind: "none", why: "stopped by a user" });
    expect(decideRestart(died({ termination_mode: "hard" }), NOW)).toEqual({ kind: "none", why: "ended by a stop (hard)" });
    expect(decideRestart(died({ stopping_epoch: NOW - 5 }), NOW).kind).toBe("none");
    // a stop that died half-way long ago owns nothing any more
    expect(decideRestart(died({ stopping_epoch: NOW - 3600 }), NOW).kind).toBe("restart");
  });
  test("running, archived: nothing", () => {
    expect(decideRestart(died({ status: "running" }), NOW).kind).toBe("none");
    expect(decideRestart(died({ status: "archived" }), NOW).kind).toBe("none");
  });
});

describe("the count per hour, give up after max", () => {
  test("restarts within the hour count; older ones do not", () => {
    expect(decideRestart(died({ restarts: [NOW - 100, NOW - 50] }), NOW)).toEqual({ kind: "restart", attempt: 3, max: 3 });
    expect(decideRestart(died({ restarts: [NOW - 4000, NOW - 3700, NOW - 50] }), NOW)).toEqual({ kind: "restart", attempt: 2, max: 3 });
    expect(decideRestart(died({ restarts: [NOW - 3600, NOW - 3601] }), NOW)).toEqual({ kind: "restart", attempt: 1, max: 3 });
  });
  test("max restarts within the hour: give up; max_restarts is the row's", () => {
    expect(decideRestart(died({ restarts: [NOW - 30, NOW - 20, NOW - 10] }), NOW)).toEqual({ kind: "give-up", attempts: 3, max: 3 });
    expect(decideRestart(died({ max_restarts: 1, restarts: [NOW - 10] }), NOW)).toEqual({ kind: "give-up", attempts: 1, max: 1 });
    expect(decideRestart(died({ max_restarts: 5, restarts: [NOW - 30, NOW - 20, NOW - 10] }), NOW)).toEqual({ kind: "restart", attempt: 4, max: 5 });
  });
  test("claimRestart counts and claims; the same death is not restarted twice while its claim holds", () => {
    const r = died({ restarts: [NOW - 4000, NOW - 10] });
    expect(claimRestart(r, NOW)).toEqual({ kind: "restart", attempt: 2, max: 3 });
    expect(r.restarts).toEqual([NOW - 10, NOW]);
    expect(r.restart_claim_epoch).toBe(NOW);
    expect(claimRestart(r, NOW + 1)).toEqual({ kind: "none", why: "a restart is under way" });
    expect(r.restarts).toEqual([NOW - 10, NOW]);
    // a claim whose daemon was killed mid-resume goes stale
    expect(claimRestart(r, NOW + RESTART_CLAIM_STALE_S)).toEqual({ kind: "restart", attempt: 3, max: 3 });
  });
  test("a give-up is marked once, and the row is left alone after", () => {
    const r = died({ max_restarts: 2, restarts: [NOW - 20, NOW - 10] });
    expect(claimRestart(r, NOW)).toEqual({ kind: "give-up", attempts: 2, max: 2 });
    expect(r.restart_gave_up_epoch).toBe(NOW);
    expect(typeof r.restart_gave_up_at).toBe("string");
    expect(r.status).toBe("terminated");
    expect(decideRestart(r, NOW + 1)).toEqual({ kind: "none", why: "gave up restarting" });
    expect(restartable(r, NOW + 1)).toBe(false);
  });
});

describe("what status says", () => {
  test("restarting (n/max this hour), gave up restarting, nothing", () => {
    expect(restartState(died({ status: "running", termination_mode: undefined, restarts: [NOW - 10, NOW - 5] }), NOW)).toBe("restarting (2/3 this hour)");
    expect(restartState(died(), NOW)).toBe("restarting (0/3 this hour)");
    expect(restartState(died({ restart_gave_up_at: "2027-01-15T08:00:00Z" }), NOW)).toBe("gave up restarting");
    expect(restartState(died({ status: "running", termination_mode: undefined }), NOW)).toBeUndefined();
    expect(restartState(died({ restart: undefined }), NOW)).toBeUndefined();
  });
});

describe("the registry's check of the fields", () => {
  const reg = (more: Record<string, unknown>) => ({ herdr_sessions: [{ name: "w1", status: "running", ...more }], tmux_sessions: [] });
  test("good values pass", () => {
    expect(validateRegistry(reg({ restart: "on-failure", max_restarts: 5, restarts: [NOW] }))).toEqual([]);
    expect(validateRegistry(reg({ restart: "no" }))).toEqual([]);
  });
  test("bad values are named", () => {
    expect(validateRegistry(reg({ restart: "always" }))).toEqual(["herdr_sessions[0] 'w1' restart must be one of no, on-failure (not 'always')"]);
    expect(validateRegistry(reg({ restart: "on-failure", max_restarts: 0 }))).toEqual(["herdr_sessions[0] 'w1' max_restarts must be a whole number from 1 to 100 (not 0)"]);
    expect(validateRegistry(reg({ restart: "on-failure", max_restarts: 2.5 }))).toEqual(["herdr_sessions[0] 'w1' max_restarts must be a whole number from 1 to 100 (not 2.5)"]);
    expect(validateRegistry(reg({ restarts: "x" }))).toEqual(["herdr_sessions[0] 'w1' restarts must be a list of epoch seconds"]);
  });
});

describe("what a restarted agent is told", () => {
  test("its jobs by id, why it ended, and not to redo finished work; never the job's own text", () => {
    expect(continueText(["1234abcd"], "its agent exited")).toBe(
      "[mam] Your process ended (its agent exited) and mam restarted you in this conversation. Continue job 1234abcd where you stopped; do not redo work that is already done, and report as before.",
    );
    expect(continueText(["a1", "b2"], "x")).toContain("Continue jobs a1, b2 where you stopped");
  });
});

describe("the mark of a row's policy (lib/fleet/policy.ts): the daemon acts only on what this user's mam wrote", () => {
  const KEY = "ab".repeat(32);
  const WS = "/work/ws";
  const row = (more: Partial<Row> = {}): Row => ({ name: "w1", status: "running", agent: "claude", claude_session_id_own: "c-1", restart: "on-failure", max_restarts: 2, on_limit: "failover", ...more });
  const marked = (more: Partial<Row> = {}): Row => {
    const r = row(more);
    markPolicy(r, KEY, WS);
    return r;
  };
  test("own: marked under the key, its policy stands", () => {
    const r = marked();
    expect(r.policy_mac).toMatch(/^[0-9a-f]{64}$/);
    expect(policyNotOwn(r, KEY, WS)).toBeUndefined();
    expect(policyView(r, KEY, WS)).toBe(r);
    expect(restartable(policyView(r, KEY, WS), NOW)).toBe(true);
  });
  test("a covered field changed (the conversation, the policy, the workspace, the name): not own", () => {
    for (const change of [{ claude_session_id_own: "c-2" }, { max_restarts: 50 }, { on_limit: "resume" }, { name: "w2" }, { agent: "codex" }] as Partial<Row>[]) {
      expect(policyNotOwn({ ...marked(), ...change }, KEY, WS)).toContain("not this user's mam's");
    }
    expect(policyNotOwn(marked(), KEY, "/other")).toContain("not this user's mam's");
    expect(policyNotOwn(marked(), "cd".repeat(32), WS)).toContain("not this user's mam's");
  });
  test("the sandbox a restart starts it in is covered: taken away or changed, not own; a row without one keeps its old mark", () => {
    const sandboxed = marked({ sandbox: { mode: "bwrap", net: "model", allow: ["api.anthropic.com:443"] } });
    expect(policyNotOwn(sandboxed, KEY, WS)).toBeUndefined();
    const { sandbox: _gone, ...without } = sandboxed;
    expect(policyNotOwn(without as Row, KEY, WS)).toContain("not this user's mam's");
    expect(policyNotOwn({ ...sandboxed, sandbox: { mode: "bwrap", net: "all" } }, KEY, WS)).toContain("not this user's mam's");
    // key order as a YAML editor may leave it: the same sandbox
    expect(policyNotOwn({ ...sandboxed, sandbox: { allow: ["api.anthropic.com:443"], net: "model", mode: "bwrap" } }, KEY, WS)).toBeUndefined();
    expect(marked().policy_mac).toBe(recordMac(KEY, "row-policy", ["w1", "claude", "c-1", "on-failure", 2, "failover", WS]));
  });
  test("no key: not own; no mark (a cloned repository's row): not own, and the daemon sees restart no, on_limit wait", () => {
    expect(policyNotOwn(marked(), undefined, WS)).toContain("record key is missing");
    const shipped = row();
    expect(policyNotOwn(shipped, KEY, WS)).toContain("carries no mark");
    const v = policyView(shipped, KEY, WS);
    expect([v.restart, v.max_restarts, v.on_limit]).toEqual([undefined, undefined, undefined]);
    expect(restartable(v, NOW)).toBe(false);
    expect(decideRestart(policyView(died(), KEY, WS), NOW).kind).toBe("none");
  });
  test("a row without a policy needs no mark", () => {
    expect(policyNotOwn(row({ restart: undefined, max_restarts: undefined, on_limit: undefined }), KEY, WS)).toBeUndefined();
  });
  test("keepingPolicy re-marks a row that was own (a fresh conversation), never one that was not", () => {
    const own = marked();
    keepingPolicy([own], KEY, WS, () => (own.claude_session_id_own = "c-9"));
    expect(policyNotOwn(own, KEY, WS)).toBeUndefined();
    const shipped = row();
    keepingPolicy([shipped], KEY, WS, () => (shipped.claude_session_id_own = "c-9"));
    expect(shipped.policy_mac).toBeUndefined();
    expect(policyNotOwn(shipped, KEY, WS)).toContain("carries no mark");
  });
  test("the registry takes a policy_mac of 64 hex digits, nothing else", () => {
    const reg = (mac: unknown) => validateRegistry({ herdr_sessions: [{ name: "w1", status: "running", restart: "on-failure", policy_mac: mac }], tmux_sessions: [] });
    expect(reg("ab".repeat(32))).toEqual([]);
    expect(JSON.stringify(reg("nope"))).toContain("policy_mac must be 64 hex digits");
  });
});
