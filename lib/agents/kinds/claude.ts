// claude (Claude Code): everything mam knows about this kind. It takes an assigned conversation id
// at start (--session-id) and resumes it (--resume); its conversations are JSONL files per project
// folder; mam installs hooks for it, grants it mam's reporting commands as start arguments, and
// gives it the MCP server per run (--mcp-config) or in the project's .mcp.json.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { usageError } from "../../sys/errors.ts";
import { type Env, homeDir, realOr } from "../../sys/paths.ts";
import type { ServerEntry } from "../../sys/self.ts";
import { type AgentKind, type Conversation, type ConversationStore, type Edit, GRANTED_COMMANDS, MCP_PREAPPROVED, SERVER_KEY } from "./kind.ts";
import { contentText, countOf, jsonObject, stamp, type Tokens, type UsageFact, type UsageSource } from "../usage.ts";
import { type LimitFact, type LimitsKind, reasonLine } from "../limits.ts";
import { firstJsonLines, list, mtime, newestOf, str } from "./store-util.ts";

// ---- store: $CLAUDE_CONFIG_DIR or ~/.claude, projects/<key>/<id>.jsonl -------------------------

/** Claude Code's project folder name: every character outside [A-Za-z0-9] becomes "-" */
export function claudeProjectKey(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9]/g, "-");
}

const configDir = (env: Env) => env.CLAUDE_CONFIG_DIR || join(homeDir(env), ".claude");

export function claudeProjectDir(ws: string, env: Env = process.env): string {
  return join(configDir(env), "projects", claudeProjectKey(ws));
}

function claudeConversation(dir: string, file: string): Conversation | undefined {
  const p = join(dir, file);
  const stem = file.replace(/\.jsonl$/, "");
  const id = firstJsonLines(p).map((o) => str(o.sessionId)).find(Boolean) ?? stem;
  const files = [p];
  if (existsSync(join(dir, stem))) files.push(join(dir, stem)); // per-session sidecar folder
  return { id, mtimeMs: mtime(p), files };
}

const store: ConversationStore = {
  find(id, ws, env = process.env) {
    const dir = claudeProjectDir(ws, env);
    if (existsSync(join(dir, `${id}.jsonl`))) return claudeConversation(dir, `${id}.jsonl`);
    return list(dir)
      .filter((f) => f.endsWith(".jsonl"))
      .map((f) => claudeConversation(dir, f))
      .find((c) => c?.id === id);
  },
  newest(ws, env = process.env) {
    const dir = claudeProjectDir(ws, env);
    return newestOf(
      list(dir)
        .filter((f) => f.endsWith(".jsonl"))
        .map((f) => claudeConversation(dir, f)!)
        .filter(Boolean),
    );
  },
};

// ---- usage: the `usage` of each assistant message in the transcript ---------------------------

/**
 * the conversation a running claude writes now: it keeps `sessions/<pid>.json` ({pid, sessionId,
 * cwd}) in its config folder, and a /clear moves it to a new id (a new transcript)
 */
