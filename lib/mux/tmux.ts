// The tmux backend: one tmux session per agent on a private server `tmux -L <server>` (default
// `mam`), named after the mam session, the exact mam name kept in the session option @mam_name and
// its workspace in @mam_workspace (several workspaces share the server `mam`).
//
// mam's secrets (lib/sys/secrets.ts) never reach a pane: tmux is run without them, so a server it
// starts never has them in its global environment, and every new session first removes them from
// the global environment of a server something else started with them (a pane gets the global
// environment of its server, whoever started it).
import { basename } from "node:path";
import { conflict, EXIT, MamError, usageError } from "../sys/errors.ts";
import { field } from "../sys/fields.ts";
import type { Env } from "../sys/paths.ts";
import { SECRET_ENV, withoutSecrets } from "../sys/secrets.ts";
import { cleanEnv, execCapture, lastOutput, shJoin, type ExecResult } from "./exec.ts";
import { parseLabel } from "./label.ts";
import { foreignPane } from "./owner.ts";
import { foregroundOf, hasProcfs } from "./procfs.ts";
import type { Listing, Mux, MuxPane, PaneScreen, ProcessInfo, StartSpec } from "./types.ts";

/** tmux turns "." and ":" in session names into "_" */
export function tmuxSessionName(session: string): string {
  return session.replace(/[.:]/g, "_");
}

/** an argument as tmux should see it: a trailing ";" would end the command, so it is escaped */
export function tmuxArg(a: string): string {
  return a.endsWith(";") ? `${a.slice(0, -1)}\\;` : a;
}

/** a ";" between chained tmux commands */
const SEP = Symbol("tmux command separator");
type Arg = string | typeof SEP;

const KEYS: Record<string, string> = {
  enter: "Enter", return: "Enter", esc: "Escape", escape: "Escape", tab: "Tab", "shift+tab": "BTab", backtab: "BTab",
  backspace: "BSpace", space: "Space", up: "Up", down: "Down", left: "Left", right: "Right", home: "Home", end: "End",
  pageup: "PPage", pgup: "PPage", pagedown: "NPage", pgdn: "NPage", delete: "DC", del: "DC", insert: "IC",
  minus: "-", plus: "+", slash: "/", backslash: "\\", comma: ",", period: ".", semicolon: "\\;", colon: ":",
  equal: "=", equals: "=", quote: "'", doublequote: '"', backtick: "`", tilde: "~", pipe: "|",
};

/** herdr key names (case-insensitive; ctrl+c, C-c, alt+x, f5, enter, …) → tmux key names */
export function tmuxKey(key: string): string {
  const k = key.trim().toLowerCase();
  if (KEYS[k]) return KEYS[k]!;
  if (/^f([1-9]|1[0-2])$/.test(k)) return k.toUpperCase();
  const mod = /^(ctrl|control|c|alt|meta|m)[+-](.+)$/.exec(k);
  if (mod) {
    const inner = mod[2]!.length === 1 ? mod[2]! : tmuxKey(mod[2]!);
    return `${mod[1]!.startsWith("c") ? "C" : "M"}-${inner}`;
  }
  if ([...key].length === 1) return key === ";" ? "\\;" : key;
  throw usageError(`unknown key '${key}'`, "use enter, esc, tab, backspace, space, arrows, f1-f12, ctrl+<x>, alt+<x> or one character");
}

/** how a failed tmux call is classified (SPEC §6.1: definitely not running vs anything else) */
export function tmuxNotRunning(stderr: string): boolean {
  return /no server running|error connecting to .*\((No such file or directory|Connection refused)\)/i.test(stderr);
}

/**
 * the server went away while the client talked to it: a server whose last session has just ended
 * exits by itself, and a client that reaches it meanwhile hears "server exited unexpectedly" or
 * "lost server". Not a definite answer: ask again.
 */
export function tmuxExiting(stderr: string): boolean {
  return /server exited unexpectedly|lost server/i.test(stderr);
}

/** how often start() tries new-session when it reached a server that was exiting */
export const NEW_SESSION_ATTEMPTS = 3;

/** the target is not there; "no current target": the server has no session left (it is exiting) */
export function tmuxMissingTarget(stderr: string): boolean {
  return /can't find (pane|session|window)|no such (pane|session|window)|session not found|no current target/i.test(stderr);
}

