// What the subscriber daemon does, wired in one place. The loop (daemon.ts) decides when; these
// decide what:
//   reconcile   → the reconcile pass (SPEC §6.1), applied; then react to the journals; on a
//                 (re)connection, publish the acks of unfinished jobs again
//   onEvent     → ingestEvent (verify, journal once, move the status), then react to that job,
//                 and publish the job's acks (AckSender); the journals' indexes (JournalCache)
//                 live as long as the daemon; drops are logged a few per topic (DropLog),
//                 repeats a line per burst (RepeatLog)
//   jobsChanged → react to journals written on this machine (works with no broker at all)
//   poll        → polling mode: the reconcile pass; both modes: job timeouts, the usage meter
//                 (sessions' totals and daily caps, docs/cost.md); each step, and each job within a
//                 step, goes on whatever the others did (failures: LogOnce); ended jobs reacted to
//                 are put to rest (JournalCache.rest): the rounds over every job skip them with a
//                 stat while their journal stays as it was
//   watch       → every MAM_STATE_POLL_MS, only while jobs are unfinished: the usage meter (their
//                 budgets), blocked / dead agents of those jobs (one listing per server, tmux
//                 screens of just those agents)
//   busy        → a running row or an unfinished job holds the idle timeout off
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { DropLog, RepeatLog } from "../jobs/ingest.ts";
import type { Json } from "../jobs/canonical.ts";
import type { JobEvent } from "../jobs/event.ts";
import type { JobStore } from "../jobs/store.ts";
import { loadTeam, type Team } from "../team/config.ts";
import { hostName } from "../team/host.ts";
import { type TeamPart, teamPart } from "./team.ts";
import { JournalCache } from "../jobs/journal-index.ts";
import type { Deps } from "../ops/deps.ts";
import type { DaemonHooks, HookContext } from "./loop.ts";
import { LogOnce } from "../sys/log-once.ts";
import { AckSender } from "./ack-sender.ts";
import type { UsageMeter } from "./meter.ts";
import type { NotifyPart } from "./notify.ts";
import type { AgentLook, AgentState, CursorState, DialogTells, LaterNotice, ReactorContext } from "./reactor.ts";

