// A structural scan of a registry file: where each top-level key, section row and row key sits
// (line and column), and duplicate keys. It is what lets a write touch only the lines of the rows
// it changed, and it is fast (plain line scanning), unlike a full YAML Document parse.
//
// It understands the YAML a registry is written in: block maps and sequences, flow maps and
// sequences (one or more lines), plain / quoted / block scalars, comments. Anchors, aliases,
// tags, directives, several documents, complex keys, tabs in indentation and CR line ends are
// "unsupported": the caller then falls back to the yaml library. The scan never decides alone
// that a file is invalid: an "error" is confirmed by the yaml library first.

export type OValue = ONone | OScalar | OOpaque | OFlow | OMap | OSeq;

/** no value (`key:` with nothing under it) */
export interface ONone {
  t: "none";
}
/** a scalar on one line: columns [start, end) of `line` */
export interface OScalar {
  t: "scalar";
  line: number;
  start: number;
  end: number;
  style: "plain" | "dq" | "sq";
}
/** a scalar over several lines (folded plain, quoted, block scalar), lines line..endLine */
export interface OOpaque {
  t: "opaque";
  line: number;
  start: number;
  endLine: number;
}
/** a flow collection from (line, start) to (endLine, end) exclusive */
export interface OFlow {
  t: "flow";
  map: boolean;
  /** keys written as JSON strings ({"name": …}) */
  json: boolean;
  line: number;
  start: number;
  endLine: number;
  end: number;
}
export interface OEntry {
  key: string;
  line: number;
  /** column of the key token */
  col: number;
  /** column of the ':' */
  colon: number;
  value: OValue;
  /** last line of the entry's content */
  last: number;
  /** a comment after the value on the key line ("# …"), if any */
  comment?: string;
}
export interface OMap {
  t: "map";
  indent: number;
  entries: OEntry[];
  first: number;
  last: number;
}
export interface OItem {
  line: number;
  col: number;
  value: OValue;
  last: number;
}
export interface OSeq {
  t: "seq";
  indent: number;
  items: OItem[];
  first: number;
  last: number;
}

export type Outline =
  | { kind: "ok"; lines: string[]; root: OMap | null; other?: boolean }
  | { kind: "unsupported"; why: string }
  | { kind: "error"; line: number; reason: string };

class Stop extends Error {
  constructor(
    readonly kind: "unsupported" | "error",
    readonly why: string,
    readonly line: number,
  ) {
    super(why);
  }
}

const unsupported = (why: string, line = 0) => new Stop("unsupported", why, line);
const bad = (why: string, line: number) => new Stop("error", why, line);

// line kinds in block context
const BLANK = 0;
const COMMENT = 1;
const CONTENT = 2;

export function lineKind(s: string): number {
  let i = 0;
  while (i < s.length && (s.charCodeAt(i) === 32 || s.charCodeAt(i) === 9)) i++;
  if (i === s.length) return BLANK;
  return s.charCodeAt(i) === 35 ? COMMENT : CONTENT;
}

export function indentOf(s: string): number {
  let i = 0;
  while (i < s.length && s.charCodeAt(i) === 32) i++;
  return i;
}

const isSpace = (c: string | undefined) => c === " " || c === "\t";
/** the common key: a plain word, then ':' and a space or the line end */
const KEY_FAST = /([A-Za-z_][A-Za-z0-9_./-]*)([ \t]*):(?=[ \t]|$)/y;
const atEnd = (s: string, i: number) => i >= s.length || (s[i] === "#" && (i === 0 || isSpace(s[i - 1])));

class Scanner {
  readonly lines: string[];
  private readonly kinds: Uint8Array;
  private readonly indents: Int32Array;

