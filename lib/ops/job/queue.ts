// The queue (docs/jobs.md#the-queue), its I/O side: the jobs waiting their turn, the agents busy
// with one, the agents free now, and the dispatch that gives waiting jobs to free agents. The
// decisions are lib/jobs/queue.ts's; whoever gives an agent a job holds the workspace's dispatch
// lock while it decides and journals `dispatched`, so no agent ever gets two jobs at once; the
// typing comes after, outside the lock.
import { statSync } from "node:fs";
import { join } from "node:path";
import { endsJob } from "../../jobs/event.ts";
import { busySession } from "../../jobs/loop.ts";
import { type Assignment, DEFAULT_AGING_S, DEFAULT_STILL_S, freeNow, DEFAULT_QUEUE_MAX, DEFAULT_QUEUE_MAX_PER_AGENT, type FreeAgent, plan, positions, type QueueCaps, queueFull, type Served, type Waiting } from "../../jobs/queue.ts";
import { afterVerdict, type AfterVerdict, heldWords } from "../../jobs/after.ts";
import { isRemote } from "../../jobs/runtime.ts";
import { isFinal } from "../../jobs/statuses.ts";
import { type Appended, effectiveStatus, type JobRecord, type JobSpec, type JobStore, type JobView } from "../../jobs/store.ts";
import { hostName } from "../../team/host.ts";
import { rowAgent } from "../../fleet/rows.ts";
import { readsCommands } from "../../agents/kinds/index.ts";
import { jobHeader, shellJobLine } from "../../jobs/header.ts";
import { agentMam } from "../../sys/agent-mam.ts";
import { atomicWriteFile } from "../../sys/atomic.ts";
import type { Env } from "../../sys/paths.ts";
import { EXIT, MamError } from "../../sys/errors.ts";
import type { Deps } from "../deps.ts";
import { depStatuses } from "./after.ts";
import { pastDailyCap } from "./cap.ts";
import { allRows } from "../../registry/rows.ts";
import { limitedWords } from "../../agents/limits.ts";
import type { LimitBlock, RegistryData } from "../../registry/types.ts";

/**
 * the limit a running session is at (docs/unattended.md; the daemon's limits.watch writes it on
 * its row): it takes no job until it is over, though it sits at its prompt
 */
function limitOf(data: RegistryData, name: string): LimitBlock | undefined {
  return allRows(data).find((r) => r.name === name && r.status === "running")?.limit;
}

/** "w1 is limited until 15:30" */
const limitedWhy = (name: string, l: LimitBlock) => `${name} is ${limitedWords(l.resets_at)}`;

/** MAM_QUEUE_AGING_S: seconds after which a waiting job ranks one priority higher */
export function agingSeconds(env: Env): number {
  const v = env.MAM_QUEUE_AGING_S;
  if (v === undefined || !/^\d+$/.test(v.trim()) || Number(v) < 1) return DEFAULT_AGING_S;
  return Number(v);
}

const count = (v: string | undefined, dflt: number) => (v !== undefined && /^\d+$/.test(v.trim()) && Number(v) >= 1 ? Number(v) : dflt);

/** MAM_QUEUE_MAX_PER_AGENT and MAM_QUEUE_MAX: how many jobs may wait for one agent (or role), and in the workspace */
const queueCaps = (env: Env): QueueCaps => ({ perAgent: count(env.MAM_QUEUE_MAX_PER_AGENT, DEFAULT_QUEUE_MAX_PER_AGENT), total: count(env.MAM_QUEUE_MAX, DEFAULT_QUEUE_MAX) });

