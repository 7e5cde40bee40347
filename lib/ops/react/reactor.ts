// The daemon's reaction to job events (SPEC §7.4). Every event a job gets — carried by the
// broker and journalled by ingestEvent, or appended to the journal by a worker on this machine
// with no broker at all — is reacted to once, in journal order: the delegator hears about the
// end of a job, and loop jobs move on. "Once" survives daemon restarts: the daemon (the only
// writer) keeps, per job, how many journal events it has reacted to in .mam/monitor.cursor.json
// (`{"<id>": {"at": N}}`; a position, not a seq: with several writers seqs repeat and jump).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readsCommands } from "../../agents/kinds/index.ts";
import type { Question } from "../../agents/screen/question.ts";
import type { Json } from "../../jobs/canonical.ts";
import { DAEMON_SOURCE, endsJob, type JobEvent } from "../../jobs/event.ts";
import { isFinal, RESTART_EVENTS } from "../../jobs/statuses.ts";
import { JournalCache } from "../../jobs/journal-index.ts";
import { deliveryOf, offeredTopic, outstandingTopics } from "../../jobs/delivery.ts";
import { deliveryTopic } from "../../team/messages.ts";
import { applyLoop, busySession, loopNext } from "../../jobs/loop.ts";
import type { JobRuntime, Reached } from "../../jobs/runtime.ts";
import type { Appended, JobRecord, JobStore } from "../../jobs/store.ts";
import { mamDir } from "../../sys/paths.ts";
import { visible } from "../../sys/sanitize.ts";
import { writeFileAtomic } from "../../sys/daemon-files.ts";
import type { LogOnce } from "../../sys/log-once.ts";

export const cursorPath = (ws: string) => join(mamDir(ws), "monitor.cursor.json");

export interface ReactorContext {
  ws: string;
  /** the workspace's jobs (deps.jobs) */
  jobs: JobStore;
  runtime: JobRuntime;
  log(line: string): void;
  /** publish an event the daemon appended (on the daemon's broker connection, when there is one) */
  publish(topic: string, payload: string, opts?: { retain?: boolean }): Promise<boolean>;
  /** this machine's name in its team (docs/machines.md), when it is in one */
  host?: string;
  /** the team's topic prefix, when this machine is in one: where its deliveries are */
  teamPrefix?: string;
  /** the daemon's journal indexes (read only what was appended since); a fresh one otherwise */
  journals?: JournalCache;
  /** the daemon's cursor in memory (written at once after an action, else lazily: touchCursor) */
  cursor?: CursorState;
  /** the daemon's log of failures, each logged once (else each failure is logged) */
  once?: LogOnce;
  /**
   * count usage now (the daemon's meter, lib/ops/react/meter.ts): before a loop job's next step, so
   * that a budget the step's hand-in crossed ends the job instead (budget_exceeded)
   */
  meter?(): Promise<unknown>;
  /** this host's daemon's attestation of a dialog it journals (in a team: lib/team/attest.ts) */
  vouch?: (ev: JobEvent) => { [k: string]: Json };
  /** how often a job's delegator hears of its dialogs (one per daemon; without it, of each) */
  tells?: DialogTells;
  /**
   * run typing beside the reactor, one at a time per lane (the daemon's HookContext.aside): a
   * dialog's line typed into one delegator's pane does not hold up the other jobs' reactions
   */
  aside?: (lane: string, name: string, fn: () => Promise<void>) => void;
  /** the user's notifications (lib/ops/react/notify.ts): a dialog, a job's end */
  notify?: (rec: JobRecord, ev: JobEvent) => Promise<void>;
  /**
   * a notice for an agent that sits at a dialog now: typed once it is back at its prompt (the
   * daemon's watch, tellLater); without it, the notice is dropped and logged
   */
  later?: (n: LaterNotice) => void;
}

