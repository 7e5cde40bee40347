// The fast way to write a change: splice new text into the lines of the rows and keys that
// changed, and keep every other byte of the file (comments, key order, quoting, blank lines).
// Works from the outline (outline.ts); throws Bail when an edit is beyond it, and the caller then
// uses the yaml library's Document instead. The caller checks the result by parsing it again.
import { type Flavour, isSimple, renderEntry, renderInline, renderKey, renderRows, renderScalar } from "./emit.ts";
import { type OEntry, type OItem, type OMap, type OValue, indentOf, lineKind } from "./outline.ts";
import { SECTIONS } from "./types.ts";
import { deepEqual, definedKeys, isPlainObject, isScalar } from "./values.ts";

export class Bail extends Error {}

interface Op {
  from: number;
  to: number;
  lines: string[];
}

/** for each row of a section after the change, the index of the row it continues in the file, or null (a new row) */
export type RowMatch = (number | null)[];

export interface SpliceInput {
  lines: string[];
  root: OMap | null;
  /** the file's data as parsed */
  before: Record<string, unknown> | null;
  /** the data to write; sections that should stay absent are left out */
  after: Record<string, unknown>;
  matches: Partial<Record<string, RowMatch>>;
  /** the comment block a new file starts with */
  header: string[];
}

const isSection = (k: string) => (SECTIONS as readonly string[]).includes(k);

/** the last line of the comments that belong to a node ending at `last` (deeper than its indent) */
function tailEnd(lines: string[], last: number, indent: number): number {
  let end = last;
  for (let i = last + 1; i < lines.length; i++) {
    const s = lines[i]!;
    const k = lineKind(s);
    if (k === 0) continue;
    if (k === 2) break;
    if (indentOf(s) > indent) end = i;
    else break;
  }
  return end;
}

function applyOps(lines: string[], ops: Op[], from: number, to: number): string[] {
  const sorted = [...ops].sort((a, b) => a.from - b.from || a.to - b.to);
  const out: string[] = [];
  let at = from;
  for (const op of sorted) {
    if (op.from < at || op.to > to) throw new Bail("overlapping edits");
    for (let i = at; i < op.from; i++) out.push(lines[i]!);
    out.push(...op.lines);
    at = op.to;
  }
  for (let i = at; i < to; i++) out.push(lines[i]!);
  return out;
}

class Splicer {
  private readonly lines: string[];
  private readonly matches: SpliceInput["matches"];
  private readonly dashIndent: number;

  constructor(input: SpliceInput) {
    this.lines = input.lines;
    this.matches = input.matches;
    this.dashIndent = this.guessDashIndent(input.root);
  }

  /** how far rows sit under their section key in this file (0 as PyYAML writes, 2 as we do) */
  private guessDashIndent(root: OMap | null): number {
    for (const e of root?.entries ?? []) if (isSection(e.key) && e.value.t === "seq") return e.value.indent - e.col;
    return 2;
  }

  private replaceSpan(ops: Op[], line: number, start: number, endLine: number, end: number, text: string): void {
    const head = this.lines[line]!.slice(0, start);
    const rest = this.lines[endLine]!.slice(end);
    ops.push({ from: line, to: endLine + 1, lines: [head + text + rest] });
  }

  /** a key and its value written anew at the key's place; the key's own text and comment are kept */
  private rerenderEntry(ops: Op[], e: OEntry, value: unknown, indent: number): void {
    const first = this.lines[e.line]!;
    const keyText = first.slice(e.col, e.colon).trimEnd();
    const rendered = isSection(e.key) && Array.isArray(value) && indent === 0 ? this.sectionLines(keyText, value) : renderEntry(keyText, value, indent);
    rendered[0] = first.slice(0, e.col) + rendered[0]!.slice(indent);
    if (e.comment) rendered[0] += ` ${e.comment}`;
    ops.push({ from: e.line, to: e.last + 1, lines: rendered });
  }

