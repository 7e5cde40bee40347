// One screen row as text with SGR sequences (herdr's `format: ansi` reads): the row's cells with
// their colours and attributes, an SGR sequence wherever the style changes, a reset at the end
// when any style was set, trailing unstyled blanks dropped.
import type { IBufferCell, IBufferLine } from "@xterm/headless";

function colour(cell: IBufferCell, fg: boolean): string {
  const isDefault = fg ? cell.isFgDefault() : cell.isBgDefault();
  if (isDefault) return "";
  const c = fg ? cell.getFgColor() : cell.getBgColor();
  if (fg ? cell.isFgRGB() : cell.isBgRGB()) return `${fg ? 38 : 48};2;${(c >> 16) & 255};${(c >> 8) & 255};${c & 255}`;
  if (c < 8) return String((fg ? 30 : 40) + c);
  if (c < 16) return String((fg ? 90 : 100) + c - 8);
  return `${fg ? 38 : 48};5;${c}`;
}

/** the SGR parameters of a cell's style ("" = default) */
export function styleOf(cell: IBufferCell): string {
  const p: string[] = [];
  if (cell.isBold()) p.push("1");
  if (cell.isDim()) p.push("2");
  if (cell.isItalic()) p.push("3");
  if (cell.isUnderline()) p.push("4");
  if (cell.isBlink()) p.push("5");
  if (cell.isInverse()) p.push("7");
  if (cell.isInvisible()) p.push("8");
  if (cell.isStrikethrough()) p.push("9");
  const f = colour(cell, true);
  if (f) p.push(f);
  const b = colour(cell, false);
  if (b) p.push(b);
  return p.join(";");
}

export function sgrRow(line: IBufferLine, cols: number): string {
  let out = "";
  let cur = "";
  let pendingBlank = "";
  for (let x = 0; x < cols; x++) {
    const cell = line.getCell(x);
    if (!cell || cell.getWidth() === 0) continue;
    const ch = cell.getChars() || " ";
    const st = styleOf(cell);
    if (ch === " " && st === "") {
      pendingBlank += " ";
      continue;
    }
    if (st !== cur) {
      out += pendingBlank;
      pendingBlank = "";
      out += st === "" ? "\x1b[0m" : `\x1b[0;${st}m`;
      cur = st;
    }
    out += pendingBlank + ch;
    pendingBlank = "";
  }
  if (cur !== "") out += "\x1b[0m";
  return out;
}