/** a notice the daemon types into an agent once it is back at its prompt */
export interface LaterNotice {
  job_id: string;
  session: string;
  text: string;
  /** for the log: what the notice says ("went over its budget") */
  what: string;
  /** when it was put aside (ms): one not typed within LATER_MAX_MS is dropped, and logged */
  since: number;
}

/** how long a notice waits for its agent to leave a dialog */
const LATER_MAX_MS = 24 * 3600_000;

/**
 * type the notices put aside for agents at a dialog (tellOverBudget, stopCopy) into those now back
 * at their prompt; keep the ones still at a dialog; drop, and log, those whose agent is gone or that
 * waited a day. Returns the notices still waiting.
 */
export async function tellLater(ctx: Pick<ReactorContext, "runtime" | "log">, pending: readonly LaterNotice[], now = Date.now()): Promise<LaterNotice[]> {
  const left: LaterNotice[] = [];
  for (const n of pending) {
    try {
      const s = await ctx.runtime.findSession(n.session);
      if (!s || s.gone) {
        ctx.log(`job ${n.job_id} ${n.what}; ${n.session} ${s?.gone ?? "is not running"}, not told`);
        continue;
      }
      if (s.waiting) {
        if (now - n.since < LATER_MAX_MS) left.push(n);
        else ctx.log(`job ${n.job_id} ${n.what}; ${n.session} still waits at ${s.waiting} after a day, not told`);
        continue;
      }
      const w = await ctx.runtime.prompt(s, n.text);
      ctx.log(`job ${n.job_id} ${n.what}; told ${n.session} now that it is back at its prompt${w ? ` (${w.text})` : ""}`);
    } catch (e) {
      ctx.log(`job ${n.job_id}: could not tell ${n.session} that it ${n.what} (${(e as Error).message})`);
    }
  }
  return left;
}

/** an agent at a dialog gets the notice later (when the daemon can), else not at all; the log says which */
function putAside(ctx: ReactorContext, n: Omit<LaterNotice, "since">, waitingAt: string): void {
  if (ctx.later) {
    ctx.later({ ...n, since: Date.now() });
    ctx.log(`job ${n.job_id} ${n.what}; ${n.session} waits at ${waitingAt}: told once it is back at its prompt`);
  } else ctx.log(`job ${n.job_id} ${n.what}; ${n.session} waits at ${waitingAt}, not told`);
}

/** a long-lived reactor's cursor: events that asked for nothing are saved lazily (redoing them does nothing) */
export interface CursorState {
  cursor?: Record<string, CursorEntry>;
  dirty: boolean;
  lastWrite: number;
  timer?: ReturnType<typeof setTimeout>;
}

const LAZY_CURSOR_MS = 1000;

function saveCursor(ws: string, cursor: Record<string, CursorEntry>, st?: CursorState): void {
  if (st) {
    clearTimeout(st.timer);
    st.timer = undefined;
    st.dirty = false;
    st.lastWrite = Date.now();
  }
  writeFileAtomic(cursorPath(ws), `${JSON.stringify(cursor)}\n`);
}

/** save now if the last save is a second old, else within 50 ms (at most ~20 saves a second in a burst) */
function touchCursor(ws: string, cursor: Record<string, CursorEntry>, st?: CursorState): void {
  if (!st || Date.now() - st.lastWrite >= LAZY_CURSOR_MS) return saveCursor(ws, cursor, st);
  st.dirty = true;
  if (st.timer) return;
  st.timer = setTimeout(() => {
    st.timer = undefined;
    if (st.dirty) {
      try {
        saveCursor(ws, cursor, st);
      } catch {} // the next reaction saves it
    }
  }, 50);
  (st.timer as { unref?: () => void }).unref?.();
}

/** what a pane the daemon watches for a running job looks like now */
export type AgentState = "blocked" | "alive" | "gone" | "unknown";

/** a job's cursor: `{at: N}`; a bare number is 0.1's "last seq reacted to" */
type CursorEntry = { at: number } | number;

