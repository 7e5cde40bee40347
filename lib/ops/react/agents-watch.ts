// agents.watch: every watch tick while jobs are unfinished, the agents they wait on (tick.watched,
// from jobs.waited): a pane that turns blocked journals one permission_required per dialog, a pane
// that died journals error "agent exited" (./reactor.ts watchAgents), unless the daemon restarts it
// (--restart on-failure, ./agents-restart.ts: the job waits, until it gives up). One listing per
// server, tmux screens of just those agents; no unfinished job, no multiplexer call at all. What it appends
// reaches the delegator through jobsChanged (the journal watch), not here. Running rows and
// unfinished jobs hold the daemon's idle timeout off.
import type { Deps } from "../deps.ts";
import { isFinal } from "../../jobs/statuses.ts";
import { defineReaction } from "./reaction.ts";
import type { AgentLook, AgentState } from "./reactor.ts";
import { allRows } from "../../registry/rows.ts";
import { policyView } from "../../fleet/policy.ts";
import { restartable } from "../../fleet/restart.ts";
import { recordKey } from "../../sys/record-key.ts";

export const agentsWatch = defineReaction({
  name: "agents.watch",
  on: ["watch"],
  /** per job, the dialog last reported (the same dialog seen again is not a new one) */
  state: () => new Map<string, string>(),
  async run(deps, blocked, tick, shared) {
    const watched = tick.watched ?? new Set<string>();
    if (watched.size === 0) return blocked.clear();
    const { watchAgents } = await import("./reactor.ts");
    const rc = await shared.reactor(tick.ctx);
    const states = await agentStates(deps, watched);
    // a copy of another host's job names its sessions name@host
    const here = shared.team ? `@${shared.team.host}` : undefined;
    await watchAgents(rc, (s) => states(here && s.endsWith(here) ? s.slice(0, -here.length) : s), blocked);
  },
  async busy(deps) {
    const data = deps.registry.read();
    if (allRows(data).some((r) => r.status === "running")) return true;
    return deps.jobs.ids().some((id) => {
      try {
        const r = deps.jobs.read(id);
        return r !== undefined && !isFinal(r.status);
      } catch {
        return false;
      }
    });
  },
});

/** the state of each session's pane, from one listing per server (tmux screens: only `watched`) */
async function agentStates(deps: Deps, watched?: Set<string>): Promise<(session: string) => Promise<AgentLook>> {
  const [{ observe }, { questionLine }] = await Promise.all([import("../session/observe.ts"), import("../../agents/screen/question.ts")]);
  let cache: Map<string, AgentLook> | undefined;
  return async (session) => {
    if (!cache) {
      cache = new Map();
      const data = deps.registry.read();
      const obs = await observe(deps, data, [], { liveOnly: watched, questions: true });
      const now = deps.clock.epoch();
      const key = recordKey(deps.env, false);
      for (const v of obs.rows) {
        if (v.row.status !== "running" && cache.has(v.row.name)) continue;
        // an agent the daemon restarts when it dies (agents.restart): its job waits for it
        if (restartable(policyView(v.row, key, deps.ws), now) && (v.row.status !== "running" || v.live === "dead")) {
          cache.set(v.row.name, { state: "unknown" });
          continue;
        }
        const st: AgentState = v.live === "blocked" ? "blocked" : v.live === "dead" ? "gone" : v.live === "unreachable" ? "unknown" : "alive";
        const question = st === "blocked" && v.pane ? obs.questions.get(v.pane) : undefined;
        const reason = v.pane?.reason ?? (question ? questionLine(question) : undefined);
        const dialog = st === "blocked" ? v.pane?.dialog : undefined;
        cache.set(v.row.name, v.row.status === "running" ? { state: st, ...(st === "blocked" && reason ? { reason } : {}), ...(question ? { question } : {}), ...(dialog ? { dialog } : {}) } : { state: "gone" });
      }
    }
    return cache.get(session) ?? { state: "unknown" };
  };
}
