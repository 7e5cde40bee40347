// herdr's CLI conventions (reference/herdr.md §2.1, §2.4, §3.4) as pure functions: the agent-name
// rule, reading the one JSON line a command prints, mapping its records, and turning a failed call
// into a typed error. Unknown fields are ignored, missing optional fields are absent, no protocol
// number is pinned.
import { EXIT, MamError } from "../sys/errors.ts";
import { firstBytes, type ExecResult } from "./exec.ts";
import { parseLabel } from "./label.ts";
import { AgentPaneBusy, type ForegroundProcess, type LiveStatus, type MuxPane, type ProcessInfo } from "./types.ts";

const AGENT_NAME_RE = /^[a-z][a-z0-9_-]{0,31}$/;

/**
 * The herdr agent name of a mam session (SPEC §5.2): the session name when it fits
 * [a-z][a-z0-9_-]{0,31}, else lower-cased, "." → "-", "m" in front of a leading digit, cut to
 * 23 characters, then "-" and the first 8 hex digits of the SHA-256 of the session name.
 * With a `salt`, always the derived form, hashed over the name and the salt: the name to try
 * when herdr says the usual one is taken (agent names are unique per server, session names only
 * per workspace; an archived session's agent may still hold it).
 */
export function herdrAgentName(session: string, salt?: string): string {
  if (salt === undefined && AGENT_NAME_RE.test(session)) return session;
  let s = session.toLowerCase().replace(/\./g, "-");
  if (/^[0-9]/.test(s)) s = `m${s}`;
  const hash = new Bun.CryptoHasher("sha256")
    .update(salt === undefined ? session : `${session}\0${salt}`)
    .digest("hex")
    .slice(0, 8);
  return `${s.slice(0, 23)}-${hash}`;
}

/** an error of a herdr call; `code` is herdr's error code, or mam's own for transport failures */
export class HerdrError extends MamError {
  constructor(
    message: string,
    readonly code: string,
    hint?: string,
  ) {
    super(message, EXIT.FAIL, hint);
    this.name = "HerdrError";
  }
}

/** mam's own codes for failures herdr did not describe */
export const MAM_CODES = {
  timeout: "mam_timeout",
  notJson: "mam_not_json",
  usage: "mam_usage_mismatch",
  exit: "mam_exit",
} as const;

export function notRunningError(server: string): HerdrError {
  return new HerdrError(`herdr server '${server}' is not running`, "server_not_running", `start it with: herdr --session ${server} server`);
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/** "herdr pane split" — how a call is named in messages */
export function describeCall(args: string[]): string {
  const words: string[] = [];
  for (const a of args) {
    if (a.startsWith("-") || words.length === 2) break;
    words.push(a);
  }
  return `herdr ${words.join(" ")}`;
}

/** the last line of text that parses as a JSON object */
function lastJsonObject(text: string): Json | undefined {
  const lines = text.split("\n").map((l) => l.trim()).filter(Boolean);
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      const v = JSON.parse(lines[i]!);
      if (isObj(v)) return v;
    } catch {}
  }
  return undefined;
}

/**
 * The error a finished call stands for, or undefined when it succeeded (exit 0). Error JSON on
 * stderr with exit 1 → HerdrError with herdr's code (server_not_running → the exact message of
 * SPEC §3; agent_pane_busy → AgentPaneBusy); exit 2 → a usage mismatch between mam and herdr.
 */
export function callFailure(r: ExecResult, args: string[], server: string, timeoutMs: number, paneId?: string): MamError | undefined {
  const what = describeCall(args);
  if (r.timedOut) {
    return new HerdrError(`${what} did not answer within ${Math.round(timeoutMs / 100) / 10} s (herdr server '${server}')`, MAM_CODES.timeout);
  }
  if (r.code === 0) return undefined;
  if (r.code === 2) {
    return new HerdrError(
      `${what} rejected its arguments (exit 2: ${firstBytes(r.stderr)}): a mam/herdr usage mismatch, which is a bug in mam`,
      MAM_CODES.usage,
      "please report it with `herdr --version` and `mam --version`",
    );
  }
  const errJson = lastJsonObject(r.stderr);
  const e = errJson && isObj(errJson.error) ? errJson.error : undefined;
  const code = e ? str(e.code) : undefined;
  if (code) {
    if (code === "server_not_running") return notRunningError(server);
    if (code === "agent_pane_busy") return new AgentPaneBusy(paneId ?? "?");
    const msg = str(e!.message) ?? "";
    return new HerdrError(`${what} failed on herdr server '${server}': ${code}${msg ? `: ${msg}` : ""}`, code);
  }
  const how = r.code === null ? `killed by ${r.signal ?? "a signal"}` : `exit ${r.code}`;
  return new HerdrError(`${what} failed on herdr server '${server}' (${how}): ${firstBytes(r.stderr)}`, MAM_CODES.exit);
}