  private sectionLines(keyText: string, rows: unknown[]): string[] {
    if (rows.length === 0) return [`${keyText}: []`];
    return [`${keyText}:`, ...renderRows(rows, this.dashIndent)];
  }

  editMap(map: OMap, before: Record<string, unknown>, after: Record<string, unknown>, ops: Op[], top = false): void {
    const have = map.entries.map((e) => e.key);
    const keys = definedKeys(before);
    if (have.length !== keys.length || !keys.every((k) => have.includes(k))) throw new Bail("the file's keys differ from its data");
    for (let i = 0; i < map.entries.length; i++) {
      const e = map.entries[i]!;
      const a = after[e.key];
      if (a === undefined) {
        if (i === 0) {
          if (this.lines[e.line]!.slice(0, e.col).trim() !== "") throw new Bail("deleting the first key of a row");
          ops.push({ from: e.line, to: tailEnd(this.lines, e.last, map.indent) + 1, lines: [] });
        } else {
          const from = tailEnd(this.lines, map.entries[i - 1]!.last, map.indent) + 1;
          ops.push({ from, to: tailEnd(this.lines, e.last, map.indent) + 1, lines: [] });
        }
        continue;
      }
      if (top && isSection(e.key)) {
        this.editSection(ops, e, before[e.key], a);
        continue;
      }
      if (deepEqual(before[e.key], a)) continue;
      this.editValue(ops, e, before[e.key], a, map.indent);
    }
    const added = definedKeys(after).filter((k) => before[k] === undefined);
    if (added.length) {
      const last = map.entries[map.entries.length - 1]!;
      const at = tailEnd(this.lines, last.last, map.indent) + 1;
      const lines = added.flatMap((k) =>
        top && isSection(k) && Array.isArray(after[k]) ? this.sectionLines(renderKey(k), after[k] as unknown[]) : renderEntry(renderKey(k), after[k], map.indent),
      );
      ops.push({ from: at, to: at, lines });
    }
  }

  private editValue(ops: Op[], e: OEntry, b: unknown, a: unknown, indent: number): void {
    const v: OValue = e.value;
    if (v.t === "map" && isPlainObject(b) && isPlainObject(a) && definedKeys(a).length > 0) return this.editMap(v, b, a, ops);
    if (v.t === "scalar" && isScalar(a)) {
      const s = this.lines[v.line]!;
      ops.push({ from: v.line, to: v.line + 1, lines: [s.slice(0, v.start) + renderScalar(a, "yaml", v.style) + s.slice(v.end)] });
      return;
    }
    if (v.t === "flow" && (Array.isArray(a) || isPlainObject(a))) {
      this.replaceSpan(ops, v.line, v.start, v.endLine, v.end, renderInline(a, v.json ? "json" : "yaml"));
      return;
    }
    this.rerenderEntry(ops, e, a, indent);
  }

