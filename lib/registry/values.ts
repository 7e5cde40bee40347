// Plain YAML/JSON-like values: the shapes registry data is made of, compared and copied.

export type Plain = null | boolean | number | string | Plain[] | { [k: string]: Plain };

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** a scalar YAML can hold as it is */
export function isScalar(v: unknown): v is null | boolean | number | string {
  return v === null || typeof v === "string" || typeof v === "number" || typeof v === "boolean";
}

/**
 * structural equality of plain values; a property whose value is undefined counts as absent
 * (as JSON and YAML see it), NaN equals NaN
 */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === "number" && typeof b === "number") return Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (isPlainObject(a)) {
    if (!isPlainObject(b)) return false;
    let na = 0;
    for (const k in a) {
      if (a[k] === undefined) continue;
      na++;
      if (!Object.prototype.hasOwnProperty.call(b, k) || !deepEqual(a[k], b[k])) return false;
    }
    let nb = 0;
    for (const k in b) if (b[k] !== undefined) nb++;
    return na === nb;
  }
  return false;
}

/** the keys of an object whose values are not undefined, in order */
export function definedKeys(o: Record<string, unknown>): string[] {
  return Object.keys(o).filter((k) => o[k] !== undefined);
}

/** the first thing in v that YAML cannot store as plain data, as a short description; undefined when all is well */
export function unstorable(v: unknown, path = ""): string | undefined {
  if (isScalar(v)) return undefined;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      if (v[i] === undefined) return `${path}[${i}] is undefined`;
      const r = unstorable(v[i], `${path}[${i}]`);
      if (r) return r;
    }
    return undefined;
  }
  if (isPlainObject(v)) {
    for (const k of Object.keys(v)) {
      if (v[k] === undefined) continue;
      const r = unstorable(v[k], path ? `${path}.${k}` : k);
      if (r) return r;
    }
    return undefined;
  }
  const what = typeof v === "object" ? (v as object).constructor?.name ?? "object" : typeof v;
  return `${path || "value"} is a ${what}`;
}

/** Python-repr-like quoting for messages: 'text', other values as JSON */
export function repr(v: unknown): string {
  if (typeof v === "string") {
    const body = JSON.stringify(v).slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'");
    return `'${body}'`;
  }
  if (v === undefined) return "nothing";
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}
