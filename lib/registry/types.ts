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

/** the git worktree a session runs in (issue 18; see lib/worktrees/plan.ts) */
export interface WorktreeBlock {
  path: string;
  branch: string;
  /** the ref the branch was made from, as given (default: the workspace's branch, else HEAD) */
  base?: string;
  /** the commit `base` named then: diffs are taken against it */
  base_commit?: string;
  /** herdr: the workspace herdr shows the worktree as */
  herdr_workspace?: string;
  /** set when mam removed the worktree (the branch stays) */
  removed_at?: string;
  [k: string]: unknown;
}

/**
 * the agent is at a usage or rate limit (issue 34; docs/unattended.md), written by the daemon's
 * limits.watch on a transition only; absent: not limited. `since` and `resets_at` are ISO times;
 * `resets_at` null: the agent gave none (never guessed); `reason`: its one line; `source`: where mam
 * read it (the agent's records, else its screen); `used_percent`: its window's use, when it says
 */
export interface LimitBlock {
  since: string;
  resets_at: string | null;
  reason: string;
  source: "records" | "screen";
  used_percent?: number;
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
  worktree?: WorktreeBlock;
  /**
   * a `mam stop` is closing this row's pane (epoch seconds when it began): the stop, not the
   * reconcile pass, writes the row's end state (lib/fleet/apply.ts); removed when the stop ends
   */
  stopping_epoch?: number;
  limit?: LimitBlock;
  /** on-failure: the daemon resumes the agent when it dies (lib/fleet/restart.ts); absent: no */
  restart?: "no" | "on-failure";
  /** with restart on-failure: restarts per hour before the daemon gives up (default 3) */
  max_restarts?: number;
  /** the mark of this user's mam over the row's restart and on-limit policy (lib/fleet/policy.ts) */
  policy_mac?: string;
  [k: string]: unknown;
}

export interface RegistryData {
  herdr_sessions: Row[];
  tmux_sessions: Row[];
  /** other top-level keys are kept as they are */
  [k: string]: unknown;
}
