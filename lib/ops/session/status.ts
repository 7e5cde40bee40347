// mam status: the registry next to the multiplexers' view of it (SPEC §5.5). Read-only.
import type { LimitBlock, Row } from "../../registry/types.ts";
import { limitedWords, usedWords } from "../../agents/limits.ts";
import { choicesLine, type Question, questionLine } from "../../agents/screen/question.ts";
import type { Observation } from "./observe.ts";
import { paint, table } from "../../sys/io.ts";
import { visible } from "../../sys/sanitize.ts";
import { rowAgent } from "../../fleet/rows.ts";
import { restartState } from "../../fleet/restart.ts";
import type { SessionCost } from "../../cost/summary.ts";
import { shortCost } from "../../cost/view.ts";
import { type NeedItem, type Why, whyNot } from "./why.ts";

export interface JobRef {
  id: string;
  status: string;
  /** more jobs waiting their turn for this session (docs/jobs.md#the-queue) */
  queued?: number;
}

/** a session's git worktree (issue 18); counts against the workspace's HEAD, null when unknown */
export interface WorktreeStatus {
  path: string;
  branch: string;
  base: string;
  exists: boolean;
  ahead: number | null;
  behind: number | null;
  changed: number | null;
}

export interface StatusLine {
  name: string;
  agent: string | null;
  role: string | null;
  status: string;
  live: string;
  /** blocked: the dialog's one-line question */
  reason?: string;
  /** blocked: a start dialog (trust, sign-in) or a permission prompt */
  dialog?: string;
  /** blocked at a permission dialog mam can read: what it asks, its choices and their keys, its fingerprint */
  question?: Question;
  /** tmux: where a known LIVE came from: screen (mam's detector) or hook (the agent's report); absent otherwise */
  live_source?: string;
  mux: string;
  server: string;
  pane: string | null;
  job: JobRef | null;
  drift: string[];
  /** only on rows with a worktree */
  worktree?: WorktreeStatus;
  /** its usage: its part of its job, today (UTC), in all (docs/cost.md); absent when not asked for */
  usage?: SessionCost;
  /** at a usage or rate limit (docs/unattended.md: the daemon writes it on the row); absent: not limited */
  limit?: LimitBlock;
  /**
   * created with --restart on-failure, once it died: "restarting (2/3 this hour)" or "gave up
   * restarting" (lib/fleet/restart.ts); absent otherwise
   */
  restart?: string;
  /** its sandbox, "bwrap, net model" (docs/sandbox.md); absent: none */
  sandbox?: string;
  /** over its daily cap (create --daily-budget-usd, --daily-max-tokens) today: what went over; absent otherwise */
  over_budget?: string;
  /** why it is not working, or what it works on, in a few words (./why.ts whyNot) */
  why: Why;
}

export interface StatusDoc {
  workspace: string;
  registry: string;
  sessions: StatusLine[];
  /** what needs a person now, most urgent first (./why.ts needsMe); absent where nobody asked (the team's presence) */
  needs?: NeedItem[];
}

export function statusDoc(
  ws: string,
  registry: string,
  obs: Observation,
  jobOf: (row: Row) => JobRef | null,
  worktreeOf: (row: Row) => WorktreeStatus | undefined = () => undefined,
  usageOf: (row: Row, job: JobRef | null) => SessionCost | undefined = () => undefined,
  now: number = Math.floor(Date.now() / 1000),
  capOf: (row: Row) => string | undefined = () => undefined,
): StatusDoc {
  return {
    workspace: ws,
    registry,
    sessions: obs.rows.map((v) => {
      const job = jobOf(v.row);
      const usage = usageOf(v.row, job);
      const restart = restartState(v.row, now);
      const over = v.row.status === "running" ? capOf(v.row) : undefined;
      const line: Omit<StatusLine, "why"> = {
        name: v.row.name,
        agent: rowAgent(v.row) ?? null,
        role: typeof v.row.role === "string" ? v.row.role : null,
        status: v.row.status,
        live: v.live,
        ...blockedFields(v.live === "blocked" ? v.pane : undefined, v.pane ? obs.questions?.get(v.pane) : undefined),
        ...(v.pane?.liveSource ? { live_source: v.pane.liveSource } : {}),
        mux: v.backend,
        server: v.server,
        pane: v.pane?.id ?? (typeof v.row.pane?.id === "string" ? v.row.pane.id : null),
        job,
        drift: [...new Set(v.drifts.map((d) => d.kind))],
        ...withWorktree(worktreeOf(v.row)),
        ...(usage ? { usage } : {}),
        ...(v.row.status === "running" && v.row.limit ? { limit: v.row.limit } : {}),
        ...(restart ? { restart } : {}),
        ...(over ? { over_budget: over } : {}),
        ...sandboxField(v.row),
      };
      return { ...line, why: whyNot(line, now * 1000) };
    }),
  };
}

