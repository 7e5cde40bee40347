// A small JSON Schema (2020-12) validator for the subset herdr-api.schema.json uses: type, enum,
// const, properties, required, additionalProperties, items, oneOf, anyOf, allOf, not, $ref into
// the same document, minimum/maximum, minLength/maxLength, minItems/maxItems, min/maxProperties,
// propertyNames, pattern, boolean schemas. `format` is an annotation (as 2020-12 says), except the
// integer formats herdr uses (uint, uint16, uint32, uint64), which are checked as ranges.
// A keyword that would change the outcome but is not implemented throws, so nothing passes by
// accident.

export interface SchemaError {
  /** JSON pointer of the offending value ("" = the root) */
  path: string;
  message: string;
}

type Schema = boolean | { [k: string]: unknown };

const IGNORED = new Set(["$schema", "$id", "$comment", "$defs", "definitions", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "schemas", "protocol", "schema_version"]);
const HANDLED = new Set([
  "$ref",
  "type",
  "enum",
  "const",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "oneOf",
  "anyOf",
  "allOf",
  "not",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "propertyNames",
  "pattern",
  "format",
]);

const UINT_MAX: Record<string, number> = { uint8: 255, uint16: 65535, uint32: 4294967295, uint: Number.MAX_SAFE_INTEGER, uint64: Number.MAX_SAFE_INTEGER };

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