/** a submit that would wait in a full line: refused, nothing written */
function refuseFull(q: QueueState, target: { to: string } | { role: string }, env: Env): void {
  const full = queueFull(q.waiting, target, queueCaps(env));
  if (!full) return;
  const who = "to" in target ? target.to : `a free ${target.role}`;
  if (full.of === "agent") {
    throw new MamError(`${full.n} jobs wait already for ${who} (the cap: MAM_QUEUE_MAX_PER_AGENT=${full.cap}); nothing was submitted`, EXIT.CONFLICT, "wait until some have gone, cancel some (mam job list; mam job cancel ID), or raise MAM_QUEUE_MAX_PER_AGENT");
  }
  throw new MamError(`${full.n} jobs wait already in this workspace (the cap: MAM_QUEUE_MAX=${full.cap}); nothing was submitted`, EXIT.CONFLICT, "wait until some have gone, cancel some (mam job list; mam job cancel ID), or raise MAM_QUEUE_MAX");
}

/** a session's name in this workspace: a copy of another host's job names it name@<this host> */
export const localName = (name: string, host: string | undefined): string => (host && name.endsWith(`@${host}`) ? name.slice(0, -host.length - 1) : name);

export interface QueueState {
  waiting: Waiting[];
  /** the agents with an unfinished job that is not waiting (pending or running) */
  busy: Set<string>;
  records: Map<string, JobRecord>;
  /**
   * queued jobs this user's mam did not write (no valid mark: a cloned repository's, or an older
   * mam's): never dispatched, and they hold nobody up
   */
  foreign: { job_id: string; why: string }[];
  /**
   * queued jobs that run after others (docs/jobs.md#dependencies) not all ended as they must: held
   * back (they hold nobody up and have no place in a line), or to be cancelled
   */
  held: { w: Waiting; verdict: Exclude<AfterVerdict, { state: "ready" }> }[];
}

const epoch = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** what one job adds to the queue's state, as its files were when read */
type Entry =
  | { kind: "none" }
  | { kind: "foreign"; why: string }
  | { kind: "waiting"; rec: JobRecord; w: Waiting }
  | { kind: "busy"; rec: JobRecord; name: string };

/**
 * what readQueue made of each job, by the signature of its files (JobStore.stamp): the daemon
 * reads the queue every second while jobs wait, and a job whose record and journal did not change
 * costs two stats, not a read and parse of both (review 2, Q1: 1 200 waiting jobs cost 26 % CPU)
 */
const memo = new WeakMap<JobStore, Map<string, { stamp: string; entry: Entry }>>();

function entryOf(jobs: JobStore, id: string, host: string | undefined): Entry {
  let rec: JobRecord | undefined;
  let status;
  let events;
  try {
    rec = jobs.read(id);
    if (!rec) return { kind: "none" };
    events = jobs.journal(id);
    status = effectiveStatus(rec, events);
  } catch {
    return { kind: "none" }; // a broken job is reported by job status; it holds nobody up
  }
  if (isFinal(status)) return { kind: "none" };
  if (status !== "queued") return { kind: "busy", rec, name: localName(busySession(rec, events), host) };
  const why = jobs.notOwn(rec);
  if (why !== undefined) return { kind: "foreign", why };
  // its arrival to the millisecond (its `queued` event says it): jobs of one second keep their order
  const q = events.findLast((e) => e.event === "queued");
  const atMs = typeof q?.data?.at_ms === "number" ? q.data.at_ms : undefined;
  return {
    kind: "waiting",
    rec,
    w: {
      job_id: id,
      to: rec.to_role !== undefined ? null : localName(rec.agent_session, host),
      role: rec.to_role ?? null,
      priority: rec.priority ?? "normal",
      by: rec.delegator ?? "",
      since: atMs !== undefined ? atMs / 1000 : epoch(rec.created_at),
    },
  };
}