/** a sandboxed row's sandbox in a few words (a malformed one says so: resume refuses it) */
function sandboxField(row: Row): Pick<StatusLine, "sandbox"> {
  if (row.sandbox === undefined) return {};
  const s = row.sandbox as { mode?: unknown; net?: unknown };
  return { sandbox: s && s.mode === "bwrap" && typeof s.net === "string" ? `bwrap, net ${s.net}` : "malformed" };
}

/** a session's cost in one cell: this job / today / total (`-` for no job, `?` unknown) */
export function costCell(u: SessionCost | undefined): string {
  if (!u || (!u.total.known && !u.today.known)) return "?";
  return `${u.job ? shortCost(u.job) : "-"}/${shortCost(u.today)}/${shortCost(u.total)}`;
}

/** a blocked row's reason, dialog and question (herdr gives no reason: the question's words then) */
function blockedFields(pane: Observation["rows"][number]["pane"], q: Question | undefined): Pick<StatusLine, "reason" | "dialog" | "question"> {
  if (!pane) return {};
  const reason = pane.reason ?? (q ? questionLine(q) : undefined);
  return { ...(reason ? { reason } : {}), ...(pane.dialog ? { dialog: pane.dialog } : q ? { dialog: "permission" } : {}), ...(q ? { question: q } : {}) };
}

const withWorktree = (w: WorktreeStatus | undefined) => (w ? { worktree: w } : {});

/** what a blocked agent waits for; for a dialog mam can read, its choices and the command that answers it */
function waitText(s: StatusLine): string {
  const head = visible(`${s.name} is blocked${s.dialog === "start" ? " at a start dialog" : ""}: ${s.reason}`);
  if (!s.question) return head;
  return [head, `  choices: ${visible(choicesLine(s.question))}`, `  answer:  mam approve ${s.name} --fingerprint ${s.question.fingerprint}   (add --deny for the no)`].join("\n");
}

/** "w1 is limited until 15:30 · 100 % (You've hit your session limit · resets 2:53am (UTC))" */
export function limitText(s: Pick<StatusLine, "name" | "limit">): string | undefined {
  if (!s.limit) return undefined;
  const used = usedWords(s.limit.used_percent);
  return `${s.name} is ${limitedWords(s.limit.resets_at)}${used ? ` · ${used} used` : ""} (${s.limit.reason}; from its ${s.limit.source})`;
}

/**
 * an agent whose state mam cannot read (LIVE unknown) with jobs queued for it: when they go
 * (issue 39 item 1; the rule is freeNow in lib/jobs/queue.ts)
 */
function unreadableText(s: StatusLine): string | undefined {
  if (s.live !== "unknown" || !s.job?.queued) return undefined;
  const jobs = s.job.queued === 1 ? "its queued job goes" : `its ${s.job.queued} queued jobs go one at a time, each`;
  return s.agent === "shell"
    ? `${s.name}: mam cannot read whether the shell is at work; ${jobs} once the job before it has ended`
    : `${s.name}: mam cannot read its state; ${jobs} once the job before it has ended and its screen has been still (MAM_QUEUE_STILL_S)`;
}

