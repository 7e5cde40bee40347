// The agent kinds table (docs/sessions.md, "Agent kinds"): one module per kind in this folder,
// each stating every aspect of its kind (kind.ts), assembled here, and the small lookups callers
// use. A new kind is its module, its screen rules next to it (<kind>.screen.json, optional), and
// one line in KINDS below; tests/unit/agent-kinds.test.ts checks that it states every aspect.
import { agentMam } from "../../sys/agent-mam.ts";
import { usageError } from "../../sys/errors.ts";
import type { Env } from "../../sys/paths.ts";
import type { ServerEntry } from "../../sys/self.ts";
import { agy } from "./agy.ts";
import { aider } from "./aider.ts";
import { claude } from "./claude.ts";
import { cline } from "./cline.ts";
import { codex } from "./codex.ts";
import { demo } from "./demo.ts";
import { gemini } from "./gemini.ts";
import { hermes } from "./hermes.ts";
import type { AgentKind, HookKind } from "./kind.ts";
import { opencode } from "./opencode.ts";
import { shell } from "./shell.ts";

export type { AgentKind, Edit } from "./kind.ts";

export const KINDS: Record<string, AgentKind> = { claude, codex, gemini, agy, hermes, cline, opencode, aider, demo, shell };

export function kindNames(): string[] {
  return Object.keys(KINDS);
}

/** the entry of a kind mam knows, else undefined (also for "constructor" and the like) */
function known(name: string): AgentKind | undefined {
  return Object.hasOwn(KINDS, name) ? KINDS[name] : undefined;
}

export function agentKind(name: string): AgentKind {
  const k = known(name);
  if (!k) throw usageError(`unknown agent kind '${name.slice(0, 40)}'`, `use one of: ${kindNames().join(", ")}`);
  return k;
}

/** the command line that starts a kind: its prefix, then `args` */
export function commandLine(k: AgentKind, args: string[]): string[] {
  return [...(k.command ? k.command() : [k.exe]), ...args];
}

/** the registry field holding a row's own conversation id (docs/registry.md: <agent>_session_id_own) */
export function idField(kind: string): string {
  return `${kind}_session_id_own`;
}

/** the row's own conversation id; also reads the original's <agent>_conversation_id_own */
export function ownId(row: Record<string, unknown>, kind: string): string | undefined {
  for (const k of [idField(kind), `${kind}_conversation_id_own`]) {
    const v = row[k];
    if (typeof v === "string" && v !== "") return v;
  }
  return undefined;
}

/**
 * Does herdr manage this kind's agent (started with `agent start`, prompted with `agent prompt`,
 * seen in PaneInfo.agent)? Kinds mam types into a shell (aider, demo, shell) are not; a kind mam
 * does not know came from herdr's own detection (a monitor-registered pane), so it is.
 */
export function isHerdrManaged(agent: string | undefined): boolean {
  if (agent === undefined) return true;
  const k = known(agent);
  return k === undefined || k.herdrKind !== null;
}

/**
 * Does this kind run what is typed into it as commands (a shell)? Then mam types no text into
 * it, only a job's `mam shell-job` line. A kind mam does not know reads prose.
 */
export function readsCommands(agent: string | undefined): boolean {
  return agent !== undefined && known(agent)?.reads === "commands";
}

/** the kinds mam has hooks for (`mam hooks …`, `mam agent-report --hook`): kind → its hooks */
export const HOOK_KINDS: Record<string, HookKind> = Object.fromEntries(kindNames().flatMap((k) => (KINDS[k]!.hooks ? [[k, KINDS[k]!.hooks]] : [])));

/**
 * What mam pre-approves in the agents it starts: its own reporting commands, nothing more. The
 * job header tells the agent to run `<mam> job event …` (and the onboarding `<mam> status`); an
 * agent that asks before each of them stalls every job at a permission dialog. The start
 * arguments that grant them, for kinds that take such arguments (claude); none for the others
 * (docs/sessions.md says what each needs). `mam create --no-grant` leaves them out, and the row
 * remembers it for resume.
 */
export function grantArgs(kind: string, env: Env = process.env, mam: string = agentMam(env)): string[] {
  const grants = known(kind)?.grants;
  return grants ? grants(mam) : [];
}

/** a kind whose entry has MCP support (`mam mcp install`, `mam create --mcp`) */
export type McpAgent = string;

/** the kinds that can take mam's MCP server */
export const MCP_AGENTS: readonly McpAgent[] = kindNames().filter((k) => KINDS[k]!.mcp !== null);

export function isMcpAgent(kind: string): boolean {
  return MCP_AGENTS.includes(kind);
}

/** the agent's own arguments that give one run of it the mam tools (`mam create --mcp`) */
export function agentMcpArgs(kind: string, e: ServerEntry): string[] {
  const mcp = known(kind)?.mcp;
  if (!mcp) throw usageError(`--mcp works with ${MCP_AGENTS.join(" and ")} (not ${kind})`, "leave out --mcp; the agent can still run mam commands");
  return mcp.args(e);
}