function matchesType(v: unknown, t: string): boolean {
  switch (t) {
    case "null":
      return v === null;
    case "boolean":
      return typeof v === "boolean";
    case "string":
      return typeof v === "string";
    case "number":
      return typeof v === "number" && Number.isFinite(v);
    case "integer":
      return typeof v === "number" && Number.isInteger(v);
    case "array":
      return Array.isArray(v);
    case "object":
      return typeof v === "object" && v !== null && !Array.isArray(v);
    default:
      throw new Error(`unknown JSON Schema type '${t}'`);
  }
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return ka.length === kb.length && ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

const esc = (k: string) => k.replace(/~/g, "~0").replace(/\//g, "~1");

export class SchemaValidator {
  private cache = new Map<string, Schema>();
  private patterns = new Map<string, RegExp>();

  constructor(readonly root: Record<string, unknown>) {}

  /** resolve a local reference "#/a/b" */
  resolve(ref: string): Schema {
    const hit = this.cache.get(ref);
    if (hit !== undefined) return hit;
    if (!ref.startsWith("#")) throw new Error(`only local $ref is supported: ${ref}`);
    let cur: unknown = this.root;
    for (const raw of ref.slice(1).split("/").filter(Boolean)) {
      const part = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
      if (typeof cur !== "object" || cur === null || !(part in (cur as object))) throw new Error(`unresolvable $ref ${ref}`);
      cur = (cur as Record<string, unknown>)[part];
    }
    this.cache.set(ref, cur as Schema);
    return cur as Schema;
  }

  /** validate value against a schema or a "#/…" reference; [] means valid */
  validate(schema: Schema | string, value: unknown): SchemaError[] {
    const s = typeof schema === "string" ? this.resolve(schema) : schema;
    const errors: SchemaError[] = [];
    this.check(s, value, "", errors);
    return errors;
  }

  private regex(p: string): RegExp {
    let r = this.patterns.get(p);
    if (!r) {
      r = new RegExp(p, "u");
      this.patterns.set(p, r);
    }
    return r;
  }

  private check(schema: Schema, v: unknown, path: string, out: SchemaError[]): void {
    if (schema === true) return;
    if (schema === false) {
      out.push({ path, message: "no value is allowed here (false schema)" });
      return;
    }
    if (typeof schema !== "object" || schema === null) throw new Error(`invalid schema at ${path}`);
    for (const k of Object.keys(schema)) {
      if (!HANDLED.has(k) && !IGNORED.has(k)) throw new Error(`unsupported JSON Schema keyword '${k}'`);
    }
    const s = schema as Record<string, any>;
    if (s.$ref !== undefined) this.check(this.resolve(s.$ref), v, path, out);
    if (s.type !== undefined) {
      const types: string[] = Array.isArray(s.type) ? s.type : [s.type];
      if (!types.some((t) => matchesType(v, t))) {
        out.push({ path, message: `expected ${types.join(" or ")}, got ${typeOf(v)}` });
        return;
      }
    }
    if (s.enum !== undefined && !(s.enum as unknown[]).some((e) => deepEqual(e, v))) out.push({ path, message: `${JSON.stringify(v)} is not one of ${JSON.stringify(s.enum)}` });
    if ("const" in s && !deepEqual(s.const, v)) out.push({ path, message: `expected ${JSON.stringify(s.const)}, got ${JSON.stringify(v)}` });
    if (typeof v === "number") {
      if (s.minimum !== undefined && v < s.minimum) out.push({ path, message: `${v} < minimum ${s.minimum}` });
      if (s.maximum !== undefined && v > s.maximum) out.push({ path, message: `${v} > maximum ${s.maximum}` });
      if (s.exclusiveMinimum !== undefined && v <= s.exclusiveMinimum) out.push({ path, message: `${v} <= exclusiveMinimum ${s.exclusiveMinimum}` });
      if (s.exclusiveMaximum !== undefined && v >= s.exclusiveMaximum) out.push({ path, message: `${v} >= exclusiveMaximum ${s.exclusiveMaximum}` });
      const max = typeof s.format === "string" ? UINT_MAX[s.format] : undefined;
      if (max !== undefined && (!Number.isInteger(v) || v < 0 || v > max)) out.push({ path, message: `${v} is not a ${s.format}` });
    }
    if (typeof v === "string") {
      const len = [...v].length;
      if (s.minLength !== undefined && len < s.minLength) out.push({ path, message: `string shorter than ${s.minLength}` });
      if (s.maxLength !== undefined && len > s.maxLength) out.push({ path, message: `string longer than ${s.maxLength}` });
      if (s.pattern !== undefined && !this.regex(s.pattern).test(v)) out.push({ path, message: `${JSON.stringify(v)} does not match /${s.pattern}/` });
    }
    if (Array.isArray(v)) {
      if (s.minItems !== undefined && v.length < s.minItems) out.push({ path, message: `fewer than ${s.minItems} items` });
      if (s.maxItems !== undefined && v.length > s.maxItems) out.push({ path, message: `more than ${s.maxItems} items` });
      if (s.items !== undefined) v.forEach((x, i) => this.check(s.items, x, `${path}/${i}`, out));
    }
    if (typeof v === "object" && v !== null && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      const keys = Object.keys(o);
      for (const r of (s.required as string[] | undefined) ?? []) if (!(r in o)) out.push({ path, message: `missing required property '${r}'` });
      const props = (s.properties ?? {}) as Record<string, Schema>;
      for (const k of keys) {
        const p = `${path}/${esc(k)}`;
        if (k in props) this.check(props[k]!, o[k], p, out);
        else if (s.additionalProperties !== undefined) this.check(s.additionalProperties, o[k], p, out);
        if (s.propertyNames !== undefined) this.check(s.propertyNames, k, p, out);
      }
      if (s.minProperties !== undefined && keys.length < s.minProperties) out.push({ path, message: `fewer than ${s.minProperties} properties` });
      if (s.maxProperties !== undefined && keys.length > s.maxProperties) out.push({ path, message: `more than ${s.maxProperties} properties` });
    }
    if (s.allOf !== undefined) for (const sub of s.allOf as Schema[]) this.check(sub, v, path, out);
    if (s.anyOf !== undefined) {
      const branches = (s.anyOf as Schema[]).map((sub) => this.branch(sub, v));
      if (!branches.some((e) => e.length === 0)) this.pushBest(s.anyOf, branches, v, path, out, "anyOf");
    }
    if (s.oneOf !== undefined) {
      const branches = (s.oneOf as Schema[]).map((sub) => this.branch(sub, v));
      const ok = branches.filter((e) => e.length === 0).length;
      if (ok === 0) this.pushBest(s.oneOf, branches, v, path, out, "oneOf");
      else if (ok > 1) out.push({ path, message: `matches ${ok} branches of oneOf, expected exactly one` });
    }
    if (s.not !== undefined && this.validate(s.not, v).length === 0) out.push({ path, message: "matches a 'not' schema" });
  }

  /**
   * errors of one oneOf/anyOf branch. A branch whose discriminator (a `const` on type, event or
   * method) differs from the value's fails at once: same outcome, without walking the rest.
   */
  private branch(sub: Schema, v: unknown): SchemaError[] {
    if (typeof sub === "object" && sub !== null && typeof v === "object" && v !== null && !Array.isArray(v)) {
      const props = (sub as Record<string, any>).properties as Record<string, any> | undefined;
      if (props) {
        for (const d of ["type", "event", "method"]) {
          const c = props[d];
          if (c && typeof c === "object" && "const" in c && d in (v as object) && !deepEqual(c.const, (v as Record<string, unknown>)[d]))
            return [{ path: `/${d}`, message: `expected ${JSON.stringify(c.const)}` }];
        }
      }
    }
    return this.validate(sub, v);
  }

  /** for a failed oneOf/anyOf, report the errors of the branch whose discriminator matches */
  private pushBest(branches: Schema[], errs: SchemaError[][], v: unknown, path: string, out: SchemaError[], kw: string): void {
    const o = typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
    if (o) {
      for (let i = 0; i < branches.length; i++) {
        const b = branches[i];
        const props = typeof b === "object" && b ? ((b as Record<string, any>).properties as Record<string, any> | undefined) : undefined;
        if (!props) continue;
        const disc = ["type", "event", "method"].find((d) => props[d] && "const" in props[d] && o[d] === props[d].const);
        if (disc) {
          out.push(...errs[i]!.map((e) => ({ path: e.path ? `${path}${e.path}` : path, message: e.message })));
          return;
        }
      }
    }
    const fewest = errs.reduce((a, b) => (b.length < a.length ? b : a));
    out.push({ path, message: `matches no branch of ${kw}; closest: ${fewest.map((e) => `${e.path || "/"}: ${e.message}`).join("; ")}` });
  }
}

/** one line per error, for test failure messages */
export function formatErrors(errors: SchemaError[]): string {
  return errors.map((e) => `${e.path || "/"}: ${e.message}`).join("\n");
}
