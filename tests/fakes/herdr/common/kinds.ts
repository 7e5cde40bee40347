// The agent kinds herdr 0.8 knows (herdr.md §3.6): the kind names `agent start --kind` accepts,
// their aliases, the executable herdr types for each, and the process names it detects. 0.8.2
// adds qwen (alias qwen-code; src/detect/mod.rs, a4d52ab6); the release played decides.
import { fakeRelease, type Release } from "./release.ts";

export const AGENT_KINDS = [
  "pi",
  "claude",
  "codex",
  "gemini",
  "devin",
  "agy",
  "cline",
  "omp",
  "mastracode",
  "opencode",
  "copilot",
  "kimi",
  "droid",
  "amp",
  "grok",
  "hermes",
  "kilo",
  "qodercli",
  "qwen",
  "maki",
  "cursor",
  "kiro",
] as const;

export type AgentKind = (typeof AGENT_KINDS)[number];

const ALIASES: Record<string, AgentKind> = {
  "claude-code": "claude",
  antigravity: "agy",
  "open-code": "opencode",
  "github-copilot": "copilot",
  "cursor-agent": "cursor",
  "kiro-cli": "kiro",
  "qwen-code": "qwen",
};

/** kinds and aliases that only herdr 0.8.2 knows */
const SINCE_082 = new Set(["qwen", "qwen-code"]);

/** the kinds the release knows, in herdr's order */
export function agentKinds(r: Release = fakeRelease()): readonly AgentKind[] {
  return r === "0.8.0" ? AGENT_KINDS.filter((k) => !SINCE_082.has(k)) : AGENT_KINDS;
}

const EXECUTABLES: Partial<Record<AgentKind, string>> = { cursor: "cursor-agent", kiro: "kiro-cli" };

/** the canonical kind for a --kind value (case-insensitive), or undefined */
export function canonicalKind(value: string, r: Release = fakeRelease()): AgentKind | undefined {
  const v = value.trim().toLowerCase();
  if (r === "0.8.0" && SINCE_082.has(v)) return undefined;
  if ((AGENT_KINDS as readonly string[]).includes(v)) return v as AgentKind;
  return ALIASES[v];
}

export function executableFor(kind: AgentKind): string {
  return EXECUTABLES[kind] ?? kind;
}

/** the kind a process name (comm) or argv0 basename identifies, or undefined */
export function kindForProcessName(name: string, r: Release = fakeRelease()): AgentKind | undefined {
  const base = name.slice(name.lastIndexOf("/") + 1).toLowerCase();
  for (const k of agentKinds(r)) if (executableFor(k) === base || k === base) return k;
  return undefined;
}

export function unsupportedKindMessage(value: string, r: Release = fakeRelease()): string {
  const aliases = Object.keys(ALIASES)
    .filter((a) => r !== "0.8.0" || !SINCE_082.has(a))
    .join(", ");
  return `unsupported agent kind ${value}; supported kinds: ${agentKinds(r).join(", ")} (aliases: ${aliases})`;
}
