// Durable writes for job files: atomic replace (temp → fsync → rename → fsync dir) and an
// fsynced line append whose torn tail (a writer killed mid-append) is repaired before the next
// append and skipped by readers. (lib/sys/atomic.ts does the same for the registry; the lead
// folds the two.)
import { closeSync, existsSync, fstatSync, fsyncSync, ftruncateSync, openSync, readdirSync, readSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { basename, dirname, join } from "node:path";

function writeFully(fd: number, buf: Buffer, position?: number): void {
  let off = 0;
  while (off < buf.length) {
    off += writeSync(fd, buf, off, buf.length - off, position === undefined ? null : position + off);
  }
}

export function fsyncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** replace path atomically: readers see the old or the new content, never a mix */
export function atomicWriteFile(path: string, data: string | Buffer, opts: { mode?: number } = {}): void {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  const fd = openSync(tmp, "wx", opts.mode ?? 0o600);
  try {
    try {
      writeFully(fd, typeof data === "string" ? Buffer.from(data, "utf8") : data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  fsyncDir(dir);
}

/** remove temp files of atomicWriteFile left by killed writers (older than maxAgeMs) */
export function sweepTempFiles(dir: string, maxAgeMs = 60_000, now = Date.now()): void {
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    if (!/^\..+\.\d+\.[0-9a-f]{8}\.tmp$/.test(n)) continue;
    try {
      if (now - statSync(join(dir, n)).mtimeMs > maxAgeMs) rmSync(join(dir, n), { force: true });
    } catch {}
  }
}

/** the complete lines of a file, and the trailing fragment after the last newline ("" if none) */
export function splitLines(text: string): { lines: string[]; tail: string } {
  const i = text.lastIndexOf("\n");
  if (i < 0) return { lines: [], tail: text };
  return { lines: text.slice(0, i).split("\n"), tail: text.slice(i + 1) };
}

/**
 * Append one line (no newline inside) and fsync. Call it under the lock that serialises writers.
 * A trailing fragment left by a killed writer is kept (newline added) when keepTail says it is a
 * whole record, else cut off, so the new line always starts on a line of its own.
 */
export function appendLineDurable(path: string, line: string, opts: { mode?: number; keepTail?: (tail: string) => boolean } = {}): void {
  if (line.includes("\n")) throw new Error("appendLineDurable: the line contains a newline");
  const created = !existsSync(path);
  const fd = openSync(path, "a+", opts.mode ?? 0o600);
  try {
    const size = fstatSync(fd).size;
    let prefix = "";
    if (size > 0) {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) {
        const tail = readTail(fd, size);
        if (opts.keepTail?.(tail.text)) prefix = "\n";
        else ftruncateSync(fd, tail.start);
      }
    }
    // O_APPEND: the write goes to the (possibly truncated) end
    writeFully(fd, Buffer.from(`${prefix}${line}\n`, "utf8"));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (created) fsyncDir(dirname(path));
}

/** the bytes after the last newline of an open file of the given size */
function readTail(fd: number, size: number): { start: number; text: string } {
  const chunk = 64 * 1024;
  let end = size;
  const parts: Buffer[] = [];
  while (end > 0) {
    const start = Math.max(0, end - chunk);
    const buf = Buffer.alloc(end - start);
    readSync(fd, buf, 0, buf.length, start);
    const nl = buf.lastIndexOf(0x0a);
    if (nl >= 0) {
      parts.unshift(buf.subarray(nl + 1));
      return { start: start + nl + 1, text: Buffer.concat(parts).toString("utf8") };
    }
    parts.unshift(buf);
    end = start;
  }
  return { start: 0, text: Buffer.concat(parts).toString("utf8") };
}