/**
 * The last output of a pane whose agent died at start (lastOutput). A process that writes and
 * exits at once can lose its output (the pty closes before tmux reads it; about 1 start in 20
 * here): then tmux's own "Pane is dead (status N, …)" line still tells how it ended, and status
 * 127 is the shell's "command not found".
 */
export function deadPaneOutput(text: string, exe: string): string {
  const out = lastOutput(text);
  const m = /Pane is dead \((status|signal) (\d+)/.exec(text);
  if (!m) return out;
  if (m[1] === "status" && m[2] === "127" && !/not found/i.test(out)) {
    const why = `exit status 127: ${exe}: command not found`;
    return out === "(no output)" ? `(none; ${why})` : `${out} (${why})`;
  }
  return out === "(no output)" ? `(none; exit ${m[1]} ${m[2]})` : out;
}

/** the output of the chained display-message/capture-pane calls of screens() → pane id → screen */
export function parseScreens(stdout: string, nonce: string, into = new Map<string, PaneScreen>()): Map<string, PaneScreen> {
  let cur: { id: string; title: string; lines: string[] } | undefined;
  // a pane that is gone prints a marker with no pane id: left out
  const flush = () => cur && cur.id !== "" && into.set(cur.id, { title: cur.title, text: cur.lines.join("\n") });
  for (const line of stdout.split("\n")) {
    if (line.startsWith(`${nonce}\t`)) {
      flush();
      const [, id = "", ...title] = line.split("\t");
      cur = { id, title: title.join("\t"), lines: [] };
    } else cur?.lines.push(line);
  }
  flush();
  return into;
}

/** the marker of a screen in a chained capture: unguessable by what a pane shows */
const screenNonce = () => `mam-screen-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;

/** per pane a marker line (`<nonce>\t<pane id>\t<title>`) then its capture-pane, chained with ";" (parseScreens reads it) */
function screenChain(ids: string[], nonce: string): Arg[] {
  const args: Arg[] = [];
  for (const id of ids) {
    if (args.length) args.push(SEP);
    args.push("display-message", "-p", "-t", id, `${nonce}\t#{pane_id}\t#{pane_title}`, SEP, "capture-pane", "-p", "-J", "-t", id);
  }
  return args;
}

export class TmuxError extends MamError {
  constructor(
    message: string,
    readonly kind: "not-running" | "missing" | "failed",
  ) {
    super(message, EXIT.FAIL);
    this.name = "TmuxError";
  }
}

/**
 * The error for a live tmux session of the same name (create's name clash). Several workspaces
 * share a server (`mam` by default): say whose it is and how to get out of the way.
 */
function sessionClash(name: string, server: string, owner: { workspace: string; path: string }, ws?: string): MamError {
  const kill = `tmux -L ${server} kill-session -t '=${name}'`;
  if (owner.workspace !== "" && ws !== undefined && owner.workspace !== ws) {
    return conflict(
      `tmux session '${name}' already exists on tmux server '${server}': it belongs to workspace ${owner.workspace}`,
      `pick another ${field("name")}, or give this workspace a tmux server of its own with ${field("tmux_server")}`,
    );
  }
  if (owner.workspace === "") {
    return conflict(
      `tmux session '${name}' already exists on tmux server '${server}' (not known as this workspace's; it started in ${owner.path || "an unknown folder"})`,
      `pick another ${field("name")}, or another tmux server with ${field("tmux_server")}; or end it: ${kill}`,
    );
  }
  // this workspace's own session with no live row: a registry moved away, emptied or broken
  return conflict(
    `tmux session '${name}' already exists on tmux server '${server}' (this workspace's)`,
    `if mam status does not list it, mam registry rebuild registers it again from its pane; or end it (${kill}), or pick another ${field("name")}`,
  );
}

/** list-panes fields, cwd last (it is the one field that may hold a tab) */
const LIST_FORMAT = ["#{pane_id}", "#{pane_pid}", "#{pane_dead}", "#{session_name}", "#{@mam_name}", "#{pane_current_command}", "#{@mam_workspace}", "#{@mam_agent}", "#{@mam_role}", "#{pane_current_path}"].join("\t");

