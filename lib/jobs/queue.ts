// The queue (docs/jobs.md#the-queue): which waiting job goes to which free agent, and the place
// of each waiting job in its line. Pure: no I/O. The daemon gathers the waiting jobs and the free
// agents and applies the plan (lib/ops/job/queue.ts).
//
// The order: a job's rank is its priority (high 2, normal 1, low 0) plus one for every
// `agingS` seconds it has waited, so a low job is never starved: after 2 × agingS it ranks with
// a fresh high one, and the older of two equal ranks goes first. Between equal ranks, the
// submitter (the delegator; none = the user) served least recently goes first, so that one
// submitter's burst does not hold up another's jobs. An agent takes at most one job per plan, and
// only when it is free: at its prompt, idle, with no unfinished job.
import type { Priority } from "./store.ts";

export const PRIORITY_RANK: Record<Priority, number> = { high: 2, normal: 1, low: 0 };
export const DEFAULT_AGING_S = 300;
/** how many jobs may wait for one agent (or one role's pool), and in one workspace (review 2, Q1) */
export const DEFAULT_QUEUE_MAX_PER_AGENT = 100;
export const DEFAULT_QUEUE_MAX = 1000;

export interface Waiting {
  job_id: string;
  /** the agent it is for (a name of this workspace), or null for a pool job */
  to: string | null;
  /** a pool job: the role of the agents that may take it */
  role: string | null;
  priority: Priority;
  /** who submitted it (its delegator; "" for the user) */
  by: string;
  /** epoch seconds (with a fraction) it began to wait */
  since: number;
}

export interface FreeAgent {
  name: string;
  role: string | null;
}

/** a job's rank now: its priority, plus one per agingS waited */
export function rank(w: Pick<Waiting, "priority" | "since">, now: number, agingS: number): number {
  return PRIORITY_RANK[w.priority] + Math.floor(Math.max(0, now - w.since) / Math.max(1, agingS));
}

/** the served order between submitters: who was served least recently (0: never) */
export type Served = Map<string, number>;

function better(a: Waiting, b: Waiting, now: number, agingS: number, served: Served): number {
  const r = rank(b, now, agingS) - rank(a, now, agingS);
  if (r !== 0) return r;
  const s = (served.get(a.by) ?? 0) - (served.get(b.by) ?? 0);
  if (s !== 0) return s;
  return a.since - b.since || (a.job_id < b.job_id ? -1 : a.job_id > b.job_id ? 1 : 0);
}

/** the agents a job may go to */
const fits = (w: Waiting, a: FreeAgent) => (w.to !== null ? a.name === w.to : a.role === w.role);

export interface Assignment {
  job_id: string;
  to: string;
}

/**
 * Which waiting jobs go now, and to whom: the best job first (rank, then the submitter served
 * least recently, then the oldest), each to a free agent it fits (its own agent, or the first
 * free agent of its role, by name), every agent at most once. `served` is updated as jobs are
 * assigned (the caller keeps it between plans); `tick` is the caller's monotonic counter.
 */
export function plan(waiting: readonly Waiting[], free: readonly FreeAgent[], now: number, agingS: number, served: Served, tick: () => number): Assignment[] {
  const left = [...waiting];
  const agents = [...free].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const taken = new Set<string>();
  const out: Assignment[] = [];
  for (;;) {
    const open = left.filter((w) => agents.some((a) => !taken.has(a.name) && fits(w, a)));
    if (open.length === 0) return out;
    open.sort((a, b) => better(a, b, now, agingS, served));
    const w = open[0]!;
    const a = agents.find((x) => !taken.has(x.name) && fits(w, x))!;
    taken.add(a.name);
    left.splice(left.indexOf(w), 1);
    served.set(w.by, tick());
    out.push({ job_id: w.job_id, to: a.name });
  }
}

/**
 * Each waiting job's place in its line (1 = next): among the jobs waiting for the same agent, or
 * for the same role, in the order they would go now (without the submitters' turns, which change
 * as jobs go).
 */
export function positions(waiting: readonly Waiting[], now: number, agingS: number): Map<string, number> {
  const lines = new Map<string, Waiting[]>();
  for (const w of waiting) {
    const key = w.to !== null ? `to:${w.to}` : `role:${w.role}`;
    (lines.get(key) ?? lines.set(key, []).get(key)!).push(w);
  }
  const out = new Map<string, number>();
  const none: Served = new Map();
  for (const line of lines.values()) {
    line.sort((a, b) => better(a, b, now, agingS, none));
    line.forEach((w, i) => out.set(w.job_id, i + 1));
  }
  return out;
}

export interface QueueCaps {
  perAgent: number;
  total: number;
}

/**
 * is the line of a new job full? (its agent's or its role's, or the workspace's queue): what is
 * full and its cap, or undefined when it may wait
 */
export function queueFull(waiting: readonly Pick<Waiting, "to" | "role">[], target: { to: string } | { role: string }, caps: QueueCaps): { n: number; cap: number; of: "agent" | "workspace" } | undefined {
  const line = waiting.filter((w) => ("to" in target ? w.to === target.to : w.to === null && w.role === target.role)).length;
  if (line >= caps.perAgent) return { n: line, cap: caps.perAgent, of: "agent" };
  if (waiting.length >= caps.total) return { n: waiting.length, cap: caps.total, of: "workspace" };
  return undefined;
}

/** a screen mam cannot read counts as at its prompt once it has been still this long (MAM_QUEUE_STILL_S) */
export const DEFAULT_STILL_S = 30;

/**
 * Is an agent with no unfinished job free for a queued job, by its LIVE state (issue 39 item 1,
 * review 2 O4)? idle: yes. working, blocked, dead, unreachable: no. unknown (mam cannot read its
 * state: a shell, a kind without screen rules, a screen no rule matches): a shell (it runs what is
 * typed, and its last job ended) yes; any other once its screen has been still `stillS` seconds
 * (`stillSince`: since when it has not changed; undefined: not seen yet).
 */
export function freeNow(live: string, readsCommands: boolean, stillSince: number | undefined, now: number, stillS: number): boolean {
  if (live === "idle") return true;
  if (live !== "unknown") return false;
  if (readsCommands) return true;
  return stillSince !== undefined && now - stillSince >= stillS;
}
