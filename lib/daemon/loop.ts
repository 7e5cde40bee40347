// The per-workspace subscriber daemon, `mam reconcile --subscribe` (SPEC §6.2, Issue #19).
//
// One daemon per workspace, known by the exclusive flock on .mam/monitor.lock (./lock.ts). It
// hears job events over MQTT (persistent session) or, when no broker answers, polls
// (./broker-loop.ts); and it never outlives its workspace: every WATCH_MS it checks that the lock
// file is still the one it holds and that the workspace still exists (./clocks.ts). Every wait is
// a timer raced against one AbortSignal, so SIGTERM/SIGINT end it within a second whatever it was
// doing (./life.ts); hooks run with a deadline and are never awaited on the way out
// (./hook-runner.ts).
//
// What it does with events and polls is not decided here: that is DaemonHooks (./options.ts),
// which the feed (./feed.ts) makes from the reactions' table (lib/ops/react/index.ts). This file
// is the daemon's life in steps: take the lock, serve, and on the way out let everything go.
import { type BrokerConfig, brokerConfigFromEnv, describeBroker } from "../jobs/broker-config.ts";
import type { Env } from "../sys/paths.ts";
import { brokerLoop, type LinkHolder, linkHolder } from "./broker-loop.ts";
import { type Activity, newActivity, startClocks } from "./clocks.ts";
import { hookRunner } from "./hook-runner.ts";
import { type Life, startLife } from "./life.ts";
import { type HeldLock, modeFile, releaseLock, takeLock } from "./lock.ts";
import { logWriter } from "./log-file.ts";
import { type DaemonOptions, type DaemonTimings, daemonTimings } from "./options.ts";

type Timer = ReturnType<typeof setInterval>;

/** what one run of the daemon holds, to let go of on the way out */
interface Held {
  timers: Timer[];
  holder?: LinkHolder;
  lock?: HeldLock;
  activity?: Activity;
}

/** run the daemon until something ends it; returns the exit status (0, 130, 143) */
export async function runDaemon(o: DaemonOptions): Promise<number> {
  const env = o.env ?? process.env;
  const t: DaemonTimings = { ...daemonTimings(env), ...o.timings };
  const life = startLife(o, env);
  const held: Held = { timers: [] };
  try {
    const cfg = brokerConfigFromEnv(env); // a bad MQTT_* is a usage error before any file is touched
    const lock = await takeLock(o.ws, process.pid, life);
    if ("exit" in lock) return lock.exit;
    held.lock = lock;
    if (!o.write) life.write = logWriter(o.ws, env); // synchronous: status must never see the pid without the state
    if (life.signal.aborted) return life.exitCode();
    serve({ o, t, env, cfg, life, lock }, held);
    await life.stopped;
    return life.exitCode();
  } finally {
    await letGo(o, life, held);
  }
}

/** the daemon at work: its mode file, its hooks, its clocks and its broker link */
function serve(run: { o: DaemonOptions; t: DaemonTimings; env: Env; cfg: BrokerConfig; life: Life; lock: HeldLock }, held: Held): void {
  const { o, t, env, cfg, life, lock } = run;
  const pid = process.pid;
  const broker = describeBroker(cfg);
  const mode = modeFile(o.ws, pid, broker, life.log);
  mode.set("connecting");
  life.log(`daemon started for ${o.ws} (pid ${pid}, broker ${broker})`);
  const holder = (held.holder = linkHolder(life, t.connectTimeoutMs));
  const runner = hookRunner(life, t.hookDeadlineMs, () => ({ ws: o.ws, mode: mode.current, log: life.log, debug: life.debug, publish: holder.publish, settled: holder.settled, subscribe: holder.subscribe, unsubscribe: holder.unsubscribe }));
  const activity = (held.activity = newActivity());
  held.timers.push(...startClocks({ o, t, life, runner, lock, mode, activity }));
  const parts = { cfg, ws: o.ws, env, hooks: o.hooks, t, life, runner, holder, mode, activity };
  void brokerLoop(parts).catch((e) => life.finish(1, `MQTT Monitor: ${(e as Error).message}; exiting`));
}

/** on the way out: the clocks stop, the signals are no longer ours, the link says goodbye and closes, the lock goes */
async function letGo(o: DaemonOptions, life: Life, held: Held): Promise<void> {
  for (const x of held.timers) clearInterval(x);
  // what the broker handed over in this run: a daemon hears its own jobs, not every job's (issue 36)
  const got = held.activity?.received;
  if (got && got.events + got.other > 0) life.log(`MQTT Monitor: received ${got.events} job event(s) and ${got.other} other message(s) from the broker since ${new Date(held.activity!.startMs).toISOString().replace(/\.\d+Z$/, "Z")}`);
  life.close();
  const link = held.holder?.link;
  if (link) {
    const bye = o.hooks.farewell?.();
    if (bye) await Promise.race([link.publish(bye.topic, bye.payload, true), new Promise((r) => setTimeout(r, 500))]);
    await link.close(500);
  }
  if (held.lock) releaseLock(o.ws, process.pid, held.lock);
}
