// qwen (Qwen Code, verified with 0.24.4): everything mam knows about this kind. herdr does not
// know it: mam types its command into a pane (on tmux it is the session's command). mam assigns
// the conversation id at start (--session-id, a UUID) and resumes it (--resume); conversations are
// JSONL files per project folder; mam grants its reporting commands with --allowed-tools prefix
// rules of its shell tool (each part of `a && b` is checked on its own).
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { type Env, homeDir } from "../../sys/paths.ts";
import { type AgentKind, type Conversation, GRANTED_COMMANDS } from "./kind.ts";
import { firstJsonLines, list, listedStore, mtime, str } from "./store-util.ts";

// ---- store: $QWEN_HOME or ~/.qwen, projects/<cwd, every non-alphanumeric as ->/chats/<id>.jsonl --

export function qwenChatsDir(ws: string, env: Env): string {
  return join(env.QWEN_HOME || join(homeDir(env), ".qwen"), "projects", ws.replace(/[^A-Za-z0-9]/g, "-"), "chats");
}

function qwenConversations(ws: string, env: Env): Conversation[] {
  const dir = qwenChatsDir(ws, env);
  const out: Conversation[] = [];
  for (const f of list(dir)) {
    if (!f.endsWith(".jsonl")) continue;
    const p = join(dir, f);
    const stem = f.slice(0, -".jsonl".length);
    const head = firstJsonLines(p, 1)[0];
    // the file is named by its session id; its records carry the cwd (a folder whose key collides is not ours)
    if (str(head?.cwd) !== undefined && head?.cwd !== ws) continue;
    const id = str(head?.sessionId) ?? stem;
    const files = [p, ...list(dir).filter((x) => x === `${stem}.runtime.json`).map((x) => join(dir, x))];
    out.push({ id, mtimeMs: mtime(p), files });
  }
  return out;
}

// ---- start dialogs: its provider ----------------------------------------------------------------
// Qwen Code 0.24.4 (useAuthCommand, getAuthTypeFromEnv) opens "Connect a Provider" at start when it
// has no auth type: no `security.auth.selectedType` in its settings (system defaults, the user's
// <QWEN_HOME or ~/.qwen>/settings.json, the folder's .qwen/settings.json, the system's) and none
// from its environment (QWEN_OAUTH; OPENAI_API_KEY with OPENAI_MODEL or QWEN_MODEL and
// OPENAI_BASE_URL; GEMINI_API_KEY with GEMINI_MODEL; GOOGLE_API_KEY or GOOGLE_CLOUD_PROJECT with
// GOOGLE_MODEL; ANTHROPIC_API_KEY with ANTHROPIC_MODEL and ANTHROPIC_BASE_URL). Its environment
// also takes a settings file's `env` and .env files (~/.qwen/.env, ~/.env, the folder's and those
// above it): where one of those exists, or a settings file cannot be read, mam does not say the
// dialog will come (the screen decides). A selectedType that then fails (no key) also opens the
// dialog, with "Failed to login": mam leaves that to the screen too.

/** pure: the auth type qwen takes from its environment, as getAuthTypeFromEnv does (undefined: none) */
export function qwenAuthFromEnv(env: Env): string | undefined {
  if (env.QWEN_OAUTH) return "qwen-oauth";
  if (env.OPENAI_API_KEY && (env.OPENAI_MODEL || env.QWEN_MODEL) && env.OPENAI_BASE_URL) return "openai";
  if (env.GEMINI_API_KEY && env.GEMINI_MODEL) return "gemini";
  if ((env.GOOGLE_API_KEY || env.GOOGLE_CLOUD_PROJECT) && env.GOOGLE_MODEL) return "vertex-ai";
  if (env.ANTHROPIC_API_KEY && env.ANTHROPIC_MODEL && env.ANTHROPIC_BASE_URL) return "anthropic";
  return undefined;
}

/**
 * pure: does qwen surely open its provider dialog? From its settings texts (undefined: no file),
 * the agent's environment, and whether any .env file it may read exists
 */
export function qwenNeedsProvider(settings: (string | undefined)[], env: Env, envFiles: boolean): boolean {
  for (const t of settings) {
    if (t === undefined) continue;
    let o: { security?: { auth?: { selectedType?: unknown } }; selectedAuthType?: unknown; env?: unknown } | null;
    try {
      o = Bun.JSONC.parse(t) as typeof o;
    } catch {
      return false;
    }
    if (!o || typeof o !== "object") continue;
    if (o.security?.auth?.selectedType || o.selectedAuthType) return false;
    if (o.env && typeof o.env === "object" && Object.keys(o.env).length > 0) return false;
  }
  return !envFiles && qwenAuthFromEnv(env) === undefined;
}

/** qwen's folder (QWEN_HOME, else ~/.qwen) */
function qwenDir(env: Env): string {
  const h = env.QWEN_HOME;
  if (!h) return join(homeDir(env), ".qwen");
  if (h === "~" || h.startsWith("~/")) return join(homeDir(env), h.slice(1));
  return isAbsolute(h) ? h : resolve(h);
}

/** the .env files qwen may read for folder `cwd`: its own folder's, the home's, and those of `cwd` and every folder above it */
function qwenEnvFiles(cwd: string, env: Env): string[] {
  const out = [join(qwenDir(env), ".env"), join(homeDir(env), ".qwen", ".env"), join(homeDir(env), ".env")];
  for (let d = resolve(cwd); ; d = dirname(d)) {
    out.push(join(d, ".qwen", ".env"), join(d, ".env"));
    if (dirname(d) === d) break;
  }
  return out;
}

function readOr(p: string): string | undefined {
  try {
    return readFileSync(p, "utf8");
  } catch {
    return undefined;
  }
}

/** "connect a provider" while qwen's records say it has none, else null */
export function qwenStartDialog(cwd: string, env: Env): string | null {
  let real = cwd;
  try {
    real = realpathSync(cwd);
  } catch {}
  const system = env.QWEN_CODE_SYSTEM_SETTINGS_PATH || "/etc/qwen-code/settings.json";
  const defaults = env.QWEN_CODE_SYSTEM_DEFAULTS_PATH || join(dirname(system), "system-defaults.json");
  const settings = [defaults, join(qwenDir(env), "settings.json"), join(real, ".qwen", "settings.json"), system].map(readOr);
  const envFiles = [...new Set([...qwenEnvFiles(cwd, env), ...qwenEnvFiles(real, env)])].some((f) => existsSync(f));
  return qwenNeedsProvider(settings, env, envFiles) ? "connect a provider" : null;
}

export const qwen: AgentKind = {
  kind: "qwen",
  exe: "qwen",
  command: null,
  // herdr 0.8 has no qwen kind
  herdrKind: null,
  freshArgs: (id) => (id ? ["--session-id", id] : []),
  assignsId: true,
  resumeArgs: (id) => ["--resume", id],
  resumeNote: null,
  startDialog: qwenStartDialog,
  resumeLoaded: null,
  exitText: "/quit",
  reads: "prose",
  store: listedStore(qwenConversations),
  screenRules: "qwen.screen.json",
  // no hooks: mam sees its state on its screen
  hooks: null,
  // one `--allowed-tools=RULE` each (the `=` form: the option takes several values)
  grants: (mam) => GRANTED_COMMANDS.map((c) => `--allowed-tools=run_shell_command(${mam} ${c})`),
  // `mam create --mcp` and `mam mcp install` know claude's and codex's config only
  mcp: null,
  // mam does not read its records yet: its usage shows as unknown (docs/cost.md)
  usage: null,
  limits: null,
  continueAtReset: null,
};