export function defaultHooks(deps: Deps): DaemonHooks {
  const blocked = new Map<string, string>();
  const journals = new JournalCache();
  // the user's notifications (lib/daemon/notify.ts), loaded with the first thing worth telling
  let notifyP: Promise<NotifyPart> | undefined;
  const notes = () => (notifyP ??= import("./notify.ts").then((m) => m.notifyPart(deps)));
  // a machine in a team (docs/machines.md): deliveries, presence, events sent again
  let team: TeamPart | undefined;
  let teamProblem: string | undefined;
  let recovered = false;
  // the queue (docs/jobs.md#the-queue): jobs waiting their turn get it as soon as their agent is
  // free. While none waits, only a new `queued` can make one, and whoever journals one touches
  // the queue's marker: a change of the jobs folder then costs one stat, not a read of every job
  let waiting = true; // not known yet: look once
  let marker = "";
  const served = new Map<string, number>();
  let turns = 0;
  // queued jobs and schedules this user's mam did not write (a cloned repository's): never acted
  // on, and each said once (a file and its reason), not every second
  const skipped = new Set<string>();
  const skipOnce = (ctx: HookContext, key: string, line: string) => {
    if (skipped.has(key)) return;
    skipped.add(key);
    ctx.log(line);
  };
  // scheduled jobs (docs/jobs.md#schedules): submitted when due, checked every watch tick
  const fireSchedules = async (ctx: HookContext) => {
    if (!existsSync(join(ctx.ws, ".mam", "schedules"))) return;
    const { fireDue } = await import("../ops/job/schedule.ts");
    const { log, skipped } = await fireDue(deps, Date.now() / 1000);
    for (const l of log) ctx.log(l);
    for (const k of skipped) skipOnce(ctx, `schedule\u0000${k.file}\u0000${k.why}`, `schedule file ${k.file} skipped, the other schedules run: ${k.why}; ${k.fix}`);
  };
  const dispatch = async (ctx: HookContext) => {
    const { assignWaiting, queueMarker, typeDispatched } = await import("../ops/job/queue.ts");
    const m = queueMarker(deps.jobs);
    if (!waiting && m === marker) return;
    marker = m;
    const host = team?.host;
    const { gone, left, foreign } = await assignWaiting(deps, { host, served, tick: () => ++turns });
    waiting = left > 0;
    for (const f of foreign) {
      skipOnce(ctx, `job\u0000${f.job_id}\u0000${f.why}`, `job ${f.job_id} (${join(ctx.ws, ".mam", "jobs", `${f.job_id}.json`)}) is queued, but this user's mam did not write it: ${f.why}; it is never dispatched. If you submitted it (with an older mam), submit it again; remove the file or run mam job cancel ${f.job_id} to drop it`);
    }
    for (const d of gone) {
      await ctx.publish(`${d.record.topic_prefix}/events`, d.appended.line);
      if (d.record.remote_of && team) {
        await team.typeQueued(d, ctx);
        continue;
      }
      const r = await typeDispatched(deps, d);
      ctx.log(r.log);
      if (r.appended) await ctx.publish(`${d.record.topic_prefix}/events`, r.appended.line);
    }
  };
  // the team's config: the daemon vouches for the dialogs it reads on its agents' screens, and
  // takes another host's only when that host's daemon vouches for them (lib/team/attest.ts)
  let teamCfg: Team | undefined;
  try {
    const t = loadTeam(deps.env);
    teamCfg = t;
    if (t) team = teamPart(deps, t, (id) => journals.quiet(deps.ws, id), async (host, wsId, online, at, log) => (await notes()).presence(t.team, host, wsId, online, at, log));
  } catch (e) {
    teamProblem = (e as Error).message;
  }
  let repeats: RepeatLog | undefined;
  let drops: DropLog | undefined;
  let acks: AckSender | undefined;
  const cursor: CursorState = { dirty: false, lastWrite: 0 };
  // notices for agents that sat at a dialog (a job over its budget): typed by the watch once the
  // agent is back at its prompt (tellLater); in memory, so a daemon restart forgets them
  let later: LaterNotice[] = [];
  const putLater = (n: LaterNotice) => {
    if (!later.some((o) => o.job_id === n.job_id && o.session === n.session && o.text === n.text)) later.push(n);
  };
  // how often a job's delegator hears of its dialogs (a flood is a few lines: DialogTells)
  let tells: DialogTells | undefined;
  // records left lazily behind by a burst of events get their last_seq within a second
  const settling = new Map<string, ReturnType<typeof setTimeout>>();
  const settleSoon = (ws: string, id: string) => {
    if (settling.has(id)) return;
    const t = setTimeout(() => {
      settling.delete(id);
      void deps.jobs.settle(id, () => journals.peek(ws, id)?.index.maxAny() ?? 0).catch(() => {}); // the next event settles it
    }, 1000);
    (t as { unref?: () => void }).unref?.();
    settling.set(id, t);
  };
  // a job (or a step) that fails at every poll is logged once, and the others go on
  let once: LogOnce | undefined;
  const onceOf = (ctx: HookContext) => (once ??= new LogOnce(ctx.log));
  // the usage meter (docs/cost.md): it reads the agents' own files, never calls a model
  let meter: UsageMeter | undefined;
  const metered = async (ctx: HookContext) => {
    if (!meter) {
      const { UsageMeter } = await import("./meter.ts");
      meter = new UsageMeter({ ws: ctx.ws, jobs: deps.jobs, env: deps.env, registry: deps.registry, host: team?.host, log: ctx.log, runtime: deps.runtime });
    }
    const r = await meter.poll({ log: ctx.log, publish: (t, p) => ctx.publish(t, p) });
    // a first read of long conversations goes on beside the hooks, a poll's bytes at a time
    if (r.behind) ctx.aside("usage", "usage meter", async (c) => void (await metered(c)));
    return r;
  };
  const reactor = async (ctx: HookContext): Promise<ReactorContext> => {
    const n = await notes();
    tells ??= new (await import("./reactor.ts")).DialogTells();
    return {
      ws: ctx.ws,
      jobs: deps.jobs,
      runtime: deps.runtime,
      log: ctx.log,
      publish: ctx.publish,
      journals,
      cursor,
      host: team?.host,
      teamPrefix: team?.tp,
      once: onceOf(ctx),
      notify: (rec, ev) => n.jobEvent(rec, ev, ctx.log),
      tells,
      aside: (lane, name, fn) => ctx.aside(lane, name, fn),
      ...(teamCfg && team ? { vouch: await vouchOf(teamCfg, team.host) } : {}),
      meter: () => metered(ctx),
      later: putLater,
    };
  };
  const pass = async (ctx: HookContext) => {
    const { reconcileOnce, describeAction } = await import("../ops/reconcile.ts");
    const r = await reconcileOnce(deps, { dry_run: false });
    for (const a of r.actions) ctx.log(`reconcile: ${describeAction(a)}`);
    if (r.actions.some((a) => a.type === "terminate")) await (await notes()).terminated(r.actions, ctx.log);
  };
  /** react to what is new (all jobs, or the given ones): how many events that was */
  const react = async (ctx: HookContext, only?: string[]): Promise<number> => {
    const { reactToJobs } = await import("./reactor.ts");
    return reactToJobs(await reactor(ctx), only);
  };
  return {
    async reconcile(ctx) {
      if (teamProblem) ctx.log(`team: ${teamProblem}; this workspace takes no part in the team`);
      teamProblem = undefined;
      if (team && !recovered) {
        recovered = true;
        await team.recover(ctx);
      }
      await pass(ctx);
      await react(ctx);
      if (ctx.mode !== "mqtt") return;
      // a broker that restarted without persistence lost the retained acks: say them again
      const { isFinal } = await import("../jobs/statuses.ts");
      acks ??= new AckSender(ctx.ws, journals);
      acks.forgetSent();
      for (const id of deps.jobs.ids()) {
        try {
          const r = deps.jobs.read(id);
          // a copy of another host's job: its delegator acknowledges, not us
          if (!r || isFinal(r.status) || r.remote_of) continue;
          journals.get(ctx.ws, id, r);
          await acks.send(r, ctx.publish);
        } catch {}
      }
    },
    async onEvent(topic, payload, ctx) {
      if (team?.owns(topic)) return team.onMessage(topic, payload, ctx);
      const { DropLog, ingestEvent, RepeatLog } = await import("../jobs/ingest.ts");
      repeats ??= new RepeatLog(ctx.log);
      // drops are limited per topic and reason: a flood of forged events costs a few lines (DropLog)
      drops ??= new DropLog(ctx.log);
      // an event of a job this workspace does not have is the broker's other traffic (other
      // workspaces, the team's other hosts), not a problem: MAM_DEBUG=1 shows it
      const onDrop = (line: string, t: string, why: string) => (why === "unknown-job" ? ctx.debug(line) : (repeats!.flush(), drops!.drop(t, line, why)));
      const { vouchedQuestion } = await import("../team/attest.ts");
      const here = team?.host ?? hostName(deps.env);
      const r = await ingestEvent(ctx.ws, topic, payload, (line) => (repeats!.flush(), ctx.log(line)), journals, true, onDrop, (rec, ev) => vouchedQuestion(teamCfg, here, rec, ev));
      if (r.outcome === "appended" && r.deferred) settleSoon(ctx.ws, r.job.job_id);
      // the echo of an event this machine published is expected: only MAM_DEBUG=1 logs it
      if (r.outcome === "duplicate") (r.echo ? ctx.debug(r.log) : repeats.repeat(r.log));
      if (r.outcome !== "dropped" && !r.job.remote_of) (acks ??= new AckSender(ctx.ws, journals)).note(r.job, ctx.publish);
      if (r.outcome === "appended") team?.jobsChanged();
      if (r.outcome !== "dropped") await react(ctx, [r.job.job_id]);
    },
    async jobsChanged(ctx, seen) {
      // the presence's job column: a change the folder's watch saw, or events the slow tick found
      if ((await react(ctx)) > 0 || seen) team?.jobsChanged();
      await dispatch(ctx);
    },
    async poll(ctx) {
      // each step goes on whatever the one before it did: a broken registry must not stop the
      // timeouts, nor one job's failure the other jobs' (scanJobs and reactToJobs skip it)
      const step = async (doing: string, fn: () => Promise<void>) => {
        try {
          await fn();
          onceOf(ctx).ok("poll", doing);
        } catch (e) {
          onceOf(ctx).failed("poll", e, doing);
        }
      };
      if (ctx.mode === "polling") await step("reconcile pass failed", () => pass(ctx));
      const [{ scanJobs }, { publishAppended }] = await Promise.all([import("../jobs/ingest.ts"), import("./reactor.ts")]);
      const rc = await reactor(ctx);
      await step("timeout scan failed", async () => {
        const scan = await scanJobs(ctx.ws, Date.now() / 1000, ctx.log, onceOf(ctx), (id) => journals.quiet(ctx.ws, id));
        for (const a of scan.timedOut) await publishAppended(rc, a.record, [a]);
      });
      await step("reactions failed", async () => void (await react(ctx)));
      await step("usage meter failed", async () => void (await metered(ctx)));
      // ended jobs give their memory back, and rest once every event of theirs was reacted to;
      // a late event reads their journal once more
      const [{ isFinal }, { reactedToAll }] = await Promise.all([import("../jobs/statuses.ts"), import("./reactor.ts")]);
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
      if (team) {
        await team.tick(ctx, "refresh");
        await team.forward(ctx);
      }
    },
    async watch(ctx) {
      // each part goes on whatever the others did (a bad schedule file must not stop dialog
      // detection, dispatch or budgets); a part failing the same way each second is logged once
      const part = async (doing: string, fn: () => Promise<void>) => {
        try {
          await fn();
          onceOf(ctx).ok("watch", doing);
        } catch (e) {
          onceOf(ctx).failed("watch", e, doing);
        }
      };
      await part("team check failed", async () => void (await team?.tick(ctx, "check")));
      await part("schedules failed", () => fireSchedules(ctx));
      // before the queue: the notice about the job that stopped comes before the agent's next job
      if (later.length > 0) {
        await part("held notices failed", async () => {
          const { tellLater } = await import("./reactor.ts");
          later = await tellLater({ runtime: deps.runtime, log: ctx.log }, later);
        });
      }
      await part("dispatch failed", () => dispatch(ctx));
      const watched = await waitedOn(deps.jobs, ctx.ws, team?.host, journals);
      if (watched.size === 0) {
        blocked.clear();
        return; // no unfinished job: no multiplexer call at all (usage is counted by the slower poll)
      }
      // the usage of running jobs, every second: their budgets hold to within a poll
      await part("usage meter failed", async () => void (await metered(ctx)));
      const { watchAgents } = await import("./reactor.ts");
      const rc = await reactor(ctx);
      // what it appends reaches the delegator through jobsChanged (the journal watch), not here
      const states = await agentStates(deps, watched);
      // a copy of another host's job names its sessions name@host
      const here = team ? `@${team.host}` : undefined;
      await watchAgents(rc, (s) => states(here && s.endsWith(here) ? s.slice(0, -here.length) : s), blocked);
    },
    linkExtras: () => team?.extras(),
    connected: team ? (ctx) => team!.connected(ctx) : undefined,
    farewell: () => team?.farewell(),
    async busy(ctx) {
      // a schedule still to run holds the daemon (it is the one that submits it)
      if (existsSync(join(ctx.ws, ".mam", "schedules")) && (await import("../ops/job/schedule.ts")).hasActiveSchedules(ctx.ws, deps.env)) return true;
      const { isFinal } = await import("../jobs/statuses.ts");
      const data = deps.registry.read();
      if ([...data.herdr_sessions, ...data.tmux_sessions].some((r) => r.status === "running")) return true;
      return deps.jobs.ids().some((id) => {
        try {
          const r = deps.jobs.read(id);
          return r !== undefined && !isFinal(r.status);
        } catch {
          return false;
        }
      });
    },
  };
}

