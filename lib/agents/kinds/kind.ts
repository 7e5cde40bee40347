// The shape of one agent kind's entry (lib/agents/kinds/<kind>.ts), and the few constants several
// kinds share. Every aspect of a kind is a field that each entry states, with null where the kind
// has none of it (no resume, no store, no screen rules, no hooks, no grants, no MCP), so a kind
// cannot leave an aspect out by accident: tests/unit/agent-kinds.test.ts checks each entry.
// docs/sessions.md ("Agent kinds") says what each kind does; adding a kind is one module here, its
// screen rules next to it, and one line in index.ts.
import type { Env } from "../../sys/paths.ts";
import type { ServerEntry } from "../../sys/self.ts";
import type { LimitsKind } from "../limits.ts";
import type { UsageSource } from "../usage.ts";

export interface Conversation {
  id: string;
  mtimeMs: number;
  /** the files that belong to this conversation (what --purge-conversation deletes) */
  files: string[];
}

/** where a kind keeps its conversations on disk: only ever this workspace's (never another's) */
export interface ConversationStore {
  /** conversation `id` of workspace `ws`, if it is on disk */
  find(id: string, ws: string, env?: Env): Conversation | undefined;
  /** the newest conversation of workspace `ws` */
  newest(ws: string, env?: Env): Conversation | undefined;
}

/** the agent's hook settings that make it report to mam (`mam hooks install`; edits in ../hooks-config.ts) */
export interface HookKind {
  /** the events mam listens to */
  events: string[];
  /** the settings file in a workspace (project scope) and under the agent's home (global) */
  projectFile: string;
  globalFile: (env: Record<string, string | undefined>, home: string) => string;
  /** what else the agent needs before the hooks run (told after install) */
  note?: string;
}

/** a changed (or unchanged) config file text */
/** an edit of a config file; `empty`: nothing is left in it but what mam put there, so the file goes */
export type Edit = { text: string; changed: boolean; empty?: boolean };

/** how a kind reaches `mam mcp`: per run (`mam create --mcp`) and in its config file (`mam mcp install`) */
export interface McpSupport {
  /** the agent's own arguments that give one run of it the mam tools; `all`: every tool pre-approved, else MCP_PREAPPROVED only (where the kind can tell) */
  args(e: ServerEntry, all: boolean): string[];
  /** the pure edits of its MCP config file (merge, never clobber other servers, idempotent; no I/O) */
  install(text: string, e: ServerEntry, path: string): Edit;
  uninstall(text: string, path: string): Edit;
}

