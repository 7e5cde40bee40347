// Durable writes of shared files (DESIGN "Concurrency and durability", bun-craft §2.7).
//
// atomicWriteFile: a reader sees the old file or the new one, never a mix, even after kill -9 or
// a power cut: temp file in the same folder (opened O_EXCL) → write → fsync → close → the old
// file becomes the backup (hard link + rename, so the backup is never half written either) →
// rename over → fsync the folder. The temp file is removed on any failure.
// Callers that read-modify-write must hold their flock around the whole cycle.
//
// appendLineDurable: one whole line per write(2) on an O_APPEND descriptor, then fsync.
import {
  closeSync,
  copyFileSync,
  existsSync,
  fchmodSync,
  fsyncSync,
  fstatSync,
  linkSync,
  openSync,
  readdirSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { errCode, MamError } from "./errors.ts";

export interface AtomicWriteOptions {
  /** mode of the new file; default: the mode of the file it replaces, else 0600 */
  mode?: number;
  /** keep the replaced file here (itself replaced atomically); nothing happens when there is no old file */
  backupPath?: string;
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

function fsyncDir(dir: string): void {
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
  let mode = opts.mode;
  if (mode === undefined) {
    try {
      mode = statSync(path).mode & 0o7777;
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
    throw new MamError(`cannot write ${path}: ${e instanceof Error ? e.message : String(e)}`, 1, undefined, { cause: e });
  }
  fsyncDir(dirname(path));
}

/** append one whole line (a trailing newline is added) and fsync; the line must not contain a newline */
export function appendLineDurable(path: string, line: string, mode = 0o600): void {
  const text = line.endsWith("\n") ? line.slice(0, -1) : line;
  if (text.includes("\n")) throw new MamError(`cannot append to ${path}: the line contains a newline`, 1);
  const buf = Buffer.from(`${text}\n`, "utf8");
  let fd: number | undefined;
  try {
    fd = openSync(path, "a", mode);
    // one write(2) per line: O_APPEND makes it land whole at the end even with other appenders
    writeAllFd(fd, buf);
    fsyncSync(fd);
  } catch (e) {
    throw new MamError(`cannot append to ${path}: ${e instanceof Error ? e.message : String(e)}`, 1, undefined, { cause: e });
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

const STALE_AGE_MS = 60_000;

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
