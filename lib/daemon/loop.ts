// The per-workspace subscriber daemon, `mam reconcile --subscribe` (SPEC §6.2, Issue #19).
//
// One daemon per workspace, known by the exclusive flock on .mam/monitor.lock. It hears job events
// over MQTT (persistent session) or, when no broker answers, polls; and it never outlives its
// workspace: every WATCH_MS it checks that the lock file is still the one it holds and that the
// workspace still exists. Every wait is a timer raced against one AbortSignal, so SIGTERM/SIGINT
// end it within a second whatever it was doing; hooks run with a deadline and are never awaited
// on the way out.
//
// What it does with events and polls is not decided here: that is DaemonHooks, which the feed
// (lib/daemon/feed.ts) makes from the reactions' table (lib/ops/react/index.ts).
import { type FSWatcher, closeSync, existsSync, fstatSync, ftruncateSync, readFileSync, readlinkSync, rmSync, statSync, watch as watchFs, writeSync, constants as C } from "node:fs";
import { join } from "node:path";
import { type BrokerConfig, brokerConfigFromEnv, describeBroker } from "../jobs/broker-config.ts";
import { openRegular } from "../sys/atomic.ts";
import { ensureMamDir } from "../sys/mam-dir.ts";
import { errCode, EXIT, MamError } from "../sys/errors.ts";
import { flockWait } from "../sys/flock.ts";
import { out } from "../sys/io.ts";
import { visible } from "../sys/sanitize.ts";
import { cliSpelling, spellFields } from "../sys/fields.ts";
import { type Env, mamDir } from "../sys/paths.ts";
import { epochNow, isoUtc, logStamp } from "../sys/time.ts";
import type { BrokerLink } from "./broker-link.ts";
import type { HookContext, LinkExtras } from "../ops/react/context.ts";
import { logWriter } from "./log-file.ts";
import { type DaemonMode, type DaemonState, monitorLockPath, monitorLogPath, monitorStatePath, parsePid, readState, writeFileAtomic } from "../sys/daemon-files.ts";

/**
 * What the daemon does; the loop only decides when. Hooks run one at a time, in order, each with
 * a deadline (HOOK_DEADLINE_MS); what a hook puts aside (HookContext.aside) runs beside them. They must stay asynchronous: a synchronous wait (spawnSync,
 * sleepSync) would also hold up signal handling.
 */
export interface DaemonHooks {
  /** a full resync: once at start, and again whenever the daemon switches from polling to MQTT */
  reconcile(ctx: HookContext): Promise<void>;
  /** one message on <prefix>/+/events; the broker gets its PUBACK when this returns */
  onEvent(topic: string, payload: Buffer, ctx: HookContext): Promise<void>;
  /**
   * .mam/jobs changed (a journal was appended by a local worker, …), debounced. `seen`: the
   * folder's watch saw a change; false: the slow tick that stands in for a watch gone deaf
   */
  jobsChanged?(ctx: HookContext, seen: boolean): Promise<void>;
  /** every RECONCILE_POLL_INTERVAL seconds, in both modes (ctx.mode says which) */
  poll(ctx: HookContext): Promise<void>;
  /** every MAM_STATE_POLL_MS (default 1000), in both modes: watch the agents jobs wait on */
  watch?(ctx: HookContext): Promise<void>;
  /** true while there is running work (holds the idle timeout off) */
  busy(ctx: HookContext): Promise<boolean>;
  /** more topics and a last will for the broker connection, asked before each connect */
  linkExtras?(): LinkExtras | undefined;
  /** after every successful connect (the first one too) */
  connected?(ctx: HookContext): Promise<void>;
  /** a last retained message to publish on the way out (a team's "offline") */
  farewell?(): { topic: string; payload: string } | undefined;
}

export interface DaemonTimings {
  pollMs: number;
  /** the agent-state watch (DaemonHooks.watch) */
  statePollMs: number;
  retryMs: number;
  connectTimeoutMs: number;
  watchMs: number;
  hookDeadlineMs: number;
}

export const WATCH_MS = 500;
export const CONNECT_TIMEOUT_MS = 5000;
export const HOOK_DEADLINE_MS = 60_000;

