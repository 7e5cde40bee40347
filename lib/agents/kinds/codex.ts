// codex (OpenAI Codex CLI): everything mam knows about this kind. It picks its own conversation id
// (mam finds it in the rollout files whose session_meta names the workspace) and resumes with
// `resume <id>`; mam installs hooks for it and gives it the MCP server per run (-c) or in a
// config.toml. No grants: see `grants` below.
import { join } from "node:path";
import { usageError } from "../../sys/errors.ts";
import { type Env, homeDir } from "../../sys/paths.ts";
import type { ServerEntry } from "../../sys/self.ts";
import { type AgentKind, type Conversation, type Edit, SERVER_KEY } from "./kind.ts";
import { contentText, countOf, jsonObject, stamp, type UsageFact, type UsageSource } from "../usage.ts";
import { type LimitFact, type LimitsKind, reasonLine } from "../limits.ts";
import { firstJsonLines, list, listedStore, mtime, str } from "./store-util.ts";

// ---- store: $CODEX_HOME or ~/.codex, sessions/**/rollout-*.jsonl whose session_meta has our cwd --

const sessionsDir = (env: Env) => join(env.CODEX_HOME || join(homeDir(env), ".codex"), "sessions");

function codexFiles(env: Env): string[] {
  const root = sessionsDir(env);
  const out: string[] = [];
  const walk = (d: string, depth: number) => {
    for (const e of list(d)) {
      const p = join(d, e);
      if (e.startsWith("rollout-") && e.endsWith(".jsonl")) out.push(p);
      else if (depth < 4 && !e.includes(".")) walk(p, depth + 1);
    }
  };
  walk(root, 0);
  return out;
}

function codexMeta(p: string): { id?: string; cwd?: string } {
  for (const o of firstJsonLines(p)) {
    const payload = (o.payload && typeof o.payload === "object" ? o.payload : o) as Record<string, unknown>;
    if (o.type === "session_meta" || str(payload.cwd)) return { id: str(payload.id), cwd: str(payload.cwd) };
  }
  return {};
}

function codexConversations(ws: string, env: Env): Conversation[] {
  const out: Conversation[] = [];
  for (const p of codexFiles(env)) {
    const m = codexMeta(p);
    if (m.id && m.cwd === ws) out.push({ id: m.id, mtimeMs: mtime(p), files: [p] });
  }
  return out;
}

// ---- usage: the running totals of its token_count events -----------------------------------

/** how long a conversation id that has no rollout file yet waits before the folders are walked again */
const LOOK_AGAIN_MS = 10_000;
/** rollout files found by conversation id (`<sessions dir>\0<id>` → path), and when an id was last looked for */
const rollouts = new Map<string, string>();
const lookedAt = new Map<string, number>();

/** the rollout file of a conversation: its name ends with the id (newest day folders first) */
function rolloutOf(env: Env, id: string): string | undefined {
  const root = sessionsDir(env);
  const key = `${root}\0${id}`;
  const hit = rollouts.get(key);
  if (hit !== undefined) return hit;
  if (Date.now() - (lookedAt.get(key) ?? 0) < LOOK_AGAIN_MS) return undefined;
  lookedAt.set(key, Date.now());
  const want = `-${id}.jsonl`;
  const walk = (d: string, depth: number): string | undefined => {
    for (const e of list(d).sort().reverse()) {
      const p = join(d, e);
      if (e.startsWith("rollout-") && e.endsWith(want)) return p;
      if (depth < 4 && !e.includes(".")) {
        const f = walk(p, depth + 1);
        if (f) return f;
      }
    }
    return undefined;
  };
  const found = walk(root, 0);
  if (found) rollouts.set(key, found);
  return found;
}

/**
 * One line of a rollout: a token_count event (its `total_token_usage` is the conversation's total
 * so far; OpenAI's input_tokens include the cached ones), the model of a turn (turn_context), or a
 * user message that begins a turn. Lines that can be none of these are never parsed.
 */
