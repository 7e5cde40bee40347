// Answering an agent's permission dialog for the user (`mam approve`, the MCP tool, mam ui's
// Approve / Deny; docs/approvals.md). mam never answers a dialog on its own: this runs only when a
// person (or the lead agent the person runs) asks, and then presses the agent's own key for the
// one-time yes, the no, or the choice the user names, only while the dialog on screen is the one
// the user was shown:
//
//   1. the target: a session of this host, or a job (its agent, or its loop's reviewer);
//   2. the reference: the fingerprint the user gives, else the one question the job told about
//      since its last answer; none (or several) → refused, with what is on screen now;
//   3. under the workspace's approve lock: read the screen, read its question (question.ts), check
//      its fingerprint, press the choice's key, wait for the dialog to leave the screen;
//   4. journal `approved` / `denied` on the job (by whom, from where), publish it; after a no, tell
//      the agent at its prompt that the user said no (the agents wait for the user after a no).
//
// The lock keeps two answers apart: the second one reads the screen only after the first one's
// dialog left it, so it can never press a key into the next dialog.
import { userInfo } from "node:os";
import { join } from "node:path";
import { choicesLine, type Choice, pickChoice, type Question, questionLine } from "../../agents/screen/question.ts";
import type { Json } from "../../jobs/canonical.ts";
import { fromDaemon, type JobEvent } from "../../jobs/event.ts";
import { eventCommand } from "../../jobs/header.ts";
import { busySession } from "../../jobs/loop.ts";
import { publishJournalled } from "../../jobs/publish.ts";
import { isRemote, type SessionRef } from "../../jobs/runtime.ts";
import { isFinal } from "../../jobs/statuses.ts";
import { effectiveStatus, type JobRecord } from "../../jobs/store.ts";
import type { Mux, PaneScreen } from "../../mux/types.ts";
import { conflict, EXIT, MamError, notFound, usageError } from "../../sys/errors.ts";
import { field } from "../../sys/fields.ts";
import { withLock } from "../../sys/lock-file.ts";
import { isValidJobId } from "../../sys/names.ts";
import { type Notice, note, warning } from "../../sys/notice.ts";
import { mamDir } from "../../sys/paths.ts";
import { visible } from "../../sys/sanitize.ts";
import { hostName, localPart } from "../../team/host.ts";
import type { Deps } from "../deps.ts";
import type { OpContext } from "../op.ts";

export interface ApproveInput {
  /** a session name (NAME, NAME@HOST) or a job id */
  target: string;
  deny: boolean;
  /** the number of the choice to pick (the only way to an "always" choice) */
  choice?: number;
  /** the dialog the user answers (as status, the event or the notification showed it) */
  fingerprint?: string;
}

export interface Answered {
  session: string;
  job_id: string | null;
  answer: "approved" | "denied";
  choice: Choice;
  question: Question;
  /** the key mam pressed */
  key: string;
  /** the dialog left the screen after the key */
  answered: boolean;
  /** the journal's event, when there is a job */
  seq: number | null;
  /** after a no: the agent was told at its prompt */
  told: boolean;
  warnings: Notice[];
}

/** how long the dialog gets to leave the screen after the key, and the agent to reach its prompt after a no */
const LEAVE_MS = 6_000;
const PROMPT_MS = 10_000;
const LOCK_MS = 30_000;

/** who answers, as the journal says it: the calling agent's session (MCP), else the user */
export function answerer(env: Record<string, string | undefined>, surface: OpContext["surface"]): string {
  let user = env.USER || env.LOGNAME;
  if (!user) {
    try {
      user = userInfo().username;
    } catch {}
  }
  // a uid without a name (a container's) reads "unknown"
  if (!user || user === "unknown") user = "the user";
  return surface === "mcp" && env.MAM_SESSION ? `${env.MAM_SESSION} (agent of ${user})` : user;
}

/**
 * pure: the fingerprints of the questions a job told about (the daemon's `permission_required`
 * events that carry one, for `session`) since its last answer (`approved` / `denied`), oldest
 * first, distinct. Only the daemon's: an agent's report is not a dialog the user was shown.
 */
export function unansweredQuestions(events: readonly Pick<JobEvent, "event" | "source" | "data">[], session: string): string[] {
  const out: string[] = [];
  for (const e of events) {
    if (e.event === "approved" || e.event === "denied") out.length = 0;
    if (!fromDaemon(e)) continue;
    const d = e.data as { session?: unknown; question?: { fingerprint?: unknown } };
    if (d.session !== undefined && d.session !== session) continue;
    const fp = d.question?.fingerprint;
    if (typeof fp === "string" && !out.includes(fp)) out.push(fp);
  }
  return out;
}

