// mam's agent hooks: merging them into the user's settings (install twice = once, uninstall
// removes only ours), what a hook input means, and when a report is fresh.
import { expect, test } from "bun:test";
import { hookOutcome, toolOf } from "../../lib/agents/hook-report.ts";
import { checkSettings, hookCommand, isOurs, oursIn, withOurs, withoutOurs } from "../../lib/agents/hooks-config.ts";
import { HOOK_KINDS } from "../../lib/agents/kinds/index.ts";
import { reportIsFresh, staleMs } from "../../lib/agents/reports.ts";

const user = {
  permissions: { allow: ["Bash(ls:*)"] },
  hooks: {
    Stop: [{ hooks: [{ type: "command", command: "notify-send done" }] }],
    PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "guard.sh" }] }],
  },
};

test("install merges after the user's hooks, once; uninstall removes only ours", () => {
  const cmd = hookCommand(["/opt/mam bin/mam"], "claude");
  expect(cmd).toBe("'/opt/mam bin/mam' agent-report --hook claude");
  const once = withOurs(user, "claude", cmd);
  expect(withOurs(once, "claude", cmd)).toEqual(once);
  expect(oursIn(once, "claude").events.sort()).toEqual([...HOOK_KINDS.claude!.events].sort());
  const stop = (once.hooks as Record<string, unknown[]>).Stop!;
  expect(stop[0]).toEqual(user.hooks.Stop[0]);
  expect(stop.length).toBe(2);
  expect(once.permissions).toEqual(user.permissions);
  // a new mam path replaces the old entry instead of adding a second
  const moved = withOurs(once, "claude", hookCommand(["/new/mam"], "claude"));
  expect(oursIn(moved, "claude").commands).toEqual(["/new/mam agent-report --hook claude"]);
  expect(withoutOurs(once, "claude")).toEqual(user);
  // codex's hooks are not claude's
  expect(withoutOurs(withOurs(user, "codex", "mam agent-report --hook codex"), "claude").hooks).toHaveProperty("PermissionRequest");
  // a user's group that mixes our handler with theirs keeps theirs
  const mixed = { hooks: { Stop: [{ hooks: [{ type: "command", command: "mine" }, { type: "command", command: cmd }] }] } };
  expect(withoutOurs(mixed, "claude")).toEqual({ hooks: { Stop: [{ hooks: [{ type: "command", command: "mine" }] }] } });
  expect(withoutOurs({ hooks: {} }, "claude")).toEqual({});
  expect(isOurs({ command: "x agent-report --hook claudette" }, "claude")).toBe(false);
  expect(() => checkSettings([], "f")).toThrow(/not a JSON object/);
  expect(() => checkSettings({ hooks: { Stop: {} } }, "f")).toThrow(/hooks.Stop is not a list/);
});

test("hook inputs → states; permission prompts name the tool PreToolUse announced", () => {
  expect(hookOutcome("claude", { hook_event_name: "SessionStart", session_id: "s1", source: "startup" })).toEqual({ event: "SessionStart", sessionId: "s1", state: "idle" });
  expect(hookOutcome("claude", { hook_event_name: "UserPromptSubmit" })?.state).toBe("working");
  const pre = hookOutcome("claude", { hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "touch x" } });
  expect(pre).toEqual({ event: "PreToolUse", state: "working", tool: "Bash: touch x" });
  const prev = { session: "w", state: "working" as const, event: "PreToolUse", tool: "Bash: touch x", at_ms: 1 };
  expect(hookOutcome("claude", { hook_event_name: "Notification", message: "Claude needs your permission to use Bash" }, prev)).toMatchObject({
    state: "blocked",
    reason: "Claude needs your permission to use Bash (Bash: touch x)",
  });
  expect(hookOutcome("claude", { hook_event_name: "Notification", message: "Claude is waiting for your input", notification_type: "idle_prompt" })?.state).toBe("idle");
  expect(hookOutcome("claude", { hook_event_name: "Notification", message: "something else", notification_type: "auth_success" })).toBeUndefined();
  expect(hookOutcome("codex", { hook_event_name: "PermissionRequest", tool_name: "Bash", tool_input: { command: "rm y" } })).toMatchObject({ state: "blocked", reason: "permission for Bash: rm y" });
  expect(hookOutcome("claude", { hook_event_name: "Stop" })?.state).toBe("idle");
  expect(hookOutcome("claude", { hook_event_name: "SessionEnd" })?.state).toBe("gone");
  expect(hookOutcome("claude", {})).toBeUndefined();
  expect(toolOf({ tool_name: "Edit", tool_input: { file_path: "/a/b.ts" } })).toBe("Edit: /a/b.ts");
});

test("a report is fresh: from this agent (not before the row's start, same pane) and younger than MAM_HOOK_STALE_S", () => {
  const r = { session: "w", state: "idle" as const, event: "Stop", pane: "%3", at_ms: 100_000 };
  const f = { nowMs: 101_000, rowEpoch: 99, paneId: "%3", staleMs: 300_000 };
  expect(reportIsFresh(r, f)).toBe(true);
  expect(reportIsFresh(r, { ...f, rowEpoch: 200 })).toBe(false); // an earlier agent of that name
  expect(reportIsFresh(r, { ...f, paneId: "%4" })).toBe(false);
  expect(reportIsFresh(r, { ...f, nowMs: 100_000 + 300_001 })).toBe(false);
  expect(staleMs({})).toBe(300_000);
  expect(staleMs({ MAM_HOOK_STALE_S: "20" })).toBe(20_000);
  expect(staleMs({ MAM_HOOK_STALE_S: "abc" })).toBe(300_000);
});
