// A fresh temp workspace and HOME per test, a clean env with the fakes first on PATH,
// MAM_NO_SUBSCRIBER_DAEMON=1, and a reaper that kills anything anchored in the temp dir.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Sandbox {
  /** the temp root (short, for Unix socket paths) */
  root: string;
  /** the workspace folder (realpath) */
  ws: string;
  home: string;
  /** bin folder first on PATH (fakes go here) */
  bin: string;
  env: Record<string, string>;
  /** env with extra vars; undefined removes one */
  with(extra: Record<string, string | undefined>): Record<string, string>;
  cleanup(): Promise<void>;
}

const KEEP = ["PATH", "LANG", "LC_ALL", "TERM", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ"];

export function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of KEEP) if (process.env[k] !== undefined) env[k] = process.env[k]!;
  return env;
}

/** roots not cleaned up yet (see reapAbandoned) */
const live = new Set<string>();

/**
 * kill what the sandboxes not cleaned up started, and remove them: a test that timed out never
 * reaches its cleanup (bun abandons its body). tests/preload.ts runs it after each file's tests;
 * returns the roots it found
 */
export async function reapAbandoned(): Promise<string[]> {
  const roots = [...live];
  for (const root of roots) {
    await reap(root);
    rmSync(root, { recursive: true, force: true });
    live.delete(root);
  }
  return roots;
}

export function makeSandbox(prefix = "mam-"): Sandbox {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  live.add(root);
  const ws = join(root, "ws");
  const home = join(root, "home");
  const bin = join(root, "bin");
  for (const d of [ws, home, bin]) mkdirSync(d, { recursive: true });
  const env: Record<string, string> = {
    ...baseEnv(),
    PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    NO_COLOR: "1",
    MAM_NO_SUBSCRIBER_DAEMON: "1",
    // the fake agents draw no real prompt box: look once, type unless a dialog shows (the
    // real-agent tests wait for the real prompt, the default)
    MAM_PROMPT_WAIT_S: "0",
    // never a real broker by accident: port 9 refuses at once
    MQTT_BROKER: "127.0.0.1",
    MQTT_PORT: "9",
  };
  const sb: Sandbox = {
    root,
    ws,
    home,
    bin,
    env,
    with(extra) {
      const e = { ...env };
      for (const [k, v] of Object.entries(extra)) {
        if (v === undefined) delete e[k];
        else e[k] = v;
      }
      return e;
    },
    async cleanup() {
      const left = await reap(root);
      rmSync(root, { recursive: true, force: true });
      live.delete(root);
      if (left.length) throw new Error(`processes left behind in ${root}: ${left.join(", ")}`);
    },
  };
  return sb;
}

/** pids of processes whose argv, cwd or environment mention dir */
export function anchoredPids(dir: string): number[] {
  const hits: number[] = [];
  for (const ent of readdirSync("/proc")) {
    if (!/^\d+$/.test(ent)) continue;
    const pid = Number(ent);
    if (pid === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmd === "") continue; // zombie or kernel thread
      let cwd = "";
      try {
        cwd = readlinkSync(`/proc/${pid}/cwd`);
      } catch {}
      if (cmd.includes(dir) || cwd.startsWith(dir)) hits.push(pid);
    } catch {}
  }
  return hits;
}

/** SIGTERM, then SIGKILL, everything anchored in dir; returns what was found */
export async function reap(dir: string): Promise<number[]> {
  const pids = anchoredPids(dir);
  for (const p of pids) {
    try {
      process.kill(p, "SIGTERM");
    } catch {}
  }
  const deadline = Date.now() + 3000;
  while (Date.now() < deadline && anchoredPids(dir).length) await Bun.sleep(50);
  for (const p of anchoredPids(dir)) {
    try {
      process.kill(p, "SIGKILL");
    } catch {}
  }
  return pids;
}

export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs: number, stepMs = 50): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await cond()) return true;
    await Bun.sleep(stepMs);
  }
  return !!(await cond());
}
