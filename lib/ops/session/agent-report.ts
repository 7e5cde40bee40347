// `mam agent-report`: an agent (through its hooks) tells mam what it is doing. The one use case:
// record the report for the session (.mam/agent-state/<session>.json, lib/agents/reports.ts), and
// when it carries the conversation id at session start, put that id into the session's row with
// `session_id_source: hook` (the agent said so itself: a /clear or /resume inside the agent moves
// the row to the new conversation).
import { hookOutcome, type HookOutcome } from "../../agents/hook-report.ts";
import { idField } from "../../agents/kinds/index.ts";
import { type AgentReport, readReport, removeReport, type ReportState, writeReport } from "../../agents/reports.ts";
import type { RegistryStore } from "../deps.ts";
import { allRows } from "../../registry/rows.ts";
import { keepingPolicy } from "../../fleet/policy.ts";

export interface ReportRequest {
  ws: string;
  session: string;
  /** the agent kind whose hook called (claude, codex) */
  kind?: string;
  /** the hook's JSON input (with kind) */
  hookInput?: Record<string, unknown>;
  /** a direct report (no hook): the state and its reason */
  state?: ReportState;
  reason?: string;
  sessionId?: string;
  pane?: string;
  nowMs: number;
  /** this user's record key (lib/sys/record-key.ts): a policy it marked stays marked when the id moves */
  key?: string;
}

export interface ReportResult {
  outcome?: HookOutcome;
  report?: AgentReport;
  removed?: boolean;
  /** the row's conversation id was set from the report */
  idRecorded?: string;
}

/** `registry`: the workspace's registry, asked for only when a conversation id is to be recorded (rarely: a hook runs on every tool use) */
export async function recordAgentReport(req: ReportRequest, registry: () => Promise<RegistryStore>): Promise<ReportResult> {
  const previous = readReport(req.ws, req.session);
  const outcome: HookOutcome | undefined = req.hookInput
    ? hookOutcome(req.kind ?? "agent", req.hookInput, previous)
    : { event: "report", state: req.state, ...(req.reason ? { reason: req.reason } : {}), ...(req.sessionId ? { sessionId: req.sessionId } : {}) };
  if (!outcome) return {};
  const result: ReportResult = { outcome };
  if (outcome.state === "gone") {
    removeReport(req.ws, req.session);
    result.removed = true;
  } else if (outcome.state) {
    const report: AgentReport = {
      session: req.session,
      state: outcome.state,
      ...(outcome.reason ? { reason: outcome.reason } : {}),
      event: outcome.event,
      ...(req.pane ? { pane: req.pane } : {}),
      ...((outcome.sessionId ?? previous?.session_id) ? { session_id: outcome.sessionId ?? previous?.session_id } : {}),
      // the tool a PreToolUse announced stays known until the next tool or the end of the turn
      ...((outcome.tool ?? (outcome.state === "blocked" ? previous?.tool : undefined)) ? { tool: outcome.tool ?? previous?.tool } : {}),
      at_ms: req.nowMs,
    };
    writeReport(req.ws, report);
    result.report = report;
  }
  const id = outcome.sessionId;
  if (id && (outcome.event === "SessionStart" || !req.hookInput)) {
    const { result: set } = await (await registry()).mutate((data) => {
      const row = allRows(data).find((r) => r.name === req.session && r.status === "running" && (!req.kind || r.agent === req.kind));
      if (!row || typeof row.agent !== "string") return false;
      const field = idField(row.agent);
      if (row[field] === id && row.session_id_source === "hook") return false;
      return keepingPolicy([row], req.key, req.ws, () => {
        row[field] = id;
        row.session_id_source = "hook";
        return true;
      });
    });
    if (set) result.idRecorded = id;
  }
  return result;
}
