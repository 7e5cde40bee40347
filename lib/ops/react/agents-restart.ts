// agents.restart: dead agents come back, opt-in (docs/unattended.md#dead-agents). Every watch tick,
// while a row has `restart: on-failure` (mam create --restart on-failure):
//   1. its running rows are looked at as the reconcile pass looks (lib/ops/session/observe.ts): a
//      pane gone, or an agent gone from its pane, ends the row (terminated, auto-detected) under
//      the registry lock, as reconcile.pass does in polling mode (a stop in progress owns its row);
//   2. a row that died is claimed under the registry lock (lib/fleet/restart.ts claimRestart: the
//      write is the claim, so one death is restarted once, whoever else looks) and resumed beside
//      the hooks (ctx.aside) by the resume operation (lib/ops/session/resume.ts). The job's text
//      was delivered once and is in the conversation: it is not typed again; the jobs it was
//      working on journal `restarted` (attempt, why), their delegators hear of it (job.react), and
//      the agent, back at its prompt, gets one notice to continue them (continueText);
//   3. a row that died after max_restarts restarts within the hour is given up on: it stays
//      terminated, its jobs journal `restart_gave_up` (agents.watch then ends them: error "agent
//      exited"), and the user hears of it once (notification kind gave_up).
// Only a row whose policy this user's mam wrote (lib/fleet/policy.ts: its `policy_mac`) is
// restarted: a cloned repository's `.mam/agent-sessions.yaml` can ship a running row with restart
// on-failure, and its death must not make this daemon start an agent. Such a row counts as restart
// no (the reconcile pass ends it as any other), and the log names it once.
// A user's `mam stop` is no death (stopped, or terminated hard); a user's `mam resume` wins a race
// with the daemon's (the loser's resume finds the row changed and closes its pane).
import { claimRestart, decideRestart, claimed, restartable, type RestartDecision } from "../../fleet/restart.ts";
import { applyActions } from "../../fleet/apply.ts";
import { policyNotOwn, policyView } from "../../fleet/policy.ts";
import { recordKey } from "../../sys/record-key.ts";
import { SkipOnce } from "./skip-once.ts";
import { endsJob, DAEMON_SOURCE } from "../../jobs/event.ts";
import type { Json } from "../../jobs/canonical.ts";
import { busySession } from "../../jobs/loop.ts";
import { isFinal } from "../../jobs/statuses.ts";
import { serverOf } from "../../registry/rows.ts";
import { type RegistryData, type Row, type Section, SECTIONS } from "../../registry/types.ts";
import type { Deps } from "../deps.ts";
import type { HookContext } from "./context.ts";
import { defineReaction } from "./reaction.ts";
import type { Shared } from "./shared.ts";

/** a row of a section and server, by name */
interface Ref {
  section: Section;
  server: string;
  name: string;
}

const refOf = (section: Section, row: Row): Ref => ({ section, server: serverOf(row, section), name: row.name });
const rowAt = (d: RegistryData, r: Ref, status?: Row["status"]): Row | undefined =>
  d[r.section].find((x) => x.name === r.name && serverOf(x, r.section) === r.server && (status === undefined || x.status === status));

/** per session, why it died last (the death's reason, else the last restart's failure) */
type Why = Map<string, string>;

interface RestartState {
  why: Why;
  /** the rows with a restart policy this user's mam did not write, named once */
  skip: SkipOnce;
}