  constructor(text: string) {
    const lines = text.split("\n");
    const n = lines.length;
    const kinds = new Uint8Array(n);
    const indents = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const s = lines[i]!;
      let j = 0;
      while (s.charCodeAt(j) === 32) j++;
      indents[i] = j;
      if (j === s.length) continue; // BLANK
      const c = s.charCodeAt(j);
      if (c === 35) kinds[i] = COMMENT;
      else if (c === 9) {
        if (/^[ \t]*$/.test(s)) continue;
        throw unsupported("tab in indentation", i);
      } else {
        kinds[i] = CONTENT;
        if (j === 0 && (c === 45 || c === 46) && /^(?:---|\.\.\.)(?:[ \t]|$)/.test(s)) throw unsupported("document marker", i);
      }
    }
    this.lines = lines;
    this.kinds = kinds;
    this.indents = indents;
  }

  nextContent(from: number): number {
    for (let i = from; i < this.lines.length; i++) if (this.kinds[i] === CONTENT) return i;
    return -1;
  }

  /** what follows a value on its last line: nothing or a comment; returns the comment */
  tail(line: number, col: number): string | undefined {
    const s = this.lines[line]!;
    let i = col;
    while (isSpace(s[i])) i++;
    if (i >= s.length) return undefined;
    if (s[i] === "#" && (i === col ? i === 0 || isSpace(s[i - 1]) : true)) return s.slice(i);
    throw bad("unexpected text after a value", line);
  }

  root(): { root: OMap | null; other?: boolean } {
    const first = this.nextContent(0);
    if (first < 0) return { root: null };
    const s = this.lines[first]!;
    if (s.startsWith("%")) throw unsupported("directive", first);
    if (this.indents[first] !== 0) throw unsupported("indented top level", first);
    const key = this.key(first, 0);
    if (key === null) return { root: null, other: true };
    const map = this.map(first, 0, 0);
    if (this.nextContent(map.last + 1) >= 0) throw bad("content after the top-level map", this.nextContent(map.last + 1));
    return { root: map };
  }

  /** a key at (line, col): its text and the column of its ':'; null when the line holds no key there */
  key(line: number, col: number): { key: string; colon: number } | null {
    const s = this.lines[line]!;
    KEY_FAST.lastIndex = col;
    const m = KEY_FAST.exec(s);
    if (m) return { key: m[1]!, colon: col + m[1]!.length + m[2]!.length };
    const c = s[col];
    let key: string;
    let i: number;
    if (c === '"' || c === "'") {
      const end = c === '"' ? dqEnd(s, col) : sqEnd(s, col);
      if (end < 0) return null; // a multi-line quoted scalar is no key
      i = end;
      while (isSpace(s[i])) i++;
      if (s[i] !== ":" || !(i + 1 >= s.length || isSpace(s[i + 1]))) return null;
      key = c === '"' ? decodeDq(s.slice(col, end), line) : s.slice(col + 1, end - 1).replace(/''/g, "'");
      return { key, colon: i };
    }
    if (c === "?" && isSpace(s[col + 1] ?? " ")) throw unsupported("complex key", line);
    if (c === "-" && (col + 1 >= s.length || isSpace(s[col + 1]))) return null;
    if (c === "{" || c === "[" || c === "|" || c === ">" || c === "#") return null;
    if (c === "&" || c === "*" || c === "!" || c === "%" || c === "@" || c === "`") throw unsupported("anchor, alias, tag or reserved indicator", line);
    // the first ':' followed by a space or the line end, unless a comment starts before it
    const hash = commentStart(s, col);
    for (i = s.indexOf(":", col); i >= 0 && i < hash; i = s.indexOf(":", i + 1)) {
      if (i + 1 < s.length && !isSpace(s[i + 1])) continue;
      key = s.slice(col, i).trimEnd();
      if (key === "") return null;
      if (/[{}[\],]/.test(key)) throw unsupported("flow indicator in a plain key", line);
      return { key, colon: i };
    }
    return null;
  }

  /** a block map whose first key is at (line, col); its other keys sit at column `indent` */
  map(line: number, col: number, indent: number): OMap {
    const entries: OEntry[] = [];
    const seen = new Set<string>();
    let L = line;
    let C = col;
    for (;;) {
      const k = this.key(L, C);
      if (k === null) throw bad("expected a key", L);
      if (seen.has(k.key)) throw bad("map keys must be unique", L);
      seen.add(k.key);
      const { value, last, comment } = this.valueAfterKey(L, k.colon + 1, indent);
      entries.push({ key: k.key, line: L, col: C, colon: k.colon, value, last, comment });
      const next = this.nextContent(last + 1);
      if (next < 0) break;
      const ind = this.indents[next]!;
      if (ind < indent) break;
      if (ind > indent) throw bad("bad indentation of a mapping entry", next);
      if (isDash(this.lines[next]!, ind)) break;
      L = next;
      C = indent;
    }
    return { t: "map", indent, entries, first: line, last: entries[entries.length - 1]!.last };
  }

  valueAfterKey(line: number, from: number, indent: number): { value: OValue; last: number; comment?: string } {
    const s = this.lines[line]!;
    let i = from;
    while (isSpace(s[i])) i++;
    if (atEnd(s, i)) {
      const comment = i < s.length ? s.slice(i) : undefined;
      const M = this.nextContent(line + 1);
      if (M < 0) return { value: { t: "none" }, last: line, comment };
      const ind = this.indents[M]!;
      if (ind > indent) {
        const r = this.node(M, ind, indent);
        return { ...r, comment };
      }
      if (ind === indent && isDash(this.lines[M]!, ind)) {
        const seq = this.seq(M, ind);
        return { value: seq, last: seq.last, comment };
      }
      return { value: { t: "none" }, last: line, comment };
    }
    return this.inline(line, i, indent);
  }

  /** a node whose first content is at (line, col), inside a parent at `parentIndent` */
  node(line: number, col: number, parentIndent: number): { value: OValue; last: number } {
    const s = this.lines[line]!;
    if (isDash(s, col)) {
      const seq = this.seq(line, col);
      return { value: seq, last: seq.last };
    }
    if (this.key(line, col) !== null) {
      const map = this.map(line, col, col);
      return { value: map, last: map.last };
    }
    return this.inline(line, col, parentIndent);
  }

  seq(line: number, indent: number): OSeq {
    const items: OItem[] = [];
    let L = line;
    for (;;) {
      const s = this.lines[L]!;
      let c = indent + 1;
      while (isSpace(s[c])) c++;
      let value: OValue;
      let last: number;
      if (atEnd(s, c)) {
        const N = this.nextContent(L + 1);
        if (N >= 0 && this.indents[N]! > indent) {
          const r = this.node(N, this.indents[N]!, indent);
          value = r.value;
          last = r.last;
        } else {
          value = { t: "none" };
          last = L;
        }
      } else if (isDash(s, c)) {
        throw unsupported("nested compact sequence", L);
      } else if (this.key(L, c) !== null) {
        const map = this.map(L, c, c);
        value = map;
        last = map.last;
      } else {
        const r = this.inline(L, c, indent);
        value = r.value;
        last = r.last;
      }
      items.push({ line: L, col: indent, value, last });
      const next = this.nextContent(last + 1);
      if (next < 0) break;
      const ind = this.indents[next]!;
      if (ind < indent) break;
      if (ind > indent) throw bad("bad indentation of a sequence item", next);
      if (!isDash(this.lines[next]!, ind)) break;
      L = next;
    }
    return { t: "seq", indent, items, first: line, last: items[items.length - 1]!.last };
  }

  /** a value starting at (line, col) of a line: scalar, quoted, flow or block scalar */
  inline(line: number, col: number, parentIndent: number): { value: OValue; last: number; comment?: string } {
    const s = this.lines[line]!;
    const c = s[col];
    if (c === '"' || c === "'") {
      const end = c === '"' ? dqEnd(s, col) : sqEnd(s, col);
      if (end >= 0) {
        const comment = this.tail(line, end);
        return { value: { t: "scalar", line, start: col, end, style: c === '"' ? "dq" : "sq" }, last: line, comment };
      }
      // a quoted scalar over several lines
      for (let L = line + 1; L < this.lines.length; L++) {
        const t = this.lines[L]!;
        const e = c === '"' ? dqEnd(t, -1) : sqEnd(t, -1);
        if (e >= 0) {
          const comment = this.tail(L, e);
          return { value: { t: "opaque", line, start: col, endLine: L }, last: L, comment };
        }
      }
      throw bad("missing closing quote", line);
    }
    if (c === "{" || c === "[") {
      const f = scanFlow(this.lines, line, col);
      const comment = this.tail(f.endLine, f.end);
      return { value: { t: "flow", map: c === "{", json: f.json, line, start: col, endLine: f.endLine, end: f.end }, last: f.endLine, comment };
    }
    if (c === "|" || c === ">") {
      const header = s.slice(col + 1);
      const m = /^[-+0-9]*(\s+#.*)?\s*$/.exec(header);
      if (!m) throw bad("bad block scalar header", line);
      let last = line;
      for (let L = line + 1; L < this.lines.length; L++) {
        const t = this.lines[L]!;
        if (lineKind(t) === BLANK) continue;
        if (indentOf(t) <= parentIndent) break;
        last = L;
      }
      return { value: { t: "opaque", line, start: col, endLine: last }, last, comment: m[1]?.trim() };
    }
    if (c === "&" || c === "*" || c === "!") throw unsupported("anchor, alias or tag", line);
    if (c === "%" || c === "@" || c === "`") throw bad("reserved indicator", line);
    if (c === "?" && isSpace(s[col + 1] ?? " ")) throw unsupported("complex key", line);
    if (c === "-" && isSpace(s[col + 1] ?? " ")) throw bad("unexpected sequence item", line);
    // plain scalar: up to a comment or the end of the line, maybe continued on deeper lines
    let end = s.indexOf("#", col) < 0 && s.indexOf(":", col) < 0 ? s.length : commentStart(s, col);
    for (let i = s.indexOf(":", col); i >= 0 && i < end; i = s.indexOf(":", i + 1)) {
      if (i + 1 >= s.length || isSpace(s[i + 1])) throw bad("a plain value cannot contain ': '", line);
    }
    const comment = end < s.length ? s.slice(end) : undefined;
    while (end > col && isSpace(s[end - 1])) end--;
    if (comment === undefined) {
      let last = line;
      for (let L = line + 1; L < this.lines.length; L++) {
        const k = this.kinds[L];
        if (k === BLANK) continue;
        if (k === COMMENT) break;
        if (this.indents[L]! <= parentIndent) break;
        last = L;
      }
      if (last > line) return { value: { t: "opaque", line, start: col, endLine: last }, last };
    }
    return { value: { t: "scalar", line, start: col, end, style: "plain" }, last: line, comment };
  }
}

