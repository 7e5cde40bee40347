// Running the daemon's reactions in a test process (lib/ops/react): a reaction of the table with
// Deps of a temp workspace (tests/helpers/ops.ts testDeps), its own state and the daemon's shared
// parts, fed one hook event as the daemon's feed (lib/daemon/feed.ts) feeds it. No daemon, no broker:
// what it logs and publishes is kept.
import type { Deps } from "../../lib/ops/deps.ts";
import type { HookContext } from "../../lib/ops/react/context.ts";
import type { AnyReaction, HookEvent, Tick } from "../../lib/ops/react/reaction.ts";
import { Shared } from "../../lib/ops/react/shared.ts";

export interface ReactionRun {
  lines: string[];
  published: { topic: string; payload: string }[];
  /** what the reaction subscribed the daemon's connection to (and did not drop) */
  subscribed: Set<string>;
  /** feed it one event (more: the tick's topic, payload, seen …) */
  feed(on: HookEvent, more?: Partial<Tick>): Promise<Tick>;
  shared: Shared;
  state: unknown;
}

/** a reaction with its state, ready to be fed events */
export function reactionRun(r: AnyReaction, deps: Deps, mode: HookContext["mode"] = "polling"): ReactionRun {
  const shared = new Shared(deps);
  const state = r.state(deps, shared);
  const lines: string[] = [];
  const published: { topic: string; payload: string }[] = [];
  const subscribed = new Set<string>();
  const ctx: HookContext = {
    ws: deps.ws,
    mode,
    signal: new AbortController().signal,
    log: (l) => void lines.push(l),
    debug: () => {},
    publish: async (topic, payload) => (published.push({ topic, payload }), mode === "mqtt"),
    aside: (_lane, _name, fn) => void fn(ctx),
    settled: async () => {},
    subscribe: (topics) => topics.forEach((t) => subscribed.add(t)),
    unsubscribe: (topics) => topics.forEach((t) => subscribed.delete(t)),
  };
  return {
    lines,
    published,
    subscribed,
    shared,
    state,
    async feed(on, more = {}) {
      const tick: Tick = { on, ctx, ...more };
      await r.run(deps, state, tick, shared);
      return tick;
    },
  };
}