/** a positive number of seconds from the environment, else the default */
export function envSeconds(raw: string | undefined, def: number): number {
  if (raw === undefined || !/^\d+(\.\d+)?$/.test(raw.trim())) return def;
  const n = Number(raw.trim());
  return n > 0 ? n : def;
}

/** a whole number of milliseconds ≥ 50 from the environment, else the default */
export function envMs(raw: string | undefined, def: number): number {
  if (raw === undefined || !/^\d+$/.test(raw.trim())) return def;
  const n = Number(raw.trim());
  return n >= 50 ? n : def;
}

export function daemonTimings(env: Env): DaemonTimings {
  return {
    pollMs: envSeconds(env.RECONCILE_POLL_INTERVAL, 15) * 1000,
    statePollMs: envMs(env.MAM_STATE_POLL_MS, 1000),
    retryMs: envSeconds(env.MAM_BROKER_RETRY_S, 60) * 1000,
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
    watchMs: WATCH_MS,
    hookDeadlineMs: HOOK_DEADLINE_MS,
  };
}

export interface FileId {
  dev: number;
  ino: number;
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

/** resolves after ms, or as soon as signal aborts */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
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

export interface DaemonOptions {
  ws: string;
  /** exit after this many seconds without an event or running work; 0 = never */
  idleTimeoutS: number;
  /** exit after this many seconds whatever happens; 0 = never */
  timeoutS: number;
  hooks: DaemonHooks;
  env?: Env;
  /** a log line sink; default `<ISO time> <message>` (one line, control characters escaped) on stdout */
  write?: (line: string) => void;
  /** handle SIGTERM/SIGINT (default true) */
  handleSignals?: boolean;
  /** stop from outside (tests); the daemon then exits 0 */
  stopSignal?: AbortSignal;
  timings?: Partial<DaemonTimings>;
}

/** run the daemon until something ends it; returns the exit status (0, 130, 143) */
export async function runDaemon(o: DaemonOptions): Promise<number> {
  const env = o.env ?? process.env;
  const t: DaemonTimings = { ...daemonTimings(env), ...o.timings };
  const ws = o.ws;
  // once the daemon holds its lock, a log on .mam/monitor.log is rotated (log-file.ts)
  let write = o.write ?? ((line: string) => out(line));
  // one line per message, whatever it quotes: a topic or a detail with a newline cannot forge a
  // line, an escape sequence never reaches the file (or a terminal tailing it): sanitize.ts
  // an error a use case raised names its fields as {{field}}: the log spells them as the CLI does
  const log = (m: string) => write(`${logStamp()} ${visible(spellFields(m, cliSpelling))}`);
  const debug = (m: string) => {
    if (env.MAM_DEBUG === "1") log(`debug: ${m}`);
  };

  const stop = new AbortController();
  let exitCode = 0;
  const finish = (code: number, message?: string) => {
    if (stop.signal.aborted) return;
    if (message) log(message);
    exitCode = code;
    stop.abort();
  };
  const stopped = new Promise<void>((r) => stop.signal.addEventListener("abort", () => r(), { once: true }));
  // first thing: a signal that arrives while we start must still give 143/130, not a kill
  const onTerm = () => finish(143, "signal 15 received, exiting");
  const onInt = () => finish(130, "signal 2 received, exiting");
  if (o.handleSignals !== false) {
    process.on("SIGTERM", onTerm);
    process.on("SIGINT", onInt);
  }
  const onOuter = () => finish(0, "stop requested, exiting");
  o.stopSignal?.addEventListener("abort", onOuter, { once: true });

  let fd = -1;
  let held: FileId | undefined;
  const timers: ReturnType<typeof setInterval>[] = [];
  let link: BrokerLink | undefined;
  const pid = process.pid;
  const lockPath = monitorLockPath(ws);
  try {
    const cfg: BrokerConfig = brokerConfigFromEnv(env); // a bad MQTT_* is a usage error before any file is touched
    try {
      ensureMamDir(ws);
      fd = openRegular(lockPath, C.O_RDWR | C.O_CREAT, 0o600);
    } catch (e) {
      if (e instanceof MamError) throw e;
      throw new MamError(`cannot open ${lockPath} (${(e as Error).message})`, EXIT.FAIL, "check the workspace's permissions");
    }
    // a short wait, not one try: `mam daemon status|ensure` probe with a shared lock for a moment
    let got: "locked" | "timeout";
    try {
      got = await flockWait(fd, { budgetMs: 500, maxPollMs: 10, signal: stop.signal });
    } catch (e) {
      if (stop.signal.aborted) return exitCode;
      throw e;
    }
    if (got === "timeout") {
      let holder = "?";
      try {
        holder = String(parsePid(readFileSync(lockPath, "utf8")) ?? "?");
      } catch {}
      log(`another monitor is running (pid ${holder}); exiting`);
      return 0;
    }
    ftruncateSync(fd, 0);
    writeSync(fd, `${pid}\n`, 0);
    const st = fstatSync(fd);
    held = { dev: st.dev, ino: st.ino };
    if (!o.write) write = logWriter(ws, env); // synchronous: status must never see the pid without the state
    if (stop.signal.aborted) return exitCode;

    const broker = describeBroker(cfg);
    const logPath = stdoutPath(ws);
    const startedAt = isoUtc();
    let mode: DaemonMode = "connecting";
    let stateBroken = false;
    const setMode = (m: DaemonMode) => {
      mode = m;
      const now = epochNow();
      const s: DaemonState = { pid, mode: m, since: isoUtc(now), since_epoch: now, log: logPath, broker, started_at: startedAt };
      try {
        writeFileAtomic(monitorStatePath(ws), `${JSON.stringify(s, null, 2)}\n`);
      } catch (e) {
        if (!stateBroken) log(`cannot write ${monitorStatePath(ws)} (${(e as Error).message})`);
        stateBroken = true;
      }
    };
    setMode("connecting");
    log(`daemon started for ${ws} (pid ${pid}, broker ${broker})`);

    /** true while a connection is being set up; what is published meanwhile waits in `queued` */
    let connecting = false;
    const queued: { topic: string; payload: string; retain?: boolean }[] = [];
    const settled = async () => {
      const end = Date.now() + t.connectTimeoutMs + 1000;
      while (connecting && !stop.signal.aborted && Date.now() < end) await pause(10, stop.signal);
    };

    // ---- hooks: one at a time, in order, each with a deadline; and what they put aside ------
    /** one hook's run, with its context and deadline: undefined when it failed, overran or the daemon stops */
    const runBody = async <T>(name: string, fn: (ctx: HookContext) => Promise<T>): Promise<T | undefined> => {
      if (stop.signal.aborted) return undefined;
      const ac = new AbortController();
      const onStop = () => ac.abort();
      stop.signal.addEventListener("abort", onStop, { once: true });
      let timer: ReturnType<typeof setTimeout> | undefined;
      const overrun = new Promise<undefined>((r) => {
        timer = setTimeout(() => {
          log(`${name} did not finish within ${t.hookDeadlineMs / 1000} s; moving on`);
          ac.abort();
          r(undefined);
        }, t.hookDeadlineMs);
      });
      try {
        // fire and forget: an event hook runs inside MQTT.js's message handling, so awaiting a
        // PUBACK here would wait behind our own unfinished message (and starve keep-alives)
        const publish = async (topic: string, payload: string, po?: { retain?: boolean }) => {
          // a message handled while the connection is being set up (the broker sends what it
          // kept for us before it acknowledges the subscription) publishes once it is
          if (!link && connecting) {
            queued.push({ topic, payload, retain: po?.retain });
            return true;
          }
          if (!link) return false;
          void link.publish(topic, payload, po?.retain).then((ok) => ok || debug(`publish on ${topic} failed`));
          return true;
        };
        const aside = (lane: string, n: string, f: (ctx: HookContext) => Promise<void>) => runAside(lane, n, f);
        return await Promise.race([fn({ ws, mode, signal: ac.signal, log, debug, publish, aside, settled }), overrun, stopped.then(() => undefined)]);
      } catch (e) {
        if (!stop.signal.aborted) log(`${name} failed: ${(e as Error)?.message ?? String(e)}`);
        return undefined;
      } finally {
        clearTimeout(timer);
        stop.signal.removeEventListener("abort", onStop);
      }
    };
    let chain: Promise<unknown> = Promise.resolve();
    const runHook = <T>(name: string, fn: (ctx: HookContext) => Promise<T>): Promise<T | undefined> => {
      const next = chain.then(() => runBody(name, fn));
      chain = next.catch(() => {});
      return next;
    };
    /** what hooks put aside, per lane: one at a time, in order, beside the hooks */
    const lanes = new Map<string, Promise<void>>();
    const runAside = (lane: string, name: string, fn: (ctx: HookContext) => Promise<void>): void => {
      const next = (lanes.get(lane) ?? Promise.resolve()).then(() => runBody(name, fn)).then(
        () => undefined,
        () => undefined,
      );
      lanes.set(lane, next);
      void next.then(() => {
        if (lanes.get(lane) === next) lanes.delete(lane);
      });
    };

    // ---- self-termination, idle and overall timeouts ---------------------------------------
    const startMs = Date.now();
    let lastActivity = Date.now();
    let eventsInFlight = 0;
    let busyCheck = false;
    const watch = () => {
      if (stop.signal.aborted) return;
      if (!workspaceExists(ws)) return finish(0, `workspace ${ws} is gone; exiting`);
      const ls = lockFileState(lockPath, held!, fd);
      if (ls === "gone") return finish(0, "monitor.lock is gone: monitor.lock no longer exists; exiting");
      if (ls === "replaced") return finish(0, "monitor.lock was replaced; exiting");
      const now = Date.now();
      if (o.timeoutS > 0 && now - startMs >= o.timeoutS * 1000) return finish(0, `timeout of ${o.timeoutS} s reached; exiting`);
      if (eventsInFlight > 0) lastActivity = now;
      if (o.idleTimeoutS > 0 && now - lastActivity >= o.idleTimeoutS * 1000 && !busyCheck) {
        busyCheck = true;
        void runHook("busy", (ctx) => o.hooks.busy(ctx)).then((busy) => {
          busyCheck = false;
          if (busy) lastActivity = Date.now();
          else if (Date.now() - lastActivity >= o.idleTimeoutS * 1000) {
            finish(0, `idle for ${o.idleTimeoutS} s (no event, no running work); exiting`);
          }
        });
      }
    };
    timers.push(setInterval(watch, t.watchMs));

    // ---- polling: every pollMs, in both modes ----------------------------------------------
    let pollQueued = false;
    timers.push(
      setInterval(() => {
        if (stop.signal.aborted || mode === "connecting" || pollQueued) return;
        pollQueued = true;
        void runHook("poll", (ctx) => o.hooks.poll(ctx)).finally(() => (pollQueued = false));
      }, t.pollMs),
    );

    // ---- the agents jobs wait on: every statePollMs (the hook returns at once when no job runs)
    const watchHook = o.hooks.watch;
    if (watchHook) {
      let watchQueued = false;
      timers.push(
        setInterval(() => {
          if (stop.signal.aborted || mode === "connecting" || watchQueued) return;
          watchQueued = true;
          void runHook("watch", (ctx) => watchHook(ctx)).finally(() => (watchQueued = false));
        }, t.statePollMs),
      );
    }

    void runHook("reconcile", (ctx) => o.hooks.reconcile(ctx));

    // ---- .mam/jobs changes (journals written by local workers): react within ~100 ms ---------
    let jobsQueued = false;
    let jobsSeen = false;
    const jobsChanged = o.hooks.jobsChanged;
    const onJobsChange = (seen: boolean) => {
      if (!jobsChanged || stop.signal.aborted) return;
      jobsSeen ||= seen;
      if (jobsQueued) return;
      jobsQueued = true;
      setTimeout(() => {
        void runHook("jobs", (ctx) => {
          jobsQueued = false;
          const s = jobsSeen;
          jobsSeen = false;
          return jobsChanged(ctx, s);
        });
      }, 50);
    };
    if (jobsChanged) {
      const dir = join(mamDir(ws), "jobs");
      let watcher: FSWatcher | undefined;
      const arm = () => {
        if (watcher || !existsSync(dir)) return;
        try {
          watcher = watchFs(dir, { persistent: false }, () => onJobsChange(true));
          watcher.on("error", () => {
            watcher?.close();
            watcher = undefined;
          });
          onJobsChange(true);
        } catch {
          watcher = undefined;
        }
      };
      arm();
      // the folder may appear later (the first job), and fs.watch can go deaf: re-arm, and a slow tick
      timers.push(setInterval(() => (arm(), onJobsChange(false)), 2000));
      stop.signal.addEventListener("abort", () => watcher?.close(), { once: true });
    }

    // ---- the broker: connect, or poll and retry every retryMs ------------------------------
    const onMessage = async (topic: string, payload: Buffer) => {
      lastActivity = Date.now();
      eventsInFlight++;
      try {
        await runHook("event", (ctx) => o.hooks.onEvent(topic, payload, ctx));
      } finally {
        eventsInFlight--;
        lastActivity = Date.now();
      }
    };
    const brokerLoop = async () => {
      const { openBrokerLink, reasonOf } = await import("./broker-link.ts");
      let lastFailure: string | undefined;
      while (!stop.signal.aborted) {
        try {
          connecting = true;
          link = await openBrokerLink(cfg, ws, onMessage, t.connectTimeoutMs, stop.signal, o.hooks.linkExtras?.(), env);
        } catch (e) {
          connecting = false;
          queued.length = 0; // the events are journalled: the next connection sends them (acks)
          if (stop.signal.aborted) return;
          const why = reasonOf(e);
          if (mode !== "polling") {
            log(`MQTT Monitor: broker ${broker} unreachable (${why}); falling back to polling`);
            setMode("polling");
          } else if (why !== lastFailure) {
            log(`MQTT Monitor: broker ${broker} still unreachable (${why}); retrying every ${t.retryMs / 1000} s`);
          }
          lastFailure = why;
          await pause(t.retryMs, stop.signal);
          continue;
        }
        connecting = false;
        if (stop.signal.aborted) {
          await link.close(200);
          link = undefined;
          return;
        }
        for (const q of queued.splice(0)) void link.publish(q.topic, q.payload, q.retain).then((ok) => ok || debug(`publish on ${q.topic} failed`));
        const wasPolling = mode === "polling";
        setMode("mqtt");
        lastFailure = undefined;
        log(`MQTT Monitor: subscribed to ${link.topic}`);
        if (wasPolling) void runHook("reconcile", (ctx) => o.hooks.reconcile(ctx));
        const connected = o.hooks.connected;
        if (connected) void runHook("connected", (ctx) => connected(ctx));
        const why = await Promise.race([link.closed, stopped.then(() => undefined)]);
        if (why === undefined || stop.signal.aborted) return;
        link = undefined;
        log(`MQTT Monitor: lost the broker ${broker} (${why}); falling back to polling`);
        setMode("polling");
        lastFailure = why;
        await pause(t.retryMs, stop.signal);
      }
    };
    void brokerLoop().catch((e) => finish(1, `MQTT Monitor: ${(e as Error).message}; exiting`));

    await stopped;
    return exitCode;
  } finally {
    for (const x of timers) clearInterval(x);
    if (o.handleSignals !== false) {
      process.off("SIGTERM", onTerm);
      process.off("SIGINT", onInt);
    }
    o.stopSignal?.removeEventListener("abort", onOuter);
    if (link) {
      const bye = o.hooks.farewell?.();
      if (bye) await Promise.race([link.publish(bye.topic, bye.payload, true), new Promise((r) => setTimeout(r, 500))]);
      await link.close(500);
    }
    if (fd >= 0) {
      // our state file goes with us, unless the folder is someone else's by now
      try {
        if (held && lockFileState(lockPath, held, fd) === "ok" && readState(ws)?.pid === pid) {
          rmSync(monitorStatePath(ws), { force: true });
        }
      } catch {}
      closeSync(fd);
    }
  }
}
