// job.rest: with every poll, ended jobs give their journal index's memory back, and rest once every
// event of theirs was reacted to (JournalCache.rest): the rounds over every job then skip them with
// a stat while their journal stays as it was; a late event reads their journal once more.
import { isFinal } from "../../jobs/statuses.ts";
import { defineReaction } from "./reaction.ts";

/** how many indexes let go in one poll are worth a full collection */
const GC_AFTER = 200;

export const jobRest = defineReaction({
  name: "job.rest",
  on: ["poll"],
  state: () => ({}),
  async run(deps, _st, { ctx }, shared) {
    const { reactedToAll } = await import("./reactor.ts");
    const { journals } = shared;
    const rc = await shared.reactor(ctx);
    const before = journals.ids().length;
    for (const id of journals.ids()) {
      try {
        const r = deps.jobs.read(id);
        if (r && isFinal(r.status) && reactedToAll(rc, id, journals.peek(ctx.ws, id)?.events ?? [])) journals.rest(id);
        else if (!r || isFinal(r.status)) journals.forget(id);
      } catch {
        journals.forget(id);
      }
    }
    // the first poll of a daemon in a workspace that keeps many ended jobs lets their indexes go at
    // once: collected now, the idle daemon's memory is that much smaller (bench area `daemon`)
    if (before - journals.ids().length >= GC_AFTER) Bun.gc(true);
    try {
      journals.keepResting(new Set(deps.jobs.ids()));
    } catch {} // the folder cannot be listed: the rounds over every job fail too, and say so
  },
});
