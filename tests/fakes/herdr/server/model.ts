// The server's state: workspaces (in sidebar order) → tabs → panes, the focus path, the id
// counters, and the JSON records herdr serialises (herdr.md §2.4), optional fields omitted.
import { existsSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { AgentKind } from "../common/kinds.ts";
import { paneId, tabId, workspaceId } from "./ids.ts";
import { type LayoutNode, leaves } from "./layout.ts";
import type { Terminal } from "./terminal.ts";

export type Status = "idle" | "working" | "blocked" | "done" | "unknown";
export type Internal = "idle" | "working" | "blocked" | "unknown";

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface Authority {
  source: string;
  agent: string;
  state: Internal;
  seq?: number;
  message?: string;
  /** the foreground process the report is bound to; when it goes, the authority goes */
  pid?: number;
  /** Terminal.ends at the report: an unbound report dies with the next command end seen */
  endsAtReport: number;
}

export interface AgentSession {
  source: string;
  agent: string;
  kind: "id" | "path";
  value: string;
}

export interface Pending {
  name: string;
  kind: AgentKind;
  startedAt: number;
  settleAt: number;
  deadline: number;
  /** 0.8.2: the expected agent was seen blocked while pending (ManagedAgentPhase::Blocked) */
  blocked?: boolean;
}

export class Pane {
  label?: string;
  revision = 0;
  closed = false;
  // agent tracking (see agents.ts)
  detected?: { pid: number; kind: AgentKind };
  authority?: Authority;
  session?: AgentSession;
  name?: string;
  pending?: Pending;
  ready = false;
  internal: Internal = "unknown";
  unseen = false;
  status: Status = "unknown";
  stateChangeSeq = 0;
  /** the agent label in force (detected kind, else the reported agent) */
  agent?: string;
  /** when `agent` was first detected (0.8.2's startup grace counts from it) */
  detectedAt?: number;
  /** cwd of the foreground job's first process, from the last poll */
  fgCwd?: string;
  private realCwd?: string;

  constructor(
    readonly id: string,
    /** changes when the server restarts (fake.restart) */
    public terminalId: string,
    public ws: Workspace,
    public tab: Tab,
    /** the cwd as given (stored verbatim) */
    readonly cwd: string,
    public term: Terminal,
    /** the caller's env of the create/split (kept for a restart) */
    readonly extraEnv?: Record<string, string>,
  ) {
    try {
      this.realCwd = realpathSync(cwd);
    } catch {}
  }

  /** the cwd to report: as given, unless the shell has moved elsewhere since */
  currentCwd(): string {
    if (this.term.exited) return this.cwd;
    let now: string | undefined;
    try {
      now = readlinkSync(`/proc/${this.term.pid}/cwd`);
    } catch {}
    if (!now || now === this.realCwd || now === this.cwd) return this.cwd;
    return now;
  }
}

export class Tab {
  panes: Pane[] = [];
  focusedPaneId?: string;
  layout?: LayoutNode;
  splitCounter = 0;
  customLabel?: string;

  constructor(
    readonly id: string,
    public ws: Workspace,
  ) {}

  orderedPanes(): Pane[] {
    if (!this.layout) return this.panes;
    const order = leaves(this.layout);
    return order.map((id) => this.panes.find((p) => p.id === id)!).filter(Boolean);
  }
}

export class Workspace {
  tabs: Tab[] = [];
  activeTabId?: string;
  customLabel?: string;
  tabCounter = 0;
  paneCounter = 0;
  closed = false;
  /** a workspace made by worktree.create: WorkspaceWorktreeInfo (handlers/worktree.ts) */
  worktree?: { repo_key: string; repo_name: string; repo_root: string; checkout_path: string; is_linked_worktree: boolean };

  constructor(
    readonly id: string,
    readonly num: number,
  ) {}

  nextTabId(): string {
    return tabId(this.id, ++this.tabCounter);
  }

  nextPaneId(): string {
    return paneId(this.id, ++this.paneCounter);
  }

  panes(): Pane[] {
    return this.tabs.flatMap((t) => t.orderedPanes());
  }
}

const gitRoots = new Map<string, string | null>();

/** the label herdr gives a workspace: its root pane's git repo name, else the folder name */
export function autoLabel(cwd: string): string {
  let root = gitRoots.get(cwd);
  if (root === undefined) {
    root = null;
    let d = cwd;
    for (let i = 0; i < 64; i++) {
      if (existsSync(join(d, ".git"))) {
        root = d;
        break;
      }
      const up = dirname(d);
      if (up === d) break;
      d = up;
    }
    gitRoots.set(cwd, root);
  }
  return basename(root ?? cwd) || cwd;
}

const STATUS_RANK: Record<Status, number> = { blocked: 4, working: 3, done: 2, idle: 1, unknown: 0 };

/** the status a workspace or tab shows: the most urgent of its panes' */
export function aggregate(panes: Pane[]): Status {
  let best: Status = "unknown";
  for (const p of panes) if (STATUS_RANK[p.status] > STATUS_RANK[best]) best = p.status;
  return best;
}

export class State {
  workspaces: Workspace[] = [];
  focusedWsId?: string;
  wsCounter = 0;

  nextWorkspace(): Workspace {
    const n = ++this.wsCounter;
    return new Workspace(workspaceId(n), n);
  }

  workspace(id: string): Workspace {
    const ws = this.workspaces.find((w) => w.id === id);
    if (!ws) throw new ApiError("workspace_not_found", `workspace ${id} not found`);
    return ws;
  }

  tab(id: string): Tab {
    for (const ws of this.workspaces) for (const t of ws.tabs) if (t.id === id) return t;
    throw new ApiError("tab_not_found", `tab ${id} not found`);
  }

  findPane(id: string): Pane | undefined {
    const wsId = id.split(":")[0];
    const ws = this.workspaces.find((w) => w.id === wsId);
    if (!ws) return undefined;
    for (const t of ws.tabs) for (const p of t.panes) if (p.id === id) return p;
    return undefined;
  }

  pane(id: string): Pane {
    const p = this.findPane(id);
    if (!p) throw new ApiError("pane_not_found", `pane ${id} not found`);
    return p;
  }

  allPanes(): Pane[] {
    return this.workspaces.flatMap((w) => w.panes());
  }

  focusedWs(): Workspace | undefined {
    return this.focusedWsId ? this.workspaces.find((w) => w.id === this.focusedWsId) : undefined;
  }

  activeTab(ws: Workspace): Tab | undefined {
    return ws.tabs.find((t) => t.id === ws.activeTabId) ?? ws.tabs[0];
  }

  focusedPane(ws: Workspace | undefined): Pane | undefined {
    if (!ws) return undefined;
    const t = this.activeTab(ws);
    if (!t) return undefined;
    return t.panes.find((p) => p.id === t.focusedPaneId) ?? t.orderedPanes()[0];
  }

  /** the pane's tab is the active tab of the focused workspace */
  inActiveTab(p: Pane): boolean {
    return this.focusedWsId === p.ws.id && this.activeTab(p.ws)?.id === p.tab.id;
  }

  // ---- records (herdr.md §2.4); optional fields are omitted when empty or false ----

  workspaceInfo(ws: Workspace): Record<string, unknown> {
    const root = ws.tabs[0]?.orderedPanes()[0];
    return {
      workspace_id: ws.id,
      number: this.workspaces.indexOf(ws) + 1,
      label: ws.customLabel ?? (root ? autoLabel(root.currentCwd()) : ws.id),
      focused: this.focusedWsId === ws.id,
      pane_count: ws.tabs.reduce((n, t) => n + t.panes.length, 0),
      tab_count: ws.tabs.length,
      active_tab_id: this.activeTab(ws)?.id ?? "",
      agent_status: aggregate(ws.panes()),
      ...(ws.worktree ? { worktree: ws.worktree } : {}),
    };
  }

  tabInfo(t: Tab): Record<string, unknown> {
    const number = t.ws.tabs.indexOf(t) + 1;
    return {
      tab_id: t.id,
      workspace_id: t.ws.id,
      number,
      label: t.customLabel ?? String(number),
      focused: this.focusedWsId === t.ws.id && this.activeTab(t.ws)?.id === t.id,
      pane_count: t.panes.length,
      agent_status: aggregate(t.panes),
    };
  }

  paneFocused(p: Pane): boolean {
    return this.inActiveTab(p) && this.focusedPane(p.ws)?.id === p.id;
  }

  paneInfo(p: Pane): Record<string, unknown> {
    const r: Record<string, unknown> = {
      pane_id: p.id,
      terminal_id: p.terminalId,
      workspace_id: p.ws.id,
      tab_id: p.tab.id,
      focused: this.paneFocused(p),
      cwd: p.currentCwd(),
    };
    if (p.fgCwd) r.foreground_cwd = p.fgCwd;
    if (p.label) r.label = p.label;
    if (p.agent) r.agent = p.agent;
    titles(p, r);
    r.agent_status = p.status;
    if (p.session) r.agent_session = { ...p.session };
    r.revision = p.revision;
    return r;
  }

  agentInfo(p: Pane): Record<string, unknown> {
    const r: Record<string, unknown> = { terminal_id: p.terminalId };
    if (p.name) r.name = p.name;
    if (p.agent) r.agent = p.agent;
    titles(p, r);
    r.agent_status = p.status;
    if (p.session) r.agent_session = { ...p.session };
    r.workspace_id = p.ws.id;
    r.tab_id = p.tab.id;
    r.pane_id = p.id;
    r.focused = this.paneFocused(p);
    if (p.pending) r.launch_pending = true;
    if (p.ready) r.interactive_ready = true;
    r.state_change_seq = p.stateChangeSeq;
    r.cwd = p.currentCwd();
    if (p.fgCwd) r.foreground_cwd = p.fgCwd;
    r.revision = p.revision;
    return r;
  }
}

const CLAUDE_ACTIVITY_GLYPHS = "·✢✳✶✻✽";

/** herdr's stripped_terminal_title (src/terminal/title.rs): one leading spinner glyph dropped */
export function strippedTitle(title: string): string | undefined {
  const t = title.trim();
  if (!t) return undefined;
  const first = String.fromCodePoint(t.codePointAt(0)!);
  const rest = t.slice(first.length);
  const cp = first.codePointAt(0)!;
  const spinner = (cp >= 0x2800 && cp <= 0x28ff) || CLAUDE_ACTIVITY_GLYPHS.includes(first);
  const out = spinner && (rest === "" || /^\s/.test(rest)) ? rest.trim() : t;
  return out || undefined;
}

/** the app's OSC title as herdr's PaneInfo/AgentInfo carry it (omitted when none) */
function titles(p: Pane, r: Record<string, unknown>): void {
  const raw = p.term.screen.title;
  if (!raw) return;
  r.terminal_title = raw;
  const s = strippedTitle(raw);
  if (s) r.terminal_title_stripped = s;
}
