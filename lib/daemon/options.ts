// What runs a daemon (runDaemon, ./loop.ts) is given: what it does (DaemonHooks, which the feed,
// ./feed.ts, makes from the reactions' table), how often it looks (DaemonTimings, from the
// environment) and when it gives up (DaemonOptions).
import type { HookContext, LinkExtras } from "../ops/react/context.ts";
import type { Env } from "../sys/paths.ts";

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
  /**
   * at once, outside the rounds: the folder's watch named a file that changed (undefined: it named
   * none), or it was armed (`watching` true) or lost (false)
   */
  jobFiles?(change: { watching: boolean; name?: string }): void;
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