function readCursor(ws: string): Record<string, CursorEntry> {
  try {
    const v = JSON.parse(readFileSync(cursorPath(ws), "utf8"));
    return v && typeof v === "object" ? (v as Record<string, CursorEntry>) : {};
  } catch {
    return {};
  }
}

/** how many journal events were reacted to (0.1's seq cursor: the events up to that seq) */
export function cursorPosition(c: unknown, events: readonly JobEvent[]): number {
  if (typeof c === "number" && Number.isSafeInteger(c)) return events.filter((e) => e.seq <= c).length;
  const at = (c as { at?: unknown } | null)?.at;
  return typeof at === "number" && Number.isSafeInteger(at) && at > 0 ? Math.min(at, events.length) : 0;
}

/** a detail on one line, control characters shown escaped (a worker's detail is typed into another pane: sanitize.ts) */
const detailLine = (detail: string) => visible(detail.replace(/\s+/g, " ").trim());

/** the one line the delegator gets when its job ends */
export function endLine(ev: JobEvent): string {
  return `[mam] job ${ev.job_id} ${ev.event}: ${detailLine(ev.detail)}`;
}

export async function publishAppended(ctx: ReactorContext, rec: JobRecord | undefined, appended: Appended[]): Promise<void> {
  for (const a of appended) {
    const prefix = rec?.topic_prefix ?? a.record?.topic_prefix;
    if (prefix) await ctx.publish(`${prefix}/events`, a.line);
  }
}

/**
 * How often a job's delegator is told of its `permission_required` events (review N5): once per
 * distinct question (its fingerprint, else its source and detail) until the job's next answer
 * (`approved` / `denied`), and at most `perMinute` a minute per job. A flood of reports (any token
 * holder can send them) is then a few lines in the delegator's pane, not one per event.
 */
export class DialogTells {
  private jobs = new Map<string, { keys: Set<string>; times: number[] }>();

  constructor(
    readonly perMinute = 3,
    private now: () => number = Date.now,
  ) {}

  /** tell the delegator of this one ("tell"), or not: told already ("repeat"), or over the limit ("limit") */
  take(job: string, ev: Pick<JobEvent, "source" | "detail" | "data">): "tell" | "repeat" | "limit" {
    const q = ev.data?.question as { fingerprint?: unknown } | undefined;
    const key = typeof q?.fingerprint === "string" ? `fp:${q.fingerprint}` : `${ev.source}\u0000${ev.detail}`;
    let j = this.jobs.get(job);
    if (!j) this.jobs.set(job, (j = { keys: new Set(), times: [] }));
    if (j.keys.has(key)) return "repeat";
    const now = this.now();
    j.times = j.times.filter((t) => now - t < 60_000);
    if (j.times.length >= this.perMinute) return "limit";
    j.times.push(now);
    j.keys.add(key);
    return "tell";
  }

  /** the job's dialog was answered: the same question asked again is news */
  answered(job: string): void {
    this.jobs.get(job)?.keys.clear();
  }

  /** the job ended */
  forget(job: string): void {
    this.jobs.delete(job);
  }
}

/**
 * a job ended, or its agent waits at a dialog: the delegator hears it in its pane when it is a
 * session whose agent is there; a best-effort herdr notification also goes to the worker's server
 * (audit #10: herdr's default config shows none, `shown:false` is fine). Never typed into a pane
 * whose agent is gone.
 */
