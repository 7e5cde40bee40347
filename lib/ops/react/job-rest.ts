// job.rest: with every poll, ended jobs give their journal index's memory back, and rest once every
// event of theirs was reacted to (JournalCache.rest): the rounds over every job then skip them with
// a stat while their journal stays as it was; a late event reads their journal once more.
import { isFinal } from "../../jobs/statuses.ts";
import { defineReaction } from "./reaction.ts";

export const jobRest = defineReaction({
  name: "job.rest",
  on: ["poll"],
  state: () => ({}),
  async run(deps, _st, { ctx }, shared) {
    const { reactedToAll } = await import("./reactor.ts");
    const { journals } = shared;
    const rc = await shared.reactor(ctx);
    for (const id of journals.ids()) {
      try {
        const r = deps.jobs.read(id);
        if (r && isFinal(r.status) && reactedToAll(rc, id, journals.peek(ctx.ws, id)?.events ?? [])) journals.rest(id);
        else if (!r || isFinal(r.status)) journals.forget(id);
      } catch {
        journals.forget(id);
      }
    }
    try {
      journals.keepResting(new Set(deps.jobs.ids()));
    } catch {} // the folder cannot be listed: the rounds over every job fail too, and say so
  },
});