function codexLine(line: string): UsageFact | undefined {
  const has = (s: string) => line.includes(s);
  if (!has('"token_count"') && !has('"turn_context"') && !has('"role":"user"')) return undefined;
  const o = jsonObject(line);
  const p = o?.payload && typeof o.payload === "object" ? (o.payload as Record<string, unknown>) : undefined;
  if (!o || !p) return undefined;
  if (o.type === "event_msg" && p.type === "token_count") {
    const info = p.info && typeof p.info === "object" ? (p.info as Record<string, unknown>) : undefined;
    const t = info?.total_token_usage && typeof info.total_token_usage === "object" ? (info.total_token_usage as Record<string, unknown>) : undefined;
    if (!t) return undefined;
    const cacheRead = countOf(t.cached_input_tokens);
    const cacheWrite = countOf(t.cache_write_input_tokens);
    return {
      kind: "total",
      at: stamp(o.timestamp),
      tokens: { input: Math.max(0, countOf(t.input_tokens) - cacheRead - cacheWrite), output: countOf(t.output_tokens), cache_write: cacheWrite, cache_read: cacheRead },
    };
  }
  if (o.type === "turn_context") {
    const model = str(p.model);
    return model ? { kind: "model", model } : undefined;
  }
  if (o.type === "response_item" && p.type === "message" && p.role === "user") {
    const text = contentText(p.content);
    return text === "" ? undefined : { kind: "turn", at: stamp(o.timestamp), text };
  }
  return undefined;
}

const usage: UsageSource = {
  files({ id, env }) {
    const f = id ? rolloutOf(env, id) : undefined;
    return f ? [f] : [];
  },
  markers: ['"token_count"', '"turn_context"', '"role":"user"'],
  parse: codexLine,
};

// ---- limits: token_count.rate_limits and task_complete.error (shared/reference/real-limits.md) --
// Every token_count carries the provider's windows (rate_limits.primary / secondary: used_percent,
// window_minutes, resets_at in epoch s). A turn refused at the usage limit ends with task_complete
// whose error.codex_error_info is "usage_limit_exceeded", right after a token_count at 100 %: its
// reset is that window's resets_at. Retries exhausted on HTTP 429 (codex_error_info
// {"response_too_many_failed_attempts":{"http_status_code":429}}) are a rate limit with no reset
// time. A model's answer is the limit's end: an item of the model's (an assistant message, a
// function or tool call, reasoning), written as it arrives, before its tool runs — a turn's
// task_complete without an error comes only after all its tools ran (seen with 0.171.0: the job's
// `completed` command had run before it, so the limit's end came after the job's), and counts too.
const MODEL_ITEMS = new Set(["function_call", "custom_tool_call", "local_shell_call", "reasoning", "web_search_call"]);

type Window = { used_percent: number; window_minutes: number | null; resets_at: number | null };

function windowOf(v: unknown): Window | undefined {
  if (!v || typeof v !== "object") return undefined;
  const w = v as Record<string, unknown>;
  if (typeof w.used_percent !== "number" || !Number.isFinite(w.used_percent)) return undefined;
  const num = (x: unknown) => (typeof x === "number" && Number.isFinite(x) && x > 0 ? x : null);
  const r = num(w.resets_at);
  return { used_percent: w.used_percent, window_minutes: num(w.window_minutes), resets_at: r === null ? null : r * 1000 };
}

/** a line holding none of these says nothing of a limit ("_call\"": function_call, custom_tool_call, local_shell_call…) */
const LIMIT_MARKERS = ['"token_count"', '"task_complete"', '"role":"assistant"', '_call"', '"reasoning"'];

function codexLimitLine(line: string): LimitFact | undefined {
  if (!LIMIT_MARKERS.some((m) => line.includes(m))) return undefined;
  const o = jsonObject(line);
  const p = o?.payload && typeof o.payload === "object" ? (o.payload as Record<string, unknown>) : undefined;
  if (!p) return undefined;
  const at = stamp(o!.timestamp);
  if (o!.type === "response_item") return MODEL_ITEMS.has(String(p.type)) || (p.type === "message" && p.role === "assistant") ? { kind: "ok", at } : undefined;
  if (o!.type !== "event_msg") return undefined;
  if (p.type === "token_count") {
    const rl = p.rate_limits && typeof p.rate_limits === "object" ? (p.rate_limits as Record<string, unknown>) : undefined;
    // the fuller of the two windows (the one at 100 % when one is); the primary on a tie
    const ws = [windowOf(rl?.primary), windowOf(rl?.secondary)].filter((w): w is Window => w !== undefined);
    const w = ws.reduce<Window | undefined>((a, b) => (a === undefined || b.used_percent > a.used_percent ? b : a), undefined);
    return w ? { kind: "window", at, ...w } : undefined;
  }
  if (p.type !== "task_complete") return undefined;
  const err = p.error && typeof p.error === "object" ? (p.error as Record<string, unknown>) : undefined;
  if (!err) return { kind: "ok", at };
  const info = err.codex_error_info;
  const message = typeof err.message === "string" ? reasonLine(err.message) : "";
  if (info === "usage_limit_exceeded") {
    const words = /try again at (.+?)\.?$/i.exec(message)?.[1];
    return { kind: "hit", at, resets_at: null, ...(words ? { resets_text: words } : {}), reason: message || "You've hit your usage limit." };
  }
  const failed = info && typeof info === "object" ? (info as Record<string, unknown>).response_too_many_failed_attempts : undefined;
  if (failed && typeof failed === "object" && (failed as Record<string, unknown>).http_status_code === 429) {
    return { kind: "hit", at, resets_at: null, reason: message || "exceeded retry limit, last status: 429 Too Many Requests" };
  }
  return undefined;
}

