// The "leave it" view (issue 34 item 5; docs/unattended.md#a-leave-it-view), pure: per agent, the
// one short reason it is not working (or what it works on), and the list of what needs a person
// now, most urgent first. Both are decided here from what `mam status` already computed (LIVE, the
// row's limit and restart state, the blocked agent's question, its daily cap) plus the merge
// queue's stuck entries and the jobs waiting for an agent that is limited with no reset known;
// the front doors only render them (lib/ops/session/status.ts, the dashboard).
import { limitedWords } from "../../agents/limits.ts";
import type { LimitBlock } from "../../registry/types.ts";
import { isoUtc } from "../../sys/time.ts";
import type { Question } from "../../agents/screen/question.ts";

export type WhyKind = "idle" | "working" | "limited" | "blocked" | "restarting" | "gave_up" | "over_budget" | "dead" | "stopped" | "ended" | "unreachable" | "unknown";

/** why an agent does what it does, in a few words: "at its prompt, no job", "limited until 15:30" */
export interface Why {
  kind: WhyKind;
  text: string;
}

/** what whyNot reads of a status line */
export interface WhyInput {
  name: string;
  status: string;
  live: string;
  job: { id: string; status: string } | null;
  reason?: string;
  dialog?: string;
  question?: Pick<Question, "title" | "subject" | "fingerprint">;
  limit?: Pick<LimitBlock, "resets_at" | "since">;
  restart?: string;
  /** over its daily cap today: the detail ("went over its daily cap: $2.10 of $2.00 (UTC day …)") */
  over_budget?: string;
  mux?: string;
  server?: string;
  pane?: string | null;
}

const LIVE_JOB = new Set(["pending", "running"]);
const short = (s: string, n = 80) => {
  const t = s.replace(/\s+/g, " ").trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
};

/** "blocked on a permission prompt: touch x", "blocked at its start dialog (Do you trust …)" */
function blockedWhy(s: WhyInput): string {
  if (s.dialog === "start") return `blocked at its start dialog${s.reason ? ` (${short(s.reason)})` : ""}`;
  if (s.question) return `blocked on a permission prompt: ${short(s.question.subject || s.question.title)}`;
  if (s.dialog === "permission") return `blocked on a permission prompt${s.reason ? ` (${short(s.reason)})` : ""}`;
  if (s.dialog === "limit") return `blocked at its usage limit's menu${s.reason ? ` (${short(s.reason)})` : ""}`;
  return `blocked on a dialog${s.reason ? ` (${short(s.reason)})` : ""}`;
}

/**
 * The one reason, first match wins: a row that is not running (stopped; dead and restarting;
 * gave up restarting; ended), then for a running one: its agent gone, its server unreachable, a
 * dialog (a limit's own menu counts as the limit), the limit, at work (on its job), over its daily
 * budget, at its prompt, unknown. `now`: ms, for the reset time's words.
 */
export function whyNot(s: WhyInput, now: number): Why {
  if (s.status === "stopped") return { kind: "stopped", text: "stopped" };
  if (s.status !== "running") {
    if (s.restart === "gave up restarting") return { kind: "gave_up", text: "gave up restarting" };
    if (s.restart) return { kind: "restarting", text: `dead, ${s.restart}` };
    return { kind: "ended", text: s.status };
  }
  if (s.live === "dead") return { kind: "dead", text: "dead: its agent has exited" };
  if (s.live === "unreachable") return { kind: "unreachable", text: "its server does not answer" };
  if (s.live === "blocked" && !(s.dialog === "limit" && s.limit)) return { kind: "blocked", text: blockedWhy(s) };
  if (s.limit) return { kind: "limited", text: limitedWords(s.limit.resets_at, now) };
  const job = s.job && LIVE_JOB.has(s.job.status) ? s.job : null;
  if (s.live === "working") return { kind: "working", text: job ? `working on job ${job.id}` : "working" };
  if (s.over_budget) return { kind: "over_budget", text: "over its daily budget (no job until 00:00 UTC)" };
  if (s.live === "idle") return { kind: "idle", text: job ? `at its prompt (job ${job.id} is ${job.status})` : "at its prompt, no job" };
  return { kind: "unknown", text: job ? `state unknown (job ${job.id} is ${job.status})` : "state unknown" };
}

// ---- what needs a person ---------------------------------------------------------------------

export type NeedKind = "permission" | "start_dialog" | "dialog" | "gave_up" | "job_waits" | "over_budget" | "merge_dirty" | "merge_dropped";

/** one thing a person has to do: what, the session or job, since when (ISO UTC), the command or step that acts on it */
export interface NeedItem {
  kind: NeedKind;
  what: string;
  session?: string;
  job?: string;
  since?: string;
  act: string;
  /** a permission prompt: the command that answers no */
  deny?: string;
}

/** a merge queue entry a person has to look at (lib/ops/job/merge-plan.ts stuckMerges) */
export interface StuckMerge {
  job_id: string;
  branch: string;
  target: string;
  /** dirty: it waits for the target's checkout to be clean; dropped: mam gave up on it */
  stuck: "dirty" | "dropped";
  note: string;
  /** epoch seconds */
  since: number;
}