export interface AgentKind {
  kind: string;
  /** the executable typed into the pane */
  exe: string;
  /** the command prefix when it is not just `exe` (the demo agent is mam itself); null: `exe` */
  command: (() => string[]) | null;
  /** herdr --kind for kinds herdr knows (started with `agent start`); null → typed with `pane run` */
  herdrKind: string | null;
  /** arguments of a fresh start; `id` is set when the kind can take an assigned session id */
  freshArgs(id?: string): string[];
  /** can mam choose the conversation id at start (claude --session-id)? */
  assignsId: boolean;
  /** arguments that resume conversation `id`; null → the kind cannot resume */
  resumeArgs: ((id: string) => string[]) | null;
  /**
   * what the user must know after this kind resumed a conversation in folder `ws` (a flaw of the
   * CLI's own that mam cannot fix for them); null from the function: nothing now; null: never
   */
  resumeNote: ((ws: string, env: Env) => string | null) | null;
  /**
   * what the kind's own records say about its start dialogs in folder `cwd` (gemini's
   * trustedFolders.json, claude's .claude.json): the name of the dialog it will show at start
   * (its screen rule's, "trust this folder"), or null when its records say it shows none. Until
   * that dialog has come and gone mam types nothing into it (lib/ops/session/at-prompt.ts);
   * null: the kind keeps no such record (mam goes by its screen alone)
   */
  startDialog: ((cwd: string, env: Env) => string | null) | null;
  /**
   * what the kind's own records say about a resume of conversation `id` in folder `cwd`: called
   * just before the agent starts, it returns a check that says, once the agent runs, whether it
   * has loaded the conversation yet (gemini appends to the conversation's file when it has; text
   * typed before that is lost, or starts a conversation without the earlier one). Until the check
   * says so, a prompt in view does not count (lib/ops/session/after-start.ts); null: the kind keeps
   * no such record (the screen alone decides)
   */
  resumeLoaded: ((id: string, cwd: string, env: Env) => () => boolean) | null;
  /** what to type to make the agent leave gracefully: text then Enter; null: none known (stop closes its pane) */
  exitText: string | null;
  /**
   * what mam may type into it: "prose" (an agent that reads text: the job header, the onboarding,
   * loop texts, notices) or "commands" (a shell, which runs every line typed: a job to it is a
   * command that `mam shell-job` runs, and no text is ever typed into it; docs/jobs.md)
   */
  reads: "prose" | "commands";
  /** where its conversations live on disk; null: none, or not discoverable */
  store: ConversationStore | null;
  /**
   * its screen rules, a file next to its module (`<kind>.screen.json`, the format in
   * ../screen/rules.ts), embedded at build time by ../screen/embed.ts; null: mam cannot read its
   * screen (its live state comes from herdr or hooks only)
   */
  screenRules: string | null;
  /** the hooks `mam hooks install <kind>` writes; null: mam has no hooks for it */
  hooks: HookKind | null;
  /**
   * the start arguments that pre-approve mam's own commands (GRANTED_COMMANDS, as `mam` =
   * agentMam writes them); a kind whose grant is a file names it through `file`; null: the kind
   * takes no such argument (the entry says why)
   */
  grants: ((mam: string, file: GrantFile) => string[]) | null;
  /** the mam MCP server for this kind; null: `--mcp` and `mam mcp install` refuse it */
  mcp: McpSupport | null;
  /**
   * how mam reads the tokens it used from its own records (docs/cost.md); null: mam cannot, and
   * its usage shows as unknown (a budget or a daily cap on it is refused)
   */
  usage: UsageSource | null;
  /**
   * how a usage or rate limit shows in its records (docs/unattended.md; the files are its `usage`
   * aspect's, its screen's limit lines are in its rules file, `limits`); null: not verified against
   * the real CLI, and mam never says it is limited
   */
  limits: LimitsKind | null;
  /**
   * how the agent goes on with its work after a usage limit has reset (docs/unattended.md#resume-at-reset);
   * null: mam does not resume it
   */
  continueAtReset: ResumeAtReset | null;
}

/**
 * a file a grant needs (gemini's policy file): mam keeps `text` in a file of its own named after
 * `name` (and its content, so different texts never share a file) and returns the file's path
 */
/** what mam types after a usage limit's reset, and how long the agent may take to go on by itself */
export interface ResumeAtReset {
  /** the agent's own "continue" (a bare Enter sends nothing in claude or codex) */
  text: string;
  /**
   * seconds after the reset the agent may go on by itself (claude 2.1.332 continues a subscription's
   * 5-hour limit at the reset + 30–90 s): mam's resume comes after them, and finds it at work
   */
  autoContinueS: number;
}

export type GrantFile = (name: string, text: string) => string;

/** the mam subcommands an agent may run without asking (reporting and reading, no side effects elsewhere) */
export const GRANTED_COMMANDS = ["job event", "job status", "status"] as const;

/** the name of mam's server in an agent's MCP config */
export const SERVER_KEY = "mam";

/**
 * the mam MCP tools an agent started with `--mcp` may call without asking the user (review A7):
 * the read-only ones and the cancel of a job, none of which can run a command or answer a dialog.
 * The others (session_create, job_submit: a shell session runs what it is given; session_approve:
 * another agent's dialog; stop, resume, prune, reconcile) stay callable, with the agent's prompt
 * each; `--mcp-all-tools` pre-approves them all. tests/unit/mcp-config.test.ts holds this list to
 * the ops table (every read-only tool is here; nothing else but job_cancel).
 */
export const MCP_PREAPPROVED = ["session_status", "job_status", "job_list", "job_logs", "job_wait", "plan_status", "team_show", "job_cancel"] as const;
