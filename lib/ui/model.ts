// The dashboard's view model (pure): what the page draws, computed from what mam keeps — the
// status document (registry + multiplexers), the job records and journals, the daemon's state and
// log. No I/O here; lib/ui/state.ts gathers the inputs, the page only draws what this returns.
import { cardOf, type Column } from "../jobs/board.ts";
import { type DeliveryState, latestDelivery } from "../jobs/delivery.ts";
import type { JobEvent } from "../jobs/event.ts";
import type { JobRecord } from "../jobs/store.ts";
import type { Schedule } from "../ops/job/schedule.ts";
import { effectiveStatus } from "../jobs/store.ts";
import type { JobStatus } from "../jobs/statuses.ts";
import type { StatusLine } from "../ops/session/status.ts";
import type { NeedItem } from "../ops/session/why.ts";
import type { RosterDoc } from "../ops/team.ts";
import { type PriceTable, shippedPrices } from "../cost/prices.ts";
import { jobUsageView, type JobUsageView, type TeamRate } from "../cost/summary.ts";

/** LIVE states, in the order the team table lists them (blocked agents wait for a person: on top) */
export const LIVE_ORDER = ["blocked", "working", "idle", "unknown", "dead", "unreachable"] as const;

export interface UiSession extends StatusLine {
  /** the colour class of LIVE: one of LIVE_ORDER (anything else is unknown) */
  tone: string;
}

export type Lane = "worker" | "reviewer" | "mam";

export interface UiEvent {
  seq: number;
  event: string;
  timestamp: string;
  /** milliseconds since the job was created (or its first event) */
  at: number;
  /** 0..1 on the job's time axis, spread so that events of the same second stay apart */
  x: number;
  lane: Lane;
  source: string;
  detail: string;
  iteration: number;
  /** data without the signature, "" when none */
  data: string;
}

/**
 * where a job stands on the board (docs/jobs.md#the-board): its card as `mam status --jobs` gives
 * it (lib/jobs/board.ts cardOf), less the id and task the job carries already
 */
export interface UiCard {
  column: Column;
  /** who has it now: its agent, the reviewer, the merge queue, or the line it waits in */
  who: string;
  /** ISO time since when it stands there */
  since: string;
  /** what it waits for (a waiting job: the jobs it runs after), what it waits at, how it ended */
  note: string;
}

export interface UiJob {
  id: string;
  status: string;
  type: "single" | "loop";
  to: string;
  agent: string | null;
  from: string | null;
  reviewer: string | null;
  iteration: number;
  max_iterations: number | null;
  created_at: string;
  updated_at: string;
  /** in a team: the host its agent runs on (after the @ of its session, else this host); null otherwise */
  host: string | null;
  /** a job delivered to another machine: its newest delivery and how far it got (from the journal) */
  delivery: DeliveryState | null;
  /** a job waiting its turn (docs/jobs.md#the-queue): its place in its line; null otherwise */
  position: number | null;
  /** the jobs it runs after (docs/jobs.md#dependencies); [] when none */
  after: string[];
  /** its place on the board */
  board: UiCard;
  task: string;
  lanes: Lane[];
  /** the axis' length in ms (0 for a job without events) */
  span: number;
  /** iteration boundaries: x where iteration n begins (n ≥ 2) */
  marks: { iteration: number; x: number }[];
  events: UiEvent[];
  /** its tokens and dollars, per session and per loop iteration (docs/cost.md) */
  usage: JobUsageView;
  budget_usd: number | null;
  max_tokens: number | null;
}

export interface UiDaemon {
  running: boolean;
  pid: number | null;
  mode: string;
  since: string | null;
  broker: string | null;
  log: string | null;
  /** the log's last lines */
  recent: string[];
  /** how many log lines say an event was dropped (bad signature, unknown job, …) */
  dropped: number;
}

export interface UiState {
  workspace: string;
  registry: string;
  actions: boolean;
  generated_at: string;
  sessions: UiSession[];
  /** what the team spends per hour (the last hour's usage of every session) */
  rate: TeamRate;
  /** what needs a person now, most urgent first (mam status --needs-me) */
  needs: NeedItem[];
  jobs: UiJob[];
  /** the board's columns in their order (each job's board.column is one of them) */
  board_columns: readonly Column[];
  daemon: UiDaemon;
  /** null: this machine is in no team (the page shows no fleet) */
  fleet: UiRoster | null;
  /** the workspace's schedules (job submit --at / --every), newest first */
  schedules: UiSchedule[];
  /** a problem reading part of the state (the rest is still shown) */
  problems: string[];
}

