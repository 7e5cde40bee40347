// An operation (lib/ops) as a command: its flags come from its input (a field's description is the
// flag's help; `brief_file` is spelled `--brief-file` unless the op's cli block says otherwise),
// --workspace and --json are added, the parsed flags become the op's input and are checked by it,
// and the result is printed once: notices on stderr (`WARNING: …`), then the text on stdout, or
// one JSON document with --json. Errors come back with their {{field}}s spelled as flags. The
// exit code is the op's (exitCode), else 0; an interruptible op exits 130/143 on SIGINT/SIGTERM.
// A command that does more than its op (status --watch, job submit --wait, reconcile --subscribe)
// decorates it with a CliExtra (lib/cli/ops.ts).
import type { Deps } from "../ops/deps.ts";
import { fieldInfo, type FieldInfo, inputSchema, parseInput, shapeOf } from "../ops/input.ts";
import type { AnyOp, CliSpec, FlagSpec, OpContext, Shape } from "../ops/op.ts";
import { spellFields } from "../sys/fields.ts";
import { EXIT, MamError } from "../sys/errors.ts";
import { err, out, outJson, useColor } from "../sys/io.ts";
import { noticeLine, noticesOf, withNoticeLines } from "../sys/notice.ts";
import { resolveWorkspace } from "../sys/paths.ts";
import { parseCommandArgs } from "./parse.ts";
import { type ArgDef, type ArgsDef, jsonArg, type MamCommand, type ParsedArgs, type RunContext, str, workspaceArg } from "./command.ts";

/** what a command adds to its op: flags of its own, their meaning, or a run of its own */
export interface CliExtra {
  args?: ArgsDef;
  /** fill input fields from the command's own flags (raw: the fields given so far) */
  toInput?(args: ParsedArgs, raw: Record<string, unknown>): void;
  /** how a field the command fills itself is named in messages (mode=hard: "--hard") */
  spell?(field: string, value?: string): string | undefined;
  /** the command's own run; `run()` runs the op as the plain command would and prints its result */
  run?(c: OpRun): Promise<number | void>;
}

/** one command run of an op, for a CliExtra */
export interface OpRun {
  ctx: RunContext;
  ws: string;
  json: boolean;
  /** the input from the flags (checked) */
  input: Record<string, unknown>;
  deps(): Promise<Deps>;
  /** run the op with this input (default: the flags'); its result */
  exec(input?: Record<string, unknown>, signal?: AbortSignal): Promise<unknown>;
  /** print a result as the plain command would; its exit code */
  print(out: unknown): number;
  /** the op's plain run: exec, then print */
  run(): Promise<number>;
}

const kebab = (f: string) => f.replaceAll("_", "-");

function specOf(op: AnyOp): CliSpec {
  if (!op.cli) throw new Error(`op ${op.name} has no command`);
  return op.cli;
}

/** a field (set to a value) as the command line names it in a message: --brief-file, --type loop, NAME */
export function spellFlag(op: AnyOp, extra: CliExtra | undefined, f: string, value?: string): string {
  const spec = specOf(op);
  const own = extra?.spell?.(f, value);
  if (own !== undefined) return own;
  if (spec.positionals?.includes(f)) return f.toUpperCase();
  if (spec.rest === f) return "the arguments after --";
  const fs: FlagSpec = spec.flags?.[f] ?? {};
  const flag = `--${fs.flag ?? (fs.negated ? `no-${kebab(f)}` : kebab(f))}`;
  return value === undefined || value === "true" ? flag : `${flag} ${value}`;
}