/** how this host's daemon vouches for what it journals (lib/team/attest.ts) */
async function vouchOf(t: Team, host: string): Promise<(ev: JobEvent) => { [k: string]: Json }> {
  const { attest } = await import("../team/attest.ts");
  return (ev) => attest(t, host, ev);
}

/**
 * the sessions unfinished jobs wait on (their agent, or a loop's reviewer); `name@host` of this
 * host as name. An ended job put to rest (JournalCache.quiet) is skipped without reading it.
 */
async function waitedOn(jobs: JobStore, ws: string, host: string | undefined, journals: JournalCache): Promise<Set<string>> {
  const [{ isFinal }, { busySession }] = await Promise.all([import("../jobs/statuses.ts"), import("../jobs/loop.ts")]);
  const out = new Set<string>();
  for (const id of jobs.ids()) {
    if (journals.quiet(ws, id)) continue;
    try {
      const r = jobs.read(id);
      if (!r || isFinal(r.status)) continue;
      // the journal's index reads only what was appended since the last pass
      const s = busySession(r, journals.get(ws, id, r).events);
      out.add(host && s.endsWith(`@${host}`) ? s.slice(0, -host.length - 1) : s);
    } catch {}
  }
  return out;
}

/** the state of each session's pane, from one listing per server (tmux screens: only `watched`) */
async function agentStates(deps: Deps, watched?: Set<string>): Promise<(session: string) => Promise<AgentLook>> {
  const [{ observe }, { questionLine }] = await Promise.all([import("../ops/session/observe.ts"), import("../agents/screen/question.ts")]);
  let cache: Map<string, AgentLook> | undefined;
  return async (session) => {
    if (!cache) {
      cache = new Map();
      const data = deps.registry.read();
      const obs = await observe(deps, data, [], { liveOnly: watched, questions: true });
      for (const v of obs.rows) {
        if (v.row.status !== "running" && cache.has(v.row.name)) continue;
        const st: AgentState = v.live === "blocked" ? "blocked" : v.live === "dead" ? "gone" : v.live === "unreachable" ? "unknown" : "alive";
        const question = st === "blocked" && v.pane ? obs.questions.get(v.pane) : undefined;
        const reason = v.pane?.reason ?? (question ? questionLine(question) : undefined);
        cache.set(v.row.name, v.row.status === "running" ? { state: st, ...(st === "blocked" && reason ? { reason } : {}), ...(question ? { question } : {}) } : { state: "gone" });
      }
    }
    return cache.get(session) ?? { state: "unknown" };
  };
}
