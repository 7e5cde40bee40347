// Argument parsing in the style of herdr 0.8.0's hand-written parser: the positional ids first,
// then `--flag value` pairs. `--flag=value`, flags before a positional, and unknown flags are
// usage errors (exit 2), with herdr's messages ("usage: …", "unknown option: …",
// "missing value for …", "missing required …"). 0.8.2's `pane read` and `pane wait-output`
// (src/cli/pane.rs parse_pane_read_args / parse_pane_wait_output_args, ecddecec) take the
// options before or after the pane id and `--flag=value` for their value options
// (src/cli.rs expand_equals_args): parseAnyOrder.

export class CliUsage extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CliUsage";
  }
}

/** a bad option value that herdr reports as a raw Rust error ("Error: …", exit 1) */
export class CliRawError extends Error {}

export type FlagKind = "value" | "bool" | "multi";

export interface Spec {
  usage: string;
  /** positional names, in order; a trailing "?" marks an optional one */
  positional?: readonly string[];
  /** after the positionals, every remaining word is text (joined or kept as a list) */
  rest?: { name: string; min: number };
  flags?: Record<string, FlagKind>;
  /** positionals are taken verbatim even when they look like flags (agent prompt) */
  literal?: boolean;
  /**
   * 0.8.2: options in any order, and these value options also as `--flag=value` (parseAnyOrder;
   * a bad value is then a usage error, exit 2)
   */
  anyOrder082?: readonly string[];
}

export interface Parsed {
  pos: Record<string, string | undefined>;
  rest: string[];
  flags: Record<string, string | undefined>;
  multi: Record<string, string[]>;
  bools: Set<string>;
  /** the bool flags in the order given (for last-one-wins pairs like --focus/--no-focus) */
  boolOrder: string[];
}

export function parseArgs(args: string[], spec: Spec): Parsed {
  const out: Parsed = { pos: {}, rest: [], flags: {}, multi: {}, bools: new Set(), boolOrder: [] };
  let i = 0;
  for (const name of spec.positional ?? []) {
    const optional = name.endsWith("?");
    const key = optional ? name.slice(0, -1) : name;
    const a = args[i];
    if (a === undefined || (!spec.literal && a.startsWith("--") && a.length > 2)) {
      if (optional) continue;
      throw new CliUsage(spec.usage);
    }
    out.pos[key] = a;
    i++;
  }
  if (spec.rest) {
    out.rest = args.slice(i);
    if (out.rest.length < spec.rest.min) throw new CliUsage(spec.usage);
    return out;
  }
  const flags = spec.flags ?? {};
  while (i < args.length) {
    const a = args[i]!;
    const kind = flags[a];
    if (!kind) {
      if (a === "--help" || a === "-h") throw new CliUsage(spec.usage);
      throw new CliUsage(a.startsWith("-") ? `unknown option: ${a}` : `unexpected argument: ${a}\n${spec.usage}`);
    }
    if (kind === "bool") {
      out.bools.add(a);
      out.boolOrder.push(a);
      i++;
      continue;
    }
    const v = args[i + 1];
    if (v === undefined) throw new CliUsage(`missing value for ${a}`);
    if (kind === "multi") (out.multi[a] ??= []).push(v);
    else out.flags[a] = v;
    i += 2;
  }
  return out;
}

/** herdr 0.8.2's expand_equals_args: `--flag=value` → `--flag value`, only for these flags */
export function expandEquals(args: string[], valueFlags: readonly string[]): string[] {
  return args.flatMap((a) => {
    const eq = a.indexOf("=");
    return eq > 0 && valueFlags.includes(a.slice(0, eq)) ? [a.slice(0, eq), a.slice(eq + 1)] : [a];
  });
}

/**
 * 0.8.2's order-free parse of one positional id and options: a second positional is "unexpected
 * argument", an unknown `-…` word "unknown option", no positional the usage line
 */
export function parseAnyOrder(raw: string[], spec: Spec): Parsed {
  const args = expandEquals(raw, spec.anyOrder082 ?? []);
  const out: Parsed = { pos: {}, rest: [], flags: {}, multi: {}, bools: new Set(), boolOrder: [] };
  const key = (spec.positional ?? [])[0]?.replace(/\?$/, "");
  const flags = spec.flags ?? {};
  for (let i = 0; i < args.length; ) {
    const a = args[i]!;
    const kind = flags[a];
    if (kind === "bool") {
      out.bools.add(a);
      out.boolOrder.push(a);
      i++;
    } else if (kind) {
      const v = args[i + 1];
      if (v === undefined) throw new CliUsage(`missing value for ${a}`);
      if (kind === "multi") (out.multi[a] ??= []).push(v);
      else out.flags[a] = v;
      i += 2;
    } else if (a.startsWith("-")) {
      throw new CliUsage(`unknown option: ${a}`);
    } else {
      if (key === undefined || out.pos[key] !== undefined) throw new CliUsage(`unexpected argument: ${a}`);
      out.pos[key] = a;
      i++;
    }
  }
  if (key !== undefined && out.pos[key] === undefined) throw new CliUsage(spec.usage);
  return out;
}

/**
 * a u32 flag value (`--lines`): 0.8.0's parse_u32_flag(..)? ends the command with a raw
 * `Error: invalid value for --lines: X`, exit 1 (src/cli.rs:904-914; HEAD makes it exit 2)
 */
export function parseU32(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) > 4294967295) throw new CliRawError(`invalid value for ${flag}: ${v}`);
  return Number(v);
}

/** a u64 flag value parsed with 0.8.0's parse_u64_flag(..)? (wait-output --timeout, --seq): a raw error, exit 1 */
export function parseU64Raw(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) throw new CliRawError(`invalid value for ${flag}: ${v}`);
  return Number(v);
}

export function parseU64(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) throw new CliUsage(`invalid value for ${flag}: ${v}`);
  return Number(v);
}

export function parseFloatFlag(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === "" || !Number.isFinite(n)) throw new CliUsage(`invalid value for ${flag}: ${v}`);
  return n;
}

export function parseEnv(values: string[] | undefined): Record<string, string> | undefined {
  if (!values?.length) return undefined;
  const env: Record<string, string> = {};
  for (const kv of values) {
    const eq = kv.indexOf("=");
    if (eq <= 0) throw new CliUsage(`invalid --env value: ${kv} (expected KEY=VALUE)`);
    env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return env;
}

export function parseSource(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  if (v === "visible" || v === "recent" || v === "detection") return v;
  if (v === "recent-unwrapped" || v === "recent_unwrapped") return "recent_unwrapped";
  throw new CliRawError(`invalid read source: ${v}`);
}

export function parseFormat(v: string | undefined): "text" | "ansi" | undefined {
  if (v === undefined) return undefined;
  if (v === "text" || v === "ansi") return v;
  throw new CliRawError(`invalid read format: ${v}`);
}

export function parseDirection(v: string | undefined): "right" | "down" | undefined {
  if (v === undefined) return undefined;
  if (v === "right" || v === "down") return v;
  throw new CliUsage(`invalid split direction: ${v}`);
}

const STATUSES = ["idle", "working", "blocked", "done", "unknown"];

export function parseStatuses(values: string[] | undefined): string[] | undefined {
  if (!values?.length) return undefined;
  for (const v of values) if (!STATUSES.includes(v)) throw new CliUsage(`invalid agent status: ${v} (expected idle, working, blocked, done, or unknown)`);
  return values;
}

export function parseState(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  if (!["idle", "working", "blocked", "unknown"].includes(v)) throw new CliUsage(`invalid pane agent state: ${v} (expected idle, working, blocked, or unknown)`);
  return v;
}
