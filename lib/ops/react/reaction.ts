// What a reaction of the daemon is (docs/architecture.md#adding-a-reaction): a name, the hook
// events it reacts to, its own typed state (made once per daemon by the table, not a captured
// `let`), and run(deps, state, tick). The daemon's loop (lib/daemon/loop.ts) decides when; its
// feed (lib/daemon/feed.ts) hands each event to the reactions of REACTIONS (./index.ts) that
// react to it, in the table's order, and carries out what they leave on the tick.
//
// A reaction does its I/O through `deps` (the job store, the registry, the runtime …), the tick's
// context (log, publish on the daemon's broker link, put slow work aside) and the daemon's shared
// parts (./shared.ts); it never prints and never reads process.env (deps.env is the environment).
import type { Deps } from "../deps.ts";
import type { HookContext } from "./context.ts";
import type { Shared } from "./shared.ts";

/**
 * the daemon's hook events a reaction can react to:
 *   reconcile   a full resync (start, and each switch from polling to MQTT)
 *   event       one message on the broker (tick.topic, tick.payload)
 *   jobsChanged .mam/jobs changed (tick.seen: the folder's watch saw it; false: the slow tick)
 *   poll        every RECONCILE_POLL_INTERVAL seconds, both modes
 *   watch       every MAM_STATE_POLL_MS (the agents jobs wait on)
 *   connected   after each successful broker connect
 */
export type HookEvent = "reconcile" | "event" | "jobsChanged" | "poll" | "watch" | "connected";

/** one event going through the table: what the reactions before leave for the ones after */
export interface Tick {
  on: HookEvent;
  ctx: HookContext;
  topic?: string;
  payload?: Buffer;
  seen?: boolean;
  /** the event was taken (a team's message, a dropped event): the reactions after it skip it */
  done?: boolean;
  /** event: the job the event was journalled for (job.ingest), whose reactions come next */
  job?: string;
  /** watch: the sessions unfinished jobs wait on (jobs.waited) */
  watched?: Set<string>;
}

export interface Reaction<S> {
  name: string;
  /** the hook events it reacts to; within one, reactions run in the table's order */
  on: readonly HookEvent[];
  /**
   * per event, what the log says when it fails ("dispatch failed"): that event's other reactions
   * then go on, and a failure repeated each time is logged once (LogOnce). Without one, a failure
   * ends the event's run (the daemon logs "<hook> failed: …")
   */
  alone?: Partial<Record<HookEvent, string>>;
  /** its state, made once per daemon */
  state(deps: Deps, shared: Shared): S;
  run(deps: Deps, state: S, tick: Tick, shared: Shared): Promise<void>;
  /** true while it has work to come (holds the daemon's idle timeout off) */
  busy?(deps: Deps, state: S, shared: Shared): Promise<boolean>;
}

/** a table entry whatever its state's type (run and busy are methods: they take the entry's own) */
export type AnyReaction = Reaction<unknown>;

/** a reaction entry, typed by its state */
export const defineReaction = <S>(r: Reaction<S>): Reaction<S> => r;
