// The shape of one operation: what the CLI, the MCP tools and the dashboard's actions all run.
//
// An operation has a `noun.verb` name, a typed input (a zod/mini shape that owns the fields'
// defaults, limits and messages), a `run(deps, input, ctx)` that returns data, and one text
// rendering of that data. The front doors add only what is theirs (lib/cli/op-command.ts: flag
// spelling, --json, exit codes; lib/mcp/tools.ts: tool names and results; lib/ui/actions.ts: an
// allow-list). A use case never prints and never names a flag: it names an input field as
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

export interface CliSpec {
  /** the command's words: "stop", "job submit" */
  path: string;
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
  /** the group `mam --help` lists it in (agents, jobs, monitoring, plumbing, …) */
  group?: string;
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
  /** the JSON document of the result (default: the result, notices as printed lines) */
  json?(out: O): unknown;
  /** the command's exit code for this result (default 0) */
  exitCode?(out: O): number;
  /** a long wait: SIGINT/SIGTERM abort ctx.signal and the command exits 130/143 */
  interruptible?: boolean;
  cli?: CliSpec | false;
  mcp?: McpSpec | false;
}

/** an op with its input type inferred from its shape */
export const defineOp = <S extends Shape, O>(op: Op<S, O>): Op<S, O> => op;

/** an op of any input and result, as the front doors hold them */
export type AnyOp = Op<any, any>;
