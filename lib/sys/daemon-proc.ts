// Starting, finding and stopping a workspace's subscriber daemon (SPEC §6.3): what `mam daemon`,
// `mam create` and `mam job submit` use. A daemon runs iff it holds the flock on
// .mam/monitor.lock; the PID in that file is only a hint, read while the lock is held.
import { childEnv, selfCommand } from "./self.ts";
import { closeSync, constants as C, openSync, readFileSync } from "node:fs";
import { openRegular } from "./atomic.ts";
import { ensureMamDir } from "./mam-dir.ts";
import { join } from "node:path";
import { errCode, EXIT, MamError, writeRefused } from "./errors.ts";
import { withLock } from "./lock-file.ts";
import { type Env, mamDir } from "./paths.ts";
import { type DaemonMode, monitorLogPath, probeDaemon, readState, spawnLockPath } from "./daemon-files.ts";

export const DISABLED_MESSAGE = "not starting the subscriber daemon (MAM_NO_SUBSCRIBER_DAEMON=1)";
/** how long ensure waits for a daemon it started to hold the lock and write its PID */
export const START_TIMEOUT_MS = 10_000;
/** how long stop waits after SIGTERM before SIGKILL */
export const STOP_GRACE_MS = 5_000;

/** only the literal "1" disables the daemon ("0", "", "yes", "true" do not) */
export function daemonDisabled(env: Env = process.env): boolean {
  return env.MAM_NO_SUBSCRIBER_DAEMON === "1";
}

/** the daemon's command line: this very mam (binary, or bun + mam.ts from source) */
export function daemonArgv(ws: string): string[] {
  return [...selfCommand(), "reconcile", "--subscribe", "--idle-timeout", "0", "--workspace", ws];
}

/** the PID of the running daemon, waiting up to ms for a starting one to write it */
async function runningPid(ws: string, ms: number): Promise<number | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    const p = probeDaemon(ws);
    if (!p.running) return undefined;
    if (p.pid !== undefined || Date.now() >= deadline) return p.pid;
    await Bun.sleep(10);
  }
}

function logTail(ws: string): string {
  try {
    const lines = readFileSync(monitorLogPath(ws), "utf8").trimEnd().split("\n");
    return lines.slice(-3).join(" | ");
  } catch {
    return "";
  }
}

function spawnDetached(ws: string, env: Env) {
  const env2 = childEnv(env);
  let logFd: number;
  try {
    // never through a link: a workspace that ships `.mam/monitor.log -> FILE` gets a refusal
    logFd = openRegular(monitorLogPath(ws), C.O_WRONLY | C.O_APPEND | C.O_CREAT, 0o600);
  } catch (e) {
    if (e instanceof MamError) throw e;
    throw new MamError(`cannot open ${monitorLogPath(ws)} (${(e as Error).message})`, EXIT.FAIL);
  }
  const nullFd = openSync("/dev/null", "r");
  try {
    const child = Bun.spawn(daemonArgv(ws), {
      cwd: ws,
      env: env2,
      stdio: [nullFd, logFd, logFd],
      detached: true, // setsid: no terminal, no session teardown kills it
    });
    child.unref();
    return child;
  } finally {
    closeSync(logFd);
    closeSync(nullFd);
  }
}

export interface EnsureResult {
  pid: number | undefined;
  /** this call started it */
  started: boolean;
  /** MAM_NO_SUBSCRIBER_DAEMON=1 */
  disabled: boolean;
}

/**
 * The PID of ws's daemon, starting one first if none runs (never with MAM_NO_SUBSCRIBER_DAEMON=1:
 * then `disabled`, and the caller says DISABLED_MESSAGE). Concurrent calls, in any processes,
 * start one daemon and all return its PID.
 */