async function tellDelegator(ctx: ReactorContext, rec: JobRecord, ev: JobEvent): Promise<void> {
  const line = endLine(ev);
  const who = rec.delegator;
  const dialog = ev.event === "permission_required";
  if (!dialog) ctx.tells?.forget(rec.job_id);
  const take = dialog ? (ctx.tells?.take(rec.job_id, ev) ?? "tell") : "tell";
  if (take === "repeat") {
    // the same question again (a report repeated, a flood): its delegator and the user were told
    ctx.log(`job ${rec.job_id}: permission_required (${detailLine(ev.detail).slice(0, 80)}) told before; ${who ?? "the delegator"} not told again`);
    return;
  }
  await notice(ctx, rec, ev);
  try {
    await ctx.notify?.(rec, ev);
  } catch (e) {
    ctx.log(`job ${rec.job_id}: notifications failed (${(e as Error).message})`);
  }
  if (take === "limit") {
    ctx.log(`job ${rec.job_id}: permission_required (${detailLine(ev.detail).slice(0, 80)}): ${who ?? "the delegator"} was told of ${ctx.tells!.perMinute} of the job's dialogs this minute; not told`);
    return;
  }
  if (!who) {
    ctx.log(`job ${rec.job_id}: ${ev.event}; no delegator session to tell`);
    return;
  }
  let s: Reached | undefined;
  try {
    s = await ctx.runtime.findSession(who);
  } catch (e) {
    ctx.log(`job ${rec.job_id}: cannot look up delegator ${who} (${(e as Error).message})`);
    return;
  }
  if (!s) {
    ctx.log(`job ${rec.job_id}: ${ev.event}; delegator ${who} is not a running session, not told`);
    return;
  }
  if (s.gone) {
    ctx.log(`job ${rec.job_id} ended (${ev.event}); delegator ${who} ${s.gone}, not told`);
    return;
  }
  if (readsCommands(s.agent)) {
    // a shell would run the line (a `;` in a worker's detail would be a command)
    ctx.log(`job ${rec.job_id}: ${ev.event}; delegator ${who} is a ${s.agent} session, not told (it would run the text)`);
    return;
  }
  const type = async () => {
    try {
      await ctx.runtime.prompt(s!, line);
      ctx.log(`job ${rec.job_id}: told ${who}: ${line}`);
    } catch (e) {
      ctx.log(`job ${rec.job_id}: could not tell ${who} (${(e as Error).message})`);
    }
  };
  // a dialog's line is typed beside the reactor (one at a time per delegator): the other jobs'
  // reactions do not wait for it. A job's end is typed before its cursor moves (told once).
  if (dialog && ctx.aside) ctx.aside(`tell:${who}`, `tell ${who}`, type);
  else await type();
}

/** the job's end as a notification on the worker's server; best effort, only logged */
async function notice(ctx: ReactorContext, rec: JobRecord, ev: JobEvent): Promise<void> {
  const rt = ctx.runtime;
  if (!rt.noticeTarget || !rt.notify) return;
  try {
    const target = await rt.noticeTarget(rec.agent_session);
    if (!target || target.backend !== "herdr") return;
    const shown = await rt.notify(target, `mam: job ${rec.job_id} ${ev.event}`, `${rec.agent_session}: ${detailLine(ev.detail)}`.slice(0, 240));
    ctx.log(`job ${rec.job_id}: herdr notification ${shown ? "shown" : "not shown"}`);
  } catch (e) {
    ctx.log(`job ${rec.job_id}: no herdr notification (${(e as Error).message})`);
  }
}

/**
 * React to every journal event not reacted to yet (all jobs, or the given ones), in journal order;
 * how many events that was. A job put to rest whose journal did not change since has none. A job
 * whose reaction fails is logged (once, with ctx.once) and left for the next call: the jobs after
 * it are still reacted to.
 */
export async function reactToJobs(ctx: ReactorContext, only?: string[]): Promise<number> {
  const st = ctx.cursor;
  const cursor = st ? (st.cursor ??= readCursor(ctx.ws)) : readCursor(ctx.ws);
  const journals = ctx.journals ?? new JournalCache();
  const seen = { n: 0 };
  for (const id of only ?? ctx.jobs.ids()) {
    if (journals.quiet(ctx.ws, id)) continue;
    try {
      await reactToJob(ctx, id, cursor, journals, seen);
      ctx.once?.ok(`job ${id}`, "reaction failed");
    } catch (e) {
      failedJob(ctx, id, e, "reaction failed");
    }
  }
  return seen.n;
}

