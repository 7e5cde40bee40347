// The multiplexer backend interface (SPEC §3). Commands never talk to herdr or tmux directly;
// they get a Mux for (backend, server) from lib/mux/index.ts.
import { EXIT, MamError } from "../sys/errors.ts";

/** herdr's agent status; "done" counts as idle. tmux reports "unknown" for a live pane. */
export type LiveStatus = "idle" | "working" | "blocked" | "done" | "unknown";

export type Backend = "herdr" | "tmux";

export interface MuxPane {
  /**
   * herdr: the public pane id ("w1:p2"); tmux: the pane id ("%3"). tmux numbers panes again from
   * %0 when its server restarts: match tmux rows by session name / label, not by pane id alone.
   */
  id: string;
  /** herdr workspace / tab ids; tmux: the tmux session name in workspaceId */
  workspaceId?: string;
  tabId?: string;
  cwd?: string;
  /**
   * herdr: the pane's label as herdr returns it (mam writes "mam:<name> (<kind>, <role>)", older
   * mams "mam:<name>": label.ts); tmux: "mam:<name>" read back from the session's @mam_name option
   */
  label?: string;
  /** tmux: the workspace mam started the pane's session for (its @mam_workspace option), when set; herdr keeps none (owner.ts) */
  owner?: string;
  /** detected agent kind (herdr PaneInfo.agent); tmux: the kind mam started in it (@mam_agent), when set */
  agent?: string;
  /**
   * herdr: the kind mam started in the pane, from its label (label.ts), when it says one. Not
   * `agent`: that one is what runs there now (an agent that exited leaves its label behind)
   */
  kind?: string;
  /** the role mam started the session with, when known: tmux's @mam_role, herdr's pane label */
  role?: string;
  /** herdr agent name: set by start(); list() cannot see it (herdr's PaneInfo has no name) */
  agentName?: string;
  status: LiveStatus;
  /** blocked: the dialog's one-line question and its kind (tmux: from the screen detector or a hook report) */
  reason?: string;
  dialog?: "start" | "permission" | "limit";
  /** tmux: where a known status came from: mam's screen detector, or the agent's hook report */
  liveSource?: "screen" | "hook";
  /** herdr: the pane's terminal title as its record shows it (PaneInfo.terminal_title; absent: none) */
  title?: string;
  /** the agent's conversation id as herdr reports it (PaneInfo.agent_session.value) */
  agentSessionId?: string;
  /** process facts: tmux fills them from list-panes; herdr only from processInfo() */
  pid?: number;
  cmd?: string;
  cmdFull?: string;
  /**
   * herdr: the pane was created by this claimPane() (workspace create / split), so the env given
   * to claimPane reached its shell. A reused free pane keeps the env it was created with.
   */
  fresh?: boolean;
  /**
   * herdr: `pane process-info` found only the shell in the pane's foreground (the agent typed
   * into it has exited). Filled only where someone looked (lib/fleet/liveness.ts, lib/ops/session/probe.ts).
   */
  shellOnly?: boolean;
}

/** the outcome of one listing call for a server (SPEC §6.1 step 1) */
export type Listing =
  | { state: "ok"; panes: MuxPane[] }
  /** definitely not running (herdr server_not_running; tmux "no server running"): owns no panes */
  | { state: "not-running"; detail: string }
  /** failed in any other way (timeout, garbage, protocol mismatch, permission): nothing is known */
  | { state: "unreachable"; detail: string };

export interface PaneScreen {
  text: string;
  title: string;
}

export interface ForegroundProcess {
  pid: number;
  name: string;
  argv: string[];
  cwd?: string;
}

export interface ProcessInfo {
  shellPid?: number;
  /** the pane's foreground processes; empty (or only the shell) when the pane is a free shell */
  foreground: ForegroundProcess[];
}

