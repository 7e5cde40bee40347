// The building blocks of op inputs (zod/mini) and the one check of an input against its op: the
// field types mam uses (session names, job ids, seconds, texts, choices), each owning its limits
// and its message, and `parseInput`, which turns zod's issues into one usage error (exit 2) that
// names the field as {{field}}, for the front door to spell (--brief-file, brief_file, NAME).
import * as z from "zod/mini";
import { usageError } from "../sys/errors.ts";
import { isValidJobId, isValidName } from "../sys/names.ts";
import { isValidAddress } from "../team/host.ts";
import { field, spellFields } from "../sys/fields.ts";
import type { InputOf, Op, Shape } from "./op.ts";

const NAME_HINT = "names are 1-64 characters of [A-Za-z0-9._-], starting with a letter or digit";

const shown = (v: unknown) => {
  const s = String(v);
  return s.length > 80 ? `${s.slice(0, 80)}…` : s;
};

/** a session (or server) name: [A-Za-z0-9][A-Za-z0-9._-]{0,63} */
export const name = (what: string, description: string) =>
  z.string().check(
    z.refine(isValidName, { error: (iss) => `invalid ${what} '${shown(iss.input)}'`, params: { hint: NAME_HINT } }),
    z.describe(description),
  );

export const sessionName = (description = "session name, as `mam status` lists it") => name("session name", description);

/** a session here (NAME) or on another host of the team (NAME@HOST) */
export const sessionAddress = (description: string) =>
  z.string().check(
    z.refine(isValidAddress, { error: (iss) => `invalid session '${shown(iss.input)}'`, params: { hint: `${NAME_HINT}; NAME@HOST names a session on another host` } }),
    z.describe(description),
  );

export const jobId = (description = "job id: 8 hex digits") =>
  z.string().check(z.refine(isValidJobId, { error: (iss) => `invalid job id '${shown(iss.input)}'`, params: { hint: "job ids are 8 lowercase hex digits" } }), z.describe(description));

/** a text: not empty (unless min 0), at most max characters, on one line when oneLine */
export const text = (description: string, o: { min?: number; max?: number; oneLine?: boolean } = {}) => {
  const checks: z.core.$ZodCheck<string>[] = [];
  const min = o.min ?? 1;
  if (min > 0) checks.push(z.refine((v: string) => v.trim().length >= min, { error: "is empty", params: { about: true } }));
  if (o.max !== undefined) checks.push(z.maxLength(o.max));
  if (o.oneLine) checks.push(z.refine((v: string) => !/[\n\r]/.test(v), { error: "must be one line", params: { about: true } }));
  return z.string().check(...checks, z.describe(description));
};

/** a job id, or a schedule id (`s` and 7 hex digits: lib/ops/job/schedule.ts) */
export const jobOrScheduleId = (description: string) =>
  z.string().check(
    z.refine((v: string) => isValidJobId(v) || /^s[0-9a-f]{7}$/.test(v), { error: (iss) => `invalid job or schedule id '${shown(iss.input)}'`, params: { hint: "job ids are 8 lowercase hex digits; schedule ids s and 7" } }),
    z.describe(description),
  );

/** a whole number of seconds, 0..max */
export const seconds = (description: string, max = 7 * 86400) => z.int().check(z.minimum(0), z.maximum(max), z.describe(description));

/** a number of seconds that may have a fraction (a wait's timeout) */
export const secondsFrac = (description: string, max = 7 * 86400) => z.number().check(z.minimum(0), z.maximum(max), z.describe(description));

/** an amount of US dollars: more than 0, at most a million */
export const usd = (description: string) =>
  z.number().check(z.refine((v: number) => v > 0, { error: "must be more than 0", params: { about: true } }), z.maximum(1e6), z.describe(description));

/** a whole count within [min, max] */
export const count = (description: string, min: number, max: number) => z.int().check(z.minimum(min), z.maximum(max), z.describe(description));

export const flag = (description: string) => z.boolean().check(z.describe(description));

export const choice = <const T extends readonly [string, ...string[]]>(values: T, description: string) => z.enum(values).check(z.describe(description));

export const list = (description: string) => z.array(z.string().check(z.minLength(1))).check(z.describe(description));

export const optional = z.optional;
export const withDefault = z._default;

// ---- reading a shape (the CLI builds its flags from it, the MCP server its schema) -----------

export type FieldKind = "string" | "number" | "boolean" | "enum" | "array";

export interface FieldInfo {
  kind: FieldKind;
  /** integers only */
  int: boolean;
  required: boolean;
  default?: unknown;
  description: string;
  /** enum: its values */
  values?: string[];
}

