// A tab's split tree: panes are leaves, splits divide a rectangle right (side by side) or down
// (stacked) at a ratio. Used for the layout order of panes and session.snapshot's layouts.

export type Direction = "right" | "down";

export type LayoutNode = { type: "pane"; paneId: string } | { type: "split"; id: string; direction: Direction; ratio: number; first: LayoutNode; second: LayoutNode };

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** "COLSxROWS" (e.g. "120x80") → the tab area; anything else → 200×50 */
export function parseArea(v: string | undefined): Rect {
  const m = /^(\d{1,4})x(\d{1,4})$/.exec(v ?? "");
  const w = m ? Number(m[1]) : 0;
  const h = m ? Number(m[2]) : 0;
  return w >= 2 && h >= 1 ? { x: 0, y: 0, width: w, height: h } : { x: 0, y: 0, width: 200, height: 50 };
}

/** the area a tab's panes share (FAKE_HERDR_AREA, default 200×50): their pty sizes come from it */
export const AREA: Rect = parseArea(process.env.FAKE_HERDR_AREA);

/** replace the leaf target with a split of (target, added) */
export function splitLeaf(node: LayoutNode, target: string, added: string, direction: Direction, ratio: number, id: string): LayoutNode {
  if (node.type === "pane") {
    if (node.paneId !== target) return node;
    return { type: "split", id, direction, ratio, first: node, second: { type: "pane", paneId: added } };
  }
  return { ...node, first: splitLeaf(node.first, target, added, direction, ratio, id), second: splitLeaf(node.second, target, added, direction, ratio, id) };
}

/** remove a leaf; its sibling takes the parent's place. undefined when the tree becomes empty */
export function removeLeaf(node: LayoutNode, target: string): LayoutNode | undefined {
  if (node.type === "pane") return node.paneId === target ? undefined : node;
  const a = removeLeaf(node.first, target);
  const b = removeLeaf(node.second, target);
  if (!a) return b;
  if (!b) return a;
  return { ...node, first: a, second: b };
}

/** pane ids in layout order (left/top first) */
export function leaves(node: LayoutNode): string[] {
  return node.type === "pane" ? [node.paneId] : [...leaves(node.first), ...leaves(node.second)];
}

export interface LayoutSnapshot {
  panes: { pane_id: string; rect: Rect }[];
  splits: { id: string; direction: Direction; ratio: number; rect: Rect }[];
}

export function measure(node: LayoutNode, rect: Rect = AREA, out: LayoutSnapshot = { panes: [], splits: [] }): LayoutSnapshot {
  if (node.type === "pane") {
    out.panes.push({ pane_id: node.paneId, rect });
    return out;
  }
  out.splits.push({ id: node.id, direction: node.direction, ratio: node.ratio, rect });
  if (node.direction === "right") {
    const w = Math.max(1, Math.floor(rect.width * node.ratio));
    measure(node.first, { ...rect, width: w }, out);
    measure(node.second, { x: rect.x + w, y: rect.y, width: Math.max(0, rect.width - w), height: rect.height }, out);
  } else {
    const h = Math.max(1, Math.floor(rect.height * node.ratio));
    measure(node.first, { ...rect, height: h }, out);
    measure(node.second, { x: rect.x, y: rect.y + h, width: rect.width, height: Math.max(0, rect.height - h) }, out);
  }
  return out;
}
