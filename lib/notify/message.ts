// What a notification says (pure): built from what happened (a job's event, a host's presence),
// and how each sink carries it — a desktop notification's title and body, a webhook's JSON body in
// mam's own shape or ntfy's or Slack's, a command's environment. A notification about a dialog
// names the exact `mam approve` commands that answer it (on the host that can: the agent's) and,
// when mam ui runs for the workspace, the dashboard's link to the agent.
import { isValidName } from "../sys/names.ts";
import type { NotifyKind, WebhookFormat } from "./config.ts";

/** the part of a dialog's question a notification carries (lib/agents/screen/question.ts) */
export interface AskedQuestion {
  title: string;
  subject: string;
  question: string;
  fingerprint: string;
  choices: { n: number; label: string; key: string; role: string }[];
}

export interface Notification {
  kind: NotifyKind | "test";
  /** its identity: the same key is sent once */
  key: string;
  title: string;
  /** the body, one fact a line */
  text: string;
  workspace: string;
  /** this machine's name (MAM_HOST, else the hostname) */
  host: string;
  at: string;
  job_id?: string;
  session?: string;
  /** ended: the job's final status */
  status?: string;
  question?: AskedQuestion;
  /** dialog: the commands that answer it, and where to run them */
  approve?: string;
  deny?: string;
  /** the dashboard's link to the agent, when mam ui runs for the workspace */
  dashboard?: string;
}

/** where and when a notification is from: the fields of Where every notification carries */
const placeOf = (w: Where) => ({ workspace: w.workspace, host: w.host, at: w.at });

export interface Where {
  workspace: string;
  host: string;
  /** the dashboard's link to an agent (undefined: no mam ui runs) */
  dashboard?: (session: string) => string | undefined;
  /** now, ISO */
  at: string;
}

const oneLine = (s: string, max = 300) => {
  const t = s.replace(/\s+/g, " ").trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
};