/** the `result` member of the one JSON line a successful command prints */
export function parseResult(stdout: string, args: string[]): Json {
  const line = stdout.trim();
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    v = undefined;
  }
  if (!isObj(v) || !isObj(v.result)) {
    throw new HerdrError(`${describeCall(args)} printed something that is not herdr's JSON: ${firstBytes(stdout)}`, MAM_CODES.notJson);
  }
  return v.result;
}

const STATUSES = new Set<LiveStatus>(["idle", "working", "blocked", "done", "unknown"]);

export function liveStatus(v: unknown): LiveStatus {
  return typeof v === "string" && STATUSES.has(v as LiveStatus) ? (v as LiveStatus) : "unknown";
}

/** a PaneInfo record (or an AgentInfo, which carries the same pane fields plus `name`) */
export function toMuxPane(p: unknown): MuxPane | undefined {
  if (!isObj(p)) return undefined;
  const id = str(p.pane_id);
  if (!id) return undefined;
  const pane: MuxPane = { id, status: liveStatus(p.agent_status) };
  const set = <K extends keyof MuxPane>(k: K, v: MuxPane[K] | undefined) => {
    if (v !== undefined && v !== "") pane[k] = v;
  };
  set("workspaceId", str(p.workspace_id));
  set("tabId", str(p.tab_id));
  set("cwd", str(p.cwd));
  set("label", str(p.label));
  // the kind and role mam wrote into the label (an older mam's label names only the session)
  const facts = parseLabel(pane.label);
  set("kind", facts?.kind);
  set("role", facts?.role);
  set("agent", str(p.agent));
  set("agentName", str(p.name));
  if (isObj(p.agent_session)) set("agentSessionId", str(p.agent_session.value));
  // what `pane get` gives for the screen detector (paneTitle), so a look after a listing needs no
  // get (herdr leaves an empty title out of the record: absent means "")
  set("title", str(p.terminal_title) ?? str(p.title));
  return pane;
}

/** `pane get` → the pane's terminal (OSC) title, "" when herdr reports none */
export function paneTitle(result: Json): string {
  const p = isObj(result.pane) ? result.pane : {};
  return str(p.terminal_title) ?? str(p.title) ?? "";
}

/** `pane list` → panes (records without an id are skipped) */
export function parsePaneList(result: Json, args: string[]): MuxPane[] {
  if (!Array.isArray(result.panes)) {
    throw new HerdrError(`${describeCall(args)} returned no pane list (type ${firstBytes(String(result.type ?? ""))})`, MAM_CODES.notJson);
  }
  return result.panes.map(toMuxPane).filter((p): p is MuxPane => p !== undefined);
}

/** `pane process-info` → ProcessInfo */
export function parseProcessInfo(result: Json): ProcessInfo {
  const pi = isObj(result.process_info) ? result.process_info : {};
  const procs = Array.isArray(pi.foreground_processes) ? pi.foreground_processes : [];
  const foreground: ForegroundProcess[] = [];
  for (const p of procs) {
    if (!isObj(p)) continue;
    const pid = num(p.pid);
    if (pid === undefined) continue;
    const argv = Array.isArray(p.argv) ? p.argv.filter((a): a is string => typeof a === "string") : [];
    const name = str(p.name) ?? str(p.argv0) ?? argv[0] ?? "";
    const cwd = str(p.cwd);
    foreground.push({ pid, name, argv, ...(cwd ? { cwd } : {}) });
  }
  const shellPid = num(pi.shell_pid);
  return { ...(shellPid !== undefined ? { shellPid } : {}), foreground };
}

/** a pane herdr sees as a plain shell: no agent detected, status unknown */
export function looksLikePlainShell(p: MuxPane): boolean {
  return p.status === "unknown" && p.agent === undefined && p.agentName === undefined;
}

/**
 * The workspace that is this folder's, among the panes of a server: one with a pane whose cwd is
 * `cwd`. Workspaces whose panes all sit in the folder (the ones mam creates) come first, then
 * the one with the most panes there, then listing order.
 */
export function pickWorkspace(panes: MuxPane[], cwd: string): string | undefined {
  const stats = new Map<string, { order: number; total: number; here: number }>();
  for (const p of panes) {
    if (!p.workspaceId) continue;
    let s = stats.get(p.workspaceId);
    if (!s) stats.set(p.workspaceId, (s = { order: stats.size, total: 0, here: 0 }));
    s.total++;
    if (p.cwd === cwd) s.here++;
  }
  const ranked = [...stats.entries()]
    .filter(([, s]) => s.here > 0)
    .sort(([, a], [, b]) => Number(b.here === b.total) - Number(a.here === a.total) || b.here - a.here || a.order - b.order);
  return ranked[0]?.[0];
}