/** a job waiting its turn: for one agent (to), or for a free agent of a role (a pool job) */
export interface WaitingJob {
  job_id: string;
  to: string | null;
  role: string | null;
  /** epoch seconds */
  since: number;
}

export interface NeedsInput {
  sessions: readonly (WhyInput & { role?: string | null })[];
  merges?: readonly StuckMerge[];
  waits?: readonly WaitingJob[];
}

/** most urgent first: an agent held at a dialog now, one that stays dead, work that cannot move, then the merge queue */
const RANK: Record<NeedKind, number> = { permission: 0, start_dialog: 1, dialog: 2, gave_up: 3, job_waits: 4, over_budget: 5, merge_dirty: 6, merge_dropped: 7 };

/** how a person gets to the pane to answer a dialog there */
function paneHint(s: WhyInput): string {
  if (s.mux === "tmux" && s.server) return `tmux -L ${s.server} attach -t ${s.name}`;
  return `herdr --session ${s.server ?? "?"}, pane ${s.pane ?? "?"}`;
}

function sessionNeed(s: WhyInput): NeedItem | undefined {
  if (s.status === "running" && s.live === "blocked" && !(s.dialog === "limit" && s.limit)) {
    if (s.question) {
      const answer = `mam approve ${s.name} --fingerprint ${s.question.fingerprint}`;
      return { kind: "permission", what: `${s.name} asks: ${short(`${s.question.title}: ${s.question.subject}`)}`, session: s.name, act: answer, deny: `${answer} --deny` };
    }
    if (s.dialog === "start") return { kind: "start_dialog", what: `${s.name} waits at its start dialog${s.reason ? ` (${short(s.reason)})` : ""}`, session: s.name, act: `answer it in its pane: ${paneHint(s)}` };
    return { kind: "dialog", what: `${s.name} is ${blockedWhy(s)}`, session: s.name, act: `answer it in its pane: ${paneHint(s)}` };
  }
  if (s.status !== "running" && s.restart === "gave up restarting") {
    return { kind: "gave_up", what: `${s.name} kept dying: mam gave up restarting it`, session: s.name, act: `see why in its pane's last output, then: mam resume ${s.name}` };
  }
  if (s.status === "running" && s.over_budget) {
    return { kind: "over_budget", what: `${s.name} ${short(s.over_budget, 120)}`, session: s.name, act: "it takes no job until 00:00 UTC; to go on now, send its jobs to another agent" };
  }
  return undefined;
}

/** an agent a job waits for that will not come back by itself: limited, and its reset unknown */
const stuckLimited = (s: WhyInput) => s.status === "running" && s.limit !== undefined && s.limit.resets_at === null;

function waitNeed(w: WaitingJob, sessions: NeedsInput["sessions"]): NeedItem | undefined {
  const since = isoUtc(Math.floor(w.since));
  if (w.to !== null) {
    const s = sessions.find((x) => x.name === w.to);
    if (!s || !stuckLimited(s)) return undefined;
    return { kind: "job_waits", what: `job ${w.job_id} waits for ${s.name}, limited with no reset known`, session: s.name, job: w.job_id, since, act: `try it now: mam resume --limited ${s.name} (else mam job cancel ${w.job_id} and send it to another agent)` };
  }
  const pool = sessions.filter((x) => x.status === "running" && x.role === w.role);
  if (pool.length === 0 || !pool.every(stuckLimited)) return undefined;
  return { kind: "job_waits", what: `job ${w.job_id} waits for a free ${w.role}: every ${w.role} is limited with no reset known`, job: w.job_id, since, act: `try them now: mam resume --limited (else add one: mam create --role ${w.role} …)` };
}

function mergeNeed(m: StuckMerge): NeedItem {
  const since = isoUtc(m.since);
  if (m.stuck === "dirty") return { kind: "merge_dirty", what: `the merge of job ${m.job_id} (${m.branch} → ${m.target}) waits: ${short(m.note, 160)}`, job: m.job_id, since, act: `commit or stash the changes there; the queue tries again (mam merge status)` };
  return { kind: "merge_dropped", what: `the merge of job ${m.job_id} (${m.branch} → ${m.target}) was dropped: ${short(m.note, 160)}`, job: m.job_id, since, act: `merge ${m.branch} by hand, or queue it again: mam merge enqueue ${m.job_id}` };
}

/** what needs a person now, most urgent first; within a kind, the oldest first, then by session or job (stable) */
export function needsMe(i: NeedsInput): NeedItem[] {
  const items = [
    ...i.sessions.flatMap((s) => sessionNeed(s) ?? []),
    ...(i.waits ?? []).flatMap((w) => waitNeed(w, i.sessions) ?? []),
    ...(i.merges ?? []).map(mergeNeed),
  ];
  const key = (n: NeedItem) => `${n.session ?? ""}\u0000${n.job ?? ""}`;
  return items.sort((a, b) => RANK[a.kind] - RANK[b.kind] || (a.since ?? "\uffff").localeCompare(b.since ?? "\uffff") || key(a).localeCompare(key(b)));
}

/** do any of these sessions make a look at the job queue worth it (an agent limited with no reset known)? */
export const waitsMatter = (sessions: readonly WhyInput[]): boolean => sessions.some(stuckLimited);