function argOf(f: string, info: FieldInfo, fs: FlagSpec, positional: boolean, spell: (field: string, value?: string) => string): ArgDef {
  const description = spellFields(fs.description ?? info.description, spell);
  if (positional) {
    return { type: "positional", description, valueHint: f.toUpperCase(), ...(info.kind === "array" ? { variadic: true } : {}), ...(info.required ? {} : { required: false }) } as ArgDef;
  }
  const base = { description, ...(fs.short ? { alias: fs.short } : {}), ...(info.required && info.kind !== "boolean" ? { required: true } : {}) };
  if (info.kind === "boolean") return { type: "boolean", ...base } as ArgDef;
  // the help shows a text or number default (citty: "(Default: …)"); the op fills it in either way
  const shown = (info.kind === "string" || info.kind === "number" || info.kind === "enum") && info.default !== undefined && fs.optionalValue === undefined ? { default: String(info.default) } : {};
  const valueHint = fs.valueHint ?? (info.kind === "number" ? "N" : kebab(f).toUpperCase());
  // an enum is a text flag whose hint lists the values; the op's check says what is wrong with another
  return {
    type: "string",
    valueHint: info.kind === "enum" ? (fs.valueHint ?? info.values!.join("|")) : valueHint,
    ...shown,
    ...(info.kind === "array" ? { multiple: true } : {}),
    ...(fs.optionalValue !== undefined ? { optionalValue: fs.optionalValue, ...(fs.optionalValuePattern ? { optionalValuePattern: fs.optionalValuePattern } : {}) } : {}),
    ...base,
  } as ArgDef;
}

/** the flags of an op's command, in the order of its input */
function argsOf(op: AnyOp, extra?: CliExtra): ArgsDef {
  const spec = specOf(op);
  const shape: Shape = shapeOf(op);
  const spell = (f: string, v?: string) => spellFlag(op, extra, f, v);
  const args: ArgsDef = {};
  for (const p of spec.positionals ?? []) args[p] = argOf(p, fieldInfo(shape[p]!), spec.flags?.[p] ?? {}, true, spell);
  for (const [f, schema] of Object.entries(shape)) {
    if (spec.positionals?.includes(f) || spec.rest === f || spec.hide?.includes(f)) continue;
    const fs = spec.flags?.[f] ?? {};
    const name = fs.flag ?? (fs.negated ? `no-${kebab(f)}` : kebab(f));
    args[name] = argOf(f, fieldInfo(schema), fs, false, spell);
  }
  Object.assign(args, extra?.args ?? {}, workspaceArg, spec.json === false ? {} : jsonArg);
  return args;
}

/** a flag's text as the field's value: numbers for number fields (else the text, which the check refuses) */
function valueOf(info: FieldInfo, v: string): unknown {
  if (info.kind === "number" && /^-?\d+(\.\d+)?$/.test(v.trim())) return Number(v);
  return v;
}

/** the op's raw input from parsed flags: only what was given (the op's defaults fill the rest) */
function rawInput(op: AnyOp, args: ParsedArgs, rest: string[], extra?: CliExtra): Record<string, unknown> {
  const spec = specOf(op);
  const shape: Shape = shapeOf(op);
  const raw: Record<string, unknown> = {};
  for (const [f, schema] of Object.entries(shape)) {
    if (spec.hide?.includes(f)) continue;
    const info = fieldInfo(schema);
    if (spec.rest === f) {
      if (rest.length) raw[f] = rest;
      continue;
    }
    const fs = spec.flags?.[f] ?? {};
    const key = spec.positionals?.includes(f) ? f : (fs.flag ?? (fs.negated ? `no-${kebab(f)}` : kebab(f)));
    const v = args[key];
    if (v === undefined || (Array.isArray(v) && v.length === 0 && !spec.positionals?.includes(f))) continue;
    if (info.kind === "boolean") {
      if (v === true) raw[f] = !fs.negated;
    } else if (info.kind === "array") raw[f] = (Array.isArray(v) ? v : [v]).map((x) => valueOf(info, String(x)));
    else if (typeof v === "string") raw[f] = valueOf(info, v);
  }
  extra?.toInput?.(args, raw);
  return raw;
}

