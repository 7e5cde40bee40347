// Durable writes of shared files (DESIGN "Concurrency and durability", bun-craft §2.7).
//
// atomicWriteFile: a reader sees the old file or the new one, never a mix, even after kill -9 or
// a power cut: temp file in the same folder (opened O_EXCL) → write → fsync → close → the old
// file becomes the backup (hard link + rename, so the backup is never half written either) →
// rename over → fsync the folder. The temp file is removed on any failure.
// Callers that read-modify-write must hold their flock around the whole cycle.
//
// appendLineDurable: one whole line per write(2) on an O_APPEND descriptor, then fsync.
//
// Files mam owns (its state under .mam/: journals, records, locks, the daemon's log and state, the
// registry) are never written through a symbolic link, nor when they are not regular files: a
// workspace can ship `.mam/jobs/<id>.events.ndjson -> ~/.bashrc`, and an append would write into
// the target and the torn-tail repair cut its last line. openRegular opens with O_NOFOLLOW (and
// O_NONBLOCK, so that a FIFO cannot hang the writer) and refuses anything but a regular file;
// atomicWriteFile refuses them with `regularOnly`.
import {
  closeSync,
  constants as C,
  copyFileSync,
  existsSync,
  fchmodSync,
  fsyncSync,
  fstatSync,
  ftruncateSync,
  linkSync,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { errCode, EXIT, MamError, writeRefused } from "./errors.ts";

const STALE_AGE_MS = 60_000;

const linkRefused = (path: string) =>
  new MamError(`refusing to write through ${path}: it is a symbolic link`, EXIT.FAIL, "mam never writes through a link to its own files; replace the link with the file it points to, or remove it");
const notRegular = (path: string) =>
  new MamError(`refusing to write ${path}: it is not a regular file`, EXIT.FAIL, "move it away or remove it; mam makes the file again");

/**
 * Open a file mam owns for writing (flags: O_WRONLY or O_RDWR, O_APPEND, O_CREAT, …) without
 * following a symbolic link, and only when it is a regular file; else a MamError naming the file.
 */
export function openRegular(path: string, flags: number, mode = 0o600): number {
  let fd: number;
  try {
    fd = openSync(path, flags | C.O_NOFOLLOW | C.O_NONBLOCK, mode);
  } catch (e) {
    // Linux says ELOOP for a link; some systems say EMLINK or EFTYPE
    if (["ELOOP", "EMLINK", "EFTYPE"].includes(errCode(e) ?? "")) throw linkRefused(path);
    if (errCode(e) === "ENXIO") throw notRegular(path); // a FIFO nobody reads, a socket
    throw e;
  }
  let ok = false;
  try {
    if (!fstatSync(fd).isFile()) throw notRegular(path);
    ok = true;
    return fd;
  } finally {
    if (!ok) closeSync(fd);
  }
}

/** refuse a path that is a symbolic link or exists and is not a regular file (nothing there is fine) */
export function checkRegular(path: string): void {
  let st;
  try {
    st = lstatSync(path);
  } catch (e) {
    if (errCode(e) === "ENOENT") return;
    throw e;
  }
  if (st.isSymbolicLink()) throw linkRefused(path);
  if (!st.isFile()) throw notRegular(path);
}

export interface AtomicWriteOptions {
  /** mode of the new file; default: the mode of the file it replaces, else 0600 */
  mode?: number;
  /** keep the replaced file here (itself replaced atomically); nothing happens when there is no old file */
  backupPath?: string;
  /** refuse when path is a symbolic link or not a regular file (files mam owns, under .mam/) */
  regularOnly?: boolean;
}

/** `.<name>.<pid>.<random>.tmp` next to the target */
export function tempPathFor(path: string): string {
  const rand = Math.floor(Math.random() * 0x100000000)
    .toString(36)
    .padStart(7, "0");
  return join(dirname(path), `.${basename(path)}.${process.pid}.${rand}.tmp`);
}

function writeAllFd(fd: number, buf: Uint8Array): void {
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}

export function fsyncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch (e) {
    // some filesystems refuse fsync on a directory; the rename itself has happened
    if (!["EINVAL", "ENOTSUP", "EISDIR", "EBADF", "EPERM"].includes(errCode(e) ?? "")) throw e;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function tryUnlink(p: string): void {
  try {
    unlinkSync(p);
  } catch {}
}

/** the current file becomes backupPath in one rename; false when there is no current file */
function backUp(path: string, backupPath: string, mode: number): boolean {
  const tmp = tempPathFor(backupPath);
  try {
    linkSync(path, tmp);
  } catch (e) {
    const code = errCode(e);
    if (code === "ENOENT") {
      if (!existsSync(path)) return false; // no current file: nothing to keep
      throw e; // the backup's folder is missing
    }
    // no hard links here (some FUSE / network filesystems): copy, fsync, then rename
    try {
      copyFileSync(path, tmp);
      const fd = openSync(tmp, "r+", mode);
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    } catch (e2) {
      tryUnlink(tmp);
      if (errCode(e2) === "ENOENT" && !existsSync(path)) return false;
      throw e2;
    }
  }
  try {
    renameSync(tmp, backupPath);
  } catch (e) {
    tryUnlink(tmp);
    throw e;
  }
  return true;
}

/** replace path with data atomically and durably (see the file header) */
export function atomicWriteFile(path: string, data: string | Uint8Array, opts: AtomicWriteOptions = {}): void {
  if (opts.regularOnly) checkRegular(path);
  let mode = opts.mode;
  if (mode === undefined) {
    try {
      mode = (opts.regularOnly ? lstatSync(path) : statSync(path)).mode & 0o7777;
    } catch {
      mode = 0o600;
    }
  }
  const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const tmp = tempPathFor(path);
  let fd: number | undefined;
  try {
    fd = openSync(tmp, "wx", mode);
    // the umask may have narrowed the mode at creation: set it exactly
    if ((fstatSync(fd).mode & 0o7777) !== mode) fchmodSync(fd, mode);
    writeAllFd(fd, buf);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    if (opts.backupPath !== undefined) backUp(path, opts.backupPath, mode);
    renameSync(tmp, path);
  } catch (e) {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {}
    }
    tryUnlink(tmp);
    throw writeRefused(e, path) ?? new MamError(`cannot write ${path}: ${e instanceof Error ? e.message : String(e)}`, EXIT.FAIL, undefined, { cause: e });
  }
  fsyncDir(dirname(path));
}

/** the complete lines of a file, and the trailing fragment after the last newline ("" if none) */
export function splitLines(text: string): { lines: string[]; tail: string } {
  const i = text.lastIndexOf("\n");
  if (i < 0) return { lines: [], tail: text };
  return { lines: text.slice(0, i).split("\n"), tail: text.slice(i + 1) };
}

export interface AppendOptions {
  mode?: number;
  /**
   * repair a trailing fragment left by a killed writer first: keep it (a newline is added) when
   * this says it is a whole record, else cut it off. Only under the writers' lock: without it, a
   * concurrent writer's line in flight would look like a fragment.
   */
  keepTail?: (tail: string) => boolean;
}

/**
 * Append one whole line (a trailing newline is added) and fsync, in one write(2) on an O_APPEND
 * descriptor, so concurrent appenders never interleave inside a line. With keepTail (under the
 * writers' lock), a fragment left by a killed writer is repaired first, so the new line always
 * starts on its own.
 */
export function appendLineDurable(path: string, line: string, opts: AppendOptions | number = {}): void {
  const o: AppendOptions = typeof opts === "number" ? { mode: opts } : opts;
  const text = line.endsWith("\n") ? line.slice(0, -1) : line;
  if (text.includes("\n")) throw new MamError(`cannot append to ${path}: the line contains a newline`, EXIT.FAIL);
  const created = !existsSync(path);
  let fd: number | undefined;
  try {
    fd = openRegular(path, C.O_RDWR | C.O_APPEND | C.O_CREAT, o.mode ?? 0o600);
    const size = fstatSync(fd).size;
    let prefix = "";
    if (size > 0 && o.keepTail) {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) {
        const tail = readTail(fd, size);
        if (o.keepTail(tail.text)) prefix = "\n";
        else ftruncateSync(fd, tail.start);
      }
    }
    writeAllFd(fd, Buffer.from(`${prefix}${text}\n`, "utf8"));
    fsyncSync(fd);
  } catch (e) {
    if (e instanceof MamError) throw e;
    throw writeRefused(e, path) ?? new MamError(`cannot append to ${path}: ${e instanceof Error ? e.message : String(e)}`, EXIT.FAIL, undefined, { cause: e });
  } finally {
    if (fd !== undefined) closeSync(fd);
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

/** remove every temp file of atomicWriteFile in dir older than maxAgeMs (writers killed mid-write) */
export function sweepTempFiles(dir: string, maxAgeMs = STALE_AGE_MS, now = Date.now()): void {
  let names: string[] = [];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const n of names) {
    if (!/^\..+\.\d+\.[0-9a-z]+\.tmp$/.test(n)) continue;
    try {
      if (now - statSync(join(dir, n)).mtimeMs > maxAgeMs) unlinkSync(join(dir, n));
    } catch {}
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errCode(e) === "EPERM";
  }
}

/**
 * remove temp files that a crashed writer of dir/name left behind: those older than a minute,
 * or whose writer process is gone. Returns the paths removed. Call it under the file's lock.
 */
export function removeStaleTemps(dir: string, name: string, now = Date.now()): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  const prefix = `.${name}.`;
  const removed: string[] = [];
  for (const ent of entries) {
    if (!ent.startsWith(prefix) || !ent.endsWith(".tmp")) continue;
    const m = /^(\d+)\.[0-9a-z]+\.tmp$/.exec(ent.slice(prefix.length));
    if (!m) continue;
    const pid = Number(m[1]);
    const p = join(dir, ent);
    let stale = pid !== process.pid && !pidAlive(pid);
    if (!stale) {
      try {
        stale = now - statSync(p).mtimeMs > STALE_AGE_MS;
      } catch {
        continue;
      }
    }
    if (!stale) continue;
    try {
      unlinkSync(p);
      removed.push(p);
    } catch {}
  }
  return removed;
}
