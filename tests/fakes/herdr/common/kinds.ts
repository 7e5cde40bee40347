// The agent kinds herdr 0.8 knows (herdr.md §3.6): the kind names `agent start --kind` accepts,
// their aliases, the executable herdr types for each, and the process names it detects.

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
};

const EXECUTABLES: Partial<Record<AgentKind, string>> = { cursor: "cursor-agent", kiro: "kiro-cli" };

/** the canonical kind for a --kind value (case-insensitive), or undefined */
export function canonicalKind(value: string): AgentKind | undefined {
  const v = value.trim().toLowerCase();
  if ((AGENT_KINDS as readonly string[]).includes(v)) return v as AgentKind;
  return ALIASES[v];
}

export function executableFor(kind: AgentKind): string {
  return EXECUTABLES[kind] ?? kind;
}

/** the kind a process name (comm) or argv0 basename identifies, or undefined */
export function kindForProcessName(name: string): AgentKind | undefined {
  const base = name.slice(name.lastIndexOf("/") + 1).toLowerCase();
  for (const k of AGENT_KINDS) if (executableFor(k) === base || k === base) return k;
  return undefined;
}

export function unsupportedKindMessage(value: string): string {
  const aliases = Object.keys(ALIASES).join(", ");
  return `unsupported agent kind ${value}; supported kinds: ${AGENT_KINDS.join(", ")} (aliases: ${aliases})`;
}
