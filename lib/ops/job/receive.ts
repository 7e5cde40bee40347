// Taking a delivery from another host of the team (docs/machines.md), what this workspace's daemon
// does with a message on its delivery topic: open it with the team key, check that it is for this
// workspace and an agent here, keep a copy of the job (its id and token as they are, so that the
// agent reports with them), and type the job's text into the agent exactly as a local submit
// does: only at its input prompt, never into a dialog. Each stage is journalled here and published
// to the delegator, as events of the job: `received`, then `delivered`, `uncertain` or `error`.
// Nothing is ever typed twice: a delivery seen again (a replay, the broker's redelivery) is dropped.
import { awaitingOutcome, DELIVERY_ID_RE, hasStage } from "../../jobs/delivery.ts";
import { endsJob, type JobEvent, MAX_EVENT_BYTES, oversizedSize } from "../../jobs/event.ts";
import { readsCommands } from "../../agents/kinds/index.ts";
import { feedbackRequest, jobHeader, reviewRequest, shellJobLine } from "../../jobs/header.ts";
import { isRemote } from "../../jobs/runtime.ts";
import { isFinal } from "../../jobs/statuses.ts";
import type { Appended, EventInput, JobRecord } from "../../jobs/store.ts";
import type { Team } from "../../team/config.ts";
import { localPart } from "../../team/host.ts";
import { checkDelivery, type Delivery, deliveryTopic, sameTopic } from "../../team/messages.ts";
import { open } from "../../team/seal.ts";
import { agentMam } from "../../sys/agent-mam.ts";
import type { Deps } from "../deps.ts";

/** this workspace as the team knows it */
export interface TeamSelf {
  team: Team;
  host: string;
  /** workspaceId(ws) */
  wsId: string;
  /** the team's topic prefix */
  tp: string;
}

/** a delivery this workspace took (`received` is journalled): what typing it needs */
export interface Taken {
  d: Delivery;
  what: string;
  source: string;
}

export interface TakeResult {
  /** dropped: refused (logged); ignored: nothing to do; taken: type it (typeDelivery) */
  outcome: "dropped" | "ignored" | "taken";
  /** what the daemon logs */
  log: string[];
  taken?: Taken;
}

/** publishes an event to the delegator as soon as it is journalled */
export type Emit = (a: Appended) => Promise<void>;

const dropped = (why: string, topic: string): TakeResult => ({ outcome: "dropped", log: [`team: dropped the message on ${topic}: ${why}; nothing typed`] });

/**
 * The checks of a delivery that opened (pure): for this workspace, consistent, not expired. The
 * workspace and the topic it was sealed for are in the sealed body: a delivery moved to another
 * workspace's topic (or another delivery's) is refused (security review T4).
 */