/** the jobs waiting their turn and the agents busy with one, from the records and journals (leaving out job `exclude`) */
export function readQueue(jobs: JobStore, host: string | undefined, exclude?: string): QueueState {
  const st: QueueState = { waiting: [], busy: new Set(), records: new Map(), foreign: [], held: [] };
  let seen = memo.get(jobs);
  if (!seen) memo.set(jobs, (seen = new Map()));
  const ids = jobs.ids();
  const live = new Set(ids);
  for (const id of seen.keys()) if (!live.has(id)) seen.delete(id);
  for (const id of ids) {
    if (id === exclude) continue;
    const stamp = jobs.stamp(id);
    let entry = stamp !== undefined && seen.get(id)?.stamp === `${host ?? ""}|${stamp}` ? seen.get(id)!.entry : undefined;
    if (!entry) {
      entry = entryOf(jobs, id, host);
      if (stamp !== undefined) seen.set(id, { stamp: `${host ?? ""}|${stamp}`, entry });
    }
    if (entry.kind === "foreign") st.foreign.push({ job_id: id, why: entry.why });
    else if (entry.kind === "waiting") {
      st.records.set(id, entry.rec);
      st.waiting.push({ ...entry.w });
    } else if (entry.kind === "busy") {
      st.records.set(id, entry.rec);
      st.busy.add(entry.name);
    }
  }
  // what a job runs after is read fresh (its own files did not change when those jobs ended)
  st.waiting = st.waiting.filter((w) => {
    const rec = st.records.get(w.job_id)!;
    if (rec.after === undefined) return true;
    const verdict = afterVerdict(depStatuses(jobs, rec.after), rec.after_any_end === true);
    if (verdict.state === "ready") return true;
    st.held.push({ w, verdict });
    return false;
  });
  return st;
}

/** what each job held back by the jobs it runs after waits for ("after job 1a2b3c4d (running) completes"), by job id */
export function heldFor(q: QueueState): Map<string, string> {
  const out = new Map<string, string>();
  for (const h of q.held) if (h.verdict.state === "held") out.set(h.w.job_id, heldWords(h.verdict.on, q.records.get(h.w.job_id)?.after_any_end === true));
  return out;
}

/** is `name` free for a new job now? (no unfinished job, nobody waiting for it, not at work) */
export function mustWait(q: QueueState, name: string, working: boolean): boolean {
  return working || q.busy.has(name) || q.waiting.some((w) => w.to === name);
}

/** the place of each waiting job in its line */
export function queuePositions(q: QueueState, env: Env, now = Date.now() / 1000): Map<string, number> {
  return positions(q.waiting, now, agingSeconds(env));
}

/** MAM_QUEUE_STILL_S: how long the screen of an agent whose state mam cannot read must be still before it counts as free */
export const stillSeconds = (env: Env): number => count(env.MAM_QUEUE_STILL_S, DEFAULT_STILL_S);

/** since when each unreadable agent's screen has been as it is: `<ws>\0<name>` → its hash and since (the daemon keeps it between looks) */
const stillness = new Map<string, { hash: string; since: number }>();

/**
 * the agents free now among the running sessions named, or of the roles named: no unfinished job,
 * not past a daily cap, and at its prompt by LIVE (one listing per server; screens of just those
 * sessions): idle, or, when mam cannot read its state, a shell, or an agent whose screen has been
 * still for MAM_QUEUE_STILL_S (freeNow)
 */
export async function freeAgents(deps: Deps, names: Set<string>, roles: Set<string>, busy: Set<string>): Promise<FreeAgent[]> {
  const data = deps.registry.read();
  const candidates = new Set<string>();
  for (const r of allRows(data)) {
    if (r.status !== "running" || busy.has(r.name)) continue;
    if (!names.has(r.name) && !(typeof r.role === "string" && roles.has(r.role))) continue;
    // at a usage or rate limit (docs/unattended.md): no job before it is over; a pool's goes to another
    if (r.limit !== undefined) continue;
    // past its daily cap (docs/cost.md#budgets): no new job before 00:00 UTC
    if (pastDailyCap(deps, r) === undefined) candidates.add(r.name);
  }
  if (candidates.size === 0) return [];
  const { observe } = await import("../session/observe.ts");
  const obs = await observe(deps, data, [], { liveOnly: candidates });
  const free: FreeAgent[] = [];
  const now = deps.clock.ms() / 1000;
  for (const v of obs.rows) {
    if (!candidates.has(v.row.name) || v.row.status !== "running") continue;
    const kind = rowAgent(v.row) ?? undefined;
    const shell = readsCommands(kind);
    let since: number | undefined;
    if (v.live === "unknown" && !shell && v.pane) since = await stillSince(deps, `${deps.ws}\0${v.row.name}`, v, now);
    if (!freeNow(v.live, shell, since, now, stillSeconds(deps.env))) continue;
    free.push({ name: v.row.name, role: typeof v.row.role === "string" ? v.row.role : null });
  }
  return free;
}