/** a quoted word for a shell command line, only where it needs quotes */
export const sh = (s: string) => (/^[A-Za-z0-9_./:@%+=,-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`);

/** a dialog's fingerprint as question.ts makes it: 16 lowercase hex digits */
export const FINGERPRINT_RE = /^[0-9a-f]{16}$/;

/**
 * the question a notification may carry, from an event's data (unchecked: it came from a journal):
 * its texts, a fingerprint that is one (else no question: the approve line names none), and
 * well-formed choices
 */
export function askedOf(v: unknown): AskedQuestion | undefined {
  const q = v as Partial<AskedQuestion> | undefined;
  if (!q || typeof q !== "object" || typeof q.fingerprint !== "string" || !FINGERPRINT_RE.test(q.fingerprint)) return undefined;
  if (typeof q.title !== "string" || typeof q.subject !== "string" || typeof q.question !== "string" || !Array.isArray(q.choices)) return undefined;
  const choices = q.choices.filter((c) => c && typeof c === "object" && Number.isSafeInteger(c.n) && typeof c.label === "string" && typeof c.key === "string" && typeof c.role === "string");
  if (choices.length !== q.choices.length) return undefined;
  return { title: q.title, subject: q.subject, question: q.question, fingerprint: q.fingerprint, choices: choices.map((c) => ({ n: c.n, label: c.label, key: c.key, role: c.role })) };
}

/** the question's line: "Bash command: touch x — Do you want to proceed?" */
const asks = (q: AskedQuestion) => (q.title === q.question ? `${q.question} ${q.subject.split("\n")[0]}` : `${q.title}: ${q.subject.split("\n")[0]} — ${q.question}`);

/**
 * an agent waits at a dialog (a job's `permission_required`): what it asks, and the commands that
 * answer it — run where the agent is (`agentHost`: another host of the team, else this one)
 */
export function dialogNotice(
  w: Where,
  o: { job_id: string; session: string; detail: string; question?: AskedQuestion; agentHost?: string; seq: number },
): Notification {
  // every word of the command lines is checked or quoted: they are run as given (over ssh)
  const q = o.question && FINGERPRINT_RE.test(o.question.fingerprint) ? o.question : undefined;
  const host = o.agentHost && o.agentHost !== w.host ? (isValidName(o.agentHost) ? o.agentHost : "its host") : undefined;
  const on = host ? `on ${sh(host)}: ` : "";
  const base = ["mam", "approve", o.job_id, ...(q ? ["--fingerprint", q.fingerprint] : []), ...(on ? [] : ["--workspace", w.workspace])].map(sh).join(" ");
  const dashboard = on ? undefined : w.dashboard?.(o.session);
  const lines = [
    q ? asks(q) : oneLine(o.detail),
    ...(q ? [`choices: ${q.choices.map((c) => `${c.n} ${c.label}${c.role === "always" ? " (always)" : ""}`).join(" · ")}`] : []),
    `approve: ${on}${base}`,
    `deny:    ${on}${base} --deny`,
    ...(dashboard ? [`dashboard: ${dashboard}`] : []),
  ];
  return {
    kind: "dialog",
    key: `dialog:${o.job_id}:${q?.fingerprint ?? `#${o.seq}`}`,
    title: `mam: ${o.session} waits for you (job ${o.job_id})`,
    text: lines.join("\n"),
    ...placeOf(w),
    job_id: o.job_id,
    session: o.session,
    ...(q ? { question: q } : {}),
    approve: `${on}${base}`,
    deny: `${on}${base} --deny`,
    ...(dashboard ? { dashboard } : {}),
  };
}

/** a job ended: completed, error, timeout, cancelled, or over its budget (budget_exceeded) */
export function endedNotice(w: Where, o: { job_id: string; session: string; status: string; detail: string }): Notification {
  const dashboard = w.dashboard?.(o.session);
  return {
    kind: "ended",
    key: `ended:${o.job_id}`,
    title: `mam: job ${o.job_id} ${o.status} (${o.session})`,
    text: [oneLine(o.detail) || o.status, ...(dashboard ? [`dashboard: ${dashboard}`] : [])].join("\n"),
    ...placeOf(w),
    job_id: o.job_id,
    session: o.session,
    status: o.status,
    ...(dashboard ? { dashboard } : {}),
  };
}

/** a job has waited in the queue longer than the user's MAM_NOTIFY_QUEUED_MIN (once per job) */
export function queuedNotice(w: Where, o: { job_id: string; session: string; minutes: number }): Notification {
  return {
    kind: "queued",
    key: `queued:${o.job_id}`,
    title: `mam: job ${o.job_id} has waited ${o.minutes} min in the queue (${o.session})`,
    text: `its agent has not been free for ${o.minutes} minutes; mam job list shows the queue`,
    ...placeOf(w),
    job_id: o.job_id,
    session: o.session,
  };
}

/**
 * an agent went to a usage or rate limit (`resets_at` ISO, null: unknown), or back from it
 * (`lifted`); `since` (its limit's start) keys it: one notification per transition
 */
export function limitedNotice(w: Where, o: { session: string; since: string; resets_at: string | null; reason: string; lifted?: string; job_id?: string }): Notification {
  const until = o.resets_at === null ? "its reset time is unknown" : `it resets at ${o.resets_at}`;
  return {
    kind: "limited",
    key: `${o.lifted ? "unlimited" : "limited"}:${o.session}:${o.since}`,
    title: o.lifted ? `mam: ${o.session} is no longer limited` : `mam: ${o.session} is limited${o.resets_at === null ? " (reset unknown)" : ` until ${o.resets_at}`}`,
    text: (o.lifted
      ? [oneLine(o.lifted), o.job_id ? `its job ${o.job_id} can go on` : ""]
      : [oneLine(o.reason), until, o.job_id ? `its job ${o.job_id} waits; jobs queued for it stay queued` : "jobs queued for it stay queued", `mam status --workspace ${sh(w.workspace)}`]
    )
      .filter((l) => l !== "")
      .join("\n"),
    ...placeOf(w),
    session: o.session,
    ...(o.job_id ? { job_id: o.job_id } : {}),
  };
}

/**
 * the daemon gave up restarting an agent (created with --restart on-failure): it died again after
 * `max` restarts within an hour; it stays terminated (once per give-up: `since` is when)
 */
export function gaveUpNotice(w: Where, o: { session: string; max: number; why: string; since: number; job_id?: string }): Notification {
  return {
    kind: "gave_up",
    key: `gave_up:${o.session}:${o.since}`,
    title: `mam: gave up restarting ${o.session}${o.job_id ? ` (job ${o.job_id})` : ""}`,
    text: [
      `it died ${o.max + 1} times within an hour (${o.max} restart${o.max === 1 ? "" : "s"} allowed); last: ${oneLine(o.why)}`,
      o.job_id ? `job ${o.job_id} ends in error` : "",
      `start it again when it is fixed: mam resume ${sh(o.session)} --workspace ${sh(w.workspace)}`,
    ]
      .filter((l) => l !== "")
      .join("\n"),
    ...placeOf(w),
    session: o.session,
    ...(o.job_id ? { job_id: o.job_id } : {}),
  };
}

/** an agent died: its pane is gone, or its program exited (while its job ran, when `job_id`) */
/** `fresh`: its kind keeps no conversation to resume (demo, shell, aider): the command says --fresh */
export function diedNotice(w: Where, o: { session: string; job_id?: string; why: string; since: number; fresh?: boolean }): Notification {
  return {
    kind: "died",
    key: `died:${o.session}:${o.since}`,
    title: `mam: ${o.session} died${o.job_id ? ` (job ${o.job_id})` : ""}`,
    text: [oneLine(o.why), o.job_id ? `job ${o.job_id} ended in error` : "", `start it again: mam resume ${sh(o.session)}${o.fresh ? " --fresh" : ""} --workspace ${sh(w.workspace)}`].filter((l) => l !== "").join("\n"),
    ...placeOf(w),
    session: o.session,
    ...(o.job_id ? { job_id: o.job_id } : {}),
  };
}

/** a host of the team went offline (every workspace daemon it had said goodbye, or its connection dropped) */
export function offlineNotice(w: Where, o: { team: string; host: string; since: number; workspaces: number }): Notification {
  return {
    kind: "offline",
    key: `offline:${o.team}:${o.host}:${o.since}`,
    title: `mam: host ${o.host} went offline (team ${o.team})`,
    text: [
      `the daemon${o.workspaces === 1 ? "" : "s"} of its ${o.workspaces} workspace${o.workspaces === 1 ? "" : "s"} went offline at ${new Date(o.since).toISOString()}`,
      "jobs for its agents wait on the broker until it is back",
    ].join("\n"),
    ...placeOf(w),
  };
}

/** a notification to try a sink */
export function testNotice(w: Where): Notification {
  return { kind: "test", key: `test:${w.at}`, title: "mam: a test notification", text: `from ${w.host}, workspace ${w.workspace}`, ...placeOf(w) };
}

const NTFY_TAGS: Record<Notification["kind"], string[]> = { dialog: ["warning"], ended: ["checkered_flag"], died: ["skull"], offline: ["electric_plug"], queued: ["hourglass"], limited: ["stopwatch"], gave_up: ["skull"], test: ["bell"] };

/**
 * the body a webhook POSTs: mam's own JSON (`source: "mam"` and every field), ntfy's JSON
 * publishing (topic = the URL's last path segment, posted to the server's root), or Slack's
 * incoming-webhook `{text}`; and where it goes
 */
export function webhookRequest(url: string, format: WebhookFormat, n: Notification): { url: string; body: unknown } {
  if (format === "slack") return { url, body: { text: `*${n.title}*\n${n.text}` } };
  if (format === "ntfy") {
    const u = new URL(url);
    const parts = u.pathname.split("/").filter((p) => p !== "");
    const topic = parts.pop() ?? "";
    u.pathname = `/${parts.join("/")}`;
    return { url: u.toString(), body: { topic, title: n.title, message: n.text, tags: NTFY_TAGS[n.kind], priority: n.kind === "dialog" || n.kind === "died" || n.kind === "gave_up" ? 4 : 3 } };
  }
  return { url, body: { source: "mam", ...n } };
}

/** the environment a command sink gets: the notification's fields, besides it as JSON on stdin */
export function commandEnv(n: Notification): Record<string, string> {
  return {
    MAM_NOTIFY_KIND: n.kind,
    MAM_NOTIFY_TITLE: n.title,
    MAM_NOTIFY_TEXT: n.text,
    MAM_NOTIFY_WORKSPACE: n.workspace,
    ...(n.job_id ? { MAM_NOTIFY_JOB: n.job_id } : {}),
    ...(n.session ? { MAM_NOTIFY_SESSION: n.session } : {}),
    ...(n.approve ? { MAM_NOTIFY_APPROVE: n.approve } : {}),
  };
}
