// The fake herdr server's core: state, the one mutation queue, pane processes, creation and the
// close cascades with herdr's event quirks (herdr.md §3.5, §5), focus and seen, the /proc poll.
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { markSeen, refreshPane } from "./agents.ts";
import { EventHub } from "./events.ts";
import { newTerminalId } from "./ids.ts";
import { AREA, type Direction, measure, removeLeaf, splitLeaf } from "./layout.ts";
import { ApiError, Pane, State, Tab, type Workspace } from "./model.ts";
import type { Release } from "../common/release.ts";
import type { NoticeRecord } from "./handlers/notification.ts";
import { shellCommand, Terminal } from "./terminal.ts";

export interface Config {
  version: string;
  /** the behaviour the fake plays (common/release.ts) */
  release: Release;
  protocol: number;
  settleMs: number;
  /**
   * 0.8.2: how long a newly detected agent stays `unknown` before its screen decides its state
   * (herdr's AGENT_STARTUP_GRACE_WINDOW, 3 s, src/pane/agent_detection.rs)
   */
  graceMs: number;
  pollMs: number;
  socket: string;
  /**
   * HERDR_BIN_PATH for panes, or undefined: herdr 0.8.0 gives it only to plugin panes and custom
   * commands (src/integration/env.rs:26-28 sets only HERDR_SOCKET_PATH); 0.8.2 gives every pane
   * its own executable (env.rs apply_pane_base_env, 50ddc06f)
   */
  binPath?: string;
  /** the environment panes start from (the server's own) */
  env: Record<string, string>;
  cwd: string;
  /** herdr's shell_mode: "login" runs the pane shell as a login shell (argv0 "-bash") */
  shellMode?: string;
  /** `[ui.toast] delivery`: off (herdr's default) or herdr (in-app toasts) */
  toastDelivery?: "off" | "herdr";
}

export interface CreateOpts {
  cwd?: string | null;
  label?: string | null;
  focus?: boolean;
  env?: Record<string, string>;
}

export class FakeHerdr {
  readonly state = new State();
  hub = new EventHub();
  stopping = false;
  private tail: Promise<unknown> = Promise.resolve();
  private watchers = new Set<() => void>();
  private notifyQueued = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  /** lines that failed the schema self-check (FAKE_HERDR_CHECK_SCHEMA=1) */
  readonly violations: string[] = [];
  /** input logs outlive their panes (fake.inputs on a closed pane) */
  readonly inputLogs = new Map<string, Terminal["inputs"]>();
  /** every notification.show, shown or not (fake.state) */
  readonly notices: NoticeRecord[] = [];

  /** set by the transport: answer server.stop, then shut down */
  requestStop: () => void = () => {};
  /** set by the transport: drop every connection but `keep` (waits, subscriptions) */
  dropConnections: (keep?: unknown) => void = () => {};

  constructor(readonly cfg: Config) {}

  start(): void {
    this.timer = setInterval(() => this.tick(), this.cfg.pollMs);
  }

