// Rendering registry values as YAML text. Conservative on purpose: a string is written plain
// only when every YAML reader (1.2 core like ours, and PyYAML's 1.1 like the original's) reads it
// back as the same string; everything else is double-quoted. Rows are block maps, small maps and
// lists of scalars are flow (`pane: {id: "w1:p2", index: 1}`), as in SPEC §2.1.
import { definedKeys, isPlainObject, isScalar } from "./values.ts";

/** "json": keys and strings double-quoted, as the original's tests write rows (json.dumps) */
export type Flavour = "yaml" | "json";
export type ScalarStyle = "plain" | "dq" | "sq";

const RESERVED = /^(?:true|false|yes|no|on|off|y|n|null|~|=|<<)$/i;
const SAFE_CH = "A-Za-z0-9_/$()=+.@%^;~\\-\\u00a0-\\u2027\\u202a-\\ud7ff\\ue000-\\ufefe\\uff00-\\ufffd";
const PLAIN_RE = new RegExp(`^[A-Za-z_/$(\\u00a0-\\u2027\\u202a-\\ud7ff\\ue000-\\ufefe\\uff00-\\ufffd](?:[${SAFE_CH} ]*[${SAFE_CH}])?$`);
const PLAIN_KEY_RE = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

export function plainSafe(s: string): boolean {
  return PLAIN_RE.test(s) && !RESERVED.test(s);
}

/** a YAML double-quoted string (also valid JSON unless it needs a YAML-only escape) */
export function dq(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) out += '\\"';
    else if (c === 0x5c) out += "\\\\";
    else if (c === 0x0a) out += "\\n";
    else if (c === 0x09) out += "\\t";
    else if (c === 0x0d) out += "\\r";
    else if (c < 0x20 || c === 0x7f || (c >= 0x80 && c <= 0x9f) || c === 0x2028 || c === 0x2029 || c === 0xfeff || c === 0xfffe || c === 0xffff) {
      out += `\\u${c.toString(16).padStart(4, "0")}`;
    } else out += s[i];
  }
  return `${out}"`;
}

function sq(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

function number(n: number): string {
  if (Number.isNaN(n)) return ".nan";
  if (n === Infinity) return ".inf";
  if (n === -Infinity) return "-.inf";
  return String(n);
}

/** one scalar; `style` is the style the value had, kept when it can hold the new value */
export function renderScalar(v: null | boolean | number | string, flavour: Flavour = "yaml", style?: ScalarStyle): string {
  if (v === null) return "null";
  if (typeof v === "boolean") return v ? "true" : "false";
  if (typeof v === "number") return number(v);
  if (flavour === "json" || style === "dq") return dq(v);
  if (style === "sq" && /^[\x20-\x7e\u00a0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]*$/.test(v)) return sq(v);
  return plainSafe(v) ? v : dq(v);
}

export function renderKey(k: string, flavour: Flavour = "yaml"): string {
  if (flavour === "yaml" && PLAIN_KEY_RE.test(k) && !RESERVED.test(k)) return k;
  return dq(k);
}

/** a value on one line: scalar, or a flow collection */
export function renderInline(v: unknown, flavour: Flavour = "yaml"): string {
  if (isScalar(v)) return renderScalar(v, flavour);
  if (Array.isArray(v)) return `[${v.map((x) => renderInline(x, flavour)).join(", ")}]`;
  if (isPlainObject(v)) {
    return `{${definedKeys(v)
      .map((k) => `${renderKey(k, flavour)}: ${renderInline(v[k], flavour)}`)
      .join(", ")}}`;
  }
  throw new Error(`cannot render ${typeof v} as YAML`);
}

/** scalars, empty collections, and collections of scalars: written on one line */
export function isSimple(v: unknown): boolean {
  if (isScalar(v)) return true;
  if (Array.isArray(v)) return v.every(isScalar);
  if (isPlainObject(v)) return definedKeys(v).every((k) => isScalar(v[k]));
  return false;
}

const pad = (n: number) => " ".repeat(n);

/** `key: value` at `indent`, as one line or a block */
export function renderEntry(keyText: string, v: unknown, indent: number): string[] {
  if (isSimple(v)) return [`${pad(indent)}${keyText}: ${renderInline(v)}`];
  if (Array.isArray(v)) return [`${pad(indent)}${keyText}:`, ...renderBlockSeq(v, indent + 2)];
  return [`${pad(indent)}${keyText}:`, ...renderBlockMap(v as Record<string, unknown>, indent + 2)];
}

export function renderBlockMap(o: Record<string, unknown>, indent: number): string[] {
  const keys = definedKeys(o);
  if (keys.length === 0) return [`${pad(indent)}{}`];
  return keys.flatMap((k) => renderEntry(renderKey(k), o[k], indent));
}

/** a map as a sequence item: `- k: v` then the other keys under it */
export function renderItemMap(o: Record<string, unknown>, dashIndent: number): string[] {
  if (definedKeys(o).length === 0) return [`${pad(dashIndent)}- {}`];
  const lines = renderBlockMap(o, dashIndent + 2);
  lines[0] = `${pad(dashIndent)}- ${lines[0]!.slice(dashIndent + 2)}`;
  return lines;
}

export function renderBlockSeq(a: unknown[], indent: number): string[] {
  if (a.length === 0) return [`${pad(indent)}[]`];
  const lines: string[] = [];
  for (const item of a) {
    if (isPlainObject(item) && !isSimple(item)) lines.push(...renderItemMap(item, indent));
    else if (Array.isArray(item) && !isSimple(item)) lines.push(`${pad(indent)}-`, ...renderBlockSeq(item, indent + 2));
    else lines.push(`${pad(indent)}- ${renderInline(item)}`);
  }
  return lines;
}

/** the rows of a section as block maps */
export function renderRows(rows: unknown[], dashIndent: number): string[] {
  return rows.flatMap((r) => (isPlainObject(r) ? renderItemMap(r, dashIndent) : [`${pad(dashIndent)}- ${renderInline(r)}`]));
}