const limits: LimitsKind = { markers: LIMIT_MARKERS, parse: codexLimitLine };

// ---- MCP: per run (-c), and config.toml ------------------------------------------------------

/**
 * codex cuts an MCP tool call after tool_timeout_sec (60 s unless set): job_wait may wait up to
 * an hour (WAIT_MAX_S in lib/ops/table/job.ts), so mam's entry allows a little more
 */
const CODEX_TOOL_TIMEOUT_S = 3700;

/** a TOML basic string (JSON's escapes are valid TOML) */
const tomlString = (s: string) => JSON.stringify(s);
const tomlArray = (a: string[]) => `[${a.map(tomlString).join(", ")}]`;

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

function mcpInstall(text: string, e: ServerEntry, path: string): Edit {
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

function mcpUninstall(text: string, path: string): Edit {
  if (mamOf(parseToml(text, path)) === undefined) return { text, changed: false };
  const next = `${withoutOurTable(text).replace(/\s*$/, "")}\n`;
  if (mamOf(parseToml(next, path)) !== undefined) {
    throw usageError(`${path} defines mcp_servers.mam in a form mam does not edit (inline or dotted keys)`, "remove that entry by hand");
  }
  return { text: next.trim() === "" ? "" : next, changed: true };
}

/**
 * codex's "Approaching rate limits: switch to a cheaper model?" modal, which it opens the first time
 * in a process that usage runs high (real-limits.md), would hold an agent nobody watches until a
 * person answers it: every codex mam starts has it off (for that process only; config.toml is not
 * edited). Which model to use stays the user's choice.
 */
const NO_NUDGE = ["-c", "notice.hide_rate_limit_model_nudge=true"];

export const codex: AgentKind = {
  kind: "codex",
  exe: "codex",
  command: null,
  herdrKind: "codex",
  freshArgs: () => [...NO_NUDGE],
  assignsId: false,
  resumeArgs: (id) => [...NO_NUDGE, "resume", id],
  resumeNote: null,
  startDialog: null,
  resumeLoaded: null,
  exitText: "/quit",
  reads: "prose",
  store: listedStore(codexConversations),
  screenRules: "codex.screen.json",
  hooks: {
    events: ["SessionStart", "UserPromptSubmit", "PermissionRequest", "PostToolUse", "Stop"],
    projectFile: ".codex/hooks.json",
    globalFile: (env, home) => `${env.CODEX_HOME || `${home}/.codex`}/hooks.json`,
    note: "codex runs hooks only with `[features] hooks = true` in its config.toml (mam does not edit it), and asks once to trust new or changed hooks (Hooks need review)",
  },
  // none: codex has no start argument that allows one command, only ones that change approval for
  // every command; in a trusted folder its default policy runs `<mam> job event` without asking
  grants: null,
  mcp: {
    // codex's own approval policy decides which MCP calls it asks about; it has no argument to allow some tools
    args(e) {
      const k = `mcp_servers.${SERVER_KEY}`;
      return ["-c", `${k}.command=${tomlString(e.command)}`, "-c", `${k}.args=${tomlArray(e.args)}`, "-c", `${k}.tool_timeout_sec=${CODEX_TOOL_TIMEOUT_S}`];
    },
    install: mcpInstall,
    uninstall: mcpUninstall,
  },
  usage,
  limits,
  // shared/reference/real-limits.md: "continue" resumes the task (the earlier tool output is kept)
  continueAtReset: { text: "continue", autoContinueS: 0 },
};