export function deliveryRefusal(d: Delivery, from: string, topic: string, self: Pick<TeamSelf, "host" | "wsId" | "tp">, nowS: number): string | undefined {
  if (!DELIVERY_ID_RE.test(d.id)) return "a delivery id that is not <job id>.<8 hex digits>";
  const b = d as Partial<Delivery>;
  if (typeof b.ws_id !== "string" || typeof b.topic !== "string") return `sealed by an older mam on ${from}, which does not bind a delivery to its workspace: upgrade mam on ${from} (a team runs one version)`;
  if (b.ws_id !== self.wsId || !sameTopic(topic, b.topic)) return `sealed for ${b.topic.slice(0, 200)}, not this topic (moved from another workspace's or delivery's)`;
  if (!sameTopic(topic, deliveryTopic(self.tp, self.host, self.wsId, d.id))) return "not on its own topic (moved from another workspace's?)";
  if (from !== d.from_host) return `sealed by ${from} but says it is from ${d.from_host}`;
  if (localPart(d.to, self.host) === undefined || !d.to.includes("@")) return `for ${d.to}, not a session of ${self.host}`;
  const j = d.job;
  if (!j.topic_prefix.endsWith(`/${j.job_id}`) || /[#+]/.test(j.topic_prefix)) return `the job's topic ${j.topic_prefix.slice(0, 80)} is not a job's`;
  const who = d.purpose === "review" ? j.reviewer_session : j.agent_session;
  if (who !== d.to) return `a ${d.purpose} for ${d.to}, but the job's ${d.purpose === "review" ? "reviewer" : "agent"} is ${who}`;
  if (d.deadline < nowS) return `job ${j.job_id} timed out before it arrived (deadline ${new Date(d.deadline * 1000).toISOString()})`;
  return undefined;
}

/** the text the agent gets, built here: this workspace's commands, the agent's global name */
function textFor(d: Delivery, rec: JobRecord, ws: string): string {
  if (d.purpose === "job") return jobHeader(rec, d.to, ws);
  if (d.purpose === "review") return reviewRequest(rec, ws, d.detail ?? "");
  return feedbackRequest(rec, ws, d.detail ?? "", d.iteration ?? rec.iteration);
}

const whatOf = (d: Delivery) => (d.purpose === "job" ? "the job" : d.purpose === "review" ? "the review request" : "the feedback");

/**
 * Take one message of this workspace's delivery topic: open and check it, keep a copy of the job,
 * journal `received` (emitted at once). `takenHere(id)`: this daemon took that delivery (its typing
 * may still be on its way: never settled as interrupted).
 */
export async function takeDelivery(deps: Deps, self: TeamSelf, topic: string, payload: Buffer, emit: Emit, takenHere: (id: string) => boolean = () => false, nowS = Date.now() / 1000): Promise<TakeResult> {
  if (payload.length === 0) return { outcome: "ignored", log: [] }; // a delivery cleared by its sender
  // the packet guard left only its size: say so, not "not JSON" (review T11)
  const big = oversizedSize(payload);
  if (big !== undefined) return dropped(`too large (${big} bytes, over the ${MAX_EVENT_BYTES}-byte limit of a message; the sender's mam must refuse it: upgrade it)`, topic);
  const o = open(self.team, payload);
  if (!o.ok) return dropped(o.reason, topic);
  if (o.envelope.kind !== "deliver") return dropped(`a ${o.envelope.kind.slice(0, 20)} message, not a delivery`, topic);
  const d = checkDelivery(o.body);
  if (!d) return dropped("a malformed delivery", topic);
  const why = deliveryRefusal(d, o.envelope.from, topic, self, nowS);
  if (why) return dropped(why, topic);

  const id = d.job.job_id;
  const jobs = deps.jobs;
  const mine = jobs.read(id);
  if (mine && !mine.remote_of) return dropped(`job ${id} is this workspace's own`, topic);
  if (mine && mine.auth_token !== d.job.auth_token) return dropped(`job ${id}: its token is not the one of the copy here`, topic);
  if (mine) {
    const evs = jobs.journal(id);
    if (hasStage(evs, d.id, "received")) {
      // the broker's second copy (kept for us and retained), a bridge's resend, or a replay
      if (takenHere(d.id) || hasStage(evs, d.id, "outcome")) return dropped(`delivery ${d.id} was taken before (a repeat or a replay)`, topic);
      // taken by an earlier daemon that stopped before it confirmed: never typed again
      await settleInterrupted(deps, self, id, emit);
      return { outcome: "ignored", log: [`job ${id}: delivery ${d.id} seen again, its typing unconfirmed: uncertain, not typed again`] };
    }
    if (isFinal(mine.status) || evs.some((e) => endsJob(e, mine))) return { outcome: "ignored", log: [`job ${id}: delivery ${d.id} arrived after the job ended (${mine.status}); nothing typed`] };
  } else await jobs.importCopy(d.job, d.from_host);

  const what = whatOf(d);
  const source = `mam@${self.host}`;
  const got = await jobs.append(id, (r, e) => (r && !hasStage(e, d.id, "received") ? { event: "received", detail: `${what} for ${d.to}, by ${self.host}`, source, data: { delivery: d.id, to: d.to, host: self.host, ws_id: self.wsId } } : undefined));
  if (!got) return { outcome: "ignored", log: [`job ${id}: delivery ${d.id} is being taken by another pass`] };
  await emit(got);
  return { outcome: "taken", log: [`job ${id}: received ${what} for ${d.to} from ${d.from_host} (delivery ${d.id})`], taken: { d, what, source } };
}

/**
 * Type a taken delivery into its agent, exactly as a local submit does (only at its input
 * prompt), and journal the outcome once: `delivered`, `uncertain` or `error`. The agent may have
 * reported first (its report confirms the delivery): then nothing more is journalled.
 */
export async function typeDelivery(deps: Deps, self: TeamSelf, t: Taken, emit: Emit, o: { mayQueue?: boolean } = {}): Promise<string[]> {
  const { d, what, source } = t;
  const id = d.job.job_id;
  const jobs = deps.jobs;
  const outcome = async (input: EventInput) => {
    const a = await jobs.append(id, (r, e) => (r && !hasStage(e, d.id, "outcome") && !e.some((x) => endsJob(x, r)) ? input : undefined));
    if (a) await emit(a);
  };
  const fail = async (detail: string) => {
    await outcome({ event: "error", detail, source, data: { delivery: d.id } });
    return [`job ${id}: ${detail}`];
  };
  const name = localPart(d.to, self.host)!;
  const s = await deps.runtime.findSession(name);
  if (!s || isRemote(s)) return fail(`no running session ${name} on ${self.host}; nothing typed`);
  if (s.gone) return fail(`${d.to} has no agent any more (${s.gone}); nothing typed`);
  if (s.waiting) return fail(`${d.to} waits at ${s.waiting}; nothing typed`);
  const now = jobs.read(id);
  if (!now || isFinal(now.status)) return [`job ${id} ended before ${what} was typed; nothing typed`];
  // a job for an agent at work (or with another job, or others waiting for it) waits its turn
  // here; the daemon's dispatch types it later (docs/jobs.md#the-queue)
  if (d.purpose === "job" && o.mayQueue !== false) {
    const { queueBehind } = await import("./queue.ts");
    const q = await queueBehind(deps, id, name, s.working === true, self.host, { delivery: d.id });
    if (q) {
      await emit(q.appended);
      return [`job ${id}: ${d.to} is busy; ${what} waits its turn (position ${q.position})`];
    }
  }

  // the copy as the agent's text needs it: its worktree here, the loop's iteration
  let rec = now;
  if ((d.purpose === "feedback" && d.iteration !== undefined && d.iteration !== rec.iteration) || (d.purpose !== "review" && s.worktree && !rec.worktree)) {
    rec = await jobs.mutate(id, (r) => ({ ...r, ...(d.purpose === "feedback" && d.iteration !== undefined ? { iteration: d.iteration } : {}), ...(d.purpose !== "review" && s.worktree && !r.worktree ? { worktree: s.worktree } : {}) }));
  }
  // a shell runs what is typed: a job to it is its command, run by `mam shell-job` (shell-run.ts); it takes no other text
  const shell = readsCommands(s.agent);
  if (shell && d.purpose !== "job") return fail(`${d.to} is a ${s.agent} session: it would run ${what} as commands; nothing typed`);
  // `mam shell-job` runs only a job whose record names a shell (the sender may not have known the kind)
  if (shell && rec.agent !== s.agent) rec = await jobs.mutate(id, (r) => ({ ...r, agent: s.agent }));
  let left;
  try {
    left = shell ? await deps.runtime.prompt(s, shellJobLine(rec, deps.ws, agentMam(deps.env)), undefined, "command") : await deps.runtime.prompt(s, textFor(d, rec, deps.ws));
  } catch (e) {
    return fail(`could not type into ${d.to} (${(e as Error).message})`);
  }
  await outcome(
    left
      ? { event: "uncertain", detail: `${what} was typed into ${d.to}; ${left.text}`, source, data: { delivery: d.id } }
      : { event: "delivered", detail: `${what} was typed into ${d.to} and left its input box`, source, data: { delivery: d.id } },
  );
  return [`job ${id}: ${left ? "uncertain" : "delivered"} to ${d.to}`];
}

/**
 * the deliveries of a copy taken by a daemon that stopped before their outcome: `uncertain`
 * (typed or not, nobody knows; never typed again). For every copy when `only` is not given (a
 * daemon that starts).
 */
export async function settleInterrupted(deps: Deps, self: TeamSelf, only: string | undefined, emit: Emit): Promise<string[]> {
  const log: string[] = [];
  for (const id of only ? [only] : deps.jobs.ids()) {
    let rec;
    try {
      rec = deps.jobs.read(id);
    } catch {
      continue;
    }
    if (!rec?.remote_of || isFinal(rec.status)) continue;
    for (const w of awaitingOutcome(deps.jobs.journal(id))) {
      const a = await deps.jobs.append(id, (r, e) =>
        r && !hasStage(e, w.delivery, "outcome") ? { event: "uncertain", detail: `the daemon of ${self.host} stopped before it confirmed the text for ${w.to}; not typed again`, source: `mam@${self.host}`, data: { delivery: w.delivery } } : undefined,
      );
      if (a) {
        await emit(a);
        log.push(`job ${id}: delivery ${w.delivery} was not confirmed before the daemon stopped: uncertain`);
      }
    }
  }
  return log;
}

/**
 * a report from this host's agent on a copy confirms the deliveries for it still waiting for
 * theirs: `delivered` is journalled before the report (what the agent could not have done
 * without its text). undefined when there is none.
 */
export function confirmByReport(rec: JobRecord | undefined, events: readonly JobEvent[], reporter: string): EventInput | undefined {
  if (!rec?.remote_of) return undefined;
  const d = awaitingOutcome(events).find((x) => x.to === reporter);
  if (!d) return undefined;
  const host = reporter.slice(reporter.lastIndexOf("@") + 1);
  return { event: "delivered", detail: `${reporter} reported on the job: its text arrived`, source: `mam@${host}`, data: { delivery: d.delivery } };
}