/** since when the pane's screen has been as it is now (now when it changed or was not seen; undefined when it cannot be read) */
async function stillSince(deps: Deps, key: string, v: { backend: string; server: string; pane?: { id: string } }, now: number): Promise<number | undefined> {
  let text: string;
  try {
    const s = await deps.muxFor(v.backend as never, v.server).screen(v.pane!.id);
    text = `${s.title ?? ""}\n${s.text}`;
  } catch {
    stillness.delete(key);
    return undefined;
  }
  const hash = Bun.hash(text).toString(16);
  const was = stillness.get(key);
  if (was && was.hash === hash) return was.since;
  stillness.set(key, { hash, since: now });
  return now;
}

export interface Dispatched {
  job_id: string;
  to: string;
  record: JobRecord;
  /** the `dispatched` event (publish it) */
  appended: Appended;
  /** what the agent gets typed, when not the job's own text (textForAgent): a failover's (./failover.ts) */
  text?: string;
}

export interface DispatchOptions {
  /** this machine's name in its team (a copy of another host's job names its agents name@host) */
  host?: string;
  /** the submitters' turns, kept between dispatches by the daemon */
  served?: Served;
  tick?: () => number;
  now?: number;
}

const markerPath = (jobs: JobStore) => join(jobs.dir, ".queued");

/**
 * the queue's marker (`.mam/jobs/.queued`), touched under the dispatch lock by whoever journals
 * `queued`: its signature ("" when there is none). The daemon reads every job only when it changed
 * or jobs were waiting at its last look.
 */