const tone = (live: string) => ((LIVE_ORDER as readonly string[]).includes(live) ? live : "unknown");

/** the team, blocked first, then working, idle, …; by name within a state */
export function teamView(sessions: readonly StatusLine[]): UiSession[] {
  const rank = (s: StatusLine) => LIVE_ORDER.indexOf(tone(s.live) as (typeof LIVE_ORDER)[number]);
  return sessions.map((s) => ({ ...s, tone: tone(s.live) })).sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
}

/**
 * the lane of an event: the reviewer's reports, mam's and the monitor's own (another host's mam
 * too: `mam@HOST` journals a delivery's stages), else the worker's
 */
export function laneOf(ev: Pick<JobEvent, "source">, rec: Pick<JobRecord, "reviewer_session" | "type">): Lane {
  if (rec.type === "loop" && rec.reviewer_session && ev.source === rec.reviewer_session) return "reviewer";
  if (ev.source === "mam" || ev.source === "monitor" || ev.source.startsWith("mam@")) return "mam";
  return "worker";
}

const oneLine = (s: string, max: number) => {
  const t = s.replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};

/**
 * positions on [0, 1]: proportional to time, but never closer than `gap` to the previous one
 * (journal times have one-second resolution; a loop's hand-ins often share a second)
 */
export function spread(times: readonly number[], gap = 0.06): number[] {
  if (times.length === 0) return [];
  const t0 = times[0]!;
  const span = Math.max(1, times[times.length - 1]! - t0);
  const xs: number[] = [];
  for (const t of times) {
    const want = (t - t0) / span;
    xs.push(xs.length ? Math.max(want, xs[xs.length - 1]! + gap) : want);
  }
  const max = xs[xs.length - 1]!;
  return max > 1 ? xs.map((x) => x / max) : xs;
}

/** the host a session runs on: the part after its @, else this host (undefined: in no team, not said) */
function hostOf(session: string, localHost: string | undefined): string | null {
  const at = session.lastIndexOf("@");
  return at >= 0 ? session.slice(at + 1) : (localHost ?? null);
}

/**
 * a job's card on the board: `held` is what it waits for when it runs after jobs that have not
 * ended (lib/ops/job/queue.ts heldFor), as `mam status --jobs` reads it; events in journal order
 */
export function boardCard(rec: JobRecord, events: readonly JobEvent[], status: JobStatus, held: string | undefined): UiCard {
  const { column, who, since, note } = cardOf(rec, events, status, held);
  return { column, who, since, note };
}

/**
 * one job with its timeline, its usage at these prices and its card on the board; `localHost`:
 * this host's name when this machine is in a team; `held`: as boardCard's
 */
