// jobs.waited: at each watch tick, the sessions unfinished jobs wait on (their agent, or a loop's
// reviewer; `name@host` of this host as name), for the reactions after it (tick.watched). An ended
// job put to rest (JournalCache.quiet) is skipped without reading it; the journal's index reads
// only what was appended since the last pass.
import { busySession } from "../../jobs/loop.ts";
import { isFinal } from "../../jobs/statuses.ts";
import type { JobStore } from "../../jobs/store.ts";
import type { JournalCache } from "../../jobs/journal-index.ts";
import { defineReaction } from "./reaction.ts";

export const jobsWaited = defineReaction({
  name: "jobs.waited",
  on: ["watch"],
  state: () => ({}),
  async run(deps, _st, tick, shared) {
    tick.watched = waitedOn(deps.jobs, tick.ctx.ws, shared.team?.host, shared.journals);
  },
});

/** the sessions unfinished jobs wait on */
export function waitedOn(jobs: JobStore, ws: string, host: string | undefined, journals: JournalCache): Set<string> {
  const out = new Set<string>();
  for (const id of jobs.ids()) {
    if (journals.quiet(ws, id)) continue;
    try {
      const r = jobs.read(id);
      if (!r || isFinal(r.status)) continue;
      const s = busySession(r, journals.get(ws, id, r).events);
      out.add(host && s.endsWith(`@${host}`) ? s.slice(0, -host.length - 1) : s);
    } catch {}
  }
  return out;
}