/** the checked input a command line gives an op (what its run would get); errors spelled as flags */
export function commandInput(op: AnyOp, argv: string[], extra = EXTRA_NONE): Record<string, unknown> {
  const { args, rest } = parseCommandArgs(opCommand(op, extra), argv, specOf(op).path);
  try {
    return parseInput(op, rawInput(op, args, rest, extra)) as Record<string, unknown>;
  } catch (e) {
    throw e instanceof MamError ? e.spelled((t) => spellFields(t, (f, v) => spellFlag(op, extra, f, v))) : e;
  }
}

const EXTRA_NONE: CliExtra = {};

/**
 * SIGINT / SIGTERM abort a long wait; the command then returns 130 / 143. The abort's reason is a
 * MamError with that exit code ("interrupted by SIGINT"), for an op that stops with an error
 */
export function interruptible(): { signal: AbortSignal; code: () => number; dispose: () => void } {
  const ac = new AbortController();
  let code: number = EXIT.OK;
  const onInt = () => ((code = EXIT.SIGINT), ac.abort(new MamError("interrupted by SIGINT", EXIT.SIGINT)));
  const onTerm = () => ((code = EXIT.SIGTERM), ac.abort(new MamError("interrupted by SIGTERM", EXIT.SIGTERM)));
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  return {
    signal: ac.signal,
    code: () => code,
    dispose() {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
    },
  };
}

/** print an op's result: notices on stderr, then its text or its JSON document; the exit code */
export function printResult(op: AnyOp, result: unknown, json: boolean): number {
  for (const n of noticesOf(result)) err(noticeLine(n));
  if (json) outJson(op.json ? op.json(result) : withNoticeLines(result));
  else {
    const spec = specOf(op);
    // colour is looked up only by a text that uses it (node:tty costs milliseconds to load)
    const text = spec.print ? spec.print(result) : op.text(result, { get color() { return useColor(); } });
    if (text !== "") (spec.textToStderr?.(result) ? err : out)(text);
  }
  return op.exitCode?.(result) ?? EXIT.OK;
}

const NEVER = new AbortController().signal;

/** the command of an op */
export function opCommand(op: AnyOp, extra?: CliExtra): MamCommand {
  const spec = specOf(op);
  const words = spec.path.split(" ");
  return {
    meta: {
      name: words[words.length - 1]!,
      description: spec.description ?? op.summary,
      ...(spec.alias ? { alias: spec.alias } : {}),
      ...(spec.rest ? { passthrough: true } : {}),
      ...(spec.examples ? { examples: spec.examples } : {}),
    },
    get args() {
      return argsOf(op, extra);
    },
    async run(ctx) {
      const spell = (text: string) => spellFields(text, (f, v) => spellFlag(op, extra, f, v));
      try {
        const ws = resolveWorkspace(str(ctx.args, "workspace"));
        const json = ctx.args.json === true;
        const input = parseInput(op, rawInput(op, ctx.args, ctx.rest, extra), inputSchema(op)) as Record<string, unknown>;
        let deps: Deps | undefined;
        const getDeps = async () => (deps ??= (await import("../ops/wiring.ts")).realDeps(ws, process.env, { warn: (l) => err(l) }));
        const exec = async (i: Record<string, unknown> = input, signal: AbortSignal = NEVER) => {
          const octx: OpContext = { signal, progress: () => {}, surface: "cli", form: json ? "json" : "text" };
          return op.run(await getDeps(), i as never, octx);
        };
        const run = async (): Promise<number> => {
          if (!op.interruptible) return printResult(op, await exec(), json);
          const sig = interruptible();
          try {
            const result = await exec(input, sig.signal);
            if (sig.signal.aborted) return sig.code();
            return printResult(op, result, json);
          } finally {
            sig.dispose();
          }
        };
        if (extra?.run) return await extra.run({ ctx, ws, json, input, deps: getDeps, exec, print: (r) => printResult(op, r, json), run });
        return await run();
      } catch (e) {
        throw e instanceof MamError ? e.spelled(spell) : e;
      }
    },
  };
}