  /** run fn after every earlier mutation, alone (herdr's single app loop) */
  serialize<T>(fn: () => T | Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** wake every waiter (coalesced to one pass per microtask) */
  notify(): void {
    if (this.notifyQueued) return;
    this.notifyQueued = true;
    queueMicrotask(() => {
      this.notifyQueued = false;
      for (const w of [...this.watchers]) w();
    });
  }

  /** how many waits are pending (fake.state) */
  get waiting(): number {
    return this.watchers.size;
  }

  watch(fn: () => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  tick(): void {
    if (this.stopping) return;
    const now = Date.now();
    for (const p of this.state.allPanes()) refreshPane(this, p, now);
    this.notify();
  }

  // ---- panes ----

  private paneEnv(ws: Workspace, tab: Tab, id: string, extra?: Record<string, string>): Record<string, string> {
    const env: Record<string, string> = { ...this.cfg.env, ...(extra ?? {}) };
    delete env.CODEX_THREAD_ID;
    Object.assign(env, {
      TERM: "xterm-256color",
      COLORTERM: "truecolor",
      HERDR_ENV: "1",
      HERDR_SOCKET_PATH: this.cfg.socket,
      HERDR_WORKSPACE_ID: ws.id,
      HERDR_TAB_ID: tab.id,
      HERDR_PANE_ID: id,
    });
    if (this.cfg.binPath) env.HERDR_BIN_PATH = this.cfg.binPath;
    return env;
  }

  static checkEnv(env: Record<string, string> | undefined): void {
    for (const [k, v] of Object.entries(env ?? {})) {
      if (k === "" || k.includes("=") || k.includes("\0")) throw new ApiError("invalid_env", `invalid environment variable name: ${JSON.stringify(k)}`);
      if (typeof v !== "string" || v.includes("\0")) throw new ApiError("invalid_env", `invalid value for environment variable ${k}`);
    }
  }

  private spawnPane(ws: Workspace, tab: Tab, cwd: string, env: Record<string, string> | undefined, failCode: string): Pane {
    const dir = resolve(this.cfg.cwd, cwd);
    let ok = false;
    try {
      ok = existsSync(dir) && statSync(dir).isDirectory();
    } catch {}
    if (!ok) throw new ApiError(failCode, `failed to spawn shell: cwd ${cwd} is not a directory`);
    const id = ws.nextPaneId();
    const holder: { p?: Pane } = {};
    const term = this.startTerminal(ws, tab, id, dir, env, holder);
    const p = new Pane(id, newTerminalId(), ws, tab, cwd, term, env);
    holder.p = p;
    tab.panes.push(p);
    return p;
  }

  /** a shell for pane `id`; its events reach the pane only while it is the pane's terminal */
  private startTerminal(ws: Workspace, tab: Tab, id: string, dir: string, env: Record<string, string> | undefined, holder: { p?: Pane }): Terminal {
    const current = () => (holder.p && holder.p.term === term ? holder.p : undefined);
    const paneEnv = this.paneEnv(ws, tab, id, env);
    const size = this.sizeOf(tab, id);
    const term: Terminal = new Terminal({
      cwd: dir,
      ...shellCommand(paneEnv, this.cfg.shellMode),
      inputs: this.inputLogs.get(id),
      env: paneEnv,
      cols: size.width,
      rows: size.height,
      onOutput: () => this.notify(),
      onExit: () => {
        const p = current();
        if (p) void this.serialize(() => this.paneExited(p));
      },
    });
    this.inputLogs.set(id, term.inputs);
    return term;
  }

  /** a pane's size: its rectangle in the tab's layout (a new pane: the whole area until placed) */
  private sizeOf(tab: Tab, id: string): { width: number; height: number } {
    const r = tab.layout ? measure(tab.layout).panes.find((x) => x.pane_id === id)?.rect : undefined;
    return { width: Math.max(2, r?.width ?? AREA.width), height: Math.max(1, r?.height ?? AREA.height) };
  }

  /** after a layout change every pane of the tab takes its new size (SIGWINCH to its app) */
  private relayout(tab: Tab): void {
    if (!tab.layout) return;
    for (const x of measure(tab.layout).panes) tab.panes.find((p) => p.id === x.pane_id)?.term.resize(x.rect.width, x.rect.height);
  }

  /**
   * fake.restart: what a herdr restart keeps (ids, layout, cwd, pane labels, focus) and loses
   * (processes: panes are fresh shells with new terminal ids; agent names; the event ring;
   * subscriptions and waits). The workspace counter resumes after the highest surviving
   * workspace, so a closed higher id can come back (herdr.md §5 "Id stability").
   */
  restart(): void {
    this.hub = new EventHub();
    for (const p of this.state.allPanes()) {
      void p.term.kill();
      const holder = { p };
      p.term = this.startTerminal(p.ws, p.tab, p.id, resolve(this.cfg.cwd, p.cwd), p.extraEnv, holder);
      p.terminalId = newTerminalId();
      p.detected = p.authority = p.session = p.name = p.pending = p.agent = p.fgCwd = undefined;
      p.ready = p.unseen = false;
      p.internal = p.status = "unknown";
      p.revision++;
    }
    this.state.wsCounter = Math.max(0, ...this.state.workspaces.map((w) => w.num));
    this.notify();
  }

  private defaultCwd(ws?: Workspace): string {
    const p = ws ? this.state.focusedPane(ws) : this.state.focusedPane(this.state.focusedWs());
    return p ? p.currentCwd() : this.cfg.cwd;
  }

  createWorkspace(o: CreateOpts): { ws: Workspace; tab: Tab; pane: Pane } {
    FakeHerdr.checkEnv(o.env);
    const ws = this.state.nextWorkspace();
    const tab = new Tab(ws.nextTabId(), ws);
    const pane = this.spawnPane(ws, tab, o.cwd ?? this.cfg.cwd, o.env, "workspace_create_failed");
    tab.layout = { type: "pane", paneId: pane.id };
    tab.focusedPaneId = pane.id;
    ws.tabs.push(tab);
    ws.activeTabId = tab.id;
    if (o.label) ws.customLabel = o.label;
    const first = this.state.workspaces.length === 0;
    this.state.workspaces.push(ws);
    this.hub.emit("workspace_created", { workspace: this.state.workspaceInfo(ws) });
    this.hub.emit("tab_created", { tab: this.state.tabInfo(tab) });
    this.hub.emit("pane_created", { pane: this.state.paneInfo(pane) });
    // the first workspace of an empty server is focused even with focus:false
    if (first || o.focus) this.focusWorkspace(ws);
    return { ws, tab, pane };
  }

  createTab(ws: Workspace, o: CreateOpts): { tab: Tab; pane: Pane } {
    FakeHerdr.checkEnv(o.env);
    const tab = new Tab(ws.nextTabId(), ws);
    const pane = this.spawnPane(ws, tab, o.cwd ?? this.defaultCwd(ws), o.env, "tab_create_failed");
    tab.layout = { type: "pane", paneId: pane.id };
    tab.focusedPaneId = pane.id;
    if (o.label) tab.customLabel = o.label;
    ws.tabs.push(tab);
    this.hub.emit("tab_created", { tab: this.state.tabInfo(tab) });
    this.hub.emit("pane_created", { pane: this.state.paneInfo(pane) });
    if (o.focus) this.focusTab(tab);
    return { tab, pane };
  }

  splitPane(target: Pane, direction: Direction, ratio: number, o: CreateOpts): Pane {
    FakeHerdr.checkEnv(o.env);
    const tab = target.tab;
    const pane = this.spawnPane(target.ws, tab, o.cwd ?? target.currentCwd(), o.env, "pane_split_failed");
    tab.layout = splitLeaf(tab.layout ?? { type: "pane", paneId: target.id }, target.id, pane.id, direction, ratio, `${tab.id}:s${++tab.splitCounter}`);
    this.relayout(tab);
    this.hub.emit("pane_created", { pane: this.state.paneInfo(pane) });
    if (o.focus) this.focusPane(pane);
    return pane;
  }

  // ---- close cascades (herdr.md §3.5 "Cascades are not fully evented") ----

  private dropPane(p: Pane): void {
    if (p.closed) return;
    p.closed = true;
    const tab = p.tab;
    tab.panes = tab.panes.filter((x) => x !== p);
    if (tab.layout) tab.layout = removeLeaf(tab.layout, p.id);
    if (tab.focusedPaneId === p.id) tab.focusedPaneId = tab.orderedPanes()[0]?.id;
    void p.term.kill();
    this.relayout(tab);
  }

  private dropTab(t: Tab): void {
    for (const p of [...t.panes]) this.dropPane(p);
    const ws = t.ws;
    const idx = ws.tabs.indexOf(t);
    ws.tabs = ws.tabs.filter((x) => x !== t);
    if (ws.activeTabId === t.id) {
      const next = ws.tabs[Math.min(idx, ws.tabs.length - 1)];
      ws.activeTabId = next?.id;
      if (next && this.state.focusedWsId === ws.id) markSeen(this, next.panes);
    }
  }

  private dropWorkspace(ws: Workspace): void {
    for (const t of [...ws.tabs]) this.dropTab(t);
    ws.closed = true;
    const idx = this.state.workspaces.indexOf(ws);
    this.state.workspaces = this.state.workspaces.filter((w) => w !== ws);
    if (this.state.focusedWsId === ws.id) {
      const next = this.state.workspaces[Math.min(idx, this.state.workspaces.length - 1)];
      this.state.focusedWsId = undefined;
      if (next) this.focusWorkspace(next);
    }
  }

  /** pane.close and a shell's exit: pane_closed (after pane_exited), workspace_closed if it went */
  closePane(p: Pane, exited = false): void {
    if (p.closed) return;
    const ws = p.ws;
    const tab = p.tab;
    const wsInfo = this.state.workspaceInfo(ws);
    this.dropPane(p);
    if (exited) this.hub.emit("pane_exited", { pane_id: p.id, workspace_id: ws.id });
    this.hub.emit("pane_closed", { pane_id: p.id, workspace_id: ws.id });
    if (tab.panes.length === 0) {
      this.dropTab(tab);
      if (ws.tabs.length === 0) {
        this.dropWorkspace(ws);
        this.hub.emit("workspace_closed", { workspace_id: ws.id, workspace: wsInfo });
      }
    }
    this.notify();
  }

  closeTab(t: Tab): void {
    const ws = t.ws;
    const wsInfo = this.state.workspaceInfo(ws);
    this.dropTab(t);
    this.hub.emit("tab_closed", { tab_id: t.id, workspace_id: ws.id });
    if (ws.tabs.length === 0) {
      this.dropWorkspace(ws);
      this.hub.emit("workspace_closed", { workspace_id: ws.id, workspace: wsInfo });
    }
    this.notify();
  }

  closeWorkspace(ws: Workspace): void {
    const wsInfo = this.state.workspaceInfo(ws);
    this.dropWorkspace(ws);
    this.hub.emit("workspace_closed", { workspace_id: ws.id, workspace: wsInfo });
    this.notify();
  }

  private paneExited(p: Pane): void {
    if (p.closed || this.stopping) return;
    this.closePane(p, true);
  }

  // ---- focus (marks the visible tab seen, herdr.md §4.3) ----

  focusWorkspace(ws: Workspace): void {
    const changed = this.state.focusedWsId !== ws.id;
    this.state.focusedWsId = ws.id;
    const t = this.state.activeTab(ws);
    if (t) markSeen(this, t.panes);
    if (changed) this.hub.emit("workspace_focused", { workspace_id: ws.id });
  }

  focusTab(t: Tab): void {
    const changed = t.ws.activeTabId !== t.id;
    t.ws.activeTabId = t.id;
    this.focusWorkspace(t.ws);
    markSeen(this, t.panes);
    if (changed) this.hub.emit("tab_focused", { tab_id: t.id, workspace_id: t.ws.id });
  }

  focusPane(p: Pane): void {
    const changed = p.tab.focusedPaneId !== p.id;
    p.tab.focusedPaneId = p.id;
    this.focusTab(p.tab);
    if (changed) this.hub.emit("pane_focused", { pane_id: p.id, workspace_id: p.ws.id });
  }

  // ---- shutdown ----

  async shutdown(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    const panes = this.state.allPanes();
    await Promise.race([Promise.all(panes.map((p) => p.term.kill())), Bun.sleep(2000)]);
    for (const p of panes) p.term.killNow();
    this.notify();
  }
}
