// mam mcp [--workspace DIR] | mam mcp install|uninstall claude|codex (issue 17): parse → call →
// render. The server and the SDK load only when `mam mcp` itself runs.
import { usageError } from "../sys/errors.ts";
import { out, outJson } from "../sys/io.ts";
import { resolveWorkspace } from "../sys/paths.ts";
import { bool, defineCommand, jsonArg, str, workspaceArg, type ParsedArgs } from "./command.ts";

const agentArg = { agent: { type: "positional" as const, description: "claude or codex", valueHint: "claude|codex" } };
const userArg = { user: { type: "boolean" as const, description: "codex only: write $CODEX_HOME/config.toml (default ~/.codex) instead of the workspace's .codex/config.toml" } };

async function edit(args: ParsedArgs, what: "install" | "uninstall") {
  const agent = str(args, "agent")!;
  const { isMcpAgent, MCP_AGENTS } = await import("../agents/kinds/index.ts");
  if (!isMcpAgent(agent)) throw usageError(`mam mcp ${what}: unknown agent '${agent.slice(0, 40)}'`, `use one of: ${MCP_AGENTS.join(", ")}`);
  const ws = resolveWorkspace(str(args, "workspace"));
  const { installMcp, uninstallMcp } = await import("../ops/mcp-install.ts");
  const o = { ws, agent, scope: bool(args, "user") ? ("user" as const) : ("project" as const), env: process.env };
  const r = what === "install" ? installMcp(o) : uninstallMcp(o);
  if (bool(args, "json")) return outJson(r);
  const lines: Record<typeof r.action, string> = {
    installed: `installed the mam MCP server for ${agent} in ${r.path}`,
    unchanged: `the mam MCP server for ${agent} is already in ${r.path}`,
    removed: `removed the mam MCP server from ${r.path}`,
    absent: `no mam MCP server in ${r.path}; nothing to remove`,
  };
  out(lines[r.action]);
  if (r.action === "installed" && agent === "claude") out("claude asks once to approve project servers from .mcp.json (or run: claude mcp list)");
  if (r.action === "installed" && agent === "codex" && !bool(args, "user")) out("codex reads .codex/config.toml in trusted projects only (codex asks to trust the folder on first start)");
}

const install = defineCommand({
  meta: {
    name: "install",
    description: "write the agent's project MCP config so it starts `mam mcp` for this workspace (merges; idempotent)",
    examples: ["mam mcp install claude            # .mcp.json", "mam mcp install codex             # .codex/config.toml", "mam mcp install codex --user      # ~/.codex/config.toml"],
  },
  args: { ...agentArg, ...userArg, ...workspaceArg, ...jsonArg },
  run: ({ args }) => edit(args, "install"),
});

const uninstall = defineCommand({
  meta: {
    name: "uninstall",
    description: "remove the mam server from the agent's MCP config (other servers stay)",
    examples: ["mam mcp uninstall claude", "mam mcp uninstall codex --user"],
  },
  args: { ...agentArg, ...userArg, ...workspaceArg, ...jsonArg },
  run: ({ args }) => edit(args, "uninstall"),
});

export default defineCommand({
  meta: {
    name: "mcp",
    description: "serve mam's operations as MCP tools (session_status, session_create, job_submit, job_wait, …) to an agent on stdio",
    examples: [
      "mam mcp --workspace ~/proj          # what an agent's MCP config runs",
      "mam mcp install claude              # let claude in this workspace use the tools",
      "mam mcp install codex",
      "mam create --agent claude --role lead --mcp",
    ],
  },
  args: { ...workspaceArg },
  subCommands: { install, uninstall },
  async run({ args }) {
    const ws = resolveWorkspace(str(args, "workspace"));
    const [{ serveStdio }, { version }] = await Promise.all([import("../mcp/server.ts"), import("./version.ts")]);
    return serveStdio(ws, process.env, version());
  },
});