export function queueMarker(jobs: JobStore): string {
  try {
    const st = statSync(markerPath(jobs));
    return `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return "";
  }
}

/** touch the queue's marker (under the dispatch lock): a job waits its turn now */
function markQueued(jobs: JobStore): void {
  atomicWriteFile(markerPath(jobs), `${Date.now()}\n`, { mode: 0o600, regularOnly: true });
}

/**
 * Under the dispatch lock: give the waiting jobs that can go now to free agents, journal each
 * `dispatched` (a pool job's record then names its agent). Returns what went, to be typed.
 */
export async function assignWaiting(deps: Deps, o: DispatchOptions = {}): Promise<{ gone: Dispatched[]; left: number; foreign: QueueState["foreign"]; ended: Ended[] }> {
  let n = 0;
  const served = o.served ?? new Map<string, number>();
  const tick = o.tick ?? (() => ++n);
  return deps.jobs.dispatchLock(async () => {
    const q = readQueue(deps.jobs, o.host);
    const ended = await cancelUnmet(deps, q);
    const stillHeld = q.held.length - ended.length;
    if (q.waiting.length === 0) return { gone: [], left: stillHeld, foreign: q.foreign, ended };
    const names = new Set(q.waiting.flatMap((w) => (w.to !== null ? [w.to] : [])));
    const roles = new Set(q.waiting.flatMap((w) => (w.role !== null ? [w.role] : [])));
    const free = await freeAgents(deps, names, roles, q.busy);
    // a job for another host's agent that ran after others (never offered yet): it goes to that host now
    const assigned: Assignment[] = [...toOffer(deps.jobs, q), ...plan(q.waiting, free, o.now ?? Date.now() / 1000, agingSeconds(deps.env), served, tick)];
    const out: Dispatched[] = [];
    for (const a of assigned) {
      const rec0 = q.records.get(a.job_id)!;
      // a pool job takes its agent's name (and kind) before anything is typed
      const agentKind = rec0.to_role !== undefined ? kindOf(deps, a.to) : rec0.agent;
      // a copy of another host's job: its stages are this host's (mam@host), as its delivery's
      const source = rec0.remote_of && o.host ? `mam@${o.host}` : "mam";
      const appended = await deps.jobs.append(a.job_id, (r, evs) =>
        r && effectiveStatus(r, evs) === "queued" && !evs.some((e) => endsJob(e, r)) ? { event: "dispatched", detail: `its turn: to ${a.to}`, source, data: { to: a.to } } : undefined,
      );
      if (!appended) continue;
      const record = rec0.to_role !== undefined ? await deps.jobs.mutate(a.job_id, (r) => ({ ...r, agent_session: a.to, agent: agentKind })) : (appended.record ?? rec0);
      out.push({ job_id: a.job_id, to: a.to, record, appended });
    }
    return { gone: out, left: q.waiting.length - out.length + stillHeld, foreign: q.foreign, ended };
  });
}

/**
 * the waiting jobs for an agent of another host (NAME@HOST) that this host holds back because they
 * run after others (docs/jobs.md#dependencies) and has not offered yet: each goes now, to be
 * offered (typeDispatched). One already offered waits in its host's line, not here.
 */
function toOffer(jobs: JobStore, q: QueueState): Assignment[] {
  return q.waiting.flatMap((w) => {
    const rec = q.records.get(w.job_id)!;
    if (w.to === null || !w.to.includes("@") || rec.remote_of !== undefined || rec.after === undefined) return [];
    return jobs.journal(w.job_id).some((e) => e.event === "offered") ? [] : [{ job_id: w.job_id, to: w.to }];
  });
}

/** a job cancelled because one it runs after ended otherwise (publish its event) */
export interface Ended {
  record: JobRecord;
  appended: Appended;
}

/** cancel the held jobs whose dependencies say so (under the dispatch lock) */
async function cancelUnmet(deps: Deps, q: QueueState): Promise<Ended[]> {
  const out: Ended[] = [];
  for (const h of q.held) {
    if (h.verdict.state !== "cancel") continue;
    const why = h.verdict.why;
    const a = await deps.jobs.append(h.w.job_id, (r, evs) => (r && effectiveStatus(r, evs) === "queued" && !evs.some((e) => endsJob(e, r)) ? { event: "cancelled", detail: `${why}; it never ran`, source: "mam", data: { after: r.after ?? [] } } : undefined));
    if (a?.record) out.push({ record: a.record, appended: a });
  }
  return out;
}

export function kindOf(deps: Deps, name: string): string | null {
  const data = deps.registry.read();
  const row = allRows(data).find((r) => r.name === name && r.status === "running");
  return row ? (rowAgent(row) ?? null) : null;
}

/** what a job's agent gets typed: its header, or for a shell its `mam shell-job` line */
export function textForAgent(deps: Pick<Deps, "ws" | "env">, record: JobRecord, name: string): string {
  return readsCommands(record.agent ?? undefined) ? shellJobLine(record, deps.ws, agentMam(deps.env)) : jobHeader(record, name, deps.ws);
}

/**
 * type a dispatched job into its agent (as a submit would: only at its prompt, never into a
 * dialog): its header, or a shell's command line; `error` on the job when it cannot be typed
 */
export async function typeDispatched(deps: Deps, d: Dispatched): Promise<{ ok: boolean; log: string; appended?: Appended }> {
  const r = await handOver(deps, d);
  if (r.ok) return { ok: true, log: `job ${d.job_id}: ${r.log}` };
  const why = r.why;
  const a = await deps.jobs.append(d.job_id, (r, evs) => (r && !evs.some((e) => endsJob(e, r)) ? { event: "error", detail: `its turn came, but ${why}; nothing typed`, source: "mam" } : undefined));
  return { ok: false, log: `job ${d.job_id}: its turn came, but ${why}; nothing typed`, ...(a ? { appended: a } : {}) };
}

/** type the job into its agent here, or offer it to its agent's host (NAME@HOST): what was done, or why it could not be */
async function handOver(deps: Deps, d: Dispatched): Promise<{ ok: true; log: string } | { ok: false; why: string }> {
  let s;
  try {
    s = await deps.runtime.findSession(d.to);
  } catch (e) {
    return { ok: false, why: (e as Error).message }; // NAME@HOST: the team's hosts do not announce it, or the broker did not answer
  }
  if (!s) return { ok: false, why: `no running session ${d.to}` };
  if (isRemote(s)) {
    try {
      const left = await deps.runtime.prompt(s, jobHeader(d.record, s.name, deps.ws), { purpose: "job", job: d.record });
      return { ok: true, log: `what it runs after has ended; offered to ${d.to}${left ? ` (${left.text})` : ""}` };
    } catch (e) {
      return { ok: false, why: `could not offer it to ${d.to} (${(e as Error).message})` };
    }
  }
  if (s.gone) return { ok: false, why: `${d.to} has no agent any more (${s.gone})` };
  if (s.waiting) return { ok: false, why: `${d.to} waits at ${s.waiting}` };
  try {
    const left = await deps.runtime.prompt(s, d.text ?? textForAgent(deps, d.record, d.to), undefined, readsCommands(s.agent) ? "command" : undefined);
    return { ok: true, log: `its turn came; typed into ${d.to}${left ? ` (${left.text})` : ""}` };
  } catch (e) {
    return { ok: false, why: `could not prompt ${d.to} (${(e as Error).message})` };
  }
}

/**
 * Under the dispatch lock: when `name` must wait (at a limit, at work, busy with another job,
 * others waiting for it), journal `queued` on job `id` (its place in the line in data.position) and say so;
 * undefined when it can go now. The job itself does not count as the agent's other job.
 */
export async function queueBehind(deps: Deps, id: string, name: string, working: boolean, host: string | undefined, data: Record<string, string> = {}): Promise<{ appended: Appended; position: number } | undefined> {
  return deps.jobs.dispatchLock(async () => {
    const q = readQueue(deps.jobs, host, id);
    const rec = deps.jobs.read(id);
    const limit = limitOf(deps.registry.read(), name);
    if (!limit && !mustWait(q, name, working)) return undefined;
    const atMs = Date.now();
    const me: Waiting = { job_id: id, to: name, role: null, priority: rec?.priority ?? "normal", by: rec?.delegator ?? "", since: atMs / 1000 };
    const position = queuePositions({ ...q, waiting: [...q.waiting, me] }, deps.env).get(id) ?? 1;
    const why = limit ? limitedWhy(name, limit) : working ? `${name} is at work` : q.busy.has(name) ? `${name} has an unfinished job` : `other jobs wait for ${name}`;
    const source = rec?.remote_of && host ? `mam@${host}` : "mam";
    const appended = await deps.jobs.append(id, (r, evs) => (r && !evs.some((e) => endsJob(e, r)) ? { event: "queued", detail: `${why}: waits its turn (position ${position})`, source, data: { ...data, to: name, position, at_ms: atMs } } : undefined));
    if (appended) markQueued(deps.jobs);
    return appended ? { appended, position } : undefined;
  });
}

export interface InTurn {
  record: JobRecord;
  /** the agent it goes to now (type it), or null: it waits its turn (`queued` is journalled) */
  go: string | null;
  /** its place in its line when it waits */
  position: number | null;
  /** it waits for the jobs it runs after: what it waits for ("after job 1a2b3c4d (running) completes") */
  held?: string;
  /** the `queued` event (publish it) */
  queued?: Appended;
}

/**
 * Register a job in its turn, under the dispatch lock: for an agent by name, it goes now unless
 * the agent must wait (at a limit, at work, busy, others waiting for it); for a pool (a role), it goes to the
 * first free agent of the role (by name) unless other jobs wait for that role or none is free.
 * Otherwise it is registered `queued`, with its place in the line.
 */
export async function registerInTurn(deps: Deps, spec: JobSpec, to: { name: string; working: boolean } | { role: string }, host: string | undefined, held?: string): Promise<InTurn> {
  return deps.jobs.dispatchLock(async () => {
    const q = readQueue(deps.jobs, host);
    const limit = "name" in to ? limitOf(deps.registry.read(), to.name) : undefined;
    let go: string | null;
    if (held !== undefined) go = null;
    else if ("name" in to) go = limit || mustWait(q, to.name, to.working) ? null : to.name;
    else if (q.waiting.some((w) => w.role === to.role)) go = null;
    else go = (await freeAgents(deps, new Set(), new Set([to.role]), q.busy)).sort((a, b) => (a.name < b.name ? -1 : 1))[0]?.name ?? null;
    if (go === null) refuseFull(q, "name" in to ? { to: to.name } : { role: to.role }, deps.env);
    const pooled = "role" in to && go !== null ? { agent_session: go, agent: kindOf(deps, go) } : {};
    const record = await deps.jobs.register({ ...spec, ...pooled });
    if (go !== null) return { record, go, position: null };
    const atMs = Date.now();
    const me: Waiting = { job_id: record.job_id, to: "name" in to ? to.name : null, role: "role" in to ? to.role : null, priority: record.priority ?? "normal", by: record.delegator ?? "", since: atMs / 1000 };
    const who = "name" in to ? to.name : `a free ${to.role}`;
    const where: { [k: string]: string } = "name" in to ? { to: to.name } : { role: to.role };
    if (held !== undefined) {
      // it has no place in a line until the jobs it runs after have ended
      const queued = await deps.jobs.append(record.job_id, { event: "queued", detail: `waits until ${held}, then its turn for ${who}`, source: "mam", data: { ...where, after: spec.after ?? [], at_ms: atMs } });
      markQueued(deps.jobs);
      return { record: queued?.record ?? record, go: null, position: null, held, ...(queued ? { queued } : {}) };
    }
    const position = positions([...q.waiting, me], Date.now() / 1000, agingSeconds(deps.env)).get(record.job_id) ?? 1;
    const why = "role" in to ? `no ${to.role} is free` : limit ? limitedWhy(to.name, limit) : to.working ? `${to.name} is at work` : q.busy.has(to.name) ? `${to.name} has an unfinished job` : `other jobs wait for ${to.name}`;
    const queued = await deps.jobs.append(record.job_id, { event: "queued", detail: `${why}: waits its turn for ${who} (position ${position})`, source: "mam", data: { ...where, position, at_ms: atMs } });
    markQueued(deps.jobs);
    return { record: queued?.record ?? record, go: null, position, ...(queued ? { queued } : {}) };
  });
}

/** the views of jobs, each waiting one with its place in its line */
export function placeInLine<V extends Pick<JobView, "job_id" | "status" | "position">>(deps: Deps, views: V[]): V[] {
  if (!views.some((v) => v.status === "queued")) return views;
  let host: string | undefined;
  try {
    host = hostName(deps.env);
  } catch {}
  const q = readQueue(deps.jobs, host);
  const pos = queuePositions(q, deps.env);
  let data: RegistryData | undefined;
  try {
    data = deps.registry.read();
  } catch {} // a broken registry is status's to report
  const why = (id: string): string | undefined => {
    const w = q.waiting.find((x) => x.job_id === id);
    if (!w || !data) return undefined;
    if (w.to !== null) {
      const l = limitOf(data, w.to);
      return l ? limitedWhy(w.to, l) : undefined;
    }
    const pool = allRows(data).filter((r) => r.status === "running" && r.role === w.role);
    return pool.length > 0 && pool.every((r) => r.limit !== undefined) ? `every ${w.role} is limited (${pool.map((r) => limitedWhy(r.name, r.limit!)).join("; ")})` : undefined;
  };
  const held = heldFor(q);
  return views.map((v) => {
    const h = held.get(v.job_id);
    if (v.status === "queued" && h !== undefined) return { ...v, waits_for: h };
    if (v.status !== "queued" || !pos.has(v.job_id)) return v;
    const w = why(v.job_id);
    return { ...v, position: pos.get(v.job_id)!, ...(w ? { waits_for: w } : {}) };
  });
}
