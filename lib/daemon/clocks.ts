// What the daemon does on its own clocks, in both modes: every WATCH_MS it checks that it should
// still run (its workspace and its lock are there, no timeout is reached); every pollMs it polls,
// every statePollMs it watches the agents jobs wait on, and it hears .mam/jobs change (a journal a
// local worker appended) within about 100 ms. Each of these only says when: the hooks say what.
import { existsSync, type FSWatcher, watch as watchFs } from "node:fs";
import { join } from "node:path";
import type { HookContext } from "../ops/react/context.ts";
import { mamDir } from "../sys/paths.ts";
import type { HookRunner } from "./hook-runner.ts";
import type { Life } from "./life.ts";
import { type HeldLock, lockFileState, type ModeFile, workspaceExists } from "./lock.ts";
import type { DaemonOptions, DaemonTimings } from "./options.ts";

type Timer = ReturnType<typeof setInterval>;

/** when the daemon last heard something, and how many events it is handling now */
export interface Activity {
  readonly startMs: number;
  last: number;
  inFlight: number;
  /** the busy hook was asked and has not answered yet */
  busyCheck: boolean;
  /** the messages the broker handed over: job events (topics ending in /events), and the rest (a team's) */
  received: { events: number; other: number };
}

export const newActivity = (): Activity => ({ startMs: Date.now(), last: Date.now(), inFlight: 0, busyCheck: false, received: { events: 0, other: 0 } });

/** what the clocks need of the daemon */
interface ClockParts {
  o: DaemonOptions;
  t: DaemonTimings;
  life: Life;
  runner: HookRunner;
  lock: HeldLock;
  mode: ModeFile;
  activity: Activity;
}

/** start every clock, and the first reconcile; the timers to clear on the way out */
export function startClocks(p: ClockParts): Timer[] {
  const timers = [setInterval(() => selfCheck(p), p.t.watchMs), ...pollClocks(p)];
  // the full resync at start, queued before the jobs folder's first look
  void p.runner.run("reconcile", (ctx) => p.o.hooks.reconcile(ctx));
  const jobs = watchJobs(p);
  return jobs ? [...timers, jobs] : timers;
}

/** how long after its lock file is seen gone the daemon looks at its workspace again */
const LOCK_GONE_RECHECK_MS = 200;

/** self-termination: the workspace or the lock gone, the overall timeout, the idle timeout */
function selfCheck(p: ClockParts): void {
  const { o, life, lock, activity: a } = p;
  if (life.signal.aborted) return;
  if (!workspaceExists(o.ws)) return life.finish(0, `workspace ${o.ws} is gone; exiting`);
  const ls = lockFileState(lock.path, lock.held, lock.fd);
  if (ls === "gone") {
    // a workspace deleted with everything in it (rm -rf) loses its lock file before its folder:
    // looked at again a moment later, to say which it was
    setTimeout(() => life.finish(0, workspaceExists(o.ws) ? "monitor.lock is gone: monitor.lock no longer exists; exiting" : `workspace ${o.ws} is gone; exiting`), LOCK_GONE_RECHECK_MS);
    return;
  }
  if (ls === "replaced") return life.finish(0, "monitor.lock was replaced; exiting");
  const now = Date.now();
  if (o.timeoutS > 0 && now - a.startMs >= o.timeoutS * 1000) return life.finish(0, `timeout of ${o.timeoutS} s reached; exiting`);
  if (a.inFlight > 0) a.last = now;
  if (o.idleTimeoutS > 0 && now - a.last >= o.idleTimeoutS * 1000 && !a.busyCheck) {
    a.busyCheck = true;
    void p.runner.run("busy", (ctx) => o.hooks.busy(ctx)).then((busy) => {
      a.busyCheck = false;
      if (busy) a.last = Date.now();
      else if (Date.now() - a.last >= o.idleTimeoutS * 1000) {
        life.finish(0, `idle for ${o.idleTimeoutS} s (no event, no running work); exiting`);
      }
    });
  }
}

/** the poll every pollMs, and the agents jobs wait on every statePollMs (the hook returns at once when no job runs) */
function pollClocks(p: ClockParts): Timer[] {
  const every = (name: string, ms: number, hook: (ctx: HookContext) => Promise<void>): Timer => {
    let queued = false;
    return setInterval(() => {
      if (p.life.signal.aborted || p.mode.current === "connecting" || queued) return;
      queued = true;
      void p.runner.run(name, (ctx) => hook(ctx)).finally(() => (queued = false));
    }, ms);
  };
  const timers = [every("poll", p.t.pollMs, (ctx) => p.o.hooks.poll(ctx))];
  const watchHook = p.o.hooks.watch;
  if (watchHook) timers.push(every("watch", p.t.statePollMs, (ctx) => watchHook(ctx)));
  return timers;
}

/** .mam/jobs changes (journals written by local workers): react within ~100 ms; the slow tick's timer, if any */
function watchJobs(p: ClockParts): Timer | undefined {
  const jobsChanged = p.o.hooks.jobsChanged;
  if (!jobsChanged) return undefined;
  const { life } = p;
  let queued = false;
  let seenSince = false;
  const onChange = (seen: boolean) => {
    if (life.signal.aborted) return;
    seenSince ||= seen;
    if (queued) return;
    queued = true;
    setTimeout(() => {
      void p.runner.run("jobs", (ctx) => {
        queued = false;
        const s = seenSince;
        seenSince = false;
        return jobsChanged(ctx, s);
      });
    }, 50);
  };
  const dir = join(mamDir(p.o.ws), "jobs");
  const files = p.o.hooks.jobFiles;
  let watcher: FSWatcher | undefined;
  const arm = () => {
    if (watcher || !existsSync(dir)) return;
    try {
      watcher = watchFs(dir, { persistent: false }, (_event, name) => {
        files?.({ watching: true, name: typeof name === "string" ? name : undefined });
        onChange(true);
      });
      watcher.on("error", () => {
        watcher?.close();
        watcher = undefined;
        files?.({ watching: false });
      });
      files?.({ watching: true });
      onChange(true);
    } catch {
      watcher = undefined;
    }
  };
  arm();
  life.signal.addEventListener("abort", () => watcher?.close(), { once: true });
  // the folder may appear later (the first job), and fs.watch can go deaf: re-arm, and a slow tick
  return setInterval(() => (arm(), onChange(false)), 2000);
}
