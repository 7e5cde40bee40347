// schedule.fire (docs/jobs.md#schedules): scheduled jobs are submitted when due, checked every
// watch tick (lib/ops/job/schedule.ts fireDue); a schedule file this user's mam did not write is
// said once and skipped. A schedule still to run holds the daemon (it is the one that submits it).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { defineReaction } from "./reaction.ts";
import { SkipOnce } from "./skip-once.ts";

export const scheduleFire = defineReaction({
  name: "schedule.fire",
  on: ["watch"],
  alone: { watch: "schedules failed" },
  state: () => new SkipOnce(),
  async run(deps, skip, { ctx }) {
    if (!existsSync(join(ctx.ws, ".mam", "schedules"))) return;
    const { fireDue } = await import("../job/schedule.ts");
    const { log, skipped } = await fireDue(deps, Date.now() / 1000);
    for (const l of log) ctx.log(l);
    for (const k of skipped) skip.say(ctx, `schedule\u0000${k.file}\u0000${k.why}`, `schedule file ${k.file} skipped, the other schedules run: ${k.why}; ${k.fix}`);
  },
  async busy(deps) {
    return existsSync(join(deps.ws, ".mam", "schedules")) && (await import("../job/schedule.ts")).hasActiveSchedules(deps.ws, deps.env);
  },
});
