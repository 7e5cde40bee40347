// Rows of .mam/agent-sessions.yaml (SPEC §2.1). Unknown fields are kept as they are.

export type Section = "herdr_sessions" | "tmux_sessions";
export const SECTIONS: readonly Section[] = ["herdr_sessions", "tmux_sessions"];

export type SessionStatus = "running" | "stopped" | "terminated" | "archived";
export const STATUSES: readonly SessionStatus[] = ["running", "stopped", "terminated", "archived"];

export interface PaneBlock {
  id?: string;
  index?: number;
  pid?: number;
  cmd?: string;
  cmd_full?: string;
  cwd?: string;
  [k: string]: unknown;
}

export interface Row {
  name: string;
  status: SessionStatus;
  role?: string;
  agent?: string;
  herdr_session?: string;
  herdr_server?: string;
  herdr_agent_name?: string;
  tmux_server?: string;
  herdr_session_created_at?: string;
  herdr_session_epoch?: number;
  pane?: PaneBlock;
  session_id_source?: "assigned" | "pending-discovery" | "hook";
  last_visible_status?: string;
  last_visible_note?: string;
  delegate_job_id?: string;
  start_command?: string;
  [k: string]: unknown;
}

export interface RegistryData {
  herdr_sessions: Row[];
  tmux_sessions: Row[];
  /** other top-level keys are kept as they are */
  [k: string]: unknown;
}
