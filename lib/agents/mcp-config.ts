// How agents reach `mam mcp`: the server entry (this binary, absolute path, `mcp --workspace
// <ws>`), the per-run arguments `mam create --mcp` gives claude and codex, and the pure edits of
// their project config files that `mam mcp install|uninstall` writes (merge, never clobber other
// servers, idempotent). No I/O here: install.ts reads and writes the files.
import { usageError } from "../sys/errors.ts";
import type { ServerEntry } from "../sys/self.ts";

export const SERVER_KEY = "mam";
export const MCP_AGENTS = ["claude", "codex"] as const;
export type McpAgent = (typeof MCP_AGENTS)[number];

export function isMcpAgent(kind: string): kind is McpAgent {
  return (MCP_AGENTS as readonly string[]).includes(kind);
}

/** a TOML basic string (JSON's escapes are valid TOML) */
const tomlString = (s: string) => JSON.stringify(s);
const tomlArray = (a: string[]) => `[${a.map(tomlString).join(", ")}]`;

/**
 * the agent's own arguments that give one run of it the mam tools (`mam create --mcp`). claude:
 * the server, and its tools allowed without a prompt each (they are mam's own commands, asked
 * for with --mcp). `--flag=value`, because both claude flags take several values and would
 * swallow a prompt that follows them.
 */
export function agentMcpArgs(kind: string, e: ServerEntry): string[] {
  if (kind === "claude") {
    const cfg = JSON.stringify({ mcpServers: { [SERVER_KEY]: { type: "stdio", command: e.command, args: e.args } } });
    return [`--mcp-config=${cfg}`, `--allowedTools=mcp__${SERVER_KEY}`];
  }
  if (kind === "codex") {
    const k = `mcp_servers.${SERVER_KEY}`;
    return ["-c", `${k}.command=${tomlString(e.command)}`, "-c", `${k}.args=${tomlArray(e.args)}`, "-c", `${k}.tool_timeout_sec=${CODEX_TOOL_TIMEOUT_S}`];
  }
  throw usageError(`--mcp works with ${MCP_AGENTS.join(" and ")} (not ${kind})`, "leave out --mcp; the agent can still run mam commands");
}

/**
 * codex cuts an MCP tool call after tool_timeout_sec (60 s unless set): wait_jobs may wait up to
 * an hour (WAIT_MAX_S in tools.ts), so mam's entry allows a little more
 */
export const CODEX_TOOL_TIMEOUT_S = 3700;

export type Edit = { text: string; changed: boolean };

// ---- claude: .mcp.json ---------------------------------------------------------------------

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

export function claudeInstall(text: string, e: ServerEntry, path: string): Edit {
  const doc = parseJsonObject(text, path);
  const servers = serversOf(doc, path);
  const want = { type: "stdio", command: e.command, args: e.args };
  if (JSON.stringify(servers[SERVER_KEY]) === JSON.stringify(want)) return { text, changed: false };
  const next = { ...doc, mcpServers: { ...servers, [SERVER_KEY]: want } };
  return { text: `${JSON.stringify(next, null, 2)}\n`, changed: true };
}

export function claudeUninstall(text: string, path: string): Edit {
  const doc = parseJsonObject(text, path);
  const servers = serversOf(doc, path);
  if (!(SERVER_KEY in servers)) return { text, changed: false };
  const { [SERVER_KEY]: _gone, ...rest } = servers;
  return { text: `${JSON.stringify({ ...doc, mcpServers: rest }, null, 2)}\n`, changed: true };
}

// ---- codex: config.toml --------------------------------------------------------------------

function parseToml(text: string, path: string): Record<string, unknown> {
  try {
    return Bun.TOML.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw usageError(`${path} is not valid TOML (${(e as Error).message})`, "fix it by hand; mam changed nothing");
  }
}

const ourHeader = /^\s*\[\s*mcp_servers\s*\.\s*(?:mam|"mam")\s*(?:\.[^\]]*)?\]\s*(?:#.*)?$/;
const anyHeader = /^\s*\[/;

/** the text without the [mcp_servers.mam] table and its sub-tables */
function withoutOurTable(text: string): string {
  const out: string[] = [];
  let inOurs = false;
  for (const line of text.split("\n")) {
    if (anyHeader.test(line)) inOurs = ourHeader.test(line);
    if (!inOurs) out.push(line);
  }
  return out.join("\n");
}

function ourTable(e: ServerEntry): string {
  return [
    `[mcp_servers.${SERVER_KEY}]`,
    "# written by mam mcp install codex; mam mcp uninstall codex removes it",
    `command = ${tomlString(e.command)}`,
    `args = ${tomlArray(e.args)}`,
    `tool_timeout_sec = ${CODEX_TOOL_TIMEOUT_S}`,
    "",
  ].join("\n");
}

function mamOf(doc: Record<string, unknown>): unknown {
  const s = doc.mcp_servers;
  return typeof s === "object" && s !== null ? (s as Record<string, unknown>)[SERVER_KEY] : undefined;
}

export function codexInstall(text: string, e: ServerEntry, path: string): Edit {
  const cur = mamOf(parseToml(text, path));
  const want = mamOf(parseToml(ourTable(e), path));
  if (cur !== undefined && JSON.stringify(cur) === JSON.stringify(want)) return { text, changed: false };
  const base = withoutOurTable(text).replace(/\s*$/, "");
  if (mamOf(parseToml(base, path)) !== undefined) {
    throw usageError(`${path} defines mcp_servers.mam in a form mam does not edit (inline or dotted keys)`, "remove that entry by hand, then run this again");
  }
  const next = `${base ? `${base}\n\n` : ""}${ourTable(e)}`;
  parseToml(next, path); // never write what does not parse
  return { text: next, changed: true };
}

export function codexUninstall(text: string, path: string): Edit {
  if (mamOf(parseToml(text, path)) === undefined) return { text, changed: false };
  const next = `${withoutOurTable(text).replace(/\s*$/, "")}\n`;
  if (mamOf(parseToml(next, path)) !== undefined) {
    throw usageError(`${path} defines mcp_servers.mam in a form mam does not edit (inline or dotted keys)`, "remove that entry by hand");
  }
  return { text: next.trim() === "" ? "" : next, changed: true };
}
