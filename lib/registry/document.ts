// The yaml library (eemeli/yaml), loaded only when needed: it is slow to start (tens of ms for a
// small registry in a fresh process), so the hot paths use Bun.YAML and the outline instead.
// Used for (1) the line and reason of a parse error, (2) writing a file the outline cannot
// handle (anchors, tags, …), by editing its Document in place so comments survive.
import type { Document, Node, Pair, YAMLMap, YAMLSeq } from "yaml";
import type { RowMatch } from "./splice.ts";
import { SECTIONS } from "./types.ts";
import { deepEqual, definedKeys, isPlainObject, isScalar } from "./values.ts";
import { isSimple } from "./emit.ts";

type YamlLib = typeof import("yaml");
let lib: YamlLib | undefined;
function yaml(): YamlLib {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  lib ??= require("yaml") as YamlLib;
  return lib;
}

export interface ParseProblem {
  line: number;
  reason: string;
}

/** the first error the yaml library finds in text (duplicate keys included), or null */
export function libraryParseError(text: string): ParseProblem | null {
  const Y = yaml();
  const lc = new Y.LineCounter();
  const doc = Y.parseDocument(text, { lineCounter: lc, prettyErrors: false, merge: true });
  const e = doc.errors[0];
  if (!e) return null;
  let reason = e.message.split("\n")[0]!.replace(/; please use YAML\.parseAllDocuments\(\)$/, "").replace(/\.$/, "");
  reason = reason.charAt(0).toLowerCase() + reason.slice(1);
  return { line: lc.linePos(e.pos[0]).line, reason };
}

const isSection = (k: string) => (SECTIONS as readonly string[]).includes(k);

class DocEditor {
  constructor(
    private readonly Y: YamlLib,
    private readonly doc: Document,
    private readonly matches: Partial<Record<string, RowMatch>>,
  ) {}

  node(v: unknown): Node {
    const n = this.doc.createNode(v) as Node;
    this.styleNew(n, v);
    return n;
  }

  /** new content: rows and nested structures in block style, small maps and lists in flow style */
  private styleNew(n: unknown, v: unknown): void {
    const { isMap, isSeq } = this.Y;
    if (isMap(n)) {
      (n as YAMLMap).flow = isSimple(v) && definedKeys(v as Record<string, unknown>).length > 0 && !this.rowLike(v);
      for (const p of (n as YAMLMap).items) this.styleNew(p.value, (v as Record<string, unknown>)[String((p.key as { value?: unknown })?.value)]);
    } else if (isSeq(n)) {
      (n as YAMLSeq).flow = isSimple(v) && (v as unknown[]).length > 0;
      (n as YAMLSeq).items.forEach((it, i) => this.styleNew(it, (v as unknown[])[i]));
    }
  }

  private rowLike(v: unknown): boolean {
    return isPlainObject(v) && typeof v.name === "string" && "status" in v;
  }

  applyMap(map: YAMLMap, b: Record<string, unknown>, a: Record<string, unknown>, top: boolean): void {
    const { isScalar: isScalarNode } = this.Y;
    for (const pair of [...map.items]) {
      if (!isScalarNode(pair.key)) throw new Error("a key that is not a scalar");
      const k = String(pair.key.value);
      if (a[k] === undefined) {
        map.items.splice(map.items.indexOf(pair), 1);
        continue;
      }
      if (top && isSection(k)) this.applySection(pair as Pair<unknown, unknown>, b[k], a[k]);
      else if (!deepEqual(b[k], a[k])) this.applyValue(pair as Pair<unknown, unknown>, b[k], a[k]);
    }
    for (const k of definedKeys(a)) if (b[k] === undefined) map.add(this.doc.createPair(k, this.node(a[k])));
  }

  private replace(pair: Pair<unknown, unknown>, v: unknown): void {
    const old = pair.value as { comment?: string | null; commentBefore?: string | null } | null;
    const n = this.node(v) as { comment?: string | null; commentBefore?: string | null };
    if (old && typeof old === "object") {
      n.comment = old.comment;
      n.commentBefore = old.commentBefore;
    }
    pair.value = n;
  }

  private applyValue(pair: Pair<unknown, unknown>, b: unknown, a: unknown): void {
    const { isMap, isScalar: isScalarNode } = this.Y;
    const n = pair.value;
    if (isMap(n) && isPlainObject(b) && isPlainObject(a)) return this.applyMap(n, b, a, false);
    if (isScalarNode(n) && isScalar(a) && typeof n.value === typeof a && n.value !== null) {
      n.value = a;
      return;
    }
    this.replace(pair, a);
  }

  private applySection(pair: Pair<unknown, unknown>, b: unknown, a: unknown): void {
    const { isSeq, isMap } = this.Y;
    if (deepEqual(b, a)) return;
    if (!Array.isArray(a)) return this.replace(pair, a);
    const before = Array.isArray(b) ? b : [];
    const seq = pair.value;
    const match = this.matches[String((pair.key as { value: unknown }).value)];
    if (!isSeq(seq) || !match || seq.items.length !== before.length) {
      const n = this.node(a) as YAMLSeq;
      n.flow = a.length === 0;
      pair.value = n;
      return;
    }
    if (before.length === 0) seq.flow = a.length === 0;
    const old = seq.items;
    seq.items = a.map((row, k) => {
      const j = match[k];
      if (j === null || j === undefined) return this.node(row);
      const item = old[j]!;
      if (!deepEqual(before[j], row)) {
        if (isMap(item) && isPlainObject(before[j]) && isPlainObject(row)) this.applyMap(item, before[j] as Record<string, unknown>, row, false);
        else return this.node(row);
      }
      return item;
    });
  }
}

/** the new text of a file, edited through its Document; throws when it cannot */
export function documentEdit(text: string, before: Record<string, unknown> | null, after: Record<string, unknown>, matches: Partial<Record<string, RowMatch>>): string {
  const Y = yaml();
  const doc = Y.parseDocument(text, { prettyErrors: false, merge: true });
  if (doc.errors.length) throw new Error(doc.errors[0]!.message);
  const ed = new DocEditor(Y, doc, matches);
  if (doc.contents === null || doc.contents === undefined) doc.contents = ed.node({}) as never;
  if (!Y.isMap(doc.contents)) throw new Error("the top level is not a mapping");
  ed.applyMap(doc.contents, before ?? {}, after, true);
  const pyStyle = /^(?:herdr_sessions|tmux_sessions):[^\n]*\n(?:[ \t]*#[^\n]*\n)*- /m.test(text);
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false, indentSeq: !pyStyle });
}
