// The agent kinds (SPEC §5.1): one entry per kind. Adding a kind is one entry here (and, when
// it keeps conversations on disk, a store in stores.ts).
import { usageError } from "../sys/errors.ts";
import { selfCommand } from "../sys/self.ts";
import { type ConversationStore, STORES } from "./stores.ts";

export interface AgentKind {
  kind: string;
  /** the executable typed into the pane */
  exe: string;
  /** the command prefix when it is not just `exe` (the demo agent is mam itself) */
  command?: () => string[];
  /** herdr --kind for kinds herdr knows (started with `agent start`); absent → typed with `pane run` */
  herdrKind?: string;
  /** arguments of a fresh start; `id` is set when the kind can take an assigned session id */
  freshArgs(id?: string): string[];
  /** can mam choose the conversation id at start (claude --session-id)? */
  assignsId: boolean;
  /** arguments that resume conversation `id`; absent → the kind cannot resume */
  resumeArgs?: (id: string) => string[];
  /** what to type to make the agent leave gracefully: text then Enter */
  exitText: string;
  /** where its conversations live on disk (absent: none, or not discoverable) */
  store?: ConversationStore;
}


export const KINDS: Record<string, AgentKind> = {
  claude: {
    kind: "claude",
    exe: "claude",
    herdrKind: "claude",
    freshArgs: (id) => (id ? ["--session-id", id] : []),
    assignsId: true,
    resumeArgs: (id) => ["--resume", id],
    exitText: "/exit",
    store: STORES.claude,
  },
  codex: {
    kind: "codex",
    exe: "codex",
    herdrKind: "codex",
    freshArgs: () => [],
    assignsId: false,
    resumeArgs: (id) => ["resume", id],
    exitText: "/quit",
    store: STORES.codex,
  },
  gemini: {
    kind: "gemini",
    exe: "gemini",
    herdrKind: "gemini",
    freshArgs: () => [],
    assignsId: false,
    resumeArgs: (id) => ["--resume", id],
    exitText: "/quit",
    store: STORES.gemini,
  },
  agy: {
    kind: "agy",
    exe: "agy",
    herdrKind: "agy",
    freshArgs: () => [],
    assignsId: false,
    resumeArgs: (id) => ["--conversation", id],
    exitText: "Exit",
    store: STORES.agy,
  },
  hermes: {
    kind: "hermes",
    exe: "hermes",
    herdrKind: "hermes",
    freshArgs: () => [],
    assignsId: false,
    resumeArgs: (id) => ["--resume", id],
    exitText: "/exit",
    store: STORES.hermes,
  },
  cline: {
    kind: "cline",
    exe: "cline",
    herdrKind: "cline",
    freshArgs: () => [],
    assignsId: false,
    resumeArgs: (id) => ["--resume", id],
    exitText: "/exit",
    store: STORES.cline,
  },
  opencode: {
    kind: "opencode",
    exe: "opencode",
    herdrKind: "opencode",
    freshArgs: () => [],
    assignsId: false,
    resumeArgs: (id) => ["--session", id],
    exitText: "/exit",
    store: STORES.opencode,
  },
  aider: {
    kind: "aider",
    exe: "aider",
    freshArgs: () => [],
    assignsId: false,
    exitText: "/exit",
  },
  demo: {
    kind: "demo",
    exe: "mam",
    command: () => [...selfCommand(), "demo-agent"],
    freshArgs: () => [],
    assignsId: false,
    exitText: "/exit",
  },
  shell: {
    kind: "shell",
    exe: "bash",
    freshArgs: () => ["--noprofile", "--norc"],
    assignsId: false,
    exitText: "exit",
  },
};

export function kindNames(): string[] {
  return Object.keys(KINDS);
}

export function agentKind(name: string): AgentKind {
  const k = Object.hasOwn(KINDS, name) ? KINDS[name] : undefined;
  if (!k) throw usageError(`unknown agent kind '${name.slice(0, 40)}'`, `use one of: ${kindNames().join(", ")}`);
  return k;
}

/** the command line that starts a kind: its prefix, then `args` */
export function commandLine(k: AgentKind, args: string[]): string[] {
  return [...(k.command ? k.command() : [k.exe]), ...args];
}

/** the registry field holding a row's own conversation id (SPEC §2.1: <agent>_session_id_own) */
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
  const k = Object.hasOwn(KINDS, agent) ? KINDS[agent] : undefined;
  return k === undefined || k.herdrKind !== undefined;
}