/** every event of the job has been reacted to (the daemon's cursor is at the end of its index) */
export function reactedToAll(ctx: Pick<ReactorContext, "cursor">, id: string, events: readonly JobEvent[]): boolean {
  const c = ctx.cursor?.cursor;
  return c !== undefined && cursorPosition(c[id], events) >= events.length;
}

/** one job's step failed: logged (once, with ctx.once), and the caller goes on with the next job */
function failedJob(ctx: ReactorContext, id: string, e: unknown, doing: string): void {
  if (ctx.once) ctx.once.failed(`job ${id}`, e, doing);
  else ctx.log(`job ${id}: ${doing}: ${e instanceof Error ? e.message : String(e)}`);
}

/** `seen` counts the events gone through */
async function reactToJob(ctx: ReactorContext, id: string, cursor: Record<string, CursorEntry>, journals: JournalCache, seen: { n: number }): Promise<void> {
  const st = ctx.cursor;
  let rec: JobRecord | undefined;
  try {
    rec = ctx.jobs.read(id);
  } catch {
    return; // a broken record is reported by `job status`; nothing to react to
  }
  if (!rec) return;
  const j = journals.get(ctx.ws, id, rec);
  const events = j.events;
  const n = events.length;
  for (let at = cursorPosition(cursor[id], events); at < n; at++) {
    const ev = events[at]!;
    seen.n++;
    let acted = true;
    if (rec.remote_of) {
      // a copy of another host's job: that host tells the delegator and drives the loop; we
      // tell our agent when its host cancelled the job or it timed out there
      if (at === j.endAt && (ev.event === "cancelled" || ev.event === "timeout" || ev.event === "budget_exceeded")) await stopCopy(ctx, rec, events, ev);
      else acted = false;
    } else if (ev.event === "received" || (at === j.endAt && events.some((e) => e.event === "offered"))) {
      // a delivery to another host that was taken, or a job that ended with some not taken yet:
      // their retained messages go (a host that comes back must not get an ended job)
      // their topics made again from what this host offered, never taken from an event (review T9)
      const topicOf = ctx.teamPrefix === undefined ? undefined : (host: string, wsId: string, d: string) => deliveryTopic(ctx.teamPrefix!, host, wsId, d);
      if (topicOf) await clearDeliveries(ctx, ev.event === "received" ? [offeredTopic(events, deliveryOf(ev) ?? "", topicOf)] : outstandingTopics(events, topicOf));
      if (at === j.endAt) await tellDelegator(ctx, rec, ev);
    } else if (ev.event === "approved" || ev.event === "denied") {
      ctx.tells?.answered(id);
      acted = false;
    } else if (at === j.endAt || ev.event === "permission_required" || RESTART_EVENTS.includes(ev.event)) {
      // the job's end, a dialog, its agent restarted (or given up on) by the daemon
      await tellDelegator(ctx, rec, ev);
      if (at === j.endAt && ev.event === "budget_exceeded") await tellOverBudget(ctx, rec, events.slice(0, at), ev);
    } else if (rec.type === "loop" && ev.event === "completed" && !endsJob(ev, rec)) {
      await ctx.meter?.();
      const current = ctx.jobs.read(id) ?? rec;
      const r = await applyLoop(ctx.ws, current, loopNext(current, ev, ctx.ws), ctx.runtime);
      await publishAppended(ctx, current, r.appended);
      if (r.undelivered) ctx.log(`job ${id}: ${r.undelivered}`);
    } else acted = false;
    // saved at once after an action: a hook abandoned half-way must not redo what it already did
    cursor[id] = { at: at + 1 };
    if (acted) saveCursor(ctx.ws, cursor, st);
    else touchCursor(ctx.ws, cursor, st);
  }
}

