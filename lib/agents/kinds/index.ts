// The agent kinds table (docs/sessions.md, "Agent kinds"): one module per kind in this folder,
// each stating every aspect of its kind (kind.ts), assembled here, and the small lookups callers
// use. A new kind is its module, its screen rules next to it (<kind>.screen.json, optional), and
// one line in KINDS below; tests/unit/agent-kinds.test.ts checks that it states every aspect.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { agentMam } from "../../sys/agent-mam.ts";
import { atomicWriteFile } from "../../sys/atomic.ts";
import { sha256Hex } from "../../sys/digest.ts";
import { usageError } from "../../sys/errors.ts";
import { type Env, stateDir } from "../../sys/paths.ts";
import type { ServerEntry } from "../../sys/self.ts";
import { agy } from "./agy.ts";
import { aider } from "./aider.ts";
import { claude } from "./claude.ts";
import { cline } from "./cline.ts";
import { codex } from "./codex.ts";
import { demo } from "./demo.ts";
import { gemini } from "./gemini.ts";
import { hermes } from "./hermes.ts";
import type { AgentKind, GrantFile, HookKind } from "./kind.ts";
import { amp, copilot, crush, kilo } from "./more.ts";
import { opencode } from "./opencode.ts";
import { qwen } from "./qwen.ts";
import { shell } from "./shell.ts";

export type { AgentKind, Edit } from "./kind.ts";

export const KINDS: Record<string, AgentKind> = { claude, codex, gemini, opencode, qwen, cline, agy, hermes, aider, copilot, crush, kilo, amp, demo, shell };

/**
 * The kinds mam has run for real (npm run test:agents, tests/real-agents/package.json): the
 * version and what was checked. Every other kind is written from its docs and marked unverified:
 * `mam create` says so once (docs/sessions.md, "Agent kinds"). demo and shell are mam's own.
 * `package`: the npm package of the CLI (what `mam doctor` tells the user to install).
 * `version` is the oldest supported, `newest` the newest (tests/real-agents/newest/package.json,
 * npm run test:agents:newest) when it differs: the suite runs on both.
 */
export const VERIFIED: Record<string, { version: string; newest?: string; checked: string; package?: string }> = {
  claude: { version: "2.1.197", newest: "2.1.332", checked: "start dialogs, onboarding, job with no key, stop → resume, permission prompt, hooks, MCP", package: "@anthropic-ai/claude-code" },
  codex: { version: "0.171.0", checked: "start dialogs, onboarding, job with no key, approval prompt", package: "@openai/codex" },
  gemini: { version: "0.61.0", checked: "trust dialog left untouched, onboarding, job with no key (policy grant; any other command still asks), permission prompt, stop → resume, stop --hard ends it", package: "@google/gemini-cli" },
  opencode: { version: "1.18.33", checked: "onboarding, job with no key, stop → resume (SQLite store)", package: "opencode-ai" },
  qwen: { version: "0.24.4", checked: "provider dialog left untouched, onboarding, job with no key (grant; any other command still asks), permission prompt, stop → resume", package: "@qwen-code/qwen-code" },
  cline: { version: "3.0.65", checked: "its one-time notice left untouched, onboarding, job with no key (auto-approve), stop → resume", package: "cline" },
  demo: { version: "mam", checked: "mam's own scripted agent (the demo and the integration tests)" },
  shell: { version: "mam", checked: "a plain bash" },
};

export function isVerified(kind: string): boolean {
  return Object.hasOwn(VERIFIED, kind);
}

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
 * the start dialog kind `kind`'s own records say it will show in folder `cwd` (gemini's folder
 * trust, claude's trust of a project), or null: none recorded, a kind without such records, or
 * records mam cannot read (then the screen alone decides)
 */
export function startDialogOf(kind: string, cwd: string, env: Env): string | null {
  const f = Object.hasOwn(KINDS, kind) ? KINDS[kind]!.startDialog : null;
  if (!f) return null;
  try {
    return f(cwd, env);
  } catch {
    return null;
  }
}

/**
 * before kind `kind` resumes conversation `id` in folder `cwd`: a check of its own records that
 * says whether it has loaded the conversation (gemini), or null: it keeps no such record, or mam
 * cannot read them (then the screen alone decides)
 */
export function resumeLoadedOf(kind: string, id: string, cwd: string, env: Env): (() => boolean) | null {
  const f = Object.hasOwn(KINDS, kind) ? KINDS[kind]!.resumeLoaded : null;
  if (!f) return null;
  try {
    const check = f(id, cwd, env);
    return () => {
      try {
        return check();
      } catch {
        return true;
      }
    };
  } catch {
    return null;
  }
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
export function grantArgs(kind: string, env: Env = process.env, mam: string = agentMam(env), file: GrantFile = grantFile(env)): string[] {
  const grants = known(kind)?.grants;
  return grants ? grants(mam, file) : [];
}

/**
 * where mam keeps a grant's file: <state>/grants/<sha256 of the text, 16 hex>-<name> (mode 0600),
 * written once and never changed (a running agent may still read an older one)
 */
export function grantFile(env: Env): GrantFile {
  return (name, text) => {
    const dir = join(stateDir(env), "grants");
    const path = join(dir, `${sha256Hex(text).slice(0, 16)}-${name}`);
    let same = false;
    try {
      same = existsSync(path) && readFileSync(path, "utf8") === text;
    } catch {}
    if (!same) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      atomicWriteFile(path, text, { mode: 0o600 });
    }
    return path;
  };
}

/** a kind whose entry has MCP support (`mam mcp install`, `mam create --mcp`) */
export type McpAgent = string;

/** the kinds that can take mam's MCP server */
export const MCP_AGENTS: readonly McpAgent[] = kindNames().filter((k) => KINDS[k]!.mcp !== null);

export function isMcpAgent(kind: string): boolean {
  return MCP_AGENTS.includes(kind);
}

/**
 * the agent's own arguments that give one run of it the mam tools (`mam create --mcp`): those
 * that cannot run a command or answer a dialog pre-approved, or with `all` (`--mcp-all-tools`) every one
 */
export function agentMcpArgs(kind: string, e: ServerEntry, all = false): string[] {
  const mcp = known(kind)?.mcp;
  if (!mcp) throw usageError(`--mcp works with ${MCP_AGENTS.join(" and ")} (not ${kind})`, "leave out --mcp; the agent can still run mam commands");
  return mcp.args(e, all);
}