export const agentsRestart = defineReaction({
  name: "agents.restart",
  on: ["watch"],
  alone: { watch: "restart failed" },
  state: (): RestartState => ({ why: new Map(), skip: new SkipOnce() }),
  async run(deps, { why, skip }, { ctx }, shared) {
    let data = deps.registry.read();
    const key = recordKey(deps.env, false);
    for (const section of SECTIONS) {
      for (const r of data[section]) {
        const not = restartable(r, deps.clock.epoch()) ? policyNotOwn(r, key, deps.ws) : undefined;
        if (not !== undefined) skip.say(ctx, `${r.name}\u0000${not}`, `restart: ${r.name} has restart on-failure, but mam will not restart it: ${not}; if you made it, re-create it with mam create ... --restart on-failure`);
      }
    }
    const view = (r: Row) => policyView(r, key, deps.ws);
    const mine = SECTIONS.flatMap((section) => data[section].filter((r) => restartable(view(r), deps.clock.epoch())).map((row) => ({ section, row })));
    if (mine.length === 0) return;
    // 1. the deaths of running rows, as the reconcile pass sees them (only these rows' servers)
    const running = mine.filter((m) => m.row.status === "running");
    if (running.length > 0) {
      const { observe } = await import("../session/observe.ts");
      const sub: RegistryData = { herdr_sessions: running.filter((m) => m.section === "herdr_sessions").map((m) => m.row), tmux_sessions: running.filter((m) => m.section === "tmux_sessions").map((m) => m.row) };
      const obs = await observe(deps, sub, [], { liveOnly: new Set(running.map((m) => m.row.name)) });
      const deaths = obs.actions.filter((a) => a.type === "terminate");
      if (deaths.length > 0) {
        const { result } = await deps.registry.mutate((d) => applyActions(d, deaths, deps.clock.epoch()));
        for (const a of result) {
          if (a.type !== "terminate") continue;
          why.set(a.name, a.reason);
          ctx.log(`restart: ${a.name} died (${a.reason})`);
        }
        if (result.length > 0) data = deps.registry.read();
      }
    }
    // 2. and 3. each death: claimed and restarted, or given up on
    const now = deps.clock.epoch();
    for (const section of SECTIONS) {
      for (const row of data[section]) {
        if (decideRestart(view(row), now).kind === "none") continue;
        const ref = refOf(section, row);
        const at = deps.clock.epoch();
        const { result: d } = await deps.registry.mutate((reg): RestartDecision => {
          const r = rowAt(reg, ref, "terminated");
          return r && policyNotOwn(r, key, deps.ws) === undefined ? claimRestart(r, at) : { kind: "none", why: "changed" };
        });
        const reason = why.get(ref.name) ?? (typeof row.last_visible_note === "string" ? row.last_visible_note : "its agent died");
        if (d.kind === "restart") {
          ctx.log(`restart: ${ref.name}: restarting (attempt ${d.attempt}/${d.max} this hour): ${reason}`);
          ctx.aside(`restart:${ref.name}`, `restart ${ref.name}`, (c) => restartOne(deps, shared, c, ref, d, reason, at, why));
        } else if (d.kind === "give-up") {
          ctx.log(`restart: ${ref.name}: gave up restarting (${d.attempts} restarts within the hour, max ${d.max}): ${reason}`);
          const detail = `gave up restarting ${ref.name}: it died again after ${d.attempts} restart${d.attempts === 1 ? "" : "s"} within the hour (max ${d.max}): ${reason}`;
          const jobs = await journalJobs(deps, shared, ctx, ref.name, "restart_gave_up", detail, { session: ref.name, attempts: d.attempts, max: d.max, why: reason });
          await (await shared.notes()).gaveUp({ session: ref.name, max: d.max, why: reason, since: at, ...(jobs[0] ? { job_id: jobs[0] } : {}) }, ctx.log);
          why.delete(ref.name);
        }
      }
    }
  },
  async busy(deps) {
    // a death not restarted yet holds the daemon's idle timeout off
    const data = deps.registry.read();
    const now = deps.clock.epoch();
    const key = recordKey(deps.env, false);
    return SECTIONS.some((s) => data[s].some((r) => decideRestart(policyView(r, key, deps.ws), now).kind !== "none" || (r.status === "terminated" && claimed(r, now))));
  },
});

