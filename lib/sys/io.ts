// Output: synchronous writes to fd 1 / fd 2 (nothing lost when the process exits right after),
// colour only when stdout is a TTY and NO_COLOR is unset (SPEC §1).
import { writeSync } from "node:fs";
import { errCode } from "./errors.ts";
import { jsonSafe } from "./sanitize.ts";

function writeAll(fd: number, text: string): void {
  const buf = Buffer.from(text, "utf8");
  let off = 0;
  while (off < buf.length) {
    try {
      off += writeSync(fd, buf, off, buf.length - off);
    } catch (e) {
      const code = errCode(e);
      if (code === "EAGAIN") {
        Bun.sleepSync(1);
        continue;
      }
      if (code === "EPIPE") return; // `mam status | head` is not a failure
      throw e;
    }
  }
}

export function out(text: string): void {
  writeAll(1, text.endsWith("\n") ? text : `${text}\n`);
}

export function err(text: string): void {
  writeAll(2, text.endsWith("\n") ? text : `${text}\n`);
}

/** exactly one JSON document on stdout (every string exact; no control character raw: sanitize.ts) */
export function outJson(value: unknown): void {
  writeAll(1, `${jsonSafe(JSON.stringify(value, null, 2))}\n`);
}

let colorOn: boolean | undefined;
/** loaded lazily: node:tty costs milliseconds of start-up that most commands never need */
export function useColor(env = process.env): boolean {
  if (env.NO_COLOR !== undefined) return false;
  if (colorOn === undefined) {
    const { isatty } = require("node:tty") as typeof import("node:tty");
    colorOn = isatty(1);
  }
  return colorOn;
}

const SGR: Record<string, [number, number]> = {
  bold: [1, 22],
  dim: [2, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
  gray: [90, 39],
};

export function paint(style: keyof typeof SGR, text: string, on = useColor()): string {
  if (!on) return text;
  const [a, b] = SGR[style]!;
  return `\u001b[${a}m${text}\u001b[${b}m`;
}

/** a plain-text table with padded columns */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n");
}
