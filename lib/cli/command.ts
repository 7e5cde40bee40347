// The shape of a mam command: a citty CommandDef (meta, args, subCommands: what citty renders
// help from) plus the few things citty lacks (repeatable flags, variadic positionals, optional
// flag values, examples) and a run() that gets strictly parsed arguments.
import type { ArgDef as CittyArgDef } from "citty";

export type ArgDef = CittyArgDef & {
  /** string flag that may be given several times (value is string[]) */
  multiple?: boolean;
  /** positional that takes every remaining positional (value is string[]) */
  variadic?: boolean;
  /** string flag whose value may be left out (`--watch` alone means this value) */
  optionalValue?: string;
  /** which next token counts as the value of an optionalValue flag (default: a number) */
  optionalValuePattern?: RegExp;
};

export type ArgsDef = Record<string, ArgDef>;

export type ArgValue = string | boolean | string[] | undefined;
export type ParsedArgs = Record<string, ArgValue>;

export interface RunContext {
  args: ParsedArgs;
  /** what came after a literal `--` */
  rest: string[];
  /** the full command path, e.g. ["job", "submit"] */
  path: string[];
}

export interface CommandMeta {
  name: string;
  description: string;
  alias?: string | string[];
  hidden?: boolean;
  /** accepts arguments after `--` (passed to the agent, …) */
  passthrough?: boolean;
  examples?: string[];
  /** the root's help lists its commands in these groups, in this order ("job submit": a subcommand) */
  groups?: { title: string; commands: string[] }[];
}

export type Lazy<T> = T | (() => T | Promise<T>);

export interface MamCommand {
  meta: CommandMeta;
  args?: ArgsDef;
  subCommands?: Record<string, Lazy<MamCommand>>;
  /** returns the exit code (default 0) */
  run?: (ctx: RunContext) => Promise<number | void> | number | void;
}

export function defineCommand(c: MamCommand): MamCommand {
  return c;
}

/** typed accessors for parsed args */
export const str = (a: ParsedArgs, k: string): string | undefined => {
  const v = a[k];
  return typeof v === "string" ? v : undefined;
};
export const bool = (a: ParsedArgs, k: string): boolean => a[k] === true;

/** flags that many commands share */
export const workspaceArg: ArgsDef = {
  workspace: { type: "string", description: "workspace folder (default: MAM_WORKSPACE, the nearest folder with .mam/, or the cwd)", valueHint: "DIR" },
};
export const jsonArg: ArgsDef = {
  json: { type: "boolean", description: "print exactly one JSON document on stdout" },
};
