// gemini (Gemini CLI, verified with 0.61.0): everything mam knows about this kind. mam assigns the
// conversation id at start (--session-id) and resumes it (--resume); the conversations are JSONL
// files under the Gemini home, one folder per project; mam grants its reporting commands with a
// policy file (--policy) that allows exactly those command prefixes.
import { readFileSync, statSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { sha256Hex } from "../../sys/digest.ts";
import { type Env, homeDir, realOr } from "../../sys/paths.ts";
import { type AgentKind, type Conversation, GRANTED_COMMANDS } from "./kind.ts";
import { firstJsonLines, list, listedStore, mtime, readJson, str } from "./store-util.ts";

// ---- store: <GEMINI_CLI_HOME or ~>/.gemini/tmp/<project folder>/chats/session-*.jsonl -----------
// The project folder is a slug of the workspace's name (~/.gemini/projects.json maps the path to
// it; -1, -2 … on a collision); older versions used the sha256 of the path, and kept *.json files.
// Each file's first line names its sessionId and the projectHash (sha256 of the workspace), which
// is what mam matches: never a folder's name alone. A resumed conversation is appended to its file
// and leaves an empty twin with the same id: both belong to it.

export function geminiDir(env: Env): string {
  return join(env.GEMINI_CLI_HOME || homeDir(env), ".gemini");
}

function geminiConversations(ws: string, env: Env): Conversation[] {
  const hash = sha256Hex(ws);
  const tmp = join(geminiDir(env), "tmp");
  const byId = new Map<string, Conversation>();
  for (const project of list(tmp)) {
    const chats = join(tmp, project, "chats");
    for (const f of list(chats)) {
      const p = join(chats, f);
      let id: string | undefined;
      let projectHash: string | undefined;
      if (f.startsWith("session-") && f.endsWith(".jsonl")) {
        const head = firstJsonLines(p, 1)[0];
        [id, projectHash] = [str(head?.sessionId), str(head?.projectHash)];
      } else if (f.endsWith(".json")) {
        const o = readJson(p);
        [id, projectHash] = [str(o?.sessionId), str(o?.projectHash) ?? (project === hash ? hash : undefined)];
      }
      if (!id || projectHash !== hash) continue;
      const c = byId.get(id) ?? { id, mtimeMs: -1, files: [] };
      c.files.push(p);
      c.mtimeMs = Math.max(c.mtimeMs, mtime(p));
      byId.set(id, c);
    }
  }
  return [...byId.values()];
}

// ---- session cleanup: it deletes a resumed conversation ----------------------------------------
// A resume appends to the conversation's file and leaves an empty twin with the same short id.
// gemini's session cleanup (general.sessionRetention.enabled, on by default) deletes each empty
// file at the start of any other gemini conversation in that folder, and with it every file of the
// same short id: the resumed conversation is gone. Only the user can turn the cleanup off.

/** gemini's settings files, the weakest first: system defaults, the user's, the folder's, the system's */
export function geminiSettingsFiles(ws: string, env: Env): string[] {
  const system = env.GEMINI_CLI_SYSTEM_SETTINGS_PATH || "/etc/gemini-cli/settings.json";
  const defaults = env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH || join(dirname(system), "system-defaults.json");
  return [defaults, join(geminiDir(env), "settings.json"), join(ws, ".gemini", "settings.json"), system];
}

/** pure: do these settings texts (weakest first; JSON with comments, undefined: no file) turn the session cleanup off? */
export function sessionCleanupOff(texts: (string | undefined)[]): boolean {
  let enabled: unknown = true;
  for (const t of texts) {
    if (t === undefined) continue;
    let o: unknown;
    try {
      o = Bun.JSONC.parse(t);
    } catch {
      continue;
    }
    const v = (o as { general?: { sessionRetention?: { enabled?: unknown } } } | null)?.general?.sessionRetention?.enabled;
    if (v !== undefined) enabled = v;
  }
  return enabled === false;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

/** the note after a resume, unless the user's settings turn gemini's session cleanup off */
function geminiResumeNote(ws: string, env: Env): string | null {
  if (sessionCleanupOff(geminiSettingsFiles(ws, env).map(readText))) return null;
  return `gemini deletes a resumed conversation when another gemini conversation starts in ${ws} (its session cleanup): to keep it, set "general": {"sessionRetention": {"enabled": false}} in ${join(geminiDir(env), "settings.json")}`;
}

// ---- start dialogs: what its own records say about folder trust ---------------------------------
// Gemini CLI 0.61.0 (packages/cli/src/config/trustedFolders.ts, core utils/trust.ts) asks "Do you
// trust the files in this folder?" at start when folder trust is on (security.folderTrust.enabled,
// default true, in the system defaults / user / system settings; a folder's own settings do not
// count before it is trusted) and no rule of trustedFolders.json ($GEMINI_CLI_TRUSTED_FOLDERS_PATH,
// else <gemini dir>/trustedFolders.json) matches the folder: the longest rule path whose folder
// (TRUST_PARENT: its parent) holds the folder, real paths compared, decides: TRUST_FOLDER and
// TRUST_PARENT trust it, DO_NOT_TRUST does not (no dialog either). GEMINI_CLI_TRUST_WORKSPACE
// true / false (and GEMINI_RESTRICTED_MODE=true) decide without asking.

export type GeminiTrust = "trusted" | "untrusted" | "ask";

/** pure: does `rule`'s folder hold `p` (both absolute, resolved)? */
function holds(rule: string, p: string): boolean {
  const r = resolve(rule);
  return p === r || p.startsWith(r.endsWith(sep) ? r : r + sep);
}

/**
 * pure: gemini's verdict on folder `cwd` (its real path) from its settings texts (weakest first,
 * as geminiSettingsFiles; undefined: no file) and trustedFolders.json's text; `real` resolves a
 * rule's path as gemini does (realpath when it exists)
 */
export function geminiTrust(cwd: string, env: Env, settings: (string | undefined)[], trusted: string | undefined, real: (p: string) => string = (p) => p): GeminiTrust {
  if (env.GEMINI_RESTRICTED_MODE === "true" || env.GEMINI_CLI_TRUST_WORKSPACE === "false") return "untrusted";
  if (env.GEMINI_CLI_TRUST_WORKSPACE === "true") return "trusted";
  let enabled: unknown = true;
  // the folder's own settings (third) do not count before it is trusted
  settings.forEach((t, i) => {
    if (t === undefined || i === 2) return;
    try {
      const v = (Bun.JSONC.parse(t) as { security?: { folderTrust?: { enabled?: unknown } } } | null)?.security?.folderTrust?.enabled;
      if (v !== undefined) enabled = v;
    } catch {}
  });
  if (enabled === false) return "trusted";
  let rules: Record<string, unknown> = {};
  if (trusted !== undefined) {
    try {
      const o = Bun.JSONC.parse(trusted);
      if (o && typeof o === "object" && !Array.isArray(o)) rules = o as Record<string, unknown>;
    } catch {
      // gemini stops with an error on a broken file: no dialog to wait for
      return "untrusted";
    }
  }
  const here = resolve(cwd);
  let best = -1;
  let level: unknown;
  for (const [path, l] of Object.entries(rules)) {
    const folder = l === "TRUST_PARENT" ? dirname(resolve(path)) : resolve(path);
    if (holds(real(folder), here) && path.length > best) [best, level] = [path.length, l];
  }
  if (level === "DO_NOT_TRUST") return "untrusted";
  return level === "TRUST_FOLDER" || level === "TRUST_PARENT" ? "trusted" : "ask";
}

/** "trust this folder" while gemini's records do not trust `cwd` yet (it will ask at start), else null */
export function geminiStartDialog(cwd: string, env: Env): string | null {
  const trusted = readText(env.GEMINI_CLI_TRUSTED_FOLDERS_PATH || join(geminiDir(env), "trustedFolders.json"));
  const settings = geminiSettingsFiles(cwd, env).map(readText);
  return geminiTrust(realOr(cwd), env, settings, trusted, realOr) === "ask" ? "trust this folder" : null;
}

// ---- resume: when it has loaded the conversation ---------------------------------------------
// `gemini --resume <id>` (0.61.0, useSessionResume and ChatRecordingService.initialize) draws its
// input box at once; once its client is up (seconds later on a loaded machine) it shows
// "Resuming session...", loads the conversation and appends a line to the conversation's file
// ({"$set":{"sessionId":…}}), and only then takes input again. Text typed before that is lost
// (its input is off while it resumes) or goes to the chat the resume then replaces: the model
// never sees the earlier conversation with it. The file growing is the record that it has loaded.

function sizeOf(p: string): number {
  try {
    return statSync(p).size;
  } catch {
    return -1;
  }
}

/** pure: has any of the files grown past its size `before` (path → bytes)? */
export function anyGrew(before: [string, number][], size: (p: string) => number): boolean {
  return before.some(([p, n]) => size(p) > n);
}

/** before the resume of `id` starts: a check that says whether gemini has loaded it (its file grew); no file found: nothing to wait for */
export function geminiResumeLoaded(id: string, ws: string, env: Env): () => boolean {
  const c = geminiConversations(ws, env).find((x) => x.id === id);
  if (!c) return () => true;
  const before = c.files.map((f): [string, number] => [f, sizeOf(f)]);
  return () => anyGrew(before, sizeOf);
}

// ---- grants: a policy file (TOML) that allows exactly mam's reporting commands -------------------

/** a TOML basic string (JSON's escapes are valid TOML) */
const tomlString = (s: string) => JSON.stringify(s);

/** gemini's policy rule that allows exactly mam's commands (each part of `a && b` is checked on its own) */
export function geminiPolicy(mam: string): string {
  return [
    "# written by mam: lets the agent run mam's reporting commands without asking (mam create --no-grant leaves it out)",
    "[[rule]]",
    `toolName = "run_shell_command"`,
    `commandPrefix = [${GRANTED_COMMANDS.map((c) => tomlString(`${mam} ${c}`)).join(", ")}]`,
    `decision = "allow"`,
    "priority = 100",
    "",
  ].join("\n");
}

export const gemini: AgentKind = {
  kind: "gemini",
  exe: "gemini",
  command: null,
  herdrKind: "gemini",
  freshArgs: (id) => (id ? ["--session-id", id] : []),
  assignsId: true,
  resumeArgs: (id) => ["--resume", id],
  resumeNote: geminiResumeNote,
  startDialog: geminiStartDialog,
  resumeLoaded: geminiResumeLoaded,
  exitText: "/quit",
  reads: "prose",
  store: listedStore(geminiConversations),
  screenRules: "gemini.screen.json",
  // no hooks: mam sees its state on its screen (and, on herdr, in herdr's agent status)
  hooks: null,
  // a policy file (--policy) with a command-prefix allow rule: exactly mam's lines run unasked,
  // every other shell command still asks (--allowed-tools would deny every other one)
  grants: (mam, file) => ["--policy", file("gemini-policy.toml", geminiPolicy(mam))],
  // `mam create --mcp` and `mam mcp install` know claude's and codex's config only
  mcp: null,
  // mam does not read its records yet: its usage shows as unknown (docs/cost.md)
  usage: null,
  limits: null,
  continueAtReset: null,
};
