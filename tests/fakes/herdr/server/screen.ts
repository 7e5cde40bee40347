// A pane's screen: a headless terminal emulator (@xterm/headless) fed with everything the pane's
// pty prints, read the way herdr 0.8.0 reads its ghostty terminal (src/pane/terminal.rs,
// src/app/api_helpers.rs read_terminal_snapshot):
// * visible   the viewport rows, each trimmed on the right, trailing blank rows dropped, joined
//             with "\n" plus a final "\n"; --lines keeps the last N of those lines;
// * recent    the last N rendered rows of scrollback + screen (soft-wrapped rows stay separate),
//             trailing blank rows dropped, final "\n"; truncated when there are more rows;
// * recent_unwrapped  the same rows with soft wraps joined, right-trimmed, no final "\n";
// * detection the recent text of one screen height (the bottom of the buffer), --lines as visible.
// `format: ansi` renders the same rows with SGR colour/attribute sequences.
// The emulator also tracks the modes the app sets (bracketed paste, DECSET 2004) and its title.
// xterm parses asynchronously: write() resolves once its bytes are on the screen.
import { Terminal as Xterm } from "@xterm/headless";
import { sgrRow } from "./sgr.ts";

export const COLS = 80;
export const ROWS = 24;
export const SCROLLBACK = 10_000;
export const DEFAULT_LINES = 80;
export const MAX_LINES = 1000;

export type ReadSource = "visible" | "recent" | "recent_unwrapped" | "detection";
export type ReadFormat = "text" | "ansi";

export interface ReadResult {
  text: string;
  truncated: boolean;
}

/** keep the last `limit` lines of text (herdr's limit_snapshot_lines: line endings kept) */
export function limitLines(text: string, limit: number | undefined): ReadResult {
  if (limit === undefined) return { text, truncated: false };
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  return { text: lines.slice(Math.max(0, lines.length - limit)).join(""), truncated: lines.length > limit };
}

export class Screen {
  private readonly x: Xterm;
  /** bumps on every write (not herdr's revision, which stays 0) */
  version = 0;
  title = "";
  private pending = 0;
  private idle: (() => void)[] = [];

  constructor(cols = COLS, rows = ROWS) {
    this.x = new Xterm({ cols, rows, scrollback: SCROLLBACK, allowProposedApi: true });
    this.x.onTitleChange((t) => (this.title = t));
  }

  get cols(): number {
    return this.x.cols;
  }

  get rows(): number {
    return this.x.rows;
  }

  /** the app asked for bracketed paste (DECSET 2004) */
  get bracketedPaste(): boolean {
    return this.x.modes.bracketedPasteMode;
  }

  /** feed output; resolves when it has been parsed onto the screen */
  write(data: string | Uint8Array): Promise<void> {
    if (data.length === 0) return this.settled();
    this.version++;
    this.pending++;
    return new Promise((resolve) =>
      this.x.write(data, () => {
        this.pending--;
        resolve();
        if (this.pending === 0) for (const f of this.idle.splice(0)) f();
      }),
    );
  }

  /** resolves once every earlier write has been parsed */
  settled(): Promise<void> {
    return this.pending === 0 ? Promise.resolve() : new Promise((r) => this.idle.push(r));
  }

  resize(cols: number, rows: number): void {
    if (cols === this.x.cols && rows === this.x.rows) return;
    this.x.resize(Math.max(2, cols), Math.max(1, rows));
    this.version++;
  }

  dispose(): void {
    this.x.dispose();
  }

  private row(i: number, ansi: boolean): string {
    const line = this.x.buffer.active.getLine(i);
    if (!line) return "";
    return ansi ? sgrRow(line, this.x.cols) : line.translateToString(true);
  }

  /** rows [start, end) of the whole buffer (scrollback + screen) */
  private rowsOf(start: number, end: number, ansi: boolean): string[] {
    const out: string[] = [];
    for (let i = start; i < end; i++) out.push(this.row(i, ansi));
    return out;
  }

  private visible(ansi: boolean): string {
    const b = this.x.buffer.active;
    const rows = this.rowsOf(b.baseY, b.baseY + this.x.rows, ansi);
    return joinRows(trimBlankTail(rows));
  }

  private recent(n: number, unwrap: boolean, ansi: boolean): ReadResult {
    const b = this.x.buffer.active;
    const total = b.length;
    const start = Math.max(0, total - n);
    if (n === 0) return { text: "", truncated: total > 0 };
    if (!unwrap) return { text: joinRows(trimBlankTail(this.rowsOf(start, total, ansi))), truncated: total > n };
    const lines: string[] = [];
    for (let i = start; i < total; i++) {
      const r = this.row(i, ansi);
      if (i > start && b.getLine(i)?.isWrapped && lines.length) lines[lines.length - 1] += r;
      else lines.push(r);
    }
    return { text: trimBlankTail(lines.map((l) => l.replace(/\s+$/, ""))).join("\n"), truncated: total > n };
  }

  /** herdr's pane.read: text and truncated for a source, line count and format */
  read(source: ReadSource, lines: number | undefined, format: ReadFormat): ReadResult {
    const ansi = format === "ansi";
    const limit = lines === undefined ? undefined : Math.min(lines, MAX_LINES);
    switch (source) {
      case "visible":
        return limitLines(this.visible(ansi), limit);
      case "detection":
        // herdr reads detection as text even for format ansi
        return limitLines(this.recent(Math.max(1, this.x.rows), false, false).text, limit);
      case "recent":
        return this.recent(limit ?? DEFAULT_LINES, false, ansi);
      case "recent_unwrapped":
        return this.recent(limit ?? DEFAULT_LINES, true, ansi);
    }
  }

  /** the last n non-wrapped lines of the visible screen (plain text), for screen-based state rules */
  lastLines(n: number): string[] {
    const l = this.visible(false).replace(/\n$/, "").split("\n");
    return l.slice(Math.max(0, l.length - n));
  }
}

function trimBlankTail(rows: string[]): string[] {
  let end = rows.length;
  while (end > 0 && rows[end - 1]!.replace(/\x1b\[[0-9;]*m/g, "").trim() === "") end--;
  return rows.slice(0, end);
}

function joinRows(rows: string[]): string {
  return rows.length ? `${rows.join("\n")}\n` : "";
}
