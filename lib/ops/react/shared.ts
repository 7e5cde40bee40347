// What several reactions of the daemon use, made once per daemon (the rest of the daemon's state
// is each reaction's own, in the table: ./index.ts):
//   * the journals' indexes (JournalCache): read only what was appended since the last look;
//   * the team part (./team.ts) when this machine is in a team (docs/machines.md), and the
//     problem of a team config that does not load;
//   * the user's notifications (./notify.ts), loaded with the first thing worth telling;
//   * the usage meter (./meter.ts, docs/cost.md): counted by usage.meter, and by job.react before
//     a loop job's next step;
//   * the reactor's context (./reactor.ts): its cursor, how often a delegator hears of dialogs;
//   * the notices held for agents at a dialog (`later`): put by job.react, typed by notices.later;
//   * the acknowledgements' sender (./ack-sender.ts): noted by job.ingest, said again by acks.resend;
//   * the log of failures said once (LogOnce).
import { JournalCache } from "../../jobs/journal-index.ts";
import type { Json } from "../../jobs/canonical.ts";
import type { JobEvent } from "../../jobs/event.ts";
import { LogOnce } from "../../sys/log-once.ts";
import { loadTeam, type Team } from "../../team/config.ts";
import type { Deps } from "../deps.ts";
import { AckSender } from "./ack-sender.ts";
import type { UsageMeter } from "./meter.ts";
import type { NotifyPart } from "./notify.ts";
import type { HookContext } from "./context.ts";
import type { CursorState, DialogTells, LaterNotice, ReactorContext } from "./reactor.ts";
import { type TeamPart, teamPart } from "./team.ts";

export class Shared {
  readonly journals = new JournalCache();
  readonly cursor: CursorState = { dirty: false, lastWrite: 0 };
  team?: TeamPart;
  teamCfg?: Team;
  /** a team config that does not load: said once, at the next reconcile */
  teamProblem?: string;
  /**
   * notices for agents that sat at a dialog (a job over its budget): typed by notices.later once
   * the agent is back at its prompt; in memory, so a daemon restart forgets them
   */
  later: LaterNotice[] = [];
  private notifyP?: Promise<NotifyPart>;
  private meterI?: UsageMeter;
  private onceI?: LogOnce;
  private acksI?: AckSender;
  private tells?: DialogTells;

  constructor(private deps: Deps) {
    try {
      const t = loadTeam(deps.env);
      this.teamCfg = t;
      if (t) this.team = teamPart(deps, t, (id) => this.journals.quiet(deps.ws, id), async (host, wsId, online, at, log) => (await this.notes()).presence(t.team, host, wsId, online, at, log));
    } catch (e) {
      this.teamProblem = (e as Error).message;
    }
  }

  /** the user's notifications (lib/notify), loaded on first use */
  notes(): Promise<NotifyPart> {
    return (this.notifyP ??= import("./notify.ts").then((m) => m.notifyPart(this.deps)));
  }

  /** a job (or a step) that fails at every poll is logged once, and the others go on */
  once(ctx: HookContext): LogOnce {
    return (this.onceI ??= new LogOnce(ctx.log));
  }

  acks(ctx: HookContext): AckSender {
    return (this.acksI ??= new AckSender(ctx.ws, this.journals));
  }

  /** a notice for later (once per job, session and text) */
  putLater(n: LaterNotice): void {
    if (!this.later.some((o) => o.job_id === n.job_id && o.session === n.session && o.text === n.text)) this.later.push(n);
  }

  /** count usage now (the usage meter reads the agents' own files, never calls a model) */
  async meter(ctx: HookContext): Promise<{ behind?: boolean }> {
    if (!this.meterI) {
      const { UsageMeter } = await import("./meter.ts");
      const d = this.deps;
      this.meterI = new UsageMeter({ ws: ctx.ws, jobs: d.jobs, env: d.env, registry: d.registry, host: this.team?.host, log: ctx.log, runtime: d.runtime });
    }
    const r = await this.meterI.poll({ log: ctx.log, publish: (t, p) => ctx.publish(t, p) });
    // a first read of long conversations goes on beside the hooks, a poll's bytes at a time
    if (r.behind) ctx.aside("usage", "usage meter", async (c) => void (await this.meter(c)));
    return r;
  }

  /** the reactor's context for this hook run (./reactor.ts) */
  async reactor(ctx: HookContext): Promise<ReactorContext> {
    const n = await this.notes();
    this.tells ??= new (await import("./reactor.ts")).DialogTells();
    const { team, teamCfg } = this;
    return {
      ws: ctx.ws,
      jobs: this.deps.jobs,
      runtime: this.deps.runtime,
      log: ctx.log,
      publish: ctx.publish,
      journals: this.journals,
      cursor: this.cursor,
      host: team?.host,
      teamPrefix: team?.tp,
      once: this.once(ctx),
      notify: (rec, ev) => n.jobEvent(rec, ev, ctx.log),
      tells: this.tells,
      aside: (lane, name, fn) => ctx.aside(lane, name, fn),
      ...(teamCfg && team ? { vouch: await vouchOf(teamCfg, team.host) } : {}),
      meter: () => this.meter(ctx),
      later: (n) => this.putLater(n),
    };
  }
}

/** how this host's daemon vouches for what it journals (lib/team/attest.ts) */
async function vouchOf(t: Team, host: string): Promise<(ev: JobEvent) => { [k: string]: Json }> {
  const { attest } = await import("../../team/attest.ts");
  return (ev) => attest(t, host, ev);
}
