// Human-readable renderings of jobs and events (job status, list, logs, wait). What others wrote
// (prompts, details, sources, data, timestamps of remote events) is shown with its control
// characters escaped (visible, lib/sys/sanitize.ts): a worker's clipboard write or clear-screen
// sequence never reaches the user's terminal. --json keeps the exact text.
import { table } from "../sys/io.ts";
import { visible } from "../sys/sanitize.ts";
import type { JobEvent } from "./event.ts";
import { compact, dollars, shortCost, type UsageView, usageText } from "../cost/view.ts";
import type { CostedJobView } from "./query.ts";
import type { JobView } from "./store.ts";
import type { WaitJob } from "./wait.ts";

/** whitespace as single spaces, cut to max characters, control characters escaped */
const oneLine = (s: string, max = 200) => {
  const t = s.replace(/\s+/g, " ").trim();
  return visible(t.length > max ? `${t.slice(0, max - 1)}…` : t);
};

/** the data of an event without its signature, or "" */
export function dataText(ev: JobEvent): string {
  const { hmac_sig: _s, ...data } = ev.data ?? {};
  return Object.keys(data).length ? JSON.stringify(data) : "";
}

/** how `job logs` shows times: how long ago (default), or the UTC time stamps (--utc) */
export interface LogForm {
  utc: boolean;
  /** now, for "… ago" */
  nowMs: number;
  /** the columns' widths (default: of the lines shown; --follow fixes them, its lines come one by one) */
  widths?: LogWidths;
}

interface LogWidths {
  time: number;
  seq: number;
  event: number;
}

/** widths --follow keeps: every event name, a seq of three digits, "59m59s ago" (a UTC stamp is one width) */
export const FOLLOW_WIDTHS: LogWidths = { time: 10, seq: 4, event: 19 };