/** a few last lines of a screen, escaped: what is there now */
function screenTail(s: PaneScreen): string {
  const lines = s.text.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  return visible(lines.slice(-3).join(" | ").slice(0, 300));
}

interface Target {
  session: string;
  job?: JobRecord;
}

/** the session and job a target names; remote ones are refused (their host answers) */
function targetOf(deps: Deps, raw: string): Target {
  const here = hostName(deps.env);
  const job = isValidJobId(raw) ? deps.jobs.read(raw) : undefined;
  if (job) {
    const events = deps.jobs.journal(job.job_id);
    const st = effectiveStatus(job, events);
    if (st === "queued") throw usageError(`job ${raw} waits its turn (queued): no agent works on it yet, so no dialog is its`, `an agent's dialog: mam approve NAME`);
    // an ended job has no dialog: what its agent shows now is another job's (or none)
    if (isFinal(st)) throw usageError(`job ${raw} has ended (${st}): no dialog is its any more; nothing was pressed`, `see: mam job status ${raw}; a dialog of its agent now: mam approve ${busySession(job, events)}`);
    const s = busySession(job, events);
    const local = localPart(s, here);
    if (local === undefined) {
      throw usageError(`job ${raw} waits on ${s}, on another host: its dialog is answered there`, `on ${s.slice(s.lastIndexOf("@") + 1)}: mam approve ${raw} (that host has a copy of the job)`);
    }
    return { session: local, job };
  }
  const local = localPart(raw, here);
  if (local === undefined) throw usageError(`${raw} is on another host: its dialog is answered there`, `on ${raw.slice(raw.lastIndexOf("@") + 1)}: mam approve ${raw.slice(0, raw.lastIndexOf("@"))}`);
  return { session: local, job: openJobOf(deps, local) };
}

/** the newest unfinished job that waits on this session here (not one still queued for it) */
function openJobOf(deps: Deps, session: string): JobRecord | undefined {
  const here = hostName(deps.env);
  let best: JobRecord | undefined;
  for (const id of deps.jobs.ids()) {
    try {
      const r = deps.jobs.read(id);
      if (!r) continue;
      const evs = deps.jobs.journal(id);
      // a job still waiting its turn (queued) is not the one its agent works on
      const st = effectiveStatus(r, evs);
      if (isFinal(st) || st === "queued" || localPart(busySession(r, evs), here) !== session) continue;
      if (!best || r.created_at > best.created_at) best = r;
    } catch {} // a broken record is job status's to report
  }
  return best;
}

/** the question on the agent's screen now, or a refusal that says what is there instead */
async function questionNow(mux: Mux, s: SessionRef): Promise<{ q: Question; screen: PaneScreen }> {
  const { detectScreen, questionOf, readsQuestions } = await import("../../agents/screen/detect.ts");
  let screen: PaneScreen;
  try {
    screen = await mux.screen(s.paneId);
  } catch (e) {
    throw new MamError(`cannot read the screen of ${s.name} in ${s.paneId} (${(e as Error).message}); nothing was pressed`, EXIT.FAIL);
  }
  // what is true first: an agent at its prompt (or at work) shows no dialog at all
  const v = detectScreen(s.agent, screen);
  if (v.state === "idle" || v.state === "working") throw new MamError(`${s.name} is not at a dialog (it is ${v.state === "idle" ? "idle, at its prompt" : "working"}); nothing was pressed`, EXIT.FAIL, "see: mam status (its LIVE column)");
  if (!readsQuestions(s.agent)) throw new MamError(`mam cannot read the dialogs of ${s.agent} agents (${s.name}); nothing was pressed`, EXIT.FAIL, "answer it in its pane");
  const q = questionOf(s.agent, screen);
  if (!q) {
    const at = v.state === "blocked" ? (v.dialog === "start" ? `at a start dialog${v.name ? ` ("${v.name}")` : ""}` : `at a dialog mam cannot read (${v.reason ?? "?"})`) : v.state;
    throw new MamError(`${s.name} is not at a permission dialog mam can answer (it is ${at}); nothing was pressed`, EXIT.FAIL, `its screen ends with: ${screenTail(screen)}`);
  }
  return { q, screen };
}

/**
 * how long an answer without a fingerprint waits for the daemon to journal the dialog on screen:
 * `mam status` shows a dialog as soon as it reads the screen, the daemon journals it at its next
 * watch (MAM_STATE_POLL_MS, a second by default), and a user who types fast (a script, always)
 * comes in between
 */