function currentConversation(env: Env, pid: number, cwd: string): string | undefined {
  try {
    const o = JSON.parse(readFileSync(join(configDir(env), "sessions", `${pid}.json`), "utf8")) as Record<string, unknown>;
    const id = str(o.sessionId);
    return o.pid === pid && o.cwd === cwd && id && /^[A-Za-z0-9-]{1,100}$/.test(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

function claudeTokens(u: Record<string, unknown>): Tokens {
  return { input: countOf(u.input_tokens), output: countOf(u.output_tokens), cache_write: countOf(u.cache_creation_input_tokens), cache_read: countOf(u.cache_read_input_tokens) };
}

/**
 * a message as it was typed: claude 2.1.332 records a pasted text (mam types by a bracketed paste)
 * between `<pasted_content id="…">` and `</pasted_content id="…">` lines, after two newlines
 */
export function unpasted(text: string): string {
  return text.includes("<pasted_content ") ? text.replace(/<\/?pasted_content id="[^"\n]*">\n?/g, "").trim() : text;
}

/**
 * One line of a transcript: an assistant message with its usage (a message of several content
 * blocks is written once per block, each line with the message's id and usage), or a user
 * message that begins a turn (text, not tool results; not the meta lines claude adds, not a
 * subagent's prompt). Lines that can be neither are never parsed.
 */
function claudeLine(line: string): UsageFact | undefined {
  if (line.includes('"type":"assistant"')) {
    const o = jsonObject(line);
    const m = o?.type === "assistant" && o.message && typeof o.message === "object" ? (o.message as Record<string, unknown>) : undefined;
    if (!m || !m.usage || typeof m.usage !== "object") return undefined;
    const model = str(m.model) ?? "unknown";
    const tokens = claudeTokens(m.usage as Record<string, unknown>);
    // claude's own placeholder answers (model <synthetic>) cost nothing
    if (model === "<synthetic>" || tokens.input + tokens.output + tokens.cache_write + tokens.cache_read === 0) return undefined;
    return { kind: "answer", at: stamp(o!.timestamp), model, id: str(m.id), tokens };
  }
  if (line.includes('"type":"user"') && !line.includes('"tool_use_id"')) {
    const o = jsonObject(line);
    if (o?.type !== "user" || o.isMeta === true || o.isSidechain === true || !o.message || typeof o.message !== "object") return undefined;
    const text = unpasted(contentText((o.message as Record<string, unknown>).content));
    return text === "" ? undefined : { kind: "turn", at: stamp(o.timestamp), text };
  }
  return undefined;
}

const usage: UsageSource = {
  files({ cwd, id, pid, env }) {
    const dir = claudeProjectDir(cwd, env);
    const ids = [id, pid ? currentConversation(env, pid, cwd) : undefined].filter((x): x is string => x !== undefined);
    return [...new Set(ids)].map((i) => join(dir, `${i}.jsonl`));
  },
  markers: ['"type":"assistant"', '"type":"user"'],
  parse: claudeLine,
};

// ---- limits: the synthetic answer of a refused turn (shared/reference/real-limits.md) ---------
// A turn refused at a limit is an assistant line claude writes itself (model <synthetic>), with
// isApiErrorMessage:true, error "rate_limit" and apiErrorStatus 429 (2.1.197 and 2.1.332); its text
// is what the screen shows ("You've hit your session limit · resets 2:53am (UTC)", or "API Error:
// Request rejected (429) · …" with an API key). 2.1.332 with a subscription adds the exact reset,
// apiErrorParams.rate_limit_info.resetsAt (epoch s). A 529 (error "server_error") is no limit. Any
// other assistant line is a model's answer: the limit is over.

function claudeLimitLine(line: string): LimitFact | undefined {
  if (!line.includes('"type":"assistant"')) return undefined;
  const o = jsonObject(line);
  if (o?.type !== "assistant") return undefined;
  const at = stamp(o.timestamp);
  const m = o.message && typeof o.message === "object" ? (o.message as Record<string, unknown>) : undefined;
  if (o.isApiErrorMessage === true) {
    if (o.error !== "rate_limit" && o.apiErrorStatus !== 429) return undefined;
    const reason = reasonLine(contentText(m?.content)) || "API Error: Request rejected (429)";
    const params = o.apiErrorParams && typeof o.apiErrorParams === "object" ? (o.apiErrorParams as Record<string, unknown>) : undefined;
    const info = params?.rate_limit_info && typeof params.rate_limit_info === "object" ? (params.rate_limit_info as Record<string, unknown>) : undefined;
    const exact = typeof info?.resetsAt === "number" && Number.isFinite(info.resetsAt) && info.resetsAt > 0 ? info.resetsAt * 1000 : null;
    const words = /\bresets (.+)$/i.exec(reason)?.[1];
    return { kind: "hit", at, resets_at: exact, ...(exact === null && words ? { resets_text: words } : {}), reason };
  }
  // an answer of the model (a tool call is one too); claude's own placeholders say nothing
  if (!m || m.model === "<synthetic>") return undefined;
  return { kind: "ok", at };
}

const limits: LimitsKind = { markers: ['"type":"assistant"'], parse: claudeLimitLine };

// ---- grants ----------------------------------------------------------------------------------

/** claude's allow rules for mam's commands, as the header writes them (`mam` = agentMam) */
export function claudeRules(mam: string): string[] {
  return GRANTED_COMMANDS.map((c) => `Bash(${mam} ${c}:*)`);
}

// ---- MCP: per run, and .mcp.json ---------------------------------------------------------------

function parseJsonObject(text: string, path: string): Record<string, unknown> {
  if (text.trim() === "") return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw usageError(`${path} is not valid JSON (${(e as Error).message})`, "fix it by hand; mam changed nothing");
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw usageError(`${path} is not a JSON object`, "fix it by hand; mam changed nothing");
  return v as Record<string, unknown>;
}

function serversOf(doc: Record<string, unknown>, path: string): Record<string, unknown> {
  const s = doc.mcpServers ?? {};
  if (typeof s !== "object" || s === null || Array.isArray(s)) throw usageError(`${path}: mcpServers is not an object`, "fix it by hand; mam changed nothing");
  return s as Record<string, unknown>;
}

function mcpInstall(text: string, e: ServerEntry, path: string): Edit {
  const doc = parseJsonObject(text, path);
  const servers = serversOf(doc, path);
  const want = { type: "stdio", command: e.command, args: e.args };
  if (JSON.stringify(servers[SERVER_KEY]) === JSON.stringify(want)) return { text, changed: false };
  const next = { ...doc, mcpServers: { ...servers, [SERVER_KEY]: want } };
  return { text: `${JSON.stringify(next, null, 2)}\n`, changed: true };
}

function mcpUninstall(text: string, path: string): Edit {
  const doc = parseJsonObject(text, path);
  const servers = serversOf(doc, path);
  if (!(SERVER_KEY in servers)) return { text, changed: false };
  const { [SERVER_KEY]: _gone, ...rest } = servers;
  // no `"mcpServers": {}` left behind: the key goes with its last server, the file with its last key
  const { mcpServers: _all, ...others } = doc;
  const left = Object.keys(rest).length > 0 ? { ...doc, mcpServers: rest } : others;
  return { text: `${JSON.stringify(left, null, 2)}\n`, changed: true, ...(Object.keys(left).length === 0 ? { empty: true } : {}) };
}

// ---- start dialogs: what its config file says --------------------------------------------------
// Claude Code 2.1.197 (a native binary; tested by runs, shared/reference/real-agents.md) keeps its
// per-user state in <CLAUDE_CONFIG_DIR>/.claude.json, else ~/.claude.json. At start, in this
// order: `hasCompletedOnboarding` not true → its first-run setup (the theme picker); no
// `projects[<folder or any folder above it>].hasTrustDialogAccepted: true` → "Quick safety check"
// (a folder's own `false` does not matter when a folder above it is trusted, and claude writes
// that `false` itself); ANTHROPIC_API_KEY set and its last 20 characters in neither
// `customApiKeyResponses.approved` nor `.rejected` → "Detected a custom API key … Do you want to
// use this API key?". mam says a dialog will come only where these records show it surely will:
// no config file (a first run: claude may also stop, "Unable to connect"), a file it cannot read,
// or a bypass-permissions setting (not tested: claude refuses it as root) say nothing, and the
// screen decides.

export type ClaudeRecords = {
  /** the text of .claude.json (undefined: none) */
  config: string | undefined;
  /** the texts of its settings files (user, the folder's, managed; undefined: none) */
  settings: (string | undefined)[];
};

/** claude's per-user config file */
export function claudeConfigFile(env: Env): string {
  return env.CLAUDE_CONFIG_DIR ? join(env.CLAUDE_CONFIG_DIR, ".claude.json") : join(homeDir(env), ".claude.json");
}

/** pure: is `p` the folder `dir` or inside it (both absolute, resolved)? */
function within(dir: string, p: string): boolean {
  return p === dir || p.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/**
 * pure: the start dialog claude's records say it shows in folder `cwd` (its real path): "first-run
 * setup" (onboarding, or the API key's approval), "trust this folder", or null (none, or the
 * records do not say surely); `real` resolves a project's path as the file system does
 */
export function claudeStartDialogOf(cwd: string, env: Env, r: ClaudeRecords, real: (p: string) => string = (p) => p): string | null {
  if (r.config === undefined) return null;
  if (r.settings.some((t) => t?.includes("bypassPermissions"))) return null;
  let cfg: Record<string, unknown>;
  try {
    const o = JSON.parse(r.config);
    if (!o || typeof o !== "object" || Array.isArray(o)) return null;
    cfg = o;
  } catch {
    return null;
  }
  if (cfg.hasCompletedOnboarding !== true) return "first-run setup";
  const projects = cfg.projects && typeof cfg.projects === "object" ? (cfg.projects as Record<string, { hasTrustDialogAccepted?: unknown } | null>) : {};
  const here = resolve(cwd);
  const trusted = Object.entries(projects).some(([path, p]) => p?.hasTrustDialogAccepted === true && (within(resolve(path), here) || within(real(resolve(path)), here)));
  if (!trusted) return "trust this folder";
  const key = env.ANTHROPIC_API_KEY;
  if (key) {
    const answers = (cfg.customApiKeyResponses ?? {}) as { approved?: unknown; rejected?: unknown };
    const listed = (l: unknown) => Array.isArray(l) && l.includes(key.slice(-20));
    if (!listed(answers.approved) && !listed(answers.rejected)) return "first-run setup";
  }
  return null;
}

function readOr(p: string): string | undefined {
  try {
    return readFileSync(p, "utf8");
  } catch {
    return undefined;
  }
}

/** the start dialog claude's records say it will show in `cwd`, else null */
export function claudeStartDialog(cwd: string, env: Env): string | null {
  const settings = [join(configDir(env), "settings.json"), join(cwd, ".claude", "settings.json"), join(cwd, ".claude", "settings.local.json"), "/etc/claude-code/managed-settings.json"];
  return claudeStartDialogOf(realOr(cwd), env, { config: readOr(claudeConfigFile(env)), settings: settings.map(readOr) }, realOr);
}

export const claude: AgentKind = {
  kind: "claude",
  exe: "claude",
  command: null,
  herdrKind: "claude",
  freshArgs: (id) => (id ? ["--session-id", id] : []),
  assignsId: true,
  resumeArgs: (id) => ["--resume", id],
  resumeNote: null,
  startDialog: claudeStartDialog,
  resumeLoaded: null,
  exitText: "/exit",
  reads: "prose",
  store,
  screenRules: "claude.screen.json",
  hooks: {
    events: ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Notification", "Stop", "SessionEnd"],
    // personal and not committed: the hook names this machine's mam binary
    projectFile: ".claude/settings.local.json",
    globalFile: (env, home) => `${env.CLAUDE_CONFIG_DIR || `${home}/.claude`}/settings.json`,
  },
  // one `--allowedTools=RULE` each (the `=` form: `--allowedTools` takes several values and would
  // swallow an argument that follows it, such as the user's prompt)
  grants: (mam) => claudeRules(mam).map((r) => `--allowedTools=${r}`),
  mcp: {
    // the server, and the tools allowed without a prompt each: the ones that cannot run a command
    // or answer a dialog (MCP_PREAPPROVED, `mcp__mam__TOOL`), or with `all` every tool of the
    // server (`mcp__mam`). `--flag=value`, because both flags take several values and would
    // swallow a prompt that follows them.
    args(e, all) {
      const cfg = JSON.stringify({ mcpServers: { [SERVER_KEY]: { type: "stdio", command: e.command, args: e.args } } });
      const allowed = all ? [`mcp__${SERVER_KEY}`] : MCP_PREAPPROVED.map((t) => `mcp__${SERVER_KEY}__${t}`);
      return [`--mcp-config=${cfg}`, ...allowed.map((a) => `--allowedTools=${a}`)];
    },
    install: mcpInstall,
    uninstall: mcpUninstall,
  },
  usage,
  limits,
  // shared/reference/real-limits.md: "continue" resumes the interrupted task; 2.1.332 goes on by itself at the reset + 30–90 s
  continueAtReset: { text: "continue", autoContinueS: 90 },
};