export interface StartSpec {
  /** the mam session name (label `mam:<name>`, tmux session name) */
  session: string;
  /** the agent kind, as named in error messages; default: herdrKind, else the executable's basename */
  agent?: string;
  /** herdr agent name ([a-z][a-z0-9_-]{0,31}); only for kinds herdr knows */
  agentName?: string;
  /** herdr --kind, for kinds herdr knows; absent → the command is typed with `pane run` */
  herdrKind?: string;
  /**
   * the full command line: executable and its arguments. For herdr kinds herdr types the kind's
   * own executable, so only argv.slice(1) is used.
   */
  argv: string[];
  cwd: string;
  /**
   * extra environment for the agent (PATH, with herdr the shim's folder first; MAM_* vars). tmux:
   * given to the session (-e). herdr: `agent start` and `pane run` cannot carry env; pass the same
   * env to claimPane(), which gives it to the panes it creates (reused free panes keep their own
   * env). mam's secrets (lib/sys/secrets.ts) never reach a pane either way.
   */
  env: Record<string, string>;
  /** the workspace the session belongs to (tmux keeps it on the session, to name the owner of a clash) */
  workspace?: string;
  /**
   * the session's role: tmux keeps it (@mam_role, with the kind in @mam_agent) from the moment the
   * agent starts, herdr in the pane's label (`label`, written by launch), so a create killed
   * before its row is written leaves a pane the daemon registers whole (review R33)
   */
  role?: string;
  /** how long a typed (non-herdr-kind / tmux) agent must stay in the foreground to count as started */
  settleMs: number;
  /** herdr agent start readiness timeout */
  readyTimeoutMs?: number;
  /**
   * herdr: the pane label (`mam:<name>`) to set once the claim is ours (our command in the pane's
   * foreground, or the start succeeded), never before (audit #3)
   */
  label?: string;
}

/** a short notice for the user of a multiplexer (herdr notification show) */
export interface PaneNotification {
  title: string;
  body?: string;
}

/** a git worktree for an agent, made by the multiplexer itself (herdr `worktree create`) */
export interface WorktreeSpec {
  /** the main checkout (herdr's source workspace is found from it) */
  cwd: string;
  branch: string;
  /** the commit a new branch starts at; herdr ignores it for an existing branch */
  base?: string;
  /** the absolute folder of the new worktree */
  path: string;
  /** the label of the workspace herdr shows it as */
  label?: string;
}

export interface WorktreeOpened {
  workspaceId: string;
  /** the root pane of the worktree's workspace (a fresh shell in the worktree) */
  pane: MuxPane;
  path: string;
  /** open: a workspace already showed it (its root pane may be taken) */
  alreadyOpen?: boolean;
}

/**
 * the Mux of (backend, server), what use cases get instead of building one, for one workspace:
 * its list() leaves out the panes of another workspace (lib/mux/owner.ts); `allWorkspaces`
 * lists them all
 */
export type MuxFactory = (backend: Backend, server: string, opts?: { allWorkspaces?: boolean }) => Mux;