/** where a comment starts on s at or after col (a '#' after a space or tab), else s.length */
function commentStart(s: string, col: number): number {
  for (let i = s.indexOf("#", col); i >= 0; i = s.indexOf("#", i + 1)) if (i === 0 || isSpace(s[i - 1])) return i;
  return s.length;
}

function isDash(s: string, col: number): boolean {
  return s[col] === "-" && (col + 1 >= s.length || isSpace(s[col + 1]));
}

/** index after the closing quote of a double-quoted scalar opened at col (col = -1: continue a scalar from the line start) */
function dqEnd(s: string, col: number): number {
  for (let i = col + 1; i < s.length; i++) {
    if (s[i] === "\\") i++;
    else if (s[i] === '"') return i + 1;
  }
  return -1;
}

function sqEnd(s: string, col: number): number {
  for (let i = col + 1; i < s.length; i++) {
    if (s[i] === "'") {
      if (s[i + 1] === "'") i++;
      else return i + 1;
    }
  }
  return -1;
}

function decodeDq(tok: string, line: number): string {
  try {
    return JSON.parse(tok) as string;
  } catch {
    throw unsupported("YAML-only escape in a quoted key", line);
  }
}

// one token of a flow collection: space, comment, indicator, ':' as a value indicator, quoted
// scalars, anchors/aliases/tags/complex keys, a plain scalar, or anything else
const FLOW_TOKEN =
  /([ \t]+)|(#.*)|([{}[\],])|(:)(?=[ \t,{}[\]]|$)|("(?:[^"\\]|\\.)*")|('(?:[^']|'')*')|([&*!]|\?(?=[ \t]|$))|((?:[^\s,{}[\]#"':]|:(?![ \t,{}[\]]|$))(?:[^\s,{}[\]:#]|[ \t]+(?![ \t#]|$)|#|:(?![ \t,{}[\]]|$))*)|([^])/y;

/** the end of a flow collection opened at (line, col); checks its maps for duplicate keys */
function scanFlow(lines: string[], line: number, col: number): { endLine: number; end: number; json: boolean } {
  interface Level {
    map: boolean;
    keys: Set<string>;
    pending?: string;
  }
  const stack: Level[] = [];
  let json = false;
  let firstToken = true;
  for (let L = line; L < lines.length; L++) {
    const s = lines[L]!;
    FLOW_TOKEN.lastIndex = L === line ? col : 0;
    while (FLOW_TOKEN.lastIndex < s.length) {
      const m = FLOW_TOKEN.exec(s)!;
      if (m[1] !== undefined) continue;
      if (m[2] !== undefined) {
        if (m.index > 0 && !isSpace(s[m.index - 1])) throw new Stop("error", "a comment must follow a space", L);
        break;
      }
      const top = stack[stack.length - 1];
      const ind = m[3];
      if (ind !== undefined) {
        if (ind === "{" || ind === "[") stack.push({ map: ind === "{", keys: new Set() });
        else if (ind === ",") {
          if (top) top.pending = undefined;
        } else {
          const lvl = stack.pop();
          if (!lvl || lvl.map !== (ind === "}")) throw new Stop("error", "unbalanced flow collection", L);
          if (stack.length === 0) return { endLine: L, end: FLOW_TOKEN.lastIndex, json };
        }
        continue;
      }
      if (m[4] !== undefined) {
        if (top?.map && top.pending !== undefined) {
          if (top.keys.has(top.pending)) throw new Stop("error", "map keys must be unique", L);
          top.keys.add(top.pending);
          top.pending = undefined;
        }
        continue;
      }
      if (m[7] !== undefined) throw unsupported("anchor, alias, tag or complex key in a flow collection", L);
      let tok: string;
      if (m[5] !== undefined) {
        tok = decodeDq(m[5], L);
        if (firstToken && stack.length === 1 && stack[0]!.map) json = true;
      } else if (m[6] !== undefined) tok = m[6].slice(1, -1).replace(/''/g, "'");
      else if (m[8] !== undefined) tok = m[8].trim();
      else if (m[9] === '"' || m[9] === "'") throw unsupported("multi-line quoted scalar in a flow collection", L);
      else throw new Stop("error", `unexpected '${m[9]}' in a flow collection`, L);
      firstToken = false;
      if (top?.map) top.pending = tok;
    }
  }
  throw new Stop("error", "unclosed flow collection", line);
}

/** scan a registry file's text */
export function scanOutline(text: string): Outline {
  if (text.includes("\r")) return { kind: "unsupported", why: "carriage return line ends" };
  if (text.charCodeAt(0) === 0xfeff) return { kind: "unsupported", why: "byte order mark" };
  try {
    const sc = new Scanner(text);
    const r = sc.root();
    return { kind: "ok", lines: sc.lines, root: r.root, other: r.other };
  } catch (e) {
    if (e instanceof Stop) return e.kind === "error" ? { kind: "error", line: e.line + 1, reason: e.why } : { kind: "unsupported", why: e.why };
    throw e;
  }
}