/** one line of LIST_FORMAT output → a pane (dead panes: undefined, they hold no agent) */
export function parsePaneLine(line: string): MuxPane | undefined {
  const f = line.split("\t");
  if (f.length < 10 || !f[0]!.startsWith("%")) return undefined;
  const [id, pid, dead, session, mamName, cmd, owner, agent, role] = f as [string, string, string, string, string, string, string, string, string];
  if (dead === "1") return undefined;
  const cwd = f.slice(9).join("\t");
  const pane: MuxPane = { id, workspaceId: session, status: "unknown" };
  if (mamName) pane.label = `mam:${mamName}`;
  if (owner) pane.owner = owner;
  if (agent) pane.agent = agent;
  if (role) pane.role = role;
  if (/^\d+$/.test(pid)) pane.pid = Number(pid);
  if (cmd) pane.cmd = cmd;
  if (cwd) pane.cwd = cwd;
  return pane;
}

export interface TmuxOptions {
  /**
   * the workspace this mux serves: list() leaves out the panes whose session mam started for
   * another workspace (@mam_workspace). Several workspaces share the server `mam`, and a registry
   * is a file a repository can ship: a row must never reach, adopt or type into the pane of
   * another workspace's session that has the same name. Unset: every pane (registry rebuild,
   * which says why it leaves such a pane out).
   */
  workspace?: string;
  /** deadline of one tmux call (default 10 s) */
  timeoutMs?: number;
  /** pause between typed text and its Enter in sendText (default 300 ms) */
  enterDelayMs?: number;
}

export class TmuxMux implements Mux {
  readonly backend = "tmux" as const;
  private binPath?: string;
  /** the environment of every call, worked out once */
  private envOfCalls?: Record<string, string>;

  constructor(
    readonly server: string,
    private readonly env: Env,
    private readonly opts: TmuxOptions = {},
  ) {}

  get bin(): string {
    if (this.binPath) return this.binPath;
    const p = Bun.which("tmux", { PATH: this.env.PATH ?? "" });
    if (!p) throw new MamError("tmux not found on PATH", EXIT.FAIL, `install tmux (3.0 or newer) or use ${field("mux", "herdr")}`);
    return (this.binPath = p);
  }

  /**
   * run tmux -L <server> <args…>; TMUX is unset so a caller inside tmux never reaches its own
   * server, and mam's secrets are left out (a server this call starts keeps its environment).
   * `-u`: in a locale that is not UTF-8 (LANG unset: cron, `env -i`, a bare container) tmux would
   * print a format's tab as `_` and a screen's non-ASCII characters as `_`, and mam could read
   * neither a listing nor an agent's prompt
   */
  private async run(args: Arg[], stdin?: string): Promise<ExecResult> {
    const argv = [this.bin, "-u", "-L", this.server, ...args.map((a) => (a === SEP ? ";" : tmuxArg(a)))];
    const env = (this.envOfCalls ??= cleanEnv({ ...withoutSecrets(this.env), TMUX: undefined, TMUX_PANE: undefined }));
    try {
      return await execCapture(argv, { env, timeoutMs: this.opts.timeoutMs ?? 10_000, stdin });
    } catch (e) {
      throw new MamError(`cannot run ${argv[0]}: ${(e as Error).message}`, EXIT.FAIL, `install tmux (3.0 or newer) or use ${field("mux", "herdr")}`);
    }
  }

  /** run and throw a TmuxError on failure; returns stdout */
  private async tmux(args: Arg[], stdin?: string): Promise<string> {
    return this.check(await this.run(args, stdin), args);
  }

  /** stdout of a finished call, or the TmuxError it stands for */
  private check(r: ExecResult, args: Arg[]): string {
    if (r.code === 0 && !r.timedOut) return r.stdout;
    const what = `tmux ${typeof args[0] === "string" ? args[0] : ""}`;
    const why = r.timedOut ? "did not answer in time" : r.stderr.trim().split("\n")[0] || `exit ${r.code}`;
    const kind = r.timedOut ? "failed" : tmuxNotRunning(r.stderr) ? "not-running" : tmuxMissingTarget(r.stderr) ? "missing" : "failed";
    if (kind === "not-running") throw new TmuxError(`tmux server '${this.server}' is not running (${why})`, kind);
    throw new TmuxError(`${what} failed on tmux server '${this.server}': ${why}`, kind);
  }

