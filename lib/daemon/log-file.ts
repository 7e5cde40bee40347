// The daemon's log, `.mam/monitor.log`, bounded (review R5: it grew without end). `mam daemon
// ensure` makes that file the daemon's stdout and stderr (one open file, O_APPEND). Once it holds
// MAM_DAEMON_LOG_MAX_BYTES (default 1 MiB; 0 = never rotate), the daemon keeps its content as
// `monitor.log.1` (the previous `.1` becomes `.2`, the previous `.2` is gone) and empties the file
// in place: copy, then truncate, so that stdout and stderr stay on the same open file and go on at
// its start. The log and its two old copies take at most about three times the bound. A line
// another process appends between the copy and the truncation is lost (only a second daemon that
// starts, finds this one and exits writes there). A daemon whose stdout is not `.mam/monitor.log`
// (a terminal, a file the user chose) writes as before and rotates nothing.
import { closeSync, constants as C, fstatSync, ftruncateSync, lstatSync, openSync, readSync, renameSync } from "node:fs";
import { atomicWriteFile } from "../sys/atomic.ts";
import { monitorLogPath } from "../sys/daemon-files.ts";
import { errCode } from "../sys/errors.ts";
import { out } from "../sys/io.ts";
import type { Env } from "../sys/paths.ts";

const DEFAULT_LOG_MAX_BYTES = 1024 * 1024;
const MIN_LOG_MAX_BYTES = 4096;

/** MAM_DAEMON_LOG_MAX_BYTES: a whole number of bytes (at least 4096), 0 = never rotate; else the default */
export function logMaxBytes(env: Env): number {
  const raw = env.MAM_DAEMON_LOG_MAX_BYTES?.trim();
  if (raw === undefined || !/^\d+$/.test(raw)) return DEFAULT_LOG_MAX_BYTES;
  const n = Number(raw);
  return n === 0 ? 0 : Math.max(MIN_LOG_MAX_BYTES, n);
}

/** is our stdout the regular file at path (not through a link)? */
function stdoutIs(path: string): boolean {
  try {
    const o = fstatSync(1);
    const l = lstatSync(path);
    return o.isFile() && l.isFile() && o.dev === l.dev && o.ino === l.ino;
  } catch {
    return false;
  }
}

function readAll(path: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, C.O_RDONLY | C.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    const o = fstatSync(1);
    if (st.dev !== o.dev || st.ino !== o.ino) return undefined; // replaced meanwhile: not ours to cut
    const buf = Buffer.alloc(st.size);
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/** keep the log as .1 (the old .1 as .2), then empty it in place; the size it has afterwards */
function rotateLog(path: string): number {
  const content = readAll(path);
  if (content === undefined) return 0;
  try {
    renameSync(`${path}.1`, `${path}.2`);
  } catch (e) {
    if (errCode(e) !== "ENOENT") throw e;
  }
  atomicWriteFile(`${path}.1`, content, { mode: 0o600 });
  ftruncateSync(1, 0);
  return 0;
}

/**
 * The daemon's line writer: `<line>\n` on stdout, and when stdout is the workspace's monitor.log,
 * the rotation above. `write` is the sink (tests); a rotation that fails is told once, on the log.
 */
export function logWriter(ws: string, env: Env, write: (line: string) => void = out): (line: string) => void {
  const path = monitorLogPath(ws);
  const max = logMaxBytes(env);
  if (max === 0 || !stdoutIs(path)) return write;
  let size = fstatSync(1).size;
  let failed = false;
  let ours = true;
  return (line: string) => {
    write(line);
    size += Buffer.byteLength(line, "utf8") + 1;
    if (!ours || size < max) return;
    try {
      size = fstatSync(1).size; // what other writers added too
      if (size < max) return;
      // the log was replaced or removed meanwhile: not ours to rotate any more
      if (!(ours = stdoutIs(path))) return;
      size = rotateLog(path);
      failed = false;
    } catch (e) {
      size = 0; // try again after another `max` bytes
      if (!failed) write(`cannot rotate ${path} (${(e as Error).message}); it keeps growing`);
      failed = true;
    }
  };
}