type Def = { type: string; innerType?: z.ZodMiniType; defaultValue?: unknown; entries?: Record<string, string>; format?: string; check?: string };
const defOf = (s: z.ZodMiniType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** what the CLI and MCP need to know of a field */
export function fieldInfo(schema: z.ZodMiniType): FieldInfo {
  let s = schema;
  let required = true;
  let dflt: unknown;
  let description = z.globalRegistry.get(s)?.description;
  for (;;) {
    const d = defOf(s);
    if (d.type === "optional") required = false;
    else if (d.type === "default") {
      required = false;
      dflt = d.defaultValue;
    } else break;
    s = d.innerType!;
    description ??= z.globalRegistry.get(s)?.description;
  }
  const d = defOf(s);
  const kind: FieldKind = d.type === "enum" ? "enum" : d.type === "array" ? "array" : d.type === "boolean" ? "boolean" : d.type === "number" ? "number" : "string";
  return {
    kind,
    int: d.type === "number" && (d.format === "safeint" || d.format === "int32"),
    required,
    ...(dflt !== undefined ? { default: dflt } : {}),
    description: description ?? "",
    ...(kind === "enum" ? { values: Object.values(d.entries ?? {}) } : {}),
  };
}

/**
 * the shape with its fields' descriptions spelled for a front door: a description may name other
 * fields as {{field}} ("with {{worktree}}: …"), as messages do (the schemas are copied, not changed)
 */
export function spelledShape(shape: Shape, spell: (field: string, value?: string) => string): Shape {
  const out: Shape = {};
  for (const [k, schema] of Object.entries(shape)) {
    const d = fieldInfo(schema).description;
    if (!d.includes("{{")) {
      out[k] = schema;
      continue;
    }
    const c = z.clone(schema);
    z.globalRegistry.add(c, { ...(z.globalRegistry.get(c) ?? {}), description: spellFields(d, spell) });
    out[k] = c;
  }
  return out;
}

// ---- checking an input -----------------------------------------------------------------------

export interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  input?: unknown;
  expected?: string;
  minimum?: number | bigint;
  maximum?: number | bigint;
  values?: unknown[];
  keys?: string[];
  /** hint: the fix, shown after the message; about: the message says something about the field */
  params?: { hint?: string; about?: boolean };
  origin?: string;
}

/** one issue as mam says it, naming its field as {{field}} */
export function issueText(i: Issue): string {
  const f = i.path.length ? field(String(i.path[0])) : "the input";
  const got = i.input === undefined ? "" : ` (got ${typeof i.input === "string" ? `'${shown(i.input)}'` : shown(JSON.stringify(i.input))})`;
  switch (i.code) {
    case "unrecognized_keys":
      return `unknown argument${(i.keys ?? []).length > 1 ? "s" : ""} ${(i.keys ?? []).map((k) => `'${k}'`).join(", ")}`;
    case "invalid_type":
      if (i.input === undefined) return `${f} is missing`;
      return `${f} must be ${i.expected === "int" ? "a whole number" : i.expected === "array" ? "a list" : `a ${i.expected}`}${got}`;
    case "too_small":
      return i.origin === "array" ? `${f} needs at least ${i.minimum} item(s)` : `${f} must be at least ${i.minimum}${got}`;
    case "too_big":
      return i.origin === "array" ? `${f} takes at most ${i.maximum} item(s)` : i.origin === "string" ? `${f} is longer than ${i.maximum} characters` : `${f} must be at most ${i.maximum}${got}`;
    case "invalid_value": {
      const v = (i.values ?? []).map(String);
      return `${f} must be ${v.length === 2 ? `${v[0]} or ${v[1]}` : `one of ${v.join(", ")}`}${got}`;
    }
    default:
      if (i.params?.about) return `${f} ${i.message}`;
      return i.message && i.message !== "Invalid input" ? i.message : `${f} is not valid${got}`;
  }
}

const shapes = new WeakMap<object, Shape>();
const schemas = new WeakMap<object, z.ZodMiniObject>();

/** the op's input shape, built once (building zod schemas is the slow part of a command's start) */
export function shapeOf(op: Op): Shape {
  let s = shapes.get(op);
  if (!s) {
    s = op.input();
    shapes.set(op, s);
  }
  return s;
}

/** the op's input schema, built once */
export function inputSchema(op: Op): z.ZodMiniObject {
  let s = schemas.get(op);
  if (!s) {
    s = z.strictObject(shapeOf(op));
    schemas.set(op, s);
  }
  return s;
}

/**
 * the input with its defaults, or a usage error (exit 2) naming every field that is wrong; a front
 * door may say more about a field that does not fit the schema (`shapeError`, e.g. MCP: the tool)
 */
export function parseInput<S extends Shape>(op: Op<S>, raw: unknown, schema: z.ZodMiniObject = inputSchema(op), shapeError?: (message: string, hint?: string) => Error): InputOf<S> {
  const r = z.safeParse(schema, raw ?? {}, { reportInput: true });
  if (!r.success) {
    const issues = r.error.issues as unknown as Issue[];
    const hint = issues.find((i) => i.params?.hint)?.params?.hint;
    const message = issues.map(issueText).join("; ");
    throw shapeError ? shapeError(message, hint) : usageError(message, hint);
  }
  const input = r.data as InputOf<S>;
  op.check?.(input);
  return input;
}

