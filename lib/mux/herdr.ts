// The herdr backend: drives the `herdr` CLI (reference/herdr.md §2) with Bun.spawn, always with
// `--session <server>` and explicit pane ids, one JSON line per command, a deadline per call.
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { MamError } from "../sys/errors.ts";
import { type Env, homeDir, stateDir } from "../sys/paths.ts";
import { cleanEnv, execCapture, lastOutput, shJoin } from "./exec.ts";
import {
  callFailure,
  HerdrError,
  herdrAgentName,
  looksLikePlainShell,
  notRunningError,
  paneTitle,
  parsePaneList,
  parseProcessInfo,
  parseResult,
  pickWorkspace,
  toMuxPane,
} from "./herdr-proto.ts";
import { isShellOnly, nonShellForeground } from "./procfs.ts";
import { isMamShimFile } from "./shim.ts";
import { AgentPaneBusy, type Listing, type Mux, type MuxPane, type PaneScreen, type ProcessInfo, type StartSpec, type WorktreeOpened, type WorktreeSpec } from "./types.ts";

export { herdrAgentName, HerdrError };

export interface HerdrOptions {
  /** deadline of one CLI call (default 15 s) */
  timeoutMs?: number;
  /** how long ensureRunning(true) waits for a server it started (default 15 s) */
  startWaitMs?: number;
  /** how long a typed agent may take to reach the foreground (default 3 s) */
  appearMs?: number;
  /** how long a created pane's shell may take to own its terminal (default 5 s) */
  shellReadyMs?: number;
  /** pause between typed text and its Enter in sendText (default 300 ms) */
  enterDelayMs?: number;
}

/** herdr's own variables of the pane mam may run in: never handed to a server mam starts */
const PANE_VARS = ["HERDR_ENV", "HERDR_SOCKET_PATH", "HERDR_SESSION", "HERDR_PANE_ID", "HERDR_TAB_ID", "HERDR_WORKSPACE_ID", "TMUX", "TMUX_PANE"];

/** how many agent names `start` tries when herdr says the name is taken */
export const NAME_ATTEMPTS = 3;

/** codes of `agent start` that mean the agent did not come up (§3.4, §3.6) */
const START_FAILED = new Set(["agent_start_failed", "agent_kind_mismatch", "agent_name_not_found", "timeout"]);