const TOLD_WAIT_MS = 4_000;

/** the fingerprint the answer is for: the user's, else the one question the job told about; else refused */
async function referenceOf(deps: Deps, i: ApproveInput, t: Target, q: Question): Promise<string> {
  if (i.fingerprint !== undefined) return i.fingerprint;
  const asks = `${t.session} asks: ${visible(questionLine(q))} (choices: ${visible(choicesLine(q))})`;
  const named = `name the dialog you answer: ${field("fingerprint", q.fingerprint)}`;
  if (!t.job) throw usageError(`${asks}; ${t.session} has no open job that told you about it`, named);
  const job = t.job;
  const toldNow = () => unansweredQuestions(deps.jobs.journal(job.job_id), t.session);
  let told = toldNow();
  // the dialog on screen is not journalled yet: the daemon is about to (the one the user could
  // have seen in status); a dialog that changed is still refused below
  if (told.length === 0 && deps.daemon.status()) {
    for (const end = Date.now() + TOLD_WAIT_MS; told.length === 0 && Date.now() < end; told = toldNow()) await Bun.sleep(100);
  }
  if (told.length === 1) return told[0]!;
  if (told.length === 0) throw usageError(`${asks}; job ${t.job.job_id} has told of no question since its last answer`, named);
  throw conflict(`the dialog of ${t.session} changed since job ${t.job.job_id} told you (${told.length} questions since the last answer); it now asks: ${visible(questionLine(q))}; nothing was pressed`, named);
}

/** the choice the input picks in this question; refused when the dialog has none such */
function choiceOf(i: ApproveInput, q: Question): Choice {
  const c = pickChoice(q, i);
  const all = visible(choicesLine(q));
  if (!c && i.choice !== undefined) throw usageError(`${field("choice")} ${i.choice}: the dialog has ${q.choices.length} choices (${all})`);
  if (!c && i.deny) throw new MamError(`the dialog offers no "no" mam recognises (${all}); nothing was pressed`, EXIT.FAIL, `pick one with ${field("choice")}`);
  if (!c) throw new MamError(`the dialog offers no one-time yes mam recognises (${all}); nothing was pressed`, EXIT.FAIL, `pick one with ${field("choice")} (an "always" choice only when you mean it)`);
  if (c.key === "") throw new MamError(`choice ${c.n} (${visible(c.label)}) shows no key mam can press; nothing was pressed`, EXIT.FAIL, "answer it in its pane");
  return c;
}

/** poll the screen until the dialog of that fingerprint is gone (true), or the time is up (false) */
async function waitGone(mux: Mux, s: SessionRef, fingerprint: string): Promise<boolean> {
  const { questionOf } = await import("../../agents/screen/detect.ts");
  const end = Date.now() + LEAVE_MS;
  for (;;) {
    try {
      if (questionOf(s.agent, await mux.screen(s.paneId))?.fingerprint !== fingerprint) return true;
    } catch {
      return true; // the pane went (the agent exited): the dialog is not there
    }
    if (Date.now() >= end) return false;
    await Bun.sleep(150);
  }
}

/** journal the answer on the job (by whom, from where) and publish it; its seq */
async function journal(deps: Deps, job: JobRecord, session: string, q: Question, c: Choice, by: string, via: OpContext["surface"], warnings: Notice[]): Promise<number | null> {
  const data: { [k: string]: Json } = {
    session,
    by,
    via,
    host: hostName(deps.env),
    choice: { n: c.n, label: c.label, key: c.key, role: c.role },
    fingerprint: q.fingerprint,
    question: { title: q.title, subject: q.subject },
  };
  const detail = `${by} via ${via}: ${c.label}${c.role === "always" ? " (always)" : ""} — ${questionLine(q)}`;
  const a = await deps.jobs.append(job.job_id, { event: c.role === "no" ? "denied" : "approved", detail, source: "mam", data });
  if (!a) return null;
  const w = await publishJournalled(`${a.record!.topic_prefix}/events`, a.line, job.job_id, a.payload.seq, deps.env);
  if (w) warnings.push(w);
  return a.payload.seq;
}