/** one restart, beside the hooks: the resume operation, then the jobs' `restarted`; a failed one lets the next tick try again */
async function restartOne(deps: Deps, shared: Shared, ctx: HookContext, ref: Ref, d: { attempt: number; max: number }, reason: string, claimedAt: number, why: Why): Promise<void> {
  const { resumeSession } = await import("../session/resume.ts");
  try {
    const r = await resumeSession(deps, { name: ref.name, fresh: false, start_server: false, restarting: true });
    if (r.already) {
      ctx.log(`restart: ${ref.name} runs again already (a resume by someone else); not restarted`);
      return;
    }
    ctx.log(`restart: ${ref.name} restarted (attempt ${d.attempt}/${d.max} this hour): conversation ${r.session_id ?? "?"} resumed in pane ${r.pane}`);
    for (const w of r.warnings) ctx.log(`restart: ${ref.name}: ${w.text}`);
    why.delete(ref.name);
    const detail = `${ref.name} restarted (attempt ${d.attempt}/${d.max} this hour) after ${reason}; its conversation ${r.session_id ?? "?"} resumed, the job not sent again`;
    const ids = await journalJobs(deps, shared, ctx, ref.name, "restarted", detail, { session: ref.name, attempt: d.attempt, max: d.max, why: reason, session_id: r.session_id, pane: r.pane });
    if (ids.length > 0) await tellToContinue(deps, ctx, ref.name, ids, reason);
  } catch (e) {
    const msg = (e as Error).message;
    ctx.log(`restart: ${ref.name}: attempt ${d.attempt}/${d.max} failed: ${msg}`);
    why.set(ref.name, `its restart failed (${msg.split("\n")[0]!.slice(0, 200)})`);
    // the claim goes: the next watch tick tries again, counted, until max_restarts within the hour
    await deps.registry.mutate((reg) => {
      const row = rowAt(reg, ref, "terminated");
      if (row && row.restart_claim_epoch === claimedAt) delete row.restart_claim_epoch;
    });
  }
}

/** pure: what a restarted agent is told, its conversation loaded: go on with its jobs, not again from the start */
export function continueText(jobs: string[], reason: string): string {
  const which = jobs.length === 1 ? `job ${jobs[0]}` : `jobs ${jobs.join(", ")}`;
  return `[mam] Your process ended (${reason}) and mam restarted you in this conversation. Continue ${which} where you stopped; do not redo work that is already done, and report as before.`;
}

/**
 * a resumed agent waits at its prompt: one notice sets it going again (the job's text is in its
 * conversation already and is not typed again); typed only at its prompt, never into a dialog
 */
async function tellToContinue(deps: Deps, ctx: HookContext, name: string, ids: string[], reason: string): Promise<void> {
  try {
    const s = await deps.runtime.findSession(name);
    if (!s || "remote" in s) return;
    const left = await deps.runtime.prompt(s, continueText(ids, reason));
    ctx.log(`restart: ${name}: told to continue ${ids.join(", ")}${left ? ` (${left.text})` : ""}`);
  } catch (e) {
    ctx.log(`restart: ${name}: not told to continue ${ids.join(", ")}: ${(e as Error).message.split("\n")[0]}`);
  }
}

/**
 * journal `event` on the unfinished jobs the session works on (not those still queued for it);
 * their delegators hear of it through job.react. Returns their ids.
 */
async function journalJobs(deps: Deps, shared: Shared, ctx: HookContext, session: string, event: "restarted" | "restart_gave_up", detail: string, data: { [k: string]: Json }): Promise<string[]> {
  const ids: string[] = [];
  const rc = await shared.reactor(ctx);
  const { publishAppended } = await import("./reactor.ts");
  for (const id of deps.jobs.ids()) {
    if (shared.journals.quiet(deps.ws, id)) continue;
    try {
      const rec = deps.jobs.read(id);
      if (!rec || rec.remote_of || isFinal(rec.status) || rec.status === "queued") continue;
      if (busySession(rec, deps.jobs.journal(id)) !== session) continue;
      const a = await deps.jobs.append(id, (r, evs) => (r && !evs.some((e) => endsJob(e, r)) ? { event, detail, data, source: DAEMON_SOURCE } : undefined));
      if (!a) continue;
      ids.push(id);
      ctx.log(`job ${id}: ${event} (${detail})`);
      await publishAppended(rc, rec, [a]);
    } catch (e) {
      shared.once(ctx).failed(`job ${id}`, e, `${event} not journalled`);
    }
  }
  return ids;
}
