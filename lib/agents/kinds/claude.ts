// claude (Claude Code): everything mam knows about this kind. It takes an assigned conversation id
// at start (--session-id) and resumes it (--resume); its conversations are JSONL files per project
// folder; mam installs hooks for it, grants it mam's reporting commands as start arguments, and
// gives it the MCP server per run (--mcp-config) or in the project's .mcp.json.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { usageError } from "../../sys/errors.ts";
import { type Env, homeDir } from "../../sys/paths.ts";
import type { ServerEntry } from "../../sys/self.ts";
import { type AgentKind, type Conversation, type ConversationStore, type Edit, GRANTED_COMMANDS, SERVER_KEY } from "./kind.ts";
import { firstJsonLines, list, mtime, newestOf, str } from "./store-util.ts";

// ---- store: $CLAUDE_CONFIG_DIR or ~/.claude, projects/<key>/<id>.jsonl -------------------------

/** Claude Code's project folder name: every character outside [A-Za-z0-9] becomes "-" */
export function claudeProjectKey(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9]/g, "-");
}

export function claudeProjectDir(ws: string, env: Env = process.env): string {
  const base = env.CLAUDE_CONFIG_DIR || join(homeDir(env), ".claude");
  return join(base, "projects", claudeProjectKey(ws));
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
  return { text: `${JSON.stringify({ ...doc, mcpServers: rest }, null, 2)}\n`, changed: true };
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
    // the server, and its tools allowed without a prompt each (they are mam's own commands, asked
    // for with --mcp). `--flag=value`, because both flags take several values and would swallow a
    // prompt that follows them.
    args(e) {
      const cfg = JSON.stringify({ mcpServers: { [SERVER_KEY]: { type: "stdio", command: e.command, args: e.args } } });
      return [`--mcp-config=${cfg}`, `--allowedTools=mcp__${SERVER_KEY}`];
    },
    install: mcpInstall,
    uninstall: mcpUninstall,
  },
};