export async function approve(deps: Deps, i: ApproveInput, ctx: Pick<OpContext, "surface">): Promise<Answered> {
  if (i.deny && i.choice !== undefined) throw usageError(`${field("deny")} and ${field("choice")} contradict each other`, `the no is one of the choices: ${field("choice")} alone`);
  const t = targetOf(deps, i.target);
  const ref = await deps.runtime.findSession(t.session);
  if (!ref) throw notFound(`no running session ${t.session} with a live pane`, "see: mam status");
  if (isRemote(ref)) throw usageError(`${t.session} is on another host: its dialog is answered there`);
  if (ref.gone) throw new MamError(`${t.session} has no agent any more (${ref.gone}); nothing was pressed`, EXIT.FAIL);
  const mux = deps.muxFor(ref.backend, ref.server);
  const by = answerer(deps.env, ctx.surface);
  const warnings: Notice[] = [];
  const done = await withLock(join(mamDir(deps.ws), "approve.lock"), "approve", LOCK_MS, async () => {
    const { q } = await questionNow(mux, ref);
    const want = await referenceOf(deps, i, t, q);
    if (q.fingerprint !== want) {
      throw conflict(
        `the dialog of ${t.session} is not the one you answer (${visible(want)}): it now asks ${visible(questionLine(q))} (choices: ${visible(choicesLine(q))}); nothing was pressed`,
        `to answer this one: ${field("fingerprint", q.fingerprint)}`,
      );
    }
    const c = choiceOf(i, q);
    await mux.sendKeys(ref.paneId, [c.key]);
    // journalled as soon as it is given: the agent's next report comes after it
    const seq = t.job ? await journal(deps, t.job, t.session, q, c, by, ctx.surface, warnings) : null;
    return { q, c, seq, answered: await waitGone(mux, ref, q.fingerprint) };
  });
  const { q, c, seq } = done;
  if (!done.answered) warnings.push(warning(`pressed ${c.key} in ${t.session}'s pane ${ref.paneId}, but the dialog still shows after ${LEAVE_MS / 1000} s: look at the pane`));
  if (!t.job) warnings.push(note(`${t.session} has no open job: the answer is not journalled`));
  const answer = c.role === "no" ? "denied" : "approved";
  let told = false;
  if (answer === "denied" && t.job && !isFinal(effectiveStatus(t.job, deps.jobs.journal(t.job.job_id)))) {
    told = await tellDenied(deps, mux, ref, t.job, q, by, warnings);
  }
  return { session: t.session, job_id: t.job?.job_id ?? null, answer, choice: c, question: q, key: c.key, answered: done.answered, seq, told, warnings };
}

const WHAT_WORDS: Record<Question["what"], string> = { command: "the command", file: "the file change", tool: "the tool call", other: "the request" };

/**
 * pure: what the user said no to, for the agent, without the dialog's question ("Bash command:
 * touch x", codex's "the command: touch x"): typed into the agent's transcript, the question's own
 * words would read as the dialog again to the screen detector
 */
export function refusedLine(q: Pick<Question, "title" | "subject" | "question" | "what">): string {
  const subject = q.subject.split("\n")[0] ?? "";
  const what = q.title === q.question || q.title === "" ? WHAT_WORDS[q.what] : q.title;
  return subject === "" ? what : `${what}: ${subject}`;
}

/** pure: what the agent is told after a no: what was refused, and the command that ends the job if it cannot go on */
export function deniedText(by: string, q: Pick<Question, "title" | "subject" | "question" | "what">, jobId: string, errorCommand: string): string {
  return [
    `[mam] ${by} said no to ${refusedLine(q)} (job ${jobId}). Do not do it.`,
    "Go on without it if you can; if the job cannot be done without it, report that:",
    `  ${errorCommand}`,
  ].join("\n");
}

/**
 * after a no, claude and codex stop the turn and wait for the user: tell the agent, once it is at
 * its prompt, that the user said no and how to go on or end the job
 */
async function tellDenied(deps: Deps, mux: Mux, s: SessionRef, job: JobRecord, q: Question, by: string, warnings: Notice[]): Promise<boolean> {
  const { waitForPrompt } = await import("./at-prompt.ts");
  const st = await waitForPrompt(mux, s.paneId, s.agent, deps.env, PROMPT_MS);
  if (st.at !== "prompt" && st.at !== "working") {
    warnings.push(warning(`${s.name} is not back at its prompt (${st.at}): it was not told that ${by} said no`));
    return false;
  }
  const text = deniedText(by, q, job.job_id, eventCommand(job, deps.ws, "error", s.name, "what could not be done without it"));
  try {
    const left = await deps.runtime.prompt(s, text);
    if (left) warnings.push(left);
    return left === undefined;
  } catch (e) {
    warnings.push(warning(`could not tell ${s.name} that ${by} said no (${(e as Error).message})`));
    return false;
  }
}