/** clear the retained deliveries at these topics (an empty retained message) */
async function clearDeliveries(ctx: ReactorContext, topics: (string | undefined)[]): Promise<void> {
  for (const t of topics) if (t) await ctx.publish(t, "", { retain: true });
}

/** a copy's job was cancelled (or timed out) by its host: tell our agent to stop, once */
async function stopCopy(ctx: ReactorContext, rec: JobRecord, events: readonly JobEvent[], ev: JobEvent): Promise<void> {
  const global = busySession(rec, events);
  const here = ctx.host ? `@${ctx.host}` : "@";
  if (!global.endsWith(here)) return;
  const name = global.slice(0, -here.length);
  const what = ev.event === "cancelled" ? "was cancelled" : ev.event === "timeout" ? "timed out" : `went over its budget (${ev.detail})`;
  try {
    const s = await ctx.runtime.findSession(name);
    if (s && !s.gone && readsCommands(s.agent)) {
      // a shell would run the notice; its `mam shell-job` sees the job end and stops the command
      ctx.log(`job ${rec.job_id} ${what} on ${rec.remote_of}; ${name} is a ${s.agent} session, not told (it would run the text)`);
      return;
    }
    const text = `[mam] Job ${rec.job_id} ${what} (on ${rec.remote_of}): stop working on it.`;
    if (s && !s.gone && s.waiting) return putAside(ctx, { job_id: rec.job_id, session: name, text, what: `${what} on ${rec.remote_of}` }, s.waiting);
    if (!s || s.gone) {
      ctx.log(`job ${rec.job_id} ${what} on ${rec.remote_of}; ${name} ${s?.gone ?? "is not running"}, not told`);
      return;
    }
    await ctx.runtime.prompt(s, text);
    ctx.log(`job ${rec.job_id} ${what} on ${rec.remote_of}; told ${name}`);
  } catch (e) {
    ctx.log(`job ${rec.job_id}: could not tell ${name} that it ${what} (${(e as Error).message})`);
  }
}

/**
 * a job of ours ended over its budget (or its agent's daily cap): the session working on it then is
 * told at its prompt to stop (never killed); one on another host is told by its host (stopCopy)
 */
async function tellOverBudget(ctx: ReactorContext, rec: JobRecord, before: readonly JobEvent[], ev: JobEvent): Promise<void> {
  const name = workingSession(rec, before);
  if (name.includes("@")) return;
  try {
    const s = await ctx.runtime.findSession(name);
    const text = `[mam] Job ${rec.job_id} is stopped: ${ev.detail.replace(/\s+/g, " ").trim()}. Stop working on it.`;
    // at a dialog (waiting for the user, or for mam approve): told once back at its prompt
    if (s && !s.gone && s.waiting) return putAside(ctx, { job_id: rec.job_id, session: name, text, what: "went over its budget" }, s.waiting);
    if (!s || s.gone) {
      ctx.log(`job ${rec.job_id} went over its budget; ${name} ${s?.gone ?? "is not running"}, not told`);
      return;
    }
    const left = await ctx.runtime.prompt(s, text);
    ctx.log(`job ${rec.job_id} went over its budget; told ${name}${left ? ` (${left.text})` : ""}`);
  } catch (e) {
    ctx.log(`job ${rec.job_id}: could not tell ${name} that it went over its budget (${(e as Error).message})`);
  }
}

/**
 * The session mam last gave a text about the job: its agent, or in a loop the one its last step
 * went to (a review request → the reviewer, feedback → the worker). Unlike busySession, a worker's
 * hand-in alone does not make the reviewer the one at work: its review may not have been sent.
 */
export function workingSession(rec: Pick<JobRecord, "type" | "agent_session" | "reviewer_session">, events: readonly JobEvent[]): string {
  if (rec.type !== "loop" || !rec.reviewer_session) return rec.agent_session;
  const step = [...events].reverse().find((e) => e.source === "mam" && e.event === "progress" && typeof e.data?.iteration === "number");
  return step && step.detail.includes(": review requested from ") ? rec.reviewer_session : rec.agent_session;
}

