// The subscriber daemon's files in <ws>/.mam/ and the read-only probe that tells whether a daemon
// runs (SPEC §2, §6.3). Liveness is the flock on monitor.lock, never kill -0: a dead daemon can
// linger as a zombie while its lock is already free (fds close at exit).
import { atomicWriteFile } from "./atomic.ts";
import { closeSync, openSync, readFileSync, constants as C } from "node:fs";
import { join } from "node:path";
import { errCode } from "./errors.ts";
import { tryFlock, unflock } from "./flock.ts";
import { mamDir } from "./paths.ts";

export const monitorLockPath = (ws: string) => join(mamDir(ws), "monitor.lock");
export const monitorLogPath = (ws: string) => join(mamDir(ws), "monitor.log");
export const monitorStatePath = (ws: string) => join(mamDir(ws), "monitor.state.json");
/** serialises `mam daemon ensure` so that concurrent calls start one daemon */
export const spawnLockPath = (ws: string) => join(mamDir(ws), "monitor.spawn.lock");

export type DaemonMode = "connecting" | "mqtt" | "polling";

/** what the daemon keeps in monitor.state.json (only the daemon writes it) */
export interface DaemonState {
  pid: number;
  mode: DaemonMode;
  /** when the current mode began, UTC YYYY-MM-DDTHH:MM:SSZ */
  since: string;
  since_epoch: number;
  /** the daemon's log file (its stdout), null when stdout is not a file */
  log: string | null;
  /** host:port of the broker it uses or retries */
  broker: string;
  started_at: string;
}

/** a PID as written in the lock file: a positive decimal integer, else undefined */
export function parsePid(text: string): number | undefined {
  const t = text.trim();
  if (!/^[1-9]\d{0,9}$/.test(t)) return undefined;
  const n = Number(t);
  return n <= 0x7fffffff ? n : undefined;
}

export type Probe = { running: false } | { running: true; pid: number | undefined };

/**
 * Is a daemon holding ws's monitor.lock? Read-only: opens the file without creating it and tries
 * a shared non-blocking flock for a moment (the daemon holds it exclusively). The PID is the
 * holder's hint in the file (undefined while a starting daemon has not written it yet).
 */
export function probeDaemon(ws: string): Probe {
  let fd: number;
  try {
    fd = openSync(monitorLockPath(ws), C.O_RDONLY | C.O_NOFOLLOW);
  } catch (e) {
    if (errCode(e) === "ENOENT" || errCode(e) === "ENOTDIR") return { running: false };
    throw e;
  }
  try {
    if (tryFlock(fd, false)) {
      unflock(fd);
      return { running: false };
    }
    return { running: true, pid: parsePid(readFileSync(fd, "utf8")) };
  } finally {
    closeSync(fd);
  }
}

/** the state file, or undefined when missing or unreadable */
export function readState(ws: string): DaemonState | undefined {
  try {
    const v = JSON.parse(readFileSync(monitorStatePath(ws), "utf8")) as DaemonState;
    return typeof v === "object" && v !== null && typeof v.pid === "number" ? v : undefined;
  } catch {
    return undefined;
  }
}

/** replace path atomically (lib/sys/atomic.ts); never a link or anything but a regular file */
export function writeFileAtomic(path: string, text: string, mode = 0o600): void {
  atomicWriteFile(path, text, { mode, regularOnly: true });
}
