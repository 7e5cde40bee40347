// Subscriber-daemon helpers for tests (the seed's _daemons_for, _alive, _start_subscriber, _wait_for).
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { MAM_CMD } from "./mam.ts";
import type { Sandbox } from "./sandbox.ts";

/** pids of `reconcile --subscribe` processes whose argv names ws (pgrep + ps, as the seed does) */
export function daemonPids(ws: string): number[] {
  const found = Bun.spawnSync(["pgrep", "-f", "reconcile --subscribe"]).stdout.toString().split(/\s+/).filter(Boolean);
  const hits: number[] = [];
  for (const pid of found) {
    const args = Bun.spawnSync(["ps", "-o", "args=", "-p", pid]).stdout.toString();
    if (args.includes(ws)) hits.push(Number(pid));
  }
  return hits;
}

/** running and not a zombie (a detached daemon's parent may reap it late) */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "" && state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

export function kill(pids: number[], sig: NodeJS.Signals = "SIGKILL"): void {
  for (const p of pids) {
    try {
      process.kill(p, sig);
    } catch {}
  }
}

/** SIGKILL and wait until they are gone (or zombies): the sandbox cleanup fails on anything still running */
export async function killAndWait(pids: number[], ms = 5000): Promise<void> {
  kill(pids);
  const deadline = Date.now() + ms;
  while (Date.now() < deadline && pids.some(alive)) await Bun.sleep(20);
}

export const logText = (log: string) => (existsSync(log) ? readFileSync(log, "utf8") : "");

/** wait until the log matches pattern */
export async function waitForLog(log: string, pattern: RegExp, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (pattern.test(logText(log))) return true;
    await Bun.sleep(100);
  }
  return pattern.test(logText(log));
}

export interface Subscriber {
  proc: ReturnType<typeof Bun.spawn>;
  pid: number;
  log: string;
  /** the exit status, or null if still running after ms */
  waitExit(ms: number): Promise<number | null>;
  /** SIGKILL if still running */
  kill(): Promise<void>;
}

/**
 * `mam reconcile --subscribe --idle-timeout 0` started as the seed's _start_subscriber does: its
 * own session, stdin /dev/null, stdout+stderr appended to log, cwd = the workspace.
 */
export function startSubscriber(sb: Sandbox, log: string, env: Record<string, string>, extra: string[] = ["--idle-timeout", "0"]): Subscriber {
  const fd = openSync(log, "a");
  const nul = openSync("/dev/null", "r");
  let proc;
  try {
    proc = Bun.spawn([...MAM_CMD, "reconcile", "--subscribe", ...extra, "--workspace", sb.ws], {
      cwd: sb.ws,
      env,
      stdio: [nul, fd, fd],
      detached: true,
    });
  } finally {
    closeSync(fd);
    closeSync(nul);
  }
  let code: number | null = null;
  void proc.exited.then((c) => (code = c));
  const p = proc;
  return {
    proc: p,
    pid: p.pid,
    log,
    async waitExit(ms) {
      const deadline = Date.now() + ms;
      while (code === null && Date.now() < deadline) await Bun.sleep(20);
      return code;
    },
    async kill() {
      if (code === null) {
        p.kill("SIGKILL");
        await p.exited;
      }
    },
  };
}

/** the seed's _unreachable_broker_env: port 9 refuses at once, so the daemon polls quickly */
export const unreachableBrokerEnv = { MQTT_BROKER: "127.0.0.1", MQTT_PORT: "9", MQTT_TLS: "0", RECONCILE_POLL_INTERVAL: "1" };