export function jobViewModel(rec: JobRecord, events: readonly JobEvent[], localHost?: string, prices: PriceTable = shippedPrices(), held?: string): UiJob {
  const sorted = [...events].sort((a, b) => a.seq - b.seq);
  const created = Date.parse(rec.created_at);
  const times = sorted.map((e) => Date.parse(e.timestamp));
  const t0 = Number.isFinite(created) ? Math.min(created, ...times.filter(Number.isFinite)) : (times[0] ?? 0);
  const rel = times.map((t) => (Number.isFinite(t) ? Math.max(0, t - t0) : 0));
  // keep the time order even when a clock went backwards
  for (let i = 1; i < rel.length; i++) rel[i] = Math.max(rel[i]!, rel[i - 1]!);
  const xs = spread(rel);
  let iteration = 1;
  const marks: UiJob["marks"] = [];
  const out: UiEvent[] = sorted.map((e, i) => {
    const it = typeof e.data?.iteration === "number" ? e.data.iteration : undefined;
    if (it !== undefined && it > iteration) {
      iteration = it;
      marks.push({ iteration, x: xs[i]! });
    }
    const { hmac_sig: _s, ...data } = e.data ?? {};
    return {
      seq: e.seq,
      event: e.event,
      timestamp: e.timestamp,
      at: rel[i]!,
      x: xs[i]!,
      lane: laneOf(e, rec),
      source: e.source,
      detail: e.detail,
      iteration,
      data: Object.keys(data).length ? JSON.stringify(data) : "",
    };
  });
  const lanes: Lane[] = rec.type === "loop" ? ["worker", "reviewer", "mam"] : ["worker", "mam"];
  const status = effectiveStatus(rec, sorted);
  return {
    id: rec.job_id,
    status,
    type: rec.type,
    to: rec.agent_session,
    agent: rec.agent,
    from: rec.delegator,
    reviewer: rec.reviewer_session,
    iteration: rec.iteration,
    max_iterations: rec.max_iterations,
    created_at: rec.created_at,
    updated_at: rec.updated_at,
    host: hostOf(rec.agent_session, localHost),
    delivery: latestDelivery(sorted) ?? null,
    position: null,
    after: rec.after ?? [],
    board: boardCard(rec, sorted, status, held),
    task: rec.brief_file !== undefined ? `brief ${rec.brief_file}` : oneLine(rec.prompt ?? "", 300),
    lanes,
    span: rel.length ? rel[rel.length - 1]! : 0,
    marks,
    events: out,
    usage: jobUsageView(rec, sorted, prices),
    budget_usd: rec.budget_usd ?? null,
    max_tokens: rec.max_tokens ?? null,
  };
}

/** newest first */
export function jobsView(jobs: readonly UiJob[]): UiJob[] {
  return [...jobs].sort((a, b) => (a.created_at === b.created_at ? b.id.localeCompare(a.id) : a.created_at < b.created_at ? 1 : -1));
}

export const DROPPED = /dropped event|HMAC verify failed/;

/** the daemon panel from `mam daemon status` data and the log's text */
export function daemonView(status: { pid: number | null; mode: string; since: string | null; broker: string | null; log: string | null } | undefined, logText: string, keep = 30): UiDaemon {
  const lines = logText.split("\n").filter((l) => l.trim() !== "");
  return {
    running: status !== undefined,
    pid: status?.pid ?? null,
    mode: status?.mode ?? "not running",
    since: status?.since ?? null,
    broker: status?.broker ?? null,
    log: status?.log ?? null,
    recent: lines.slice(-keep),
    dropped: lines.filter((l) => DROPPED.test(l)).length,
  };
}

/**
 * The fleet as the page gets it: `mam status --fleet --json`'s document, with when the broker was
 * last read. Before the first read has come back, reachable is null and only this workspace is
 * in it (the page says the broker is being read).
 */
export interface UiRoster extends Omit<RosterDoc, "reachable" | "warnings"> {
  reachable: boolean | null;
  /** ISO time of the last read of the broker that came back (answered or not); null before */
  read_at: string | null;
  /** the document's notices as the page shows them (the broker that does not answer, …) */
  warnings: string[];
}

export function rosterView(doc: RosterDoc, readAt: string | null): UiRoster {
  return { ...doc, reachable: readAt === null ? null : doc.reachable, read_at: readAt, warnings: doc.warnings.map((n) => n.text) };
}

/** a schedule as the page shows it: what it submits, to whom, when next, how often, its runs */
export interface UiSchedule {
  id: string;
  /** the agent or `role R` its jobs go to */
  to: string;
  /** the prompt (or `brief: FILE`), as given */
  what: string;
  /** ISO time of the next run; null once it ended */
  next_at: string | null;
  every_s: number | null;
  runs: number;
  /** the job of its last run */
  last_job: string | null;
  /** why it ended, when it did */
  ended: string | null;
}

export function scheduleView(s: Schedule): UiSchedule {
  const j = s.job as { to?: string; to_role?: string; prompt?: string; brief_file?: string };
  const last = s.runs.at(-1) as { job_id?: string } | undefined;
  return {
    id: s.schedule_id,
    to: j.to ?? (j.to_role ? `role ${j.to_role}` : "-"),
    what: j.prompt ?? (j.brief_file ? `brief: ${j.brief_file}` : ""),
    next_at: s.next_at === null ? null : new Date(s.next_at * 1000).toISOString(),
    every_s: s.every_s,
    runs: s.runs.length,
    last_job: last?.job_id ?? null,
    ended: s.ended ? s.ended.why : null,
  };
}