/** what the daemon saw of an agent: its state, and for a blocked one the dialog's question */
export interface AgentLook {
  state: AgentState;
  reason?: string;
  /** a permission dialog mam can read: what it asks, its choices, its fingerprint */
  question?: Question;
  /** the kind of dialog it is blocked at, when its rule says (start, permission, limit) */
  dialog?: string;
}

/** the detail of a monitor's permission_required: the dialog's question, else a generic line */
export function blockedDetail(session: string, reason: string | undefined): string {
  return reason ? `${session}: ${reason}` : `${session} is waiting for a decision (blocked)`;
}

/**
 * Watch the agents of unfinished jobs (pending or running): a pane that turns blocked gives one
 * `permission_required` per dialog (`blocked` remembers, per job, the dialog last reported: the
 * same dialog seen again by the next poll is not a new one; a different question, or the agent
 * blocked again after it was seen unblocked, is); a pane that died gives `error` ("agent exited").
 * An agent's own usage-limit menu (dialog "limit": claude's "What do you want to do?", codex's
 * model nudge) is no permission asked: its limit says it (limits.watch journals `limited`).
 */
export async function watchAgents(ctx: ReactorContext, stateOf: (session: string) => Promise<AgentState | AgentLook>, blocked: Map<string, string>): Promise<void> {
  for (const id of ctx.jobs.ids()) {
    // put to rest: ended, and its journal has not changed since
    if (ctx.journals?.quiet(ctx.ws, id)) {
      blocked.delete(id);
      continue;
    }
    let rec: JobRecord | undefined;
    try {
      rec = ctx.jobs.read(id);
    } catch {
      continue;
    }
    if (!rec || isFinal(rec.status)) {
      blocked.delete(id);
      continue;
    }
    let events: JobEvent[];
    try {
      events = ctx.jobs.journal(id);
    } catch (e) {
      failedJob(ctx, id, e, "watch failed");
      continue;
    }
    const session = busySession(rec, events);
    const seen = await stateOf(session);
    const { state, reason, question, dialog: kindOf } = typeof seen === "string" ? { state: seen, reason: undefined, question: undefined, dialog: undefined } : seen;
    let input: { event: "permission_required" | "error"; detail: string; data?: { [k: string]: Json } } | undefined;
    // the same dialog is the same question (its fingerprint), else the same one-line reason
    const dialog = `${session}\u0000${question?.fingerprint ?? reason ?? ""}`;
    if (state === "blocked" && kindOf === "limit") blocked.delete(id);
    else if (state === "blocked" && blocked.get(id) !== dialog) {
      blocked.set(id, dialog);
      input = { event: "permission_required", detail: blockedDetail(session, reason), data: question ? { session, question: question as unknown as Json } : { session } };
    } else if (state !== "blocked" && state !== "unknown") blocked.delete(id);
    // pending counts too: the agent has its header; gone before it reported, it never will
    if (state === "gone") input = { event: "error", detail: "agent exited" };
    if (!input) continue;
    let a: Appended | undefined;
    try {
      // a dialog is vouched for: another host's daemon takes it from the broker only so (attest.ts)
      a = await ctx.jobs.append(id, (r, evs) => (r && !evs.some((e) => endsJob(e, r)) ? { ...input!, source: DAEMON_SOURCE } : undefined), input.event === "permission_required" && ctx.vouch ? { vouch: ctx.vouch } : {});
    } catch (e) {
      // one job's journal that cannot be written (a link, a full disk) does not stop the others
      failedJob(ctx, id, e, "watch failed");
      continue;
    }
    if (a) {
      ctx.log(`job ${id}: ${input.event} (${input.detail})`);
      await publishAppended(ctx, rec, [a]);
    }
  }
}
