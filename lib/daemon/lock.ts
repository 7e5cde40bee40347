// Who the workspace's daemon is, on disk: the exclusive flock on .mam/monitor.lock (holding its
// PID) makes a daemon the one, and .mam/monitor.json says what mode it is in (what `mam daemon
// status` reads). The daemon takes the lock at start, checks every WATCH_MS that the lock file is
// still the one it holds (lockFileState), and on the way out removes its state file, unless the
// folder is someone else's by now.
import { closeSync, constants as C, fstatSync, ftruncateSync, readFileSync, readlinkSync, rmSync, statSync, writeSync } from "node:fs";
import { openRegular } from "../sys/atomic.ts";
import { type DaemonMode, type DaemonState, monitorLockPath, monitorLogPath, monitorStatePath, parsePid, readState, writeFileAtomic } from "../sys/daemon-files.ts";
import { errCode, EXIT, MamError } from "../sys/errors.ts";
import { flockWait } from "../sys/flock.ts";
import { ensureMamDir } from "../sys/mam-dir.ts";
import { epochNow, isoUtc } from "../sys/time.ts";
import type { Life } from "./life.ts";

export interface FileId {
  dev: number;
  ino: number;
}

/** the lock the daemon holds: its path, the open file and that file's identity */
export interface HeldLock {
  path: string;
  fd: number;
  held: FileId;
}

/** is the lock file at path still the one we hold open on fd? */
export function lockFileState(path: string, held: FileId, fd: number): "ok" | "gone" | "replaced" {
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    if (errCode(e) === "ENOENT" || errCode(e) === "ENOTDIR") return "gone";
    return "ok"; // EACCES and friends: not proof of anything
  }
  if (st.dev !== held.dev || st.ino !== held.ino) return "replaced";
  try {
    if (fstatSync(fd).nlink === 0) return "gone";
  } catch {}
  return "ok";
}

export function workspaceExists(ws: string): boolean {
  try {
    return statSync(ws).isDirectory();
  } catch (e) {
    return !(errCode(e) === "ENOENT" || errCode(e) === "ENOTDIR");
  }
}

/** open .mam/monitor.lock (creating .mam/), or a MamError that says what to check */
function openLock(ws: string, path: string): number {
  try {
    ensureMamDir(ws);
    return openRegular(path, C.O_RDWR | C.O_CREAT, 0o600);
  } catch (e) {
    if (e instanceof MamError) throw e;
    throw new MamError(`cannot open ${path} (${(e as Error).message})`, EXIT.FAIL, "check the workspace's permissions");
  }
}

/**
 * Take the workspace's lock and write our PID into it: the lock, or the exit status when the
 * daemon ends instead (another daemon holds it: 0, logged; the daemon was stopped meanwhile).
 */
export async function takeLock(ws: string, pid: number, life: Life): Promise<HeldLock | { exit: number }> {
  const path = monitorLockPath(ws);
  const fd = openLock(ws, path);
  let taken = false;
  try {
    // a short wait, not one try: `mam daemon status|ensure` probe with a shared lock for a moment
    let got: "locked" | "timeout";
    try {
      got = await flockWait(fd, { budgetMs: 500, maxPollMs: 10, signal: life.signal });
    } catch (e) {
      if (life.signal.aborted) return { exit: life.exitCode() };
      throw e;
    }
    if (got === "timeout") {
      let holder = "?";
      try {
        holder = String(parsePid(readFileSync(path, "utf8")) ?? "?");
      } catch {}
      life.log(`another monitor is running (pid ${holder}); exiting`);
      return { exit: 0 };
    }
    ftruncateSync(fd, 0);
    writeSync(fd, `${pid}\n`, 0);
    const st = fstatSync(fd);
    taken = true;
    return { path, fd, held: { dev: st.dev, ino: st.ino } };
  } finally {
    if (!taken) closeSync(fd);
  }
}

/** our state file goes with us, unless the folder is someone else's by now; the lock is let go */
export function releaseLock(ws: string, pid: number, lock: HeldLock): void {
  try {
    if (lockFileState(lock.path, lock.held, lock.fd) === "ok" && readState(ws)?.pid === pid) {
      rmSync(monitorStatePath(ws), { force: true });
    }
  } catch {}
  closeSync(lock.fd);
}

/** the file our stdout goes to (the daemon's log), if any */
function stdoutPath(ws: string): string | null {
  try {
    const o = fstatSync(1);
    if (!o.isFile()) return null;
    try {
      const l = statSync(monitorLogPath(ws));
      if (l.dev === o.dev && l.ino === o.ino) return monitorLogPath(ws);
    } catch {}
    const p = readlinkSync("/proc/self/fd/1");
    return p.startsWith("/") ? p.replace(/ \(deleted\)$/, "") : null;
  } catch {
    return null;
  }
}

/** the daemon's mode, kept in .mam/monitor.json each time it changes */
export interface ModeFile {
  current: DaemonMode;
  set(mode: DaemonMode): void;
}

/** the mode file of the daemon `pid`; a state that cannot be written is told once */
export function modeFile(ws: string, pid: number, broker: string, log: (m: string) => void): ModeFile {
  const logPath = stdoutPath(ws);
  const startedAt = isoUtc();
  let broken = false;
  const file: ModeFile = {
    current: "connecting",
    set(m) {
      file.current = m;
      const now = epochNow();
      const s: DaemonState = { pid, mode: m, since: isoUtc(now), since_epoch: now, log: logPath, broker, started_at: startedAt };
      try {
        writeFileAtomic(monitorStatePath(ws), `${JSON.stringify(s, null, 2)}\n`);
      } catch (e) {
        if (!broken) log(`cannot write ${monitorStatePath(ws)} (${(e as Error).message})`);
        broken = true;
      }
    },
  };
  return file;
}
