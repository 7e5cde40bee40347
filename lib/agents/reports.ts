// Agent reports: what an agent's own hooks said about it (`mam agent-report`, docs/agent-state.md).
//
// One small JSON file per session, .mam/agent-state/<session>.json, replaced atomically by each
// report (lib/sys/atomic.ts): {session, state, reason?, event, pane?, session_id?, at_ms}. The
// last report wins; nothing reads-modifies-writes it, so no lock is needed.
//
// Freshness (reportIsFresh): a report counts for a pane only when it is
//   * from this agent: not older than the row's start (its *_session_epoch, 1 s slack), and from
//     the same pane when both name one;
//   * recent: younger than MAM_HOOK_STALE_S seconds (default 300).
// A fresh report wins over the screen detector; a stale one is ignored (the screen decides).
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile } from "../sys/atomic.ts";
import { ensureMamDir } from "../sys/mam-dir.ts";
import { isValidName } from "../sys/names.ts";
import { type Env, mamDir } from "../sys/paths.ts";

export type ReportState = "working" | "blocked" | "idle";

export interface AgentReport {
  session: string;
  state: ReportState;
  /** blocked: what the agent waits for (its notification message) */
  reason?: string;
  /** the hook event that caused it (SessionStart, UserPromptSubmit, Notification, Stop, …) */
  event: string;
  /** the multiplexer pane the agent ran in (TMUX_PANE / HERDR_PANE_ID), when known */
  pane?: string;
  /** the agent's conversation id, when the hook input carried one */
  session_id?: string;
  /** the tool call the agent is about to make ("Bash: touch x"), from PreToolUse */
  tool?: string;
  at_ms: number;
}

export const DEFAULT_STALE_S = 300;

export const reportsDir = (ws: string) => join(mamDir(ws), "agent-state");
export const reportPath = (ws: string, session: string) => join(reportsDir(ws), `${session}.json`);

export function staleMs(env: Env): number {
  const raw = env.MAM_HOOK_STALE_S;
  const n = raw !== undefined && /^\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : DEFAULT_STALE_S;
  return (n > 0 ? n : DEFAULT_STALE_S) * 1000;
}

export function writeReport(ws: string, r: AgentReport): void {
  ensureMamDir(ws); // .mam/ and its own .gitignore first
  mkdirSync(reportsDir(ws), { recursive: true, mode: 0o700 });
  atomicWriteFile(reportPath(ws, r.session), `${JSON.stringify(r)}\n`, { mode: 0o600, regularOnly: true });
}

export function removeReport(ws: string, session: string): void {
  rmSync(reportPath(ws, session), { force: true });
}

/** the last report of a session; undefined when there is none or it is unreadable */
export function readReport(ws: string, session: string): AgentReport | undefined {
  if (!isValidName(session)) return undefined;
  try {
    const v = JSON.parse(readFileSync(reportPath(ws, session), "utf8")) as AgentReport;
    if (!v || typeof v !== "object" || !["working", "blocked", "idle"].includes(v.state) || typeof v.at_ms !== "number") return undefined;
    return v;
  } catch {
    return undefined;
  }
}

export interface FreshnessInput {
  nowMs: number;
  /** the row's start, epoch seconds (undefined: unknown) */
  rowEpoch?: number;
  /** the pane the row's agent lives in now */
  paneId?: string;
  staleMs: number;
}

export function reportIsFresh(r: AgentReport, f: FreshnessInput): boolean {
  if (f.rowEpoch !== undefined && r.at_ms < f.rowEpoch * 1000 - 1000) return false;
  if (r.pane && f.paneId && r.pane !== f.paneId) return false;
  return f.nowMs - r.at_ms <= f.staleMs;
}
