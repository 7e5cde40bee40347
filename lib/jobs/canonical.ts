// Canonical JSON (SPEC §7.2): keys sorted by code point at every level, no whitespace, non-ASCII
// written as itself (UTF-8), integers only. Byte-identical to Python's
// json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/**
 * the deepest nesting of arrays and objects a payload may have (the payload itself is level 1).
 * Deeper ones are refused before anything walks them: the encoder recurses, and a 100 000-deep
 * `data` from a stranger on the broker used to overflow the stack of the daemon and the waiters.
 */
export const MAX_JSON_DEPTH = 64;

export class CanonicalJsonError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CanonicalJsonError";
  }
}

/** compare two strings by Unicode code point (Python's str order), not by UTF-16 unit */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // a surrogate (0xD800-0xDFFF) stands for a code point above every BMP character
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

function checkString(s: string, where: string): string {
  // a lone surrogate has no UTF-8 form (Python refuses to encode it)
  if (!s.isWellFormed()) throw new CanonicalJsonError(`${where}: string with a lone surrogate`);
  return s;
}

function enc(v: unknown, where: string, out: string[], depth: number): void {
  if (v === null) {
    out.push("null");
  } else if (v === true) {
    out.push("true");
  } else if (v === false) {
    out.push("false");
  } else if (typeof v === "number") {
    if (!Number.isInteger(v)) throw new CanonicalJsonError(`${where}: ${v} is not an integer (only integers are allowed)`);
    if (!Number.isSafeInteger(v)) throw new CanonicalJsonError(`${where}: ${v} is too large to be exact`);
    out.push(String(v === 0 ? 0 : v));
  } else if (typeof v === "string") {
    // JSON.stringify escapes exactly what Python does with ensure_ascii=False: " \ and C0 controls
    out.push(JSON.stringify(checkString(v, where)));
  } else if (depth > MAX_JSON_DEPTH && typeof v === "object") {
    throw new CanonicalJsonError(`${where.length > 40 ? `${where.slice(0, 40)}…` : where}: nested deeper than ${MAX_JSON_DEPTH} levels`);
  } else if (Array.isArray(v)) {
    out.push("[");
    v.forEach((x, i) => {
      if (i) out.push(",");
      enc(x, `${where}[${i}]`, out, depth + 1);
    });
    out.push("]");
  } else if (typeof v === "object") {
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) throw new CanonicalJsonError(`${where}: not a plain object`);
    const keys = Object.keys(v as object).sort(compareCodePoints);
    out.push("{");
    keys.forEach((k, i) => {
      if (i) out.push(",");
      out.push(JSON.stringify(checkString(k, where)), ":");
      enc((v as Record<string, unknown>)[k], `${where}.${k}`, out, depth + 1);
    });
    out.push("}");
  } else {
    throw new CanonicalJsonError(`${where}: ${typeof v} is not JSON`);
  }
}

/** the canonical JSON text of v; throws CanonicalJsonError on floats, unsafe integers, non-JSON values */
export function canonicalJson(v: unknown): string {
  const out: string[] = [];
  enc(v, "$", out, 1);
  return out.join("");
}

/**
 * true when JSON text nests arrays and objects deeper than `max` levels, found by one pass over
 * the text (brackets inside strings do not count), before JSON.parse builds anything deep
 */
export function nestedDeeper(text: string, max: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}