export interface Mux {
  readonly backend: Backend;
  readonly server: string;
  /** every pane of the server with its agent status and labels: ONE call to the multiplexer */
  list(): Promise<Listing>;
  /**
   * make sure the server runs; without `start`, a stopped server is a MamError naming the fix.
   * herdr: the panes it listed to know (called under the pane-claim lock, claimPane may use them)
   */
  ensureRunning(start: boolean): Promise<MuxPane[] | void>;
  /**
   * herdr: find the workspace whose folder is cwd (create one with --no-focus if none), pick a
   * free pane in it (plain shell, no agent, not taken), else split one. Panes it creates get
   * `env` (herdr's only way to hand env to an agent). Call it under the server's pane-claim lock.
   * tmux: no-op (start() creates the session); returns undefined. `listed`: the server's panes as
   * a listing made under the same lock just showed them (ensureRunning's), else it lists them.
   */
  claimPane(cwd: string, taken: (paneId: string) => boolean, env?: Record<string, string>, listed?: MuxPane[]): Promise<MuxPane | undefined>;
  label(paneId: string, label: string): Promise<void>;
  /**
   * start the agent and verify it started (herdr: agent start's readiness; typed kinds and tmux:
   * the agent is the foreground process and stays up for settleMs). On failure the claimed pane is
   * closed and a MamError "…exited right after start in <pane>; last output: …" is thrown.
   * herdr agent_pane_busy → AgentPaneBusy (the caller picks another pane).
   */
  start(pane: MuxPane | undefined, spec: StartSpec): Promise<MuxPane>;
  /**
   * raw typing for shells (not for prompts: see submit): the text, then with enter an Enter
   * ~300 ms later (herdr pane send-text + send-keys, single-line text only; tmux send-keys -l, or
   * a bracketed paste for multi-line / long text, + Enter)
   */
  sendText(paneId: string, text: string, enter: boolean): Promise<void>;
  /**
   * submit a prompt to the agent that owns the pane (text, Enter after it). `managed`: the agent
   * is of a kind herdr knows (herdr: `agent prompt`); else a typed kind (herdr: `pane run` after
   * checking the foreground). Never types into a pane whose agent is gone: AgentGone. herdr kinds:
   * never into an agent herdr sees blocked (a dialog, a question): AgentBlocked.
   */
  submit(paneId: string, text: string, managed: boolean): Promise<void>;
  /** a best-effort notice to the user (herdr: notification show); absent where there is none */
  notify?(n: PaneNotification): Promise<{ shown: boolean; reason: string }>;
  /**
   * keys in the names herdr 0.8.0 accepts, case-insensitive (src/config/keybinds.rs
   * parse_key_combo): enter/return, esc/escape, tab, shift+tab, backspace/bs, space, up, down,
   * left, right, f1…f12, named punctuation (minus, comma, period, slash, backslash, quote,
   * double_quote, semicolon, colon, percent, ampersand, backtick, plus), single characters, with
   * modifiers ctrl+, alt+, shift+; and `C-c`. herdr has no home/end/pageup/pagedown/delete/insert.
   */
  sendKeys(paneId: string, keys: string[]): Promise<void>;
  /** the last `lines` lines of the pane's output (soft wraps joined) */
  read(paneId: string, lines: number): Promise<string>;
  /**
   * the visible screen (soft wraps joined) and the pane title, for the screen-state detector
   * (lib/agents/screen/detect.ts). tmux: `capture-pane -p -J` + `#{pane_title}`; herdr: `pane read
   * --source visible` + the pane's terminal title ("" where herdr has none), from `listed` (the
   * pane as a listing just showed it, with its title) when given, else from `pane get`.
   */
  screen(paneId: string, listed?: MuxPane): Promise<PaneScreen>;
  /**
   * the screens of several panes in as few multiplexer calls as the backend allows (tmux: one);
   * panes that are gone are missing from the map
   */
  screens?(paneIds: string[]): Promise<Map<string, PaneScreen>>;
  /**
   * tmux: list() and screens(paneIds) in one multiplexer call (a poll of LIVE: one call per
   * server); gone panes are missing from the map, as in screens()
   */
  listWithScreens?(paneIds: string[]): Promise<{ listing: Listing; screens: Map<string, PaneScreen> }>;
  processInfo(paneId: string): Promise<ProcessInfo>;
  /** close the pane (tmux: kill its session); a pane that is already gone is not an error */
  close(paneId: string): Promise<void>;
  /**
   * herdr only (tmux: absent, mam runs `git worktree add` itself): create the worktree and the
   * workspace herdr shows it as, unfocused; its root pane is a fresh shell in the worktree.
   */
  createWorktree?(spec: WorktreeSpec): Promise<WorktreeOpened>;
  /** herdr only: show an existing worktree (`spec.path`) as a workspace again, unfocused (`worktree open`) */
  openWorktree?(spec: Omit<WorktreeSpec, "branch" | "base">): Promise<WorktreeOpened>;
  /** herdr only: remove a worktree herdr shows as `workspaceId` (closing that workspace); the branch stays */
  removeWorktree?(workspaceId: string, force: boolean): Promise<void>;
}

/** the pane holds no agent any more (it exited; herdr leaves the pane as a bare shell): nothing was typed */
export class AgentGone extends MamError {
  constructor(
    readonly paneId: string,
    why: string,
  ) {
    super(`no agent in pane ${paneId} any more (${why}); nothing was typed into it`, EXIT.FAIL, "see: mam status; mam resume <name> starts it again");
    this.name = "AgentGone";
  }
}

/**
 * the pane's agent waits at a dialog or question (herdr 0.8.2 refuses `agent prompt` with
 * agent_blocked; on 0.8.0 mam asks herdr first): nothing was typed into it
 */
export class AgentBlocked extends MamError {
  constructor(
    readonly paneId: string,
    why: string,
  ) {
    super(`the agent in pane ${paneId} waits at a dialog or question (${why}); nothing was typed into it`, EXIT.FAIL, "answer it in the pane, then try again");
    this.name = "AgentBlocked";
  }
}

/** herdr said agent_pane_busy: another client claimed the pane first (exit 1 if it escapes) */
export class AgentPaneBusy extends MamError {
  constructor(readonly paneId: string) {
    super(`pane ${paneId} is busy: another client claimed it first`, EXIT.FAIL);
    this.name = "AgentPaneBusy";
  }
}
