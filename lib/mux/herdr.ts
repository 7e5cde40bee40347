// The herdr backend: drives the `herdr` CLI (reference/herdr.md §2, as real 0.8.0 and 0.8.2
// behave: docs/herdr-compat.md) with Bun.spawn, always with `--session <server>` (or, for a
// server reachable only by a custom socket, HERDR_SOCKET_PATH) and explicit pane ids, one JSON
// line per command, a deadline per call. Starting agents: herdr-start.ts; versions:
// herdr-version.ts; the binary and a started server's env: herdr-env.ts.
//
// mam's secrets (lib/sys/secrets.ts) reach no pane: a server mam starts never has them
// (serverEnv), and a pane mam creates gets them set empty (`--env NAME=`), since a server the
// user started may have them in its environment and herdr can only set a pane's variables.
import { randomBytes } from "../sys/digest.ts";
import { closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { basename, join } from "node:path";
import { EXIT, MamError } from "../sys/errors.ts";
import { field } from "../sys/fields.ts";
import { type Env, homeDir, stateDir } from "../sys/paths.ts";
import { SECRET_ENV, withoutSecrets } from "../sys/secrets.ts";
import { cleanEnv, execCapture, shJoin } from "./exec.ts";
import {
  callFailure,
  HerdrError,
  herdrAgentName,
  looksLikePlainShell,
  paneTitle,
  parsePaneList,
  parseProcessInfo,
  parseResult,
  pickWorkspace,
  toMuxPane,
} from "./herdr-proto.ts";
import { busyFreshPane, failStart, type HerdrOps, runManagedStart, waitShellFree } from "./herdr-start.ts";
import { type HerdrRelease, herdrSupport, releaseOf, type Support, unsupportedError, versionWarning, warningKey } from "./herdr-version.ts";
import { findHerdr, serverEnv, shellReadyMs } from "./herdr-env.ts";
import { foreignPane } from "./owner.ts";
import { isShellOnly, nonShellForeground } from "./procfs.ts";
import { AgentBlocked, AgentGone, AgentPaneBusy, type Listing, type Mux, type MuxPane, type PaneNotification, type PaneScreen, type ProcessInfo, type StartSpec, type WorktreeOpened, type WorktreeSpec } from "./types.ts";

export { findHerdr, HerdrError, serverEnv };

export interface HerdrOptions {
  /** deadline of one CLI call (default 15 s) */
  timeoutMs?: number;
  /** how long ensureRunning(true) waits for a server it started (default 15 s) */
  startWaitMs?: number;
  /** how long a typed agent may take to reach the foreground (default 3 s) */
  appearMs?: number;
  /**
   * how long a created pane's shell may stay busy with its startup files before mam gives up on
   * it (default: MAM_HERDR_SHELL_READY_S, else 30 s)
   */
  shellReadyMs?: number;
  /**
   * a server reachable only by this socket path (herdr-socket.ts): calls carry
   * HERDR_SOCKET_PATH=<path> and no --session (which would override it)
   */
  socketPath?: string;
  /**
   * say a warning line (a herdr newer than mam knows: once a day per server, across mam
   * processes); default: nothing said, and the day's warning is left for a caller that says it
   */
  warn?: (line: string) => void;
  /** pause between typed text and its Enter in sendText (default 300 ms) */
  enterDelayMs?: number;
  /**
   * the workspace this mux serves: list() leaves out the panes that work in another mam
   * workspace (owner.ts). Unset: every pane (registry rebuild, which says why it leaves one out).
   */
  workspace?: string;
}

/** how many agent names `start` tries when herdr says the name is taken */
export const NAME_ATTEMPTS = 3;

/** codes of `agent start` that mean the agent did not come up (§3.4, §3.6) */
const START_FAILED = new Set(["agent_start_failed", "agent_kind_mismatch", "agent_name_not_found", "timeout"]);

/** codes of `agent prompt` that mean no agent owns the pane (src/app/api/agents.rs:62-100) */
const NO_AGENT = new Set(["agent_not_found", "agent_not_ready"]);

export class HerdrMux implements Mux {
  readonly backend = "herdr" as const;
  private binPath?: string;
  private readonly timeoutMs: number;
  private checked = false;
  private support?: Support;

  constructor(
    readonly server: string,
    private readonly env: Env,
    private readonly opts: HerdrOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? 15_000;
  }

  get bin(): string {
    return (this.binPath ??= findHerdr(this.env));
  }

  /** how herdr is told the server: --session, or nothing (the socket path is in the env) */
  private target(): string[] {
    return this.opts.socketPath ? [] : ["--session", this.server];
  }

  private envOfCalls?: Record<string, string>;

  /** the environment of every call, worked out once (copying the process's environment per call is not free) */
  private get callEnv(): Record<string, string> {
    if (this.envOfCalls) return this.envOfCalls;
    const env = withoutSecrets(this.env);
    return (this.envOfCalls = cleanEnv(this.opts.socketPath ? { ...env, HERDR_SOCKET_PATH: this.opts.socketPath, HERDR_SESSION: undefined } : env));
  }

  /** run `herdr --session <server> <args>`; throws the typed failure; returns stdout */
  private async call(args: string[], opts: { timeoutMs?: number; paneId?: string; signal?: AbortSignal } = {}): Promise<string> {
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const argv = [this.bin, ...this.target(), ...args];
    let r;
    try {
      r = await execCapture(argv, { env: this.callEnv, timeoutMs, signal: opts.signal });
    } catch (e) {
      throw new MamError(`cannot run ${argv[0]}: ${(e as Error).message}`, EXIT.FAIL, `install herdr or set MAM_HERDR_BIN (or use ${field("mux", "tmux")})`);
    }
    const failure = callFailure(r, args, this.server, timeoutMs, opts.paneId);
    if (failure instanceof HerdrError && failure.code === "server_not_running" && this.opts.socketPath) {
      const sock = this.opts.socketPath;
      throw new HerdrError(`herdr server '${this.server}' (socket ${sock}) is not running`, failure.code, `start it with: HERDR_SOCKET_PATH=${sock} herdr server`);
    }
    if (failure) throw failure;
    return r.stdout;
  }

  private async json(args: string[], opts: { timeoutMs?: number; paneId?: string; signal?: AbortSignal } = {}): Promise<Record<string, unknown>> {
    return parseResult(await this.call(args, opts), args);
  }

  private async panes(): Promise<MuxPane[]> {
    const args = ["pane", "list"];
    return parsePaneList(await this.json(args), args);
  }

  /** the calls the start logic (herdr-start.ts) makes */
  private get ops(): HerdrOps {
    return {
      json: (a, o) => this.json(a, o),
      call: (a, o) => this.call(a, o),
      processInfo: (id) => this.processInfo(id),
      read: (id, n) => this.read(id, n),
      visible: (id) => this.call(["pane", "read", id, "--source", "visible"], { paneId: id }),
      close: (id) => this.close(id),
      label: (id, l) => this.label(id, l),
      pane: async (id) => (await this.panes()).find((p) => p.id === id),
    };
  }

  async list(): Promise<Listing> {
    try {
      const ws = this.opts.workspace;
      const panes = await this.panes();
      return { state: "ok", panes: ws === undefined ? panes : panes.filter((p) => !foreignPane(p, ws)) };
    } catch (e) {
      const detail = e instanceof MamError ? e.render().replace(/^ERROR: /, "") : String((e as Error).message);
      if (e instanceof HerdrError && e.code === "server_not_running") return { state: "not-running", detail };
      return { state: "unreachable", detail };
    }
  }

  /** what `herdr --version` says of this binary (cached: herdr-version.ts) */
  private async supportNow(): Promise<Support> {
    return (this.support ??= await herdrSupport(this.bin, this.env));
  }

  /** the herdr behaviour to follow where 0.8.0 and 0.8.2 differ (herdr-version.ts releaseOf) */
  async release(): Promise<HerdrRelease> {
    return releaseOf(await this.supportNow());
  }

  /**
   * refuse a herdr older than mam supports; warn about a newer one, once a day per server (the
   * day's warning is taken only by a caller that says it: lib/sys/once-a-day.ts)
   */
  async checkVersion(): Promise<void> {
    if (this.checked) return;
    this.checked = true;
    const support = await this.supportNow();
    const refused = unsupportedError(support, this.bin);
    if (refused) throw refused;
    const w = versionWarning(support, this.server);
    const say = this.opts.warn;
    if (w && say && support.kind === "newer") {
      const { firstToday } = await import("../sys/once-a-day.ts");
      if (await firstToday(this.env, warningKey(support, this.server))) say(w);
    }
  }

  async ensureRunning(start: boolean): Promise<MuxPane[] | void> {
    await this.checkVersion();
    try {
      return await this.panes();
    } catch (e) {
      if (!(e instanceof HerdrError && e.code === "server_not_running") || !start) throw e;
    }
    const { log, proc } = this.startServer();
    const deadline = Date.now() + (this.opts.startWaitMs ?? 15_000);
    for (;;) {
      await Bun.sleep(100);
      if (proc.exitCode !== null) {
        // it ended at once; another mam may have started the same server a moment earlier
        try {
          await this.panes();
          return;
        } catch {}
        throw new MamError(`herdr server '${this.server}' exited right after start (exit ${proc.exitCode})`, EXIT.FAIL, `see ${log}`);
      }
      try {
        await this.panes();
        return;
      } catch (e) {
        if (!(e instanceof HerdrError && e.code === "server_not_running")) throw e;
      }
      if (Date.now() > deadline) {
        throw new MamError(`herdr server '${this.server}' did not start within ${Math.round((this.opts.startWaitMs ?? 15_000) / 1000)} s`, EXIT.FAIL, `see ${log}`);
      }
    }
  }

  /** `herdr --session <s> server`, headless, detached in its own session, output to a log */
  private startServer(): { log: string; proc: { exitCode: number | null } } {
    const dir = stateDir(this.env);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const log = join(dir, `herdr-server-${this.server}.log`);
    const fd = openSync(log, "a", 0o600);
    let cwd = "/";
    try {
      const h = homeDir(this.env);
      if (existsSync(h)) cwd = h;
    } catch {}
    try {
      const proc = Bun.spawn([this.bin, ...this.target(), "server"], {
        env: this.opts.socketPath ? { ...serverEnv(this.env), HERDR_SOCKET_PATH: this.opts.socketPath } : serverEnv(this.env),
        cwd,
        detached: true,
        stdio: ["ignore", fd, fd],
      });
      proc.unref();
      return { log, proc };
    } finally {
      closeSync(fd);
    }
  }

  async claimPane(cwd: string, taken: (paneId: string) => boolean, env: Record<string, string> = {}, listed?: MuxPane[]): Promise<MuxPane> {
    const panes = listed ?? (await this.panes());
    const ws = pickWorkspace(panes, cwd);
    const masked = { ...env, ...Object.fromEntries(SECRET_ENV.map((k) => [k, ""])) };
    const envArgs = Object.entries(masked).flatMap(([k, v]) => ["--env", `${k}=${v}`]);
    if (ws === undefined) {
      const r = await this.json(["workspace", "create", "--cwd", cwd, "--no-focus", ...envArgs]);
      const root = toMuxPane(r.root_pane);
      if (!root) throw new HerdrError(`herdr workspace create returned no root pane`, "mam_not_json");
      await waitShellFree(this.ops, root.id, 5000);
      return { ...root, fresh: true };
    }
    const mine = panes.filter((p) => p.workspaceId === ws);
    for (const p of mine) {
      if (!looksLikePlainShell(p) || taken(p.id)) continue;
      let info: ProcessInfo;
      try {
        info = await this.processInfo(p.id);
      } catch (e) {
        if (e instanceof HerdrError && e.code === "pane_not_found") continue;
        throw e;
      }
      if (isShellOnly(info)) return p;
    }
    const target = mine[mine.length - 1]!;
    const r = await this.json(["pane", "split", target.id, "--direction", "right", "--cwd", cwd, "--no-focus", ...envArgs]);
    const pane = toMuxPane(r.pane);
    if (!pane) throw new HerdrError(`herdr pane split returned no pane`, "mam_not_json");
    await waitShellFree(this.ops, pane.id, 5000);
    return { ...pane, fresh: true };
  }

  async label(paneId: string, label: string): Promise<void> {
    await this.call(["pane", "rename", paneId, label], { paneId });
  }

  async start(pane: MuxPane | undefined, spec: StartSpec): Promise<MuxPane> {
    if (!pane) throw new MamError("herdr start needs a claimed pane (a bug in mam)", EXIT.FAIL);
    const exe = spec.argv[0] ?? spec.herdrKind ?? "agent";
    const agent = spec.agent ?? spec.herdrKind ?? basename(exe);
    const boundMs = this.opts.shellReadyMs ?? shellReadyMs(this.env);
    const busyUntil = Date.now() + boundMs;
    if (spec.herdrKind) {
      let name = spec.agentName ?? herdrAgentName(spec.session);
      const readyMs = Math.min(300_000, Math.max(3001, spec.readyTimeoutMs ?? 30_000));
      const typed = shJoin([spec.herdrKind, ...spec.argv.slice(1)]);
      const args = (n: string) => {
        const a = ["agent", "start", n, "--kind", spec.herdrKind!, "--pane", pane.id, "--timeout", String(readyMs)];
        if (spec.argv.length > 1) a.push("--", ...spec.argv.slice(1));
        return a;
      };
      for (let attempt = 1; ; attempt++) {
        let out;
        try {
          out = await runManagedStart(this.ops, { args: args(name), callMs: readyMs + 15_000, paneId: pane.id, label: spec.label ?? "", exe: spec.herdrKind });
        } catch (e) {
          // agent names are unique per server: another workspace's session of the same name, or an
          // archived (--soft) session's agent, may hold it. herdr checks the name before it claims
          // the pane, so the same pane is tried again under a derived name (the row records it).
          if (e instanceof HerdrError && e.code === "agent_name_taken" && attempt < NAME_ATTEMPTS) {
            name = herdrAgentName(spec.session, randomBytes(4).toString("hex"));
            continue;
          }
          // a pane this claim created whose shell still runs its startup files: wait, try again
          if (e instanceof AgentPaneBusy && pane.fresh) {
            await busyFreshPane(this.ops, pane, busyUntil, boundMs);
            continue;
          }
          if (e instanceof HerdrError && START_FAILED.has(e.code)) {
            const how = e.code === "timeout" ? `did not become ready within ${Math.round(readyMs / 1000)} s` : "exited right after start";
            return failStart(this.ops, pane.id, agent, how, typed);
          }
          // herdr 0.8.2: the agent came up blocked (a start dialog: trust, sign-in, first-run
          // setup) and keeps its name: started, waiting for the user (the caller sees it blocked
          // and types nothing into it)
          if (e instanceof HerdrError && e.code === "agent_not_ready") {
            const held = await this.agentIn(name, pane.id);
            if (!held) return failStart(this.ops, pane.id, agent, "exited right after start", typed);
            if (spec.label) await this.label(pane.id, spec.label);
            return { ...pane, agentName: name, agent: held.agent ?? spec.herdrKind, status: held.status, title: held.title, cmd: basename(exe), cmdFull: shJoin(spec.argv) };
          }
          throw e;
        }
        if (out.kind === "exited") return failStart(this.ops, pane.id, agent, "exited right after start", typed);
        const info = toMuxPane(out.result.agent);
        // the agent's process as the start watch saw it: its pid without another process-info
        const proc = out.agent ? { pid: out.agent.pid, cmd: out.agent.name || basename(exe) } : { cmd: basename(exe) };
        return { ...pane, agentName: name, agent: info?.agent ?? spec.herdrKind, status: info?.status ?? pane.status, title: info?.title, ...proc, cmdFull: shJoin(spec.argv) };
      }
    }
    // a typed kind: `pane run` does not check the pane; a fresh pane's shell must be done with its
    // startup files first, or the command would wait behind them
    if (pane.fresh) await waitShellFree(this.ops, pane.id, boundMs);
    await this.call(["pane", "run", pane.id, shJoin(spec.argv)], { paneId: pane.id });
    const fg = await this.verifyForeground(pane.id, spec.settleMs);
    if (!fg) return failStart(this.ops, pane.id, agent, "exited right after start", shJoin(spec.argv));
    if (spec.label) await this.label(pane.id, spec.label);
    return { ...pane, pid: fg.pid, cmd: fg.name || basename(exe), cmdFull: shJoin(spec.argv) };
  }

  /** the agent `name` as herdr shows it, when it is in that pane (undefined: gone, or elsewhere) */
  private async agentIn(name: string, paneId: string): Promise<MuxPane | undefined> {
    try {
      const a = toMuxPane((await this.json(["agent", "get", name], { paneId })).agent);
      return a?.id === paneId ? a : undefined;
    } catch (e) {
      if (e instanceof HerdrError) return undefined;
      throw e;
    }
  }

  /**
   * wait until something other than the shell owns the pane's terminal and stays there for
   * settleMs; undefined when it never came or went back to the shell
   */
  private async verifyForeground(paneId: string, settleMs: number): Promise<{ pid: number; name: string } | undefined> {
    const appearBy = Date.now() + (this.opts.appearMs ?? 3000);
    let since: number | undefined;
    for (;;) {
      let info: ProcessInfo;
      try {
        info = await this.processInfo(paneId);
      } catch (e) {
        if (e instanceof HerdrError && e.code === "pane_not_found") return undefined;
        throw e;
      }
      const fg = nonShellForeground(info);
      const now = Date.now();
      if (fg.length > 0) {
        since ??= now;
        if (now - since >= settleMs) return { pid: fg[0]!.pid, name: fg[0]!.name };
      } else if (since !== undefined || now > appearBy) {
        return undefined;
      }
      await Bun.sleep(100);
    }
  }

  /**
   * raw typing, for shell use and tests: `pane send-text` (never bracketed by herdr), then Enter
   * ~300 ms later. Prompts to agents go through submit(). Multi-line text is refused: herdr's
   * send-text would deliver every line break as a key press.
   */
  async sendText(paneId: string, text: string, enter: boolean): Promise<void> {
    if (/[\r\n]/.test(text)) throw new MamError("herdr send-text of multi-line text (a bug in mam: prompts go through submit)", EXIT.FAIL);
    if (text === "") {
      if (enter) await this.sendKeys(paneId, ["enter"]);
      return;
    }
    await this.call(["pane", "send-text", paneId, text], { paneId });
    if (!enter) return;
    await Bun.sleep(this.opts.enterDelayMs ?? 300);
    await this.call(["pane", "send-keys", paneId, "Enter"], { paneId });
  }

  /**
   * a prompt to the pane's agent (audit #1, #2). herdr kinds: `herdr agent prompt <pane> <text>`,
   * herdr's own submission (bracketed paste when the app asked for it, Enter 300 ms later), which
   * herdr refuses when no agent owns the pane, and (0.8.2) when the agent is blocked at a dialog
   * or question: agent_blocked, nothing sent. herdr 0.8.0 would type into the blocked agent, so
   * there mam asks `agent get` first. Typed kinds: the agent must own the terminal (`pane
   * process-info`), then `pane run` (text + Enter, bracketed when asked). A pane whose agent is
   * gone → AgentGone, a blocked one → AgentBlocked; nothing is typed.
   */
  async submit(paneId: string, text: string, managed: boolean): Promise<void> {
    if (text === "") throw new MamError("an empty prompt (a bug in mam)", EXIT.FAIL);
    if (managed) {
      const refused = (e: unknown): unknown => {
        if (!(e instanceof HerdrError)) return e;
        if (NO_AGENT.has(e.code)) return new AgentGone(paneId, e.message);
        if (e.code === "pane_not_found") return new AgentGone(paneId, "the pane is gone");
        if (e.code === "agent_blocked") return new AgentBlocked(paneId, "herdr refused the text: agent_blocked");
        return e;
      };
      try {
        if ((await this.release()) === "0.8.0") {
          const a = toMuxPane((await this.json(["agent", "get", paneId], { paneId })).agent);
          if (a?.status === "blocked") throw new AgentBlocked(paneId, "herdr reports it blocked");
        }
        await this.call(["agent", "prompt", paneId, text], { paneId });
      } catch (e) {
        throw refused(e);
      }
      return;
    }
    let info: ProcessInfo;
    try {
      info = await this.processInfo(paneId);
    } catch (e) {
      if (e instanceof HerdrError && e.code === "pane_not_found") throw new AgentGone(paneId, "the pane is gone");
      throw e;
    }
    if (nonShellForeground(info).length === 0) throw new AgentGone(paneId, "only its shell is left in the foreground");
    await this.call(["pane", "run", paneId, text], { paneId });
  }

  /**
   * `herdr notification show <title> --body <text>` (audit #10): best effort. 0.8.0's default
   * config has toasts off (`shown:false, reason:"disabled"`), which is not an error.
   */
  async notify(n: PaneNotification): Promise<{ shown: boolean; reason: string }> {
    const args = ["notification", "show", n.title];
    if (n.body) args.push("--body", n.body);
    const r = await this.json(args, { timeoutMs: 5000 });
    return { shown: r.shown === true, reason: typeof r.reason === "string" ? r.reason : "" };
  }

  async sendKeys(paneId: string, keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.call(["pane", "send-keys", paneId, ...keys], { paneId });
  }

  async read(paneId: string, lines: number): Promise<string> {
    const n = Math.max(1, Math.min(1000, Math.floor(lines)));
    return this.call(["pane", "read", paneId, "--source", "recent-unwrapped", "--lines", String(n)], { paneId });
  }

  async screen(paneId: string, listed?: MuxPane): Promise<PaneScreen> {
    const [text, title] = await Promise.all([
      this.call(["pane", "read", paneId, "--source", "visible"], { paneId }),
      // the title is a hint: a pane get that fails leaves it empty, the screen still counts
      // (a record herdr printed leaves an empty title out: absent means none)
      listed?.id === paneId ? (listed.title ?? "") : this.json(["pane", "get", paneId], { paneId }).then(paneTitle, () => ""),
    ]);
    return { text, title };
  }

  async processInfo(paneId: string): Promise<ProcessInfo> {
    return parseProcessInfo(await this.json(["pane", "process-info", "--pane", paneId], { paneId }));
  }

  async close(paneId: string): Promise<void> {
    try {
      await this.call(["pane", "close", paneId], { paneId });
    } catch (e) {
      if (e instanceof HerdrError && e.code === "pane_not_found") return;
      throw e;
    }
  }

  /** `herdr worktree create --cwd <main> --branch B [--base C] --path P [--label L] --no-focus` (herdr 0.8.0 src/cli/worktree.rs) */
  async createWorktree(spec: WorktreeSpec): Promise<WorktreeOpened> {
    const args = ["worktree", "create", "--cwd", spec.cwd, "--branch", spec.branch];
    if (spec.base !== undefined) args.push("--base", spec.base);
    args.push("--path", spec.path);
    if (spec.label !== undefined) args.push("--label", spec.label);
    args.push("--no-focus");
    // git checks out the files while herdr waits: a big repository takes a while
    const r = await this.json(args, { timeoutMs: Math.max(this.timeoutMs, 120_000) });
    const pane = toMuxPane(r.root_pane);
    const ws = r.workspace as Record<string, unknown> | undefined;
    const wt = r.worktree as Record<string, unknown> | undefined;
    if (!pane || typeof ws?.workspace_id !== "string") throw new HerdrError("herdr worktree create returned no workspace or root pane", "mam_not_json");
    await waitShellFree(this.ops, pane.id, 5000);
    return { workspaceId: ws.workspace_id, pane: { ...pane, fresh: true }, path: typeof wt?.path === "string" ? wt.path : spec.path };
  }

  /** `herdr worktree open --cwd <main> --path P [--label L] --no-focus` */
  async openWorktree(spec: Omit<WorktreeSpec, "branch" | "base">): Promise<WorktreeOpened> {
    const args = ["worktree", "open", "--cwd", spec.cwd, "--path", spec.path, ...(spec.label !== undefined ? ["--label", spec.label] : []), "--no-focus"];
    const r = await this.json(args);
    const pane = toMuxPane(r.root_pane);
    const ws = r.workspace as Record<string, unknown> | undefined;
    if (!pane || typeof ws?.workspace_id !== "string") throw new HerdrError("herdr worktree open returned no workspace or root pane", "mam_not_json");
    const alreadyOpen = r.already_open === true;
    if (!alreadyOpen) await waitShellFree(this.ops, pane.id, 5000);
    return { workspaceId: ws.workspace_id, pane: { ...pane, fresh: !alreadyOpen }, path: spec.path, alreadyOpen };
  }

  async removeWorktree(workspaceId: string, force: boolean): Promise<void> {
    await this.json(["worktree", "remove", "--workspace", workspaceId, ...(force ? ["--force"] : [])], { timeoutMs: Math.max(this.timeoutMs, 120_000) });
  }
}

