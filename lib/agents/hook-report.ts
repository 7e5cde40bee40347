// What a hook call means (`mam agent-report --hook <kind>`): the agent's hook input (JSON on stdin,
// as claude and codex send it: hook_event_name, session_id, cwd, …) → the state to record. Pure.
//   SessionStart                         idle, and the conversation id
//   UserPromptSubmit, Pre/PostToolUse    working (PreToolUse also remembers the tool and its command)
//   Notification (claude)                blocked when it asks for a permission (with the tool
//                                        remembered by PreToolUse), idle when it waits for input
//   PermissionRequest (codex)            blocked, naming the tool and its command
//   Stop                                 idle
//   SessionEnd (claude)                  gone: the report is removed
import type { AgentReport, ReportState } from "./reports.ts";

export interface HookOutcome {
  event: string;
  state?: ReportState | "gone";
  reason?: string;
  tool?: string;
  sessionId?: string;
}

type Json = Record<string, unknown>;
const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
const oneLine = (s: string, n = 160) => {
  const t = s.replace(/\s+/g, " ").trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
};

/** "Bash: touch x" from a tool call's name and input */
export function toolOf(input: Json): string | undefined {
  const name = str(input.tool_name);
  if (!name) return undefined;
  const ti = (typeof input.tool_input === "object" && input.tool_input !== null ? input.tool_input : {}) as Json;
  const what = str(ti.command) ?? str(ti.cmd) ?? str(ti.file_path) ?? str(ti.path) ?? str(ti.url) ?? str(ti.pattern);
  return oneLine(what ? `${name}: ${what}` : name);
}

export function hookOutcome(kind: string, input: Json, previous?: AgentReport): HookOutcome | undefined {
  const event = str(input.hook_event_name);
  if (!event) return undefined;
  const sessionId = str(input.session_id);
  const base = { event, ...(sessionId ? { sessionId } : {}) };
  switch (event) {
    case "SessionStart":
      return { ...base, state: "idle" };
    case "UserPromptSubmit":
    case "PostToolUse":
      return { ...base, state: "working" };
    case "PreToolUse": {
      const tool = toolOf(input);
      return { ...base, state: "working", ...(tool ? { tool } : {}) };
    }
    case "PermissionRequest": {
      const tool = toolOf(input);
      return { ...base, state: "blocked", reason: tool ? `permission for ${tool}` : `${kind} asks for a permission` };
    }
    case "Notification": {
      const message = str(input.message) ?? "";
      const type = str(input.notification_type) ?? "";
      if (type === "permission_prompt" || (type === "" && /permission/i.test(message))) {
        const tool = previous?.tool;
        return { ...base, state: "blocked", reason: oneLine(tool ? `${message || "permission needed"} (${tool})` : message || "permission needed") };
      }
      if (type === "idle_prompt" || (type === "" && /waiting for your input/i.test(message))) return { ...base, state: "idle" };
      return undefined;
    }
    case "Stop":
      return { ...base, state: "idle" };
    case "SessionEnd":
      return { ...base, state: "gone" };
    default:
      return undefined;
  }
}
