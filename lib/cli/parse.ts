// Strict argument parsing (citty accepts unknown flags and lets repeated flags win silently).
// Unknown flags, missing required flags, repeated scalar flags and stray positionals are usage
// errors (SPEC §1), in mam's own words: an unknown flag or command names the nearest known one
// ("did you mean --agent?"), never the parser's text.
import { parseArgs } from "node:util";
import { MamError, usageError } from "../sys/errors.ts";
import { didYouMean } from "../sys/near.ts";
import type { ArgsDef, MamCommand, ParsedArgs } from "./command.ts";

/** the flags a command knows, as typed (`--agent`, `-n`) */
function flagNames(defs: ArgsDef): string[] {
  const names: string[] = [];
  for (const [name, def] of Object.entries(defs)) {
    if (def.type === "positional") continue;
    names.push(`--${name}`);
    for (const a of aliases(def)) names.push(a.length === 1 ? `-${a}` : `--${a}`);
  }
  return names;
}

/** every flag token of argv (before any `--`) is one the command knows, with a value where it needs one */
function checkFlags(own: string[], defs: ArgsDef, cmdName: string): void {
  const see = `see: mam ${cmdName} --help`;
  const unknown = (flag: string): MamError => usageError(`${cmdName}: unknown flag '${flag}'`, `${didYouMean(flag, flagNames(defs))}${see}`);
  const short = new Map<string, string>();
  for (const [name, def] of Object.entries(defs)) if (def.type !== "positional") for (const a of aliases(def)) if (a.length === 1) short.set(a, name);
  for (const tok of own) {
    if (tok === "-" || !tok.startsWith("-")) continue;
    if (!tok.startsWith("--")) {
      // a short flag (-x, -xVALUE): the parser takes its value as it comes
      if (!short.has(tok[1]!)) throw unknown(tok.slice(0, 2));
      continue;
    }
    // `--flag value` was joined into `--flag=value` above: a string flag alone had no value
    const eq = tok.indexOf("=");
    const name = tok.slice(2, eq < 0 ? undefined : eq);
    const def = Object.hasOwn(defs, name) ? defs[name] : undefined;
    if (!def || def.type === "positional") throw unknown(`--${name}`);
    if (def.type === "boolean" && eq >= 0) throw usageError(`${cmdName}: --${name} takes no value (got '${tok}')`, see);
    if (def.type !== "boolean" && eq < 0) throw usageError(`${cmdName}: --${name} needs a value`, see);
  }
}

export interface Parsed {
  args: ParsedArgs;
  rest: string[];
}

function aliases(def: object): string[] {
  const a = (def as { alias?: string | string[] }).alias;
  return a === undefined ? [] : Array.isArray(a) ? a : [a];
}

export function parseCommandArgs(cmd: MamCommand, argv: string[], cmdName: string): Parsed {
  const defs: ArgsDef = cmd.args ?? {};
  const dd = argv.indexOf("--");
  let own = dd >= 0 ? argv.slice(0, dd) : argv;
  const rest = dd >= 0 ? argv.slice(dd + 1) : [];
  if (dd >= 0 && !cmd.meta.passthrough) {
    throw usageError(`'${cmdName}' takes no arguments after --`);
  }

  // `--flag value` of a string flag takes the next token whatever it looks like (getopt style:
  // `--detail -x` works); an optional-value flag (`--watch`) alone means its default value
  const joined: string[] = [];
  for (let i = 0; i < own.length; i++) {
    const tok = own[i]!;
    const m = /^--([^=]+)$/.exec(tok);
    const def = m ? defs[m[1]!] : undefined;
    if (def && def.type !== "boolean" && def.type !== "positional") {
      const next = own[i + 1];
      if (def.optionalValue !== undefined && (next === undefined || !(def.optionalValuePattern ?? /^\d+(\.\d+)?$/).test(next))) {
        joined.push(`--${m![1]}=${def.optionalValue}`);
        continue;
      }
      if (next !== undefined) {
        joined.push(`--${m![1]}=${next}`);
        i++;
        continue;
      }
    }
    joined.push(tok);
  }
  own = joined;

  const options: Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }> = {};
  const positionals: [string, (typeof defs)[string]][] = [];
  for (const [name, def] of Object.entries(defs)) {
    if (def.type === "positional") {
      positionals.push([name, def]);
      continue;
    }
    const short = aliases(def).find((a) => a.length === 1);
    options[name] = { type: def.type === "boolean" ? "boolean" : "string", multiple: true, ...(short ? { short } : {}) };
  }

  checkFlags(own, defs, cmdName);
  let parsed;
  try {
    parsed = parseArgs({ args: own, options, allowPositionals: true, strict: true, tokens: true });
  } catch (e) {
    const msg = String((e as Error).message).split("\n")[0]!.replace(/\.$/, "");
    throw usageError(`${cmdName}: ${msg}`, `see: mam ${cmdName} --help`);
  }

  const args: ParsedArgs = {};
  for (const [name, def] of Object.entries(defs)) {
    if (def.type === "positional") continue;
    const v = (parsed.values as Record<string, unknown>)[name] as (string | boolean)[] | undefined;
    if (v === undefined) {
      if (def.required) throw usageError(`${cmdName}: missing required flag --${name}`, `see: mam ${cmdName} --help`);
      if (def.default !== undefined) args[name] = def.default as string | boolean;
      else if (def.multiple) args[name] = [];
      continue;
    }
    if (def.multiple) {
      args[name] = v as string[];
    } else {
      if (v.length > 1) throw usageError(`${cmdName}: --${name} given more than once`);
      if (def.type === "enum" && def.options && !def.options.includes(String(v[0]))) {
        throw usageError(`${cmdName}: --${name} must be one of ${def.options.join(", ")} (got '${v[0]}')`);
      }
      args[name] = v[0];
    }
  }

  const pos = parsed.positionals;
  let i = 0;
  for (const [name, def] of positionals) {
    if (def.variadic) {
      args[name] = pos.slice(i);
      if (def.required !== false && (args[name] as string[]).length === 0) {
        throw usageError(`${cmdName}: missing ${name.toUpperCase()}`, `see: mam ${cmdName} --help`);
      }
      i = pos.length;
      continue;
    }
    if (i < pos.length) args[name] = pos[i++];
    else if (def.required !== false && def.default === undefined) {
      throw usageError(`${cmdName}: missing ${name.toUpperCase()}`, `see: mam ${cmdName} --help`);
    } else if (def.default !== undefined) args[name] = def.default as string;
  }
  if (i < pos.length) throw usageError(`${cmdName}: unexpected argument '${pos[i]}'`, `see: mam ${cmdName} --help`);
  return { args, rest };
}
