// The shape of one operation: what the CLI, the MCP tools and the dashboard's actions all run.
//
// An operation has a `noun.verb` name, a typed input (a zod/mini shape that owns the fields'
// defaults, limits and messages), a `run(deps, input, ctx)` that returns data, the shape of that
// data as `--json` prints it and the MCP tool returns it (`result`, zod/mini too), and one text
// rendering of it. What each front door needs to know of an op is a field of its entry: `cli`
// (path, flags, help group, an extra such as a --watch loop), `mcp` (tool name's aliases, hidden
// fields), `ui` (the fields the dashboard's page may give). The front doors add only what is
// theirs (lib/cli/op-command.ts: flag spelling, --json, exit codes; lib/mcp/tools.ts: tool names;
// lib/ui/actions.ts: the page's requests). A use case never prints and never names a flag: it names an input field as
// `{{field}}` in a message (`field()`), and each front door spells it its own way (`--brief-file`,
// `brief_file`); what is worth saying but is not the result comes back as notices in the
// result's `warnings` ({level, text}), prefixed once where they are printed (`noticeLine`).
//
// Inputs are thunks, so a command builds only its own schema (zod/mini: about 0.15 ms a schema,
// and the library itself 1 ms; `mam pane-lock` and other plumbing load none of it).
import type * as z from "zod/mini";
import type { Deps } from "./deps.ts";

/** an op's input: field name → zod/mini schema */
export type Shape = Record<string, z.ZodMiniType>;
export type InputOf<S extends Shape> = z.output<z.ZodMiniObject<S>>;

export interface TextOptions {
  color: boolean;
}

/** what a run gets besides deps and its input */
export interface OpContext {
  /** aborted on Ctrl-C / SIGTERM (CLI), when the MCP client cancels the call, or never */
  signal: AbortSignal;
  /** a line of progress for a long operation (MCP progress notifications; the CLI prints none) */
  progress(message: string): void;
  /** which front door runs it */
  surface: "cli" | "mcp" | "ui" | "internal";
  /** how the result will be shown: a use case may skip work only JSON shows (worktree counts) */
  form: "text" | "json";
}

/** how the command line spells one input field */
export interface FlagSpec {
  /** the flag's name without dashes (default: the field with `_` → `-`) */
  flag?: string;
  /** a boolean field given by its negation: `--no-grant` sets grant to false */
  negated?: boolean;
  valueHint?: string;
  /** the help text, when it differs from the field's description */
  description?: string;
  /** `--worktree` alone means this value (the next word counts as the value only when it matches the pattern) */
  optionalValue?: string;
  optionalValuePattern?: RegExp;
  short?: string;
}

/** the help sections of `mam --help`, in mam.ts (plumbing commands are listed there) */
export type HelpGroup = "agents" | "jobs" | "team across machines" | "from your agent (MCP)" | "monitoring" | "notifications" | "plumbing" | "try it";

/** a command group: the first word of two-word commands (`job` of `job submit`), with its own help */
export interface CommandGroup {
  name: string;
  description: string;
  examples: string[];
  /** where `mam --help` lists it: its commands one by one (`job submit`, `job wait`, …) or the group once (`worktree`) */
  group: HelpGroup;
  listed: "each" | "once";
}

/**
 * what a command does beyond its op on the command line (lib/cli/ops.ts carries them out): a
 * --watch redraw, a --follow, a wait after a submit, the daemon in the foreground, a value read
 * from stdin or a file, flags that become one field (--hard / --soft → mode)
 */
export type CliExtraName = "status-watch" | "stop-modes" | "submit-wait" | "wait-any" | "logs-follow" | "event-data" | "reconcile-subscribe" | "notify-stdin" | "join-code";

export interface CliSpec {
  /** the command's words: "stop", "job submit" */
  path: string;
  /** a two-word command's group (its first word): the group's help, the same object for each of its commands */
  under?: CommandGroup;
  /** what the command does beyond the op (lib/cli/ops.ts EXTRAS) */
  extra?: CliExtraName;
  alias?: string;
  /** the command's one line in `mam --help`, when it differs from the op's summary */
  description?: string;
  examples?: string[];
  /** fields taken positionally, in order (an array field last takes every remaining word) */
  positionals?: string[];
  /** the field that takes every word after `--` */
  rest?: string;
  flags?: Record<string, FlagSpec>;
  /** fields the command line does not offer */
  hide?: string[];
  /** --json prints the result as one JSON document (default true) */
  json?: boolean;
  /** the section `mam --help` lists it in (a two-word command: its group's section) */
  group?: HelpGroup;
  /** what the command prints on stdout instead of the text (what scripts capture: a job id) */
  print?(out: unknown): string;
  /** the text goes to stderr for this result (an empty list: "no jobs"), stdout staying empty */
  textToStderr?(out: unknown): boolean;
}

export interface McpSpec {
  /** the names the tool answered to before (callable, not listed) */
  aliases?: string[];
  description?: string;
  /** fields the tool does not offer (they keep their defaults) */
  hide?: string[];
  /** the tool's own input where it differs from the op's (a default or a limit) */
  input?: (shape: Shape) => Shape;
  /** a progress notification at least every MAM_MCP_HEARTBEAT_MS while it runs */
  heartbeat?: boolean;
}

/** what the dashboard's page may run (mam ui --allow-actions): the fields it gives, the rest fixed here */
export interface UiSpec {
  /** the input fields the page gives */
  fields: string[];
  /** of those, the ones the page must give (an op may default them; the page may not) */
  required?: string[];
  /** the input fields this front door sets */
  fixed?: Record<string, unknown>;
}

export interface Op<S extends Shape = Shape, O = unknown> {
  /** noun.verb: session.stop, job.submit */
  name: string;
  /** one line: what it does (the CLI's description, the MCP tool's description) */
  summary: string;
  /** changes nothing (MCP readOnlyHint; the dashboard allows no read-only op as an action) */
  readOnly: boolean;
  input: () => S;
  /** rules between fields (usage errors naming fields as {{field}}), before anything runs */
  check?(input: InputOf<S>): void;
  run(deps: Deps, input: InputOf<S>, ctx: OpContext): Promise<O>;
  /** the one human rendering of the result (colour only where the front door allows it) */
  text(out: O, opts: TextOptions): string;
  /**
   * the shape of the result's JSON document: what --json prints and the MCP tool returns (its
   * output schema). A union where an input only the command line offers changes the result
   * (status --fleet, stop --all): its first member is the one MCP's inputs give.
   */
  result: () => z.ZodMiniType;
  /** the JSON document of the result (default: the result, notices as printed lines) */
  json?(out: O): unknown;
  /** the command's exit code for this result (default 0) */
  exitCode?(out: O): number;
  /** a long wait: SIGINT/SIGTERM abort ctx.signal and the command exits 130/143 */
  interruptible?: boolean;
  cli?: CliSpec | false;
  mcp?: McpSpec | false;
  /** a dashboard action (none when absent; never a read-only op) */
  ui?: UiSpec;
}

/** an op with its input type inferred from its shape */
export const defineOp = <S extends Shape, O>(op: Op<S, O>): Op<S, O> => op;

/** an op of any input and result, as the front doors hold them */
export type AnyOp = Op<any, any>;
