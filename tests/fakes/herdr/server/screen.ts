// A pane's text buffer: the scrollback of logical lines plus the partial line under the cursor,
// fed with the raw bytes the pane's processes write. A tiny terminal model: \n, \r (back to column
// 0, later text overwrites), \b, \t, and escape sequences (CSI, OSC, two-byte ESC) stripped from
// the text view but kept in the ansi view. Reads follow herdr.md §2.5.

export const COLS = 80;
export const ROWS = 24;
export const SCROLLBACK = 10_000;
export const DEFAULT_LINES = 80;
export const MAX_LINES = 1000;

export type ReadSource = "visible" | "recent" | "recent_unwrapped" | "detection";
export type ReadFormat = "text" | "ansi";

const enum St {
  Normal,
  Esc,
  Csi,
  Osc,
  OscEsc,
}

export class Screen {
  /** completed logical lines, escape sequences stripped */
  private lines: string[] = [];
  private cur = "";
  private col = 0;
  /** the same lines with escape sequences kept */
  private raw: string[] = [];
  private rawCur = "";
  private st = St.Normal;
  /** bumps on every write (not herdr's revision, which stays 0) */
  version = 0;

  write(text: string): void {
    if (!text) return;
    this.version++;
    // fast path: plain text at the end of the line
    if (this.st === St.Normal && this.col === this.cur.length && !/[\x00-\x09\x0b-\x1f\x7f]/.test(text)) {
      const parts = text.split("\n");
      for (let i = 0; i < parts.length; i++) {
        if (i > 0) this.newline();
        this.cur += parts[i];
        this.rawCur += parts[i];
        this.col = this.cur.length;
      }
      return;
    }
    for (const ch of text) this.put(ch);
  }

  private newline(): void {
    this.lines.push(this.cur.replace(/\s+$/, ""));
    this.raw.push(this.rawCur);
    this.cur = "";
    this.rawCur = "";
    this.col = 0;
    if (this.lines.length > SCROLLBACK) {
      this.lines.splice(0, this.lines.length - SCROLLBACK);
      this.raw.splice(0, this.raw.length - SCROLLBACK);
    }
  }

  private put(ch: string): void {
    switch (this.st) {
      case St.Esc:
        this.rawCur += ch;
        this.st = ch === "[" ? St.Csi : ch === "]" ? St.Osc : St.Normal;
        return;
      case St.Csi:
        this.rawCur += ch;
        if (ch >= "@" && ch <= "~") this.st = St.Normal;
        return;
      case St.Osc:
        this.rawCur += ch;
        if (ch === "\x07") this.st = St.Normal;
        else if (ch === "\x1b") this.st = St.OscEsc;
        return;
      case St.OscEsc:
        this.rawCur += ch;
        this.st = ch === "\\" ? St.Normal : St.Osc;
        return;
    }
    if (ch === "\n") return this.newline();
    if (ch === "\x1b") {
      this.rawCur += ch;
      this.st = St.Esc;
      return;
    }
    if (ch === "\r") {
      this.col = 0;
      return;
    }
    if (ch === "\b") {
      if (this.col > 0) this.col--;
      this.rawCur += ch;
      return;
    }
    if (ch === "\t") {
      const n = 8 - (this.col % 8);
      for (let i = 0; i < n; i++) this.putChar(" ");
      this.rawCur += ch;
      return;
    }
    if (ch < " " || ch === "\x7f") return;
    this.putChar(ch);
    this.rawCur += ch;
  }

  private putChar(ch: string): void {
    if (this.col >= this.cur.length) {
      this.cur += " ".repeat(this.col - this.cur.length) + ch;
    } else {
      this.cur = this.cur.slice(0, this.col) + ch + this.cur.slice(this.col + 1);
    }
    this.col++;
  }

  /** logical lines including the cursor line when it holds text */
  private logical(ansi: boolean): string[] {
    const base = ansi ? this.raw : this.lines;
    const cur = ansi ? this.rawCur : this.cur.replace(/\s+$/, "");
    return cur !== "" ? [...base, cur] : base;
  }

  /** the last `want` rows; wrap=true splits logical lines into COLS-wide rows */
  private tail(want: number, wrap: boolean, ansi: boolean): { rows: string[]; truncated: boolean } {
    const lines = this.logical(ansi);
    if (!wrap) {
      const rows = want >= lines.length ? lines.slice() : lines.slice(lines.length - want);
      return { rows, truncated: lines.length > rows.length };
    }
    const rev: string[] = [];
    for (let i = lines.length - 1; i >= 0; i--) {
      const l = lines[i]!;
      const parts: string[] = [];
      if (ansi || l.length <= COLS) parts.push(l);
      else for (let j = 0; j < l.length; j += COLS) parts.push(l.slice(j, j + COLS));
      for (let j = parts.length - 1; j >= 0; j--) {
        if (rev.length >= want) return { rows: rev.reverse(), truncated: true };
        rev.push(parts[j]!);
      }
    }
    return { rows: rev.reverse(), truncated: false };
  }

  /** herdr's pane.read: text and truncated for a source, line count and format */
  read(source: ReadSource, lines: number | undefined, format: ReadFormat): { text: string; truncated: boolean } {
    const ansi = format === "ansi";
    if (source === "visible" || source === "detection") {
      const screen = this.tail(ROWS, true, ansi);
      const n = lines === undefined ? ROWS : Math.min(lines, MAX_LINES);
      const rows = n >= screen.rows.length ? screen.rows : screen.rows.slice(screen.rows.length - n);
      return { text: rows.join("\n"), truncated: rows.length < screen.rows.length };
    }
    const n = Math.min(lines ?? DEFAULT_LINES, MAX_LINES);
    const t = this.tail(n, source === "recent", ansi);
    return { text: t.rows.join("\n"), truncated: t.truncated };
  }

  /** the last n logical lines (plain text), for screen-based state rules */
  lastLines(n: number): string[] {
    const l = this.logical(false);
    return l.slice(Math.max(0, l.length - n));
  }
}
