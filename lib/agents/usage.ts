// What an agent's own records say about the tokens it used (docs/cost.md): the facts one line of a
// conversation file holds, for the usage meter (lib/cost/meter.ts) to fold. A kind mam can meter
// states how (its `usage` aspect, kinds/<kind>.ts): which files are a session's conversation, and
// what one whole line of them says. A kind whose records mam cannot read has `usage: null`, and its
// usage is shown as unknown, never as 0. Pure, except UsageSource.files (a few stats and reads).
import type { Env } from "../sys/paths.ts";

/** tokens in the four kinds providers bill */
export interface Tokens {
  /** input not served from a cache */
  input: number;
  output: number;
  /** input written to a cache (Anthropic's cache creation) */
  cache_write: number;
  /** input read from a cache (Anthropic's cache read, OpenAI's cached input) */
  cache_read: number;
}

export const TOKEN_KINDS = ["input", "output", "cache_write", "cache_read"] as const;

export const noTokens = (): Tokens => ({ input: 0, output: 0, cache_write: 0, cache_read: 0 });

export type UsageFact =
  /** a message typed into the agent: a turn begins (its text decides whose turn it is) */
  | { kind: "turn"; at: number; text: string }
  /**
   * one model answer's usage (claude): an answer written on several lines (one per content block)
   * repeats its id and usage on each, so the meter counts an id once
   */
  | { kind: "answer"; at: number; model: string; id?: string; tokens: Tokens }
  /** the conversation's running total so far (codex token_count): the meter counts what it adds */
  | { kind: "total"; at: number; tokens: Tokens }
  /** the model of the answers that follow (codex turn_context) */
  | { kind: "model"; model: string };

/** what the meter knows of a session when it looks for its conversation files */
export interface SessionFiles {
  /** the folder the agent runs in (the workspace, or the session's worktree) */
  cwd: string;
  /** the workspace (an absolute real path) and the session's name in it */
  ws: string;
  name: string;
  /** its own conversation id, when known */
  id?: string;
  /** the pid of its agent process, when known (claude names its current conversation by pid) */
  pid?: number;
  env: Env;
}

export interface UsageSource {
  /**
   * the conversation files the session writes now (absolute paths; some may not exist yet). The
   * meter keeps following a file it once had: a conversation id that changes (claude's /clear)
   * adds a file, it does not take one away.
   */
  files(s: SessionFiles): string[];
  /** a line that holds none of these strings says nothing (the meter does not even decode it) */
  markers: string[];
  /** the fact one whole line says, if any; cheap for the many lines that say none */
  parse(line: string): UsageFact | undefined;
}

/**
 * the variables that say where the agents keep their records (their config folders): the agent's
 * own values count, not the daemon's (a daemon started from another shell, an agent whose tmux
 * server was started with another environment)
 */
export const STORE_ENV = ["HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_HOME"] as const;

/**
 * pure: the environment to look for session `session`'s records with: `own` (the daemon's) with
 * the STORE_ENV values of the agent's own environment (`agent`, as its process started; unset
 * there is unset here). An environment that is not that session's agent (no environment read, a
 * pid taken by another process since: MAM_SESSION is not `session`) changes nothing.
 */
export function storeEnv(own: Env, agent: Record<string, string> | undefined, session: string): Env {
  if (!agent || agent.MAM_SESSION !== session) return own;
  const env: Env = { ...own };
  for (const k of STORE_ENV) {
    if (k === "HOME" && agent.HOME === undefined) continue;
    env[k] = agent[k];
  }
  return env;
}

/** a count from an agent's record: a non-negative safe integer, else 0 */
export const countOf = (v: unknown): number => (typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? v : 0);

/** a timestamp of an agent's record in ms, else NaN */
export const stamp = (v: unknown): number => (typeof v === "string" ? Date.parse(v) : Number.NaN);

/** the text of a message's content: a string, or its text blocks joined */
export function contentText(c: unknown): string {
  if (typeof c === "string") return c;
  if (!Array.isArray(c)) return "";
  return c
    .map((b) => (b && typeof b === "object" && typeof (b as { text?: unknown }).text === "string" ? (b as { text: string }).text : ""))
    .filter((s) => s !== "")
    .join("\n");
}

/** parse a line that is a JSON object, else undefined */
export function jsonObject(line: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(line);
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