  async list(): Promise<Listing> {
    try {
      const args = ["list-panes", "-a", "-F", LIST_FORMAT];
      let r = await this.run(args);
      // a server caught in the middle of exiting: ask again, the answer is then definite
      if (r.code !== 0 && !r.timedOut && tmuxExiting(r.stderr)) {
        await Bun.sleep(50);
        r = await this.run(args);
      }
      // a server whose last session just ended, before it exits, has no target at all
      if (r.code !== 0 && !r.timedOut && /no current target/.test(r.stderr)) return { state: "ok", panes: [] };
      return { state: "ok", panes: this.panesOf(this.check(r, args)) };
    } catch (e) {
      const detail = (e as Error).message;
      if (e instanceof TmuxError && e.kind === "not-running") return { state: "not-running", detail };
      return { state: "unreachable", detail };
    }
  }

  /** list-panes output → the panes, those of another workspace left out (when this mux serves one) */
  private panesOf(outText: string): MuxPane[] {
    const ws = this.opts.workspace;
    return outText
      .split("\n")
      .map(parsePaneLine)
      .filter((p): p is MuxPane => p !== undefined && (ws === undefined || p.owner === undefined || !foreignPane(p, ws)));
  }

  /**
   * list() and screens(paneIds) in ONE tmux call: list-panes, then the screens' chain. When that
   * call fails (a pane of paneIds is gone and tmux stopped the chain; a server that is not running
   * or exiting), list() and the screens of the listed ones, as separate calls.
   */
  async listWithScreens(paneIds: string[]): Promise<{ listing: Listing; screens: Map<string, PaneScreen> }> {
    const ids = [...new Set(paneIds)];
    if (ids.length > 0) {
      const nonce = screenNonce();
      const r = await this.run(["list-panes", "-a", "-F", LIST_FORMAT, SEP, ...screenChain(ids, nonce)]);
      // where the first screen begins (-1: none, which a call that succeeded cannot print)
      const nl = r.stdout.startsWith(`${nonce}\t`) ? -1 : r.stdout.indexOf(`\n${nonce}\t`);
      const at = r.stdout.startsWith(`${nonce}\t`) ? 0 : nl < 0 ? -1 : nl + 1;
      if (r.code === 0 && !r.timedOut && at >= 0) {
        return { listing: { state: "ok", panes: this.panesOf(r.stdout.slice(0, at)) }, screens: parseScreens(r.stdout.slice(at), nonce) };
      }
    }
    const listing = await this.list();
    if (listing.state !== "ok" || ids.length === 0) return { listing, screens: new Map() };
    const listed = new Set(listing.panes.map((p) => p.id));
    const there = ids.filter((id) => listed.has(id));
    return { listing, screens: there.length > 0 ? await this.screens(there).catch(() => new Map<string, PaneScreen>()) : new Map() };
  }

  async ensureRunning(_start: boolean): Promise<void> {
    // a tmux server starts with its first session
  }

  async claimPane(): Promise<undefined> {
    return undefined;
  }

  async label(paneId: string, label: string): Promise<void> {
    // either form of label.ts: the name goes to @mam_name, a kind and role to their own options
    const facts = parseLabel(label);
    if (!facts || facts.name === "") throw new MamError(`tmux panes carry only mam:<name> labels (got '${label}')`, EXIT.FAIL);
    await this.tmux([
      "set-option", "-t", paneId, "@mam_name", facts.name,
      ...(facts.kind !== undefined ? ([SEP, "set-option", "-t", paneId, "@mam_agent", facts.kind] as Arg[]) : []),
      ...(facts.role !== undefined ? ([SEP, "set-option", "-t", paneId, "@mam_role", facts.role] as Arg[]) : []),
    ]);
  }

