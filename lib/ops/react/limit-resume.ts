// limit.resume (docs/unattended.md#resume-at-reset): an agent made with `create --on-limit resume`
// that is at a usage limit gets its own "continue" typed once the limit has reset (plus a jitter,
// MAM_LIMIT_JITTER_S, and the kind's own auto-continue margin), or on a backoff when the reset
// time is unknown, at most RESUMES_PER_DAY times a UTC day (lib/fleet/limit.ts decides). The
// typing is lib/ops/session/limit-resume.ts's, beside the hooks: only at the agent's prompt, never
// into a dialog or an agent at work; what it skipped is logged once per limit and reason.
import { agentKind } from "../../agents/kinds/index.ts";
import { jitterMax, jitterS, resumeLogOf, resumeNow } from "../../fleet/limit.ts";
import { rowAgent } from "../../fleet/rows.ts";
import { defineReaction } from "./reaction.ts";
import { SkipOnce } from "./skip-once.ts";

interface ResumeState {
  /** the agents being typed into now (a tick that comes meanwhile leaves them) */
  typing: Set<string>;
  skip: SkipOnce;
}

export const limitResume = defineReaction({
  name: "limit.resume",
  on: ["watch"],
  alone: { watch: "resume at reset failed" },
  state: (): ResumeState => ({ typing: new Set(), skip: new SkipOnce() }),
  async run(deps, st, { ctx }) {
    const { continueAgent, keepResumeLog, resumableRows } = await import("../session/limit-resume.ts");
    const now = deps.clock.epoch();
    const max = jitterMax(deps.env.MAM_LIMIT_JITTER_S);
    for (const t of resumableRows(deps, now)) {
      const name = t.row.name;
      if (st.typing.has(name)) continue;
      // the limit kept on the row: the daemon lifts the row's own at its reset time, before the jitter is over
      if (t.keep) await keepResumeLog(deps, name, t.keep);
      if (!t.limit) continue;
      const l = { row: { ...t.row, limit_resume: t.keep ?? t.row.limit_resume }, limit: t.limit };
      let margin = 0;
      try {
        const k = rowAgent(l.row);
        margin = k ? (agentKind(k).continueAtReset?.autoContinueS ?? 0) : 0;
      } catch {}
      const d = resumeNow(l.limit, resumeLogOf(l.row), now, jitterS(`${name}\u0000${l.limit.since}`, max), margin);
      if (!d.type) {
        if (d.why.includes("resumes today")) st.skip.say(ctx, `${name}\u0000${l.limit.since}\u0000day`, `${name} is still limited (${l.limit.reason}), and mam typed its continue ${d.why}: it waits for tomorrow (UTC) or mam resume --limited ${name}`);
        continue;
      }
      st.typing.add(name);
      ctx.aside(`tell:${name}`, `resume ${name} at reset`, async (c) => {
        try {
          const r = await continueAgent(deps, l, "reset");
          if ("why" in r) {
            st.skip.say(c, `${name}\u0000${l.limit.since}\u0000${r.why}`, `${name}: its limit has reset, but nothing was typed: ${r.why}; mam tries again at its next look`);
            return;
          }
          c.log(`${name}: its limit has reset; typed its continue${r.job_id ? ` (job ${r.job_id})` : ""}`);
          if (r.appended && r.record) await c.publish(`${r.record.topic_prefix}/events`, r.appended.line);
        } finally {
          st.typing.delete(name);
        }
      });
    }
  },
  async busy(deps) {
    const { resumableRows } = await import("../session/limit-resume.ts");
    return resumableRows(deps, deps.clock.epoch()).some((t) => t.limit !== undefined);
  },
});