  private editSection(ops: Op[], e: OEntry, b: unknown, a: unknown): void {
    if (a === b) return; // null kept as null
    if (!Array.isArray(a)) throw new Bail("a section that is not a list");
    const v = e.value;
    const match = this.matches[e.key];
    const before = Array.isArray(b) ? b : [];
    if (v.t === "seq") {
      const items = v.items;
      if (items.length !== before.length || !match || match.length !== a.length) throw new Bail("the file's rows differ from its data");
      const d = v.indent;
      const leadStart = (j: number) => (j === 0 ? e.line + 1 : tailEnd(this.lines, items[j - 1]!.last, d) + 1);
      const bodyEnd = (j: number) => tailEnd(this.lines, items[j]!.last, d) + 1;
      if (a.length >= before.length && before.length > 0 && before.every((_, k) => match[k] === k)) {
        // the rows stay where they are (new ones at the end): edit the changed ones in place
        for (let k = 0; k < before.length; k++) if (!deepEqual(before[k], a[k])) this.editRow(ops, items[k]!, before[k], a[k]);
        if (a.length > before.length) {
          const at = bodyEnd(items.length - 1);
          ops.push({ from: at, to: at, lines: renderRows(a.slice(before.length), d) });
        }
        return;
      }
      const regionEnd = bodyEnd(items.length - 1);
      if (a.length === 0) {
        const first = this.lines[e.line]!;
        ops.push({ from: e.line, to: regionEnd, lines: [`${first.slice(0, e.colon + 1)} []${first.slice(e.colon + 1)}`] });
        return;
      }
      const out: string[] = [];
      for (let k = 0; k < a.length; k++) {
        const j = match[k];
        if (j === null || j === undefined) {
          out.push(...renderRows([a[k]], d));
          continue;
        }
        const item = items[j]!;
        for (let i = leadStart(j); i < item.line; i++) out.push(this.lines[i]!);
        const rowOps: Op[] = [];
        if (!deepEqual(before[j], a[k])) this.editRow(rowOps, item, before[j], a[k]);
        out.push(...applyOps(this.lines, rowOps, item.line, bodyEnd(j)));
      }
      ops.push({ from: e.line + 1, to: regionEnd, lines: out });
      return;
    }
    if (deepEqual(b, a)) return;
    if (v.t === "none" || (v.t === "flow" && before.length === 0 && v.endLine === e.line)) {
      // `key:` or `key: []` (and its comment) becomes `key:` with block rows under it
      const first = this.lines[e.line]!;
      const keyLine = v.t === "none" ? first : first.slice(0, v.start).trimEnd() + first.slice(v.end);
      if (a.length === 0) ops.push({ from: e.line, to: e.line + 1, lines: [`${first.slice(0, e.colon + 1)} []${first.slice(e.colon + 1)}`] });
      else ops.push({ from: e.line, to: e.last + 1, lines: [keyLine, ...renderRows(a, this.dashIndent)] });
      return;
    }
    this.rerenderEntry(ops, e, a, 0);
  }

  private editRow(ops: Op[], item: OItem, b: unknown, a: unknown): void {
    const v = item.value;
    if (v.t === "map" && isPlainObject(b) && isPlainObject(a)) return this.editMap(v, b, a, ops);
    if (v.t === "flow" && v.map && isPlainObject(a)) {
      // a row written as one flow map: written anew in the same flavour, keys in the file's order
      const order = isPlainObject(b) ? definedKeys(b).filter((k) => a[k] !== undefined) : [];
      for (const k of definedKeys(a)) if (!order.includes(k)) order.push(k);
      const ordered: Record<string, unknown> = {};
      for (const k of order) ordered[k] = a[k];
      const flavour: Flavour = v.json ? "json" : "yaml";
      this.replaceSpan(ops, v.line, v.start, v.endLine, v.end, renderInline(ordered, flavour));
      return;
    }
    throw new Bail("a row that is not a map");
  }

  /** a file without a top-level map yet (empty, or only comments): append the keys */
  fresh(after: Record<string, unknown>, header: string[]): string[] {
    const lines = [...this.lines];
    while (lines.length && lineKind(lines[lines.length - 1]!) === 0) lines.pop();
    const out = lines.length ? lines : [...header];
    for (const k of definedKeys(after)) {
      const v = after[k];
      if (isSection(k) && Array.isArray(v)) out.push(...this.sectionLines(renderKey(k), v));
      else if (isSimple(v)) out.push(`${renderKey(k)}: ${renderInline(v)}`);
      else out.push(...renderEntry(renderKey(k), v, 0));
    }
    out.push("");
    return out;
  }
}

/** the new text of the file, or Bail */
export function spliceRegistry(input: SpliceInput): string {
  const sp = new Splicer(input);
  if (input.root === null) return sp.fresh(input.after, input.header).join("\n");
  if (!isPlainObject(input.before)) throw new Bail("no data for the top-level map");
  const ops: Op[] = [];
  sp.editMap(input.root, input.before, input.after, ops, true);
  return applyOps(input.lines, ops, 0, input.lines.length).join("\n");
}