/** how long ago, to the second within the hour (events of one job are seconds apart): 7s, 4m05s, 2h13m, 3d04h */
export function agoLong(iso: string, nowMs: number): string {
  const s = Math.max(0, Math.floor((nowMs - Date.parse(iso)) / 1000));
  const two = (n: number) => String(n).padStart(2, "0");
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${two(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${two(Math.floor(s / 60) % 60)}m`;
  return `${Math.floor(s / 86400)}d${two(Math.floor(s / 3600) % 24)}h`;
}

const logTime = (ev: JobEvent, f: LogForm) => (f.utc ? ev.timestamp : `${agoLong(ev.timestamp, f.nowMs)} ago`);

/** one journal line, human readable and aligned: `<when>  #<seq>  <event>  <source>: <detail>  <data>` */
export function eventLine(ev: JobEvent, f: LogForm = { utc: true, nowMs: Date.now() }): string {
  const w = f.widths ?? { time: 0, seq: 0, event: 0 };
  const d = dataText(ev);
  const time = f.utc ? logTime(ev, f).padEnd(w.time) : logTime(ev, f).padStart(w.time);
  return visible(`${time}  ${`#${ev.seq}`.padEnd(w.seq)}  ${ev.event.padEnd(w.event)}  ${ev.source}${ev.detail ? `: ${ev.detail}` : ""}${d ? `  ${d}` : ""}`);
}

/** a journal as `job logs` prints it: one line per event, its columns aligned */
export function logText(events: JobEvent[], f: LogForm): string {
  const widths = f.widths ?? {
    time: Math.max(...events.map((e) => logTime(e, f).length)),
    seq: Math.max(...events.map((e) => `#${e.seq}`.length)),
    event: Math.max(...events.map((e) => e.event.length)),
  };
  return events.map((e) => eventLine(e, { ...f, widths })).join("\n");
}

/** a part of a job's usage in a few characters: `$0.0123 (1.2k tok)`, or `? ` */
const part = (u: UsageView) => (u.known && u.tokens ? `${u.usd !== null ? `${dollars(u.usd)} ` : ""}(${compact(u.tokens.total)} tok)` : "?");

/** the budget of a job, or - */
function budgetText(v: CostedJobView): string {
  const b = [v.budget_usd !== null ? dollars(v.budget_usd) : undefined, v.max_tokens !== null ? `${v.max_tokens.toLocaleString("en-US")} tokens` : undefined].filter(Boolean);
  return b.length ? b.join(", ") : "-";
}

/** a status, with a waiting job's place in its line */
const statusWord = (v: Pick<JobView, "status" | "position" | "waits_for">) =>
  v.status !== "queued" ? v.status : v.position !== undefined ? `queued (position ${v.position}${v.waits_for ? `: ${v.waits_for}` : ""})` : v.waits_for ? `queued (${v.waits_for})` : v.status;

export function statusText(v: CostedJobView): string {
  const task = v.brief_file !== undefined ? `brief ${v.brief_file}` : oneLine(v.prompt ?? "");
  const rows: [string, string][] = [
    ["job", v.job_id],
    ["status", statusWord(v)],
    ["type", v.type === "loop" ? `loop (reviewer ${v.reviewer_session}, iteration ${v.iteration} of ${v.max_iterations})` : "single"],
    ["to", `${v.agent_session}${v.agent ? ` (${v.agent})` : ""}`],
    ["from", v.delegator ?? "-"],
    ["task", task],
    ["expects", v.expected_artifacts.length ? v.expected_artifacts.join(", ") : "-"],
    ["created", v.created_at],
    ["updated", v.updated_at],
    ["timeouts", `${v.timeout_sec} s overall, ${v.idle_timeout_sec} s idle`],
    ["topic", `${v.topic_prefix}/events`],
    ["events", v.last_event ? `${v.events} (last: #${v.last_event.seq} ${v.last_event.event}: ${oneLine(v.last_event.detail, 120)})` : "0"],
    ["cost", usageText(v.usage)],
    ["budget", budgetText(v)],
  ];
  if (v.after !== undefined) rows.splice(5, 0, ["after", `${v.after.join(", ")}${v.after_any_end ? " (each to end, however)" : " (each to complete)"}`]);
  const sessions = Object.entries(v.usage.by_session);
  if (v.type === "loop" || sessions.length > 1) rows.push(["by agent", sessions.length ? sessions.map(([s, u]) => `${s} ${part(u)}`).join(" · ") : "-"]);
  const rounds = Object.entries(v.usage.by_iteration).sort(([a], [b]) => Number(a) - Number(b));
  if (v.type === "loop") rows.push(["by round", rounds.length ? rounds.map(([i, u]) => `${i}: ${part(u)}`).join(" · ") : "-"]);
  return rows.map(([k, val]) => `${k.padEnd(9)}${visible(val)}`).join("\n");
}

/**
 * the jobs as the graph of what runs after what (job list --tree): each job under each job it
 * runs after that is listed (a job after two is drawn under both; its own followers once, under
 * the first), the others at the top, oldest first
 */
export function treeText(views: readonly CostedJobView[]): string {
  const byId = new Map(views.map((v) => [v.job_id, v]));
  const parents = (v: CostedJobView) => (v.after ?? []).filter((id) => byId.has(id));
  const kids = new Map<string, CostedJobView[]>();
  for (const v of views) for (const p of parents(v)) (kids.get(p) ?? kids.set(p, []).get(p)!).push(v);
  const line = (v: CostedJobView) => visible(`${v.job_id}  ${statusWord(v)}  ${v.agent_session}  ${v.brief_file !== undefined ? `brief ${v.brief_file}` : oneLine(v.prompt ?? "", 50)}`);
  const out: string[] = [];
  const drawn = new Set<string>();
  const draw = (v: CostedJobView, lead: string, mark: string) => {
    const again = drawn.has(v.job_id);
    out.push(`${lead}${mark}${line(v)}${again ? "  (its followers above)" : ""}`);
    if (again) return;
    drawn.add(v.job_id);
    const next = lead + (mark === "├─ " ? "│  " : mark === "└─ " ? "   " : "");
    const ks = kids.get(v.job_id) ?? [];
    ks.forEach((k, i) => draw(k, next, i === ks.length - 1 ? "└─ " : "├─ "));
  };
  const roots = [...views].filter((v) => parents(v).length === 0).sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
  for (const r of roots) draw(r, "", "");
  // a loop (never made by mam: records edited by hand) is drawn from its oldest job
  for (const v of views) if (!drawn.has(v.job_id)) draw(v, "", "");
  return out.join("\n");
}

export function listText(views: CostedJobView[]): string {
  return table(
    ["JOB", "STATUS", "TYPE", "TO", "FROM", "CREATED", "EVENTS", "COST", "LAST"],
    views.map((v) =>
      [
        v.job_id,
        statusWord(v),
        v.type,
        v.agent_session,
        v.delegator ?? "-",
        v.created_at,
        String(v.events),
        shortCost(v.usage),
        v.last_event ? oneLine(`${v.last_event.event}: ${v.last_event.detail}`, 60) : "-",
      ].map(visible),
    ),
  );
}

export function waitLine(j: WaitJob): string {
  return `${j.job_id} ${j.status}${j.last_event && j.last_event.detail ? `: ${oneLine(j.last_event.detail)}` : ""}`;
}

/** an event as one line of progress: `job <id> <event>: <detail>` */
export const eventNote = (e: JobEvent) => visible(`job ${e.job_id} ${e.event}${e.detail ? `: ${e.detail.slice(0, 200)}` : ""}`);