export async function ensureDaemonDetailed(ws: string, env: Env): Promise<EnsureResult> {
  if (daemonDisabled(env)) {
    return { pid: await runningPid(ws, 1000), started: false, disabled: true };
  }
  const known = probeDaemon(ws);
  if (known.running && known.pid !== undefined) return { pid: known.pid, started: false, disabled: false };
  try {
    ensureMamDir(ws);
  } catch (e) {
    if (e instanceof MamError) throw e;
    throw writeRefused(e, mamDir(ws)) ?? new MamError(`cannot create ${mamDir(ws)} (${(e as Error).message})`, EXIT.FAIL, "check the workspace's permissions");
  }
  return withLock(spawnLockPath(ws), "subscriber daemon start", 3 * START_TIMEOUT_MS, async () => {
    const p = probeDaemon(ws);
    if (p.running) return { pid: p.pid ?? (await runningPid(ws, START_TIMEOUT_MS)), started: false, disabled: false };
    const child = spawnDetached(ws, env);
    let exited: number | null = null;
    void child.exited.then((c) => (exited = c));
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const q = probeDaemon(ws);
      if (q.running && q.pid === child.pid) return { pid: child.pid, started: true, disabled: false };
      if (exited !== null) {
        // it lost a race with a daemon started by hand: that one is the workspace's daemon
        if (q.running) return { pid: q.pid ?? (await runningPid(ws, START_TIMEOUT_MS)), started: false, disabled: false };
        const tail = logTail(ws);
        throw new MamError(`the subscriber daemon exited at start (status ${exited})${tail ? `: ${tail}` : ""}`, EXIT.FAIL, `see ${monitorLogPath(ws)}`);
      }
      await Bun.sleep(10);
    }
    try {
      process.kill(child.pid, "SIGKILL");
    } catch {}
    throw new MamError(`the subscriber daemon (pid ${child.pid}) did not take ${join(mamDir(ws), "monitor.lock")} within ${START_TIMEOUT_MS / 1000} s`, EXIT.FAIL, `see ${monitorLogPath(ws)}`);
  });
}

export interface DaemonStatus {
  pid: number | null;
  /** mqtt | polling, or connecting during its first broker attempt; unknown without a state file */
  mode: DaemonMode | "unknown";
  since: string | null;
  log: string | null;
  broker: string | null;
}

/** read-only: undefined when no daemon runs */
export function daemonStatus(ws: string): DaemonStatus | undefined {
  const p = probeDaemon(ws);
  if (!p.running) return undefined;
  const s = readState(ws);
  if (s && s.pid === p.pid) return { pid: s.pid, mode: s.mode, since: s.since, log: s.log, broker: s.broker };
  return { pid: p.pid ?? null, mode: "unknown", since: null, log: null, broker: null };
}

export interface StopResult {
  pid: number;
  /** it ignored SIGTERM for STOP_GRACE_MS and got SIGKILL */
  killed: boolean;
}

/** SIGTERM the daemon and wait for its lock to be released (SIGKILL after the grace); undefined when none runs */
export async function stopDaemon(ws: string, graceMs = STOP_GRACE_MS): Promise<StopResult | undefined> {
  const p = probeDaemon(ws);
  if (!p.running) return undefined;
  const pid = p.pid ?? (await runningPid(ws, 2000));
  if (pid === undefined) {
    throw new MamError(`a subscriber daemon holds ${join(mamDir(ws), "monitor.lock")} but its PID is not in the file`, EXIT.FAIL, "find it with: pgrep -af 'reconcile --subscribe'");
  }
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(pid, s);
    } catch (e) {
      if (errCode(e) !== "ESRCH") throw new MamError(`cannot signal the subscriber daemon (pid ${pid}): ${(e as Error).message}`, EXIT.FAIL);
    }
  };
  const released = async (ms: number) => {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline) {
      if (!probeDaemon(ws).running) return true;
      await Bun.sleep(20);
    }
    return !probeDaemon(ws).running;
  };
  signal("SIGTERM");
  if (await released(graceMs)) return { pid, killed: false };
  signal("SIGKILL");
  if (await released(2000)) return { pid, killed: true };
  throw new MamError(`the subscriber daemon (pid ${pid}) still holds its lock after SIGKILL`, EXIT.FAIL);
}
