// The daemon's feed: its hooks (DaemonHooks, ./options.ts) as a loop over the reactions' table
// (REACTIONS, lib/ops/react/index.ts). Each hook event goes through the reactions that react to
// it, in the table's order, each with its own state (made here, once per daemon) and the parts
// they share (lib/ops/react/shared.ts). A reaction that states what it was doing for an event
// (`alone`) fails alone: its failure is logged once (LogOnce), and the ones after it go on; any
// other failure ends that event's run, which the loop logs. A reaction that marks the event done
// (a team's message, a dropped event) ends the run too.
import type { Deps } from "../ops/deps.ts";
import { REACTIONS } from "../ops/react/index.ts";
import type { HookContext } from "../ops/react/context.ts";
import type { AnyReaction, HookEvent, Tick } from "../ops/react/reaction.ts";
import { Shared } from "../ops/react/shared.ts";
import type { DaemonHooks } from "./options.ts";

export function reactionHooks(deps: Deps, table: readonly AnyReaction[] = REACTIONS): DaemonHooks {
  const shared = new Shared(deps);
  const live = table.map((r) => ({ r, state: r.state(deps, shared) }));
  const feed = async (on: HookEvent, ctx: HookContext, more: Partial<Tick> = {}): Promise<void> => {
    const tick: Tick = { on, ctx, ...more };
    for (const { r, state } of live) {
      if (tick.done) return;
      if (!r.on.includes(on)) continue;
      const doing = r.alone?.[on];
      if (doing === undefined) {
        await r.run(deps, state, tick, shared);
        continue;
      }
      try {
        await r.run(deps, state, tick, shared);
        shared.once(ctx).ok(on, doing);
      } catch (e) {
        shared.once(ctx).failed(on, e, doing);
      }
    }
  };
  return {
    reconcile: (ctx) => feed("reconcile", ctx),
    onEvent: (topic, payload, ctx) => feed("event", ctx, { topic, payload }),
    jobsChanged: (ctx, seen) => feed("jobsChanged", ctx, { seen }),
    jobFiles: ({ watching, name }) => {
      shared.journals.watched(watching);
      if (watching) shared.journals.fileChanged(name);
    },
    poll: (ctx) => feed("poll", ctx),
    watch: (ctx) => feed("watch", ctx),
    connected: shared.team ? (ctx) => feed("connected", ctx) : undefined,
    linkExtras: () => shared.team?.extras(),
    farewell: () => shared.team?.farewell(),
    async busy() {
      for (const { r, state } of live) if (r.busy && (await r.busy(deps, state, shared))) return true;
      return false;
    },
  };
}