const LIVE_STYLE: Record<string, Parameters<typeof paint>[0]> = { working: "cyan", blocked: "yellow", idle: "green", dead: "red", unreachable: "red", unknown: "gray" };

/** one thing that needs you, on one line: what, then the command that acts on it */
export function needLine(n: NeedItem): string {
  return visible(`${n.what}  →  ${n.act}${n.deny ? "   (add --deny for the no)" : ""}`);
}

/** mam status --needs-me: one line each, or that nothing needs you */
export function needsText(items: readonly NeedItem[]): string {
  return items.length === 0 ? "nothing needs you" : items.map(needLine).join("\n");
}

/** "w1: at its prompt, no job": each agent's why, one line each (a running row restarted this hour says so) */
function whyLine(s: StatusLine): string {
  const restarted = s.status === "running" && s.restart?.startsWith("restarting") ? ` · ${s.restart.replace(/^restarting/, "restarted")}` : "";
  const sandbox = s.sandbox ? ` · sandbox ${s.sandbox}` : "";
  return visible(`${s.name}: ${s.why.text}${restarted}${sandbox}`);
}

export function renderStatus(doc: StatusDoc, color: boolean): string {
  if (doc.sessions.length === 0 && !doc.needs?.length) return `no agent sessions in ${doc.registry}`;
  const needs = doc.needs?.length ? `needs you now:\n${doc.needs.map((n) => `  ${needLine(n)}`).join("\n")}\n\n` : "";
  if (doc.sessions.length === 0) return `${needs}no agent sessions in ${doc.registry}`;
  // a BRANCH column only when a session has a worktree
  const branches = doc.sessions.some((s) => s.worktree);
  // a COST column (this job / today / total) when usage was asked for
  const costs = doc.sessions.some((s) => s.usage);
  // names, roles and dialog questions are others' text: shown with control characters escaped (sanitize.ts)
  const rows = doc.sessions.map((s) => [
    s.name,
    s.agent ?? "-",
    s.role ?? "-",
    s.status,
    s.live,
    s.pane ?? "-",
    s.mux === "tmux" ? `tmux:${s.server}` : s.server,
    ...(branches ? [s.worktree ? `${s.worktree.branch}${s.worktree.exists ? "" : " (gone)"}` : "-"] : []),
    s.job ? `${s.job.id}:${s.job.status}${s.job.queued ? ` +${s.job.queued} queued` : ""}` : "-",
    ...(costs ? [costCell(s.usage)] : []),
    s.drift.length ? s.drift.join(",") : "-",
  ].map(visible));
  // why each agent is not working, one line each; then what blocked and limited agents wait for
  const whys = doc.sessions.map(whyLine);
  const waits = [
    ...doc.sessions.filter((s) => s.live === "blocked" && s.reason).map(waitText),
    ...doc.sessions.flatMap((s) => limitText(s) ?? []).map(visible),
    ...doc.sessions.flatMap((s) => unreadableText(s) ?? []).map(visible),
  ];
  const text = table(["NAME", "AGENT", "ROLE", "STATUS", "LIVE", "PANE", "SERVER", ...(branches ? ["BRANCH"] : []), "JOB", ...(costs ? ["COST"] : []), "DRIFT"], rows);
  const below = (paintWait: (w: string) => string) => `\n\n${whys.join("\n")}${waits.length ? `\n\n${waits.map(paintWait).join("\n")}` : ""}`;
  if (!color) return `${needs}${text}${below((w) => w)}`;
  // colour the LIVE column only; widths were computed on plain text
  const painted = text
    .split("\n")
    .map((line, i) => {
      if (i === 0) return paint("bold", line, true);
      const live = doc.sessions[i - 1]!.live;
      return line.replace(new RegExp(`(?<=\\s)${live}(?=\\s)`), paint(LIVE_STYLE[live] ?? "gray", live, true));
    })
    .join("\n");
  return `${needs ? paint("yellow", needs, true) : ""}${painted}${below((w) => paint("yellow", w, true))}`;
}
