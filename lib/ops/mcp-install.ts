// `mam mcp install|uninstall claude|codex`: write the agent's MCP config so that it starts this
// mam as the workspace's MCP server. claude: <ws>/.mcp.json (project scope). codex:
// <ws>/.codex/config.toml (project scope; codex reads it in trusted projects), or with user scope
// $CODEX_HOME/config.toml (default ~/.codex). Edits merge (other servers and settings stay),
// are idempotent, and go through the one atomic writer; a file mam cannot parse is left alone.
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { atomicWriteFile } from "../sys/atomic.ts";
import { usageError } from "../sys/errors.ts";
import { field } from "../sys/fields.ts";
import { homeDir, type Env } from "../sys/paths.ts";
import { agentKind, type Edit, type McpAgent } from "../agents/kinds/index.ts";
import { serverEntry, type ServerEntry } from "../sys/self.ts";

export type Scope = "project" | "user";

export interface InstallOptions {
  ws: string;
  agent: McpAgent;
  scope: Scope;
  env: Env;
  /** the server command (default: this binary) */
  entry?: ServerEntry;
}

export interface Installed {
  agent: McpAgent;
  path: string;
  action: "installed" | "unchanged" | "removed" | "absent";
  entry: ServerEntry | null;
}

export function configPath(agent: McpAgent, scope: Scope, ws: string, env: Env): string {
  if (agent === "claude") return join(ws, ".mcp.json");
  if (scope === "user") return join(env.CODEX_HOME || join(homeDir(env), ".codex"), "config.toml");
  return join(ws, ".codex", "config.toml");
}

function readText(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, "utf8") : undefined;
}

function write(path: string, e: Edit): void {
  mkdirSync(dirname(path), { recursive: true });
  atomicWriteFile(path, e.text, { mode: 0o644 });
}

export function installMcp(o: InstallOptions): Installed {
  if (o.agent === "claude" && o.scope === "user") throw usageError(`${field("user")} goes with codex; claude reads a project's .mcp.json`, `leave out ${field("user")}`);
  const path = configPath(o.agent, o.scope, o.ws, o.env);
  const entry = o.entry ?? serverEntry(o.ws);
  const before = readText(path);
  const e = agentKind(o.agent).mcp!.install(before ?? "", entry, path);
  if (e.changed) write(path, e);
  return { agent: o.agent, path, action: e.changed ? "installed" : "unchanged", entry };
}

export function uninstallMcp(o: InstallOptions): Installed {
  const path = configPath(o.agent, o.scope, o.ws, o.env);
  const before = readText(path);
  if (before === undefined) return { agent: o.agent, path, action: "absent", entry: null };
  const e = agentKind(o.agent).mcp!.uninstall(before, path);
  if (e.empty) rmSync(path, { force: true });
  else if (e.changed) write(path, e);
  return { agent: o.agent, path, action: e.changed ? "removed" : "absent", entry: null };
}