  /** the panes of a tmux session ([] when there is no such session), with the session's workspace and folder */
  private async sessionPanes(name: string): Promise<{ id: string; dead: boolean; workspace: string; path: string }[]> {
    const r = await this.run(["list-panes", "-s", "-t", `=${name}:`, "-F", "#{pane_id}\t#{pane_dead}\t#{@mam_workspace}\t#{session_path}"]);
    if (r.code !== 0) return [];
    return r.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => {
        const [id = "", dead, workspace = "", ...path] = l.split("\t");
        return { id, dead: dead === "1", workspace, path: path.join("\t") };
      });
  }

  async start(_pane: MuxPane | undefined, spec: StartSpec): Promise<MuxPane> {
    const name = tmuxSessionName(spec.session);
    const exe = spec.argv[0];
    if (!exe) throw new MamError("tmux start needs a command (a bug in mam)", EXIT.FAIL);
    const agent = spec.agent ?? spec.herdrKind ?? basename(exe);
    const old = await this.sessionPanes(name);
    if (old.length > 0) {
      if (old.some((p) => !p.dead)) throw sessionClash(name, this.server, old[0]!, spec.workspace);
      await this.run(["kill-session", "-t", `=${name}`]);
    }
    const envArgs = Object.entries(spec.env)
      .filter(([k]) => !SECRET_ENV.includes(k))
      .flatMap(([k, v]) => ["-e", `${k}=${v}`]);
    // a server started by something else (an older mam, the user's own `tmux -L mam`) may hold
    // mam's secrets in its global environment, which every new pane gets: remove them first
    // (start-server: these commands need a server; new-session would start one anyway)
    const scrub: Arg[] = ["start-server", ...SECRET_ENV.flatMap((k): Arg[] => [SEP, "set-environment", "-g", "-u", k]), SEP];
    // sh execs the agent (so the pane's process is the agent) and says so when it cannot. tmux
    // (3.x) gives a new pane the PATH of the client that asked for it, over `-e PATH=…`, so the
    // PATH the agent must have (<ws>/.mam/bin first, SPEC §4.3) is set by sh itself.
    const launcher =
      spec.env.PATH !== undefined ? ["/bin/sh", "-c", 'PATH=$1; export PATH; shift; exec "$@"', "sh", spec.env.PATH] : ["/bin/sh", "-c", 'exec "$@"', "sh"];
    const newSession: Arg[] = [
      ...scrub,
      "new-session", "-d", "-s", name, "-c", spec.cwd, "-x", "200", "-y", "50", ...envArgs, "-P", "-F", "#{pane_id}\t#{pane_pid}",
      "--", ...launcher, ...spec.argv,
      SEP, "set-option", "-w", "-t", `=${name}:`, "remain-on-exit", "on",
      SEP, "set-option", "-t", `=${name}:`, "@mam_name", spec.session,
      ...(spec.workspace ? ([SEP, "set-option", "-t", `=${name}:`, "@mam_workspace", spec.workspace] as Arg[]) : []),
      // the kind and role, with the session: a create killed before its row leaves a pane the daemon can register whole
      ...(spec.agent ? ([SEP, "set-option", "-t", `=${name}:`, "@mam_agent", spec.agent] as Arg[]) : []),
      ...(spec.role ? ([SEP, "set-option", "-t", `=${name}:`, "@mam_role", spec.role] as Arg[]) : []),
    ];
    let created: string;
    for (let attempt = 1; ; attempt++) {
      try {
        created = await this.tmux(newSession);
        break;
      } catch (e) {
        // new-session starts a server when none runs, so "not running" here means it reached one
        // that was exiting (its last session just ended: a stop right before this create): the
        // session was not made; try again once that server is gone
        const exiting = e instanceof TmuxError && (e.kind === "not-running" || tmuxExiting(e.message));
        if (!exiting || attempt >= NEW_SESSION_ATTEMPTS) throw e;
        await Bun.sleep(50 * attempt);
      }
    }
    const t0 = Date.now();
    const [paneId, pidText] = created.trim().split("\t");
    if (!paneId?.startsWith("%")) throw new MamError(`tmux new-session printed no pane id: ${created.slice(0, 80)}`, EXIT.FAIL);
    // verify: the agent stays up (the pane is not dead) for settleMs
    for (;;) {
      const panes = await this.sessionPanes(name);
      const p = panes.find((x) => x.id === paneId);
      if (!p || p.dead) return this.failStart(name, paneId, agent, exe);
      if (Date.now() - t0 >= spec.settleMs) break;
      await Bun.sleep(Math.min(100, Math.max(10, spec.settleMs - (Date.now() - t0))));
    }
    await this.run(["set-option", "-w", "-t", `=${name}:`, "remain-on-exit", "off"]);
    const pane: MuxPane = { id: paneId, workspaceId: name, label: `mam:${spec.session}`, status: "unknown", cwd: spec.cwd, cmd: basename(exe), cmdFull: shJoin(spec.argv) };
    if (pidText && /^\d+$/.test(pidText)) pane.pid = Number(pidText);
    return pane;
  }

  private async failStart(name: string, paneId: string, agent: string, exe: string): Promise<never> {
    let text = "";
    try {
      text = await this.tmux(["capture-pane", "-p", "-J", "-t", paneId, "-S", "-50"]);
    } catch {}
    await this.run(["kill-session", "-t", `=${name}`]);
    throw new MamError(`${agent} exited right after start in ${paneId}; last output: ${deadPaneOutput(text, exe)}`, EXIT.FAIL);
  }

  async sendText(paneId: string, text: string, enter: boolean): Promise<void> {
    if (text !== "") {
      if (!text.includes("\n") && Buffer.byteLength(text) <= 8000) {
        await this.tmux(["send-keys", "-t", paneId, "-l", "--", text]);
      } else {
        // long or multi-line text: a paste (bracketed when the program asked for it), so embedded
        // newlines do not submit early and the client→server message limit is never hit
        const buf = `mam-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
        await this.tmux(["load-buffer", "-b", buf, "-"], text);
        await this.tmux(["paste-buffer", "-d", "-p", "-b", buf, "-t", paneId]);
      }
      if (!enter) return;
      // Enter a moment later: a TUI agent that gets text and Enter in one burst may take the
      // Enter as part of a paste
      await Bun.sleep(this.opts.enterDelayMs ?? 300);
    }
    if (enter) await this.tmux(["send-keys", "-t", paneId, "Enter"]);
  }

  /** tmux panes die with their agent (no shell under it): a prompt is the text + Enter */
  async submit(paneId: string, text: string, _managed: boolean): Promise<void> {
    await this.sendText(paneId, text, true);
  }

  async sendKeys(paneId: string, keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.tmux(["send-keys", "-t", paneId, ...keys.map(tmuxKey)]);
  }

  async read(paneId: string, lines: number): Promise<string> {
    const n = Math.max(1, Math.floor(lines));
    const text = await this.tmux(["capture-pane", "-p", "-J", "-t", paneId, "-S", `-${n}`]);
    const all = text.split("\n");
    while (all.length && all[all.length - 1]!.trim() === "") all.pop();
    return all.slice(-n).join("\n") + (all.length ? "\n" : "");
  }

  async screen(paneId: string): Promise<PaneScreen> {
    const got = await this.screens([paneId]);
    const sc = got.get(paneId);
    if (!sc) throw new TmuxError(`tmux pane ${paneId} not found on tmux server '${this.server}'`, "missing");
    return sc;
  }

  /**
   * every pane's visible screen and title in ONE tmux call: per pane a marker line
   * (`<nonce>\t<pane id>\t<title>`) then its capture-pane, chained with ";". When one pane is gone
   * tmux stops the chain, so the panes are then captured one call each (gone ones left out).
   */
  async screens(paneIds: string[]): Promise<Map<string, PaneScreen>> {
    const out = new Map<string, PaneScreen>();
    const ids = [...new Set(paneIds)];
    if (ids.length === 0) return out;
    const nonce = screenNonce();
    const chain = (list: string[]) => screenChain(list, nonce);
    const r = await this.run(chain(ids));
    if (r.code === 0 && !r.timedOut) return parseScreens(r.stdout, nonce, out);
    if (ids.length === 1) {
      this.check(r, chain(ids)); // throws what went wrong
      return out;
    }
    for (const id of ids) {
      const one = await this.run(chain([id]));
      if (one.code === 0 && !one.timedOut) parseScreens(one.stdout, nonce, out);
    }
    return out;
  }

  async processInfo(paneId: string): Promise<ProcessInfo> {
    const outText = await this.tmux(["list-panes", "-t", paneId, "-F", "#{pane_id}\t#{pane_pid}\t#{pane_dead}\t#{pane_current_command}"]);
    const line = outText.split("\n").find((l) => l.startsWith(`${paneId}\t`));
    if (!line) throw new TmuxError(`tmux pane ${paneId} not found on tmux server '${this.server}'`, "missing");
    const [, pidText, dead, cmd] = line.split("\t");
    const pid = Number(pidText);
    if (dead === "1" || !Number.isInteger(pid) || pid <= 0) return { foreground: [] };
    if (hasProcfs()) return foregroundOf(pid);
    return { foreground: [{ pid, name: cmd ?? "", argv: [] }] };
  }

  async close(paneId: string): Promise<void> {
    try {
      await this.tmux(["kill-session", "-t", paneId]);
    } catch (e) {
      if (e instanceof TmuxError && (e.kind === "missing" || e.kind === "not-running")) return;
      // the agent left, its session ended and the server (that was its last session) is exiting
      // while we ask: the session is gone
      if (e instanceof TmuxError && tmuxExiting(e.message)) return;
      throw e;
    }
  }
}