function isExecutable(p: string): boolean {
  try {
    const st = statSync(p);
    return st.isFile() && (st.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/**
 * The herdr binary: MAM_HERDR_BIN, else the first `herdr` on the env's PATH that is not a mam
 * shim (the shim would wait for the pane-claim lock mam itself holds).
 */
export function findHerdr(env: Env): string {
  const given = env.MAM_HERDR_BIN;
  if (given) {
    const p = given.includes("/") ? given : Bun.which(given, { PATH: env.PATH ?? "" });
    if (!p || !isExecutable(p)) throw new MamError(`MAM_HERDR_BIN '${given}' is not an executable file`, 1, "point it at the herdr binary");
    if (isMamShimFile(p)) throw new MamError(`MAM_HERDR_BIN '${given}' is the mam herdr shim`, 1, "point it at the real herdr binary");
    return p;
  }
  for (const dir of (env.PATH ?? "").split(":")) {
    const p = join(dir || ".", "herdr");
    if (isExecutable(p) && !isMamShimFile(p)) return p;
  }
  throw new MamError("herdr not found on PATH", 1, "install herdr or set MAM_HERDR_BIN (or use --mux tmux)");
}

export class HerdrMux implements Mux {
  readonly backend = "herdr" as const;
  private binPath?: string;
  private readonly timeoutMs: number;

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

  /** run `herdr --session <server> <args>`; throws the typed failure; returns stdout */
  private async call(args: string[], opts: { timeoutMs?: number; paneId?: string } = {}): Promise<string> {
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const argv = [this.bin, "--session", this.server, ...args];
    let r;
    try {
      r = await execCapture(argv, { env: this.env, timeoutMs });
    } catch (e) {
      throw new MamError(`cannot run ${argv[0]}: ${(e as Error).message}`, 1, "install herdr or set MAM_HERDR_BIN (or use --mux tmux)");
    }
    const failure = callFailure(r, args, this.server, timeoutMs, opts.paneId);
    if (failure) throw failure;
    return r.stdout;
  }

  private async json(args: string[], opts: { timeoutMs?: number; paneId?: string } = {}): Promise<Record<string, unknown>> {
    return parseResult(await this.call(args, opts), args);
  }

  private async panes(): Promise<MuxPane[]> {
    const args = ["pane", "list"];
    return parsePaneList(await this.json(args), args);
  }

  async list(): Promise<Listing> {
    try {
      return { state: "ok", panes: await this.panes() };
    } catch (e) {
      const detail = e instanceof MamError ? e.render().replace(/^ERROR: /, "") : String((e as Error).message);
      if (e instanceof HerdrError && e.code === "server_not_running") return { state: "not-running", detail };
      return { state: "unreachable", detail };
    }
  }

  async ensureRunning(start: boolean): Promise<void> {
    try {
      await this.panes();
      return;
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
        throw new MamError(`herdr server '${this.server}' exited right after start (exit ${proc.exitCode})`, 1, `see ${log}`);
      }
      try {
        await this.panes();
        return;
      } catch (e) {
        if (!(e instanceof HerdrError && e.code === "server_not_running")) throw e;
      }
      if (Date.now() > deadline) {
        throw new MamError(`herdr server '${this.server}' did not start within ${Math.round((this.opts.startWaitMs ?? 15_000) / 1000)} s`, 1, `see ${log}`);
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
      const proc = Bun.spawn([this.bin, "--session", this.server, "server"], {
        env: cleanEnv(this.env, PANE_VARS),
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

  async claimPane(cwd: string, taken: (paneId: string) => boolean, env: Record<string, string> = {}): Promise<MuxPane> {
    const panes = await this.panes();
    const ws = pickWorkspace(panes, cwd);
    const envArgs = Object.entries(env).flatMap(([k, v]) => ["--env", `${k}=${v}`]);
    if (ws === undefined) {
      const r = await this.json(["workspace", "create", "--cwd", cwd, "--no-focus", ...envArgs]);
      const root = toMuxPane(r.root_pane);
      if (!root) throw new HerdrError(`herdr workspace create returned no root pane`, "mam_not_json");
      await this.waitShellReady(root.id);
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
    await this.waitShellReady(pane.id);
    return { ...pane, fresh: true };
  }

  /** a new pane's shell may still run its rc files: wait (bounded) until it owns the terminal */
  private async waitShellReady(paneId: string): Promise<void> {
    const deadline = Date.now() + (this.opts.shellReadyMs ?? 5000);
    while (Date.now() < deadline) {
      try {
        const info = await this.processInfo(paneId);
        if (info.shellPid !== undefined && isShellOnly(info)) return;
      } catch {
        return;
      }
      await Bun.sleep(50);
    }
  }

  async label(paneId: string, label: string): Promise<void> {
    await this.call(["pane", "rename", paneId, label], { paneId });
  }

  async start(pane: MuxPane | undefined, spec: StartSpec): Promise<MuxPane> {
    if (!pane) throw new MamError("herdr start needs a claimed pane (a bug in mam)", 1);
    const exe = spec.argv[0] ?? spec.herdrKind ?? "agent";
    const agent = spec.agent ?? spec.herdrKind ?? basename(exe);
    if (spec.herdrKind) {
      let name = spec.agentName ?? herdrAgentName(spec.session);
      const readyMs = Math.min(300_000, Math.max(3001, spec.readyTimeoutMs ?? 30_000));
      const args = (n: string) => {
        const a = ["agent", "start", n, "--kind", spec.herdrKind!, "--pane", pane.id, "--timeout", String(readyMs)];
        if (spec.argv.length > 1) a.push("--", ...spec.argv.slice(1));
        return a;
      };
      let r: Record<string, unknown>;
      for (let attempt = 1; ; attempt++) {
        try {
          r = await this.json(args(name), { timeoutMs: readyMs + 15_000, paneId: pane.id });
          break;
        } catch (e) {
          // agent names are unique per server: another workspace's session of the same name, or an
          // archived (--soft) session's agent, may hold it. herdr checks the name before it claims
          // the pane, so the same pane is tried again under a derived name (the row records it).
          if (e instanceof HerdrError && e.code === "agent_name_taken" && attempt < NAME_ATTEMPTS) {
            name = herdrAgentName(spec.session, randomBytes(4).toString("hex"));
            continue;
          }
          if (e instanceof HerdrError && START_FAILED.has(e.code)) {
            const how = e.code === "timeout" ? `did not become ready within ${Math.round(readyMs / 1000)} s` : "exited right after start";
            return this.failStart(pane.id, agent, how, shJoin([spec.herdrKind, ...spec.argv.slice(1)]));
          }
          throw e;
        }
      }
      const info = toMuxPane(r.agent);
      return { ...pane, agentName: name, agent: info?.agent ?? spec.herdrKind, status: info?.status ?? pane.status, cmd: basename(exe), cmdFull: shJoin(spec.argv) };
    }
    await this.call(["pane", "run", pane.id, shJoin(spec.argv)], { paneId: pane.id });
    const fg = await this.verifyForeground(pane.id, spec.settleMs);
    if (!fg) return this.failStart(pane.id, agent, "exited right after start", shJoin(spec.argv));
    return { ...pane, pid: fg.pid, cmd: fg.name || basename(exe), cmdFull: shJoin(spec.argv) };
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

  /** read the pane's last lines, close it, throw the start failure of SPEC §5.2 */
  private async failStart(paneId: string, agent: string, how: string, typed: string): Promise<never> {
    let text = "";
    try {
      text = await this.read(paneId, 50);
    } catch {}
    try {
      await this.close(paneId);
    } catch {}
    throw new MamError(`${agent} ${how} in ${paneId}; last output: ${lastOutput(text, 5, typed)}`, 1);
  }

  async sendText(paneId: string, text: string, enter: boolean): Promise<void> {
    if (text === "") {
      if (enter) await this.sendKeys(paneId, ["enter"]);
      return;
    }
    await this.call(["pane", "send-text", paneId, text], { paneId });
    if (!enter) return;
    // Enter a moment after the text, as herdr's own agent prompt does: a TUI agent that sees the
    // text and Enter in one burst may take the Enter as part of a paste
    await Bun.sleep(this.opts.enterDelayMs ?? 300);
    await this.call(["pane", "send-keys", paneId, "Enter"], { paneId });
  }

  async sendKeys(paneId: string, keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.call(["pane", "send-keys", paneId, ...keys], { paneId });
  }

  async read(paneId: string, lines: number): Promise<string> {
    const n = Math.max(1, Math.min(1000, Math.floor(lines)));
    return this.call(["pane", "read", paneId, "--source", "recent-unwrapped", "--lines", String(n)], { paneId });
  }

  async screen(paneId: string): Promise<PaneScreen> {
    const [text, title] = await Promise.all([
      this.call(["pane", "read", paneId, "--source", "visible"], { paneId }),
      // the title is a hint: a pane get that fails leaves it empty, the screen still counts
      this.json(["pane", "get", paneId], { paneId }).then(paneTitle, () => ""),
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
    await this.waitShellReady(pane.id);
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
    if (!alreadyOpen) await this.waitShellReady(pane.id);
    return { workspaceId: ws.workspace_id, pane: { ...pane, fresh: !alreadyOpen }, path: spec.path, alreadyOpen };
  }

  async removeWorktree(workspaceId: string, force: boolean): Promise<void> {
    await this.json(["worktree", "remove", "--workspace", workspaceId, ...(force ? ["--force"] : [])], { timeoutMs: Math.max(this.timeoutMs, 120_000) });
  }
}

export { AgentPaneBusy, notRunningError };
