// Submitting a job (docs/jobs.md): check the job, find the target session (and the reviewer of a
// loop job) at its input prompt, register the job (pending), make sure the daemon runs, and type
// the job's header into the agent. A job to a shell session (a kind that reads commands) is its
// command: mam types only `mam shell-job <id>`, which runs it and reports (shell-run.ts); a loop
// job cannot involve a shell (review and feedback are prose). Behind `mam job submit`, the MCP
// tool, `mam create --submit-job` and the demo.
//
// The brief file: the user on the command line may name any file; a caller that is not the user
// (an agent through MCP) only a file inside the workspace or the target session's worktree, with
// symlinks resolved. Its refusal is one message whether the file is missing, outside or not a
// file, so that it never tells whether a file outside exists.
import { realpathSync, statSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { brokerConfigFromEnv, jobsBase } from "../../jobs/broker-config.ts";
import { isRemote } from "../../jobs/runtime.ts";
import { readsCommands } from "../../agents/kinds/index.ts";
import { parseFailover } from "../../jobs/failover.ts";
import { jobHeader } from "../../jobs/header.ts";
import { publishJournalled } from "../../jobs/publish.ts";
import { DEFAULT_IDLE_TIMEOUT_SEC, DEFAULT_MAX_ITERATIONS, DEFAULT_TIMEOUT_SEC, type JobRecord, type JobSpec, poolSession, type Priority } from "../../jobs/store.ts";
import { hostName, topicHost } from "../../team/host.ts";
import { DISABLED_MESSAGE } from "../../sys/daemon-proc.ts";
import { EXIT, MamError, notFound, usageError } from "../../sys/errors.ts";
import { field } from "../../sys/fields.ts";
import { nearest } from "../../sys/near.ts";
import { info, note, type Notice, warning } from "../../sys/notice.ts";
import { meterable } from "../../cost/summary.ts";
import { rowAgent } from "../../fleet/rows.ts";
import type { Deps } from "../deps.ts";
import { pastDailyCap } from "./cap.ts";
import { type InTurn, registerInTurn, textForAgent } from "./queue.ts";
import { checkJob } from "./rules.ts";
import { checkAfter } from "./after.ts";
import { heldWords, parseAfter } from "../../jobs/after.ts";
import { allRows } from "../../registry/rows.ts";

/** a job, as its op takes it */
export interface JobInput {
  /** the agent by name (NAME, or NAME@HOST); or to_role */
  to?: string;
  /** a pool: the first free agent of this role in the workspace, else of the team (docs/jobs.md#the-queue) */
  to_role?: string;
  priority?: Priority;
  prompt?: string;
  /** relative to the workspace (the command line resolves it against its own folder first) */
  brief_file?: string;
  from?: string;
  timeout_s?: number;
  idle_timeout_s?: number;
  expect?: string[];
  type?: "single" | "loop";
  reviewer?: string;
  max_iterations?: number;
  /** a budget in dollars and in tokens (docs/cost.md) */
  budget_usd?: number;
  max_tokens?: number;
  /** where the job may go when its agent reaches a usage limit: roles, kinds or names, comma-separated (none: nowhere); default MAM_FAILOVER */
  failover?: string;
  /** the jobs it runs after (docs/jobs.md#dependencies): ids, each may be comma-separated */
  after?: string[];
  /** with after: run once each has ended, however (default: each must complete, else it is cancelled) */
  after_any_end?: boolean;
}

/** where a brief file may be: anywhere (the user's own command line), or inside these folders */
export type BriefScope = { anywhere: true } | { within: string[] };

const inside = (path: string, root: string) => path === root || path.startsWith(root.endsWith("/") ? root : `${root}/`);

/** a folder as its real path (symlinks resolved); undefined when it does not exist */
function realFolder(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/**
 * the absolute path of a brief file (relative: from the workspace) that is a file; within
 * folders, its real path, which must lie in one of them. Exit 2 otherwise, with one message for
 * every refusal within folders.
 */
export function briefPath(file: string, ws: string, scope: BriefScope): string {
  const abs = isAbsolute(file) ? file : resolve(ws, file);
  if ("anywhere" in scope) {
    let ok = false;
    try {
      ok = statSync(abs).isFile();
    } catch {}
    if (!ok) throw usageError(`brief file '${file}' does not exist or is not a file`);
    return abs;
  }
  const roots = scope.within.map(realFolder).filter((r): r is string => r !== undefined);
  const refused = () =>
    usageError(`brief file '${file}' is not a file inside the workspace ${ws}${scope.within.length > 1 ? " or the session's worktree" : ""}`, `write the brief into the workspace (a relative ${field("brief_file")} is from the workspace), or give the task as ${field("prompt")}`);
  // outside by its name: refused before the file system is asked anything about it
  if (!roots.some((r) => inside(abs, r)) && !scope.within.some((r) => inside(abs, r))) throw refused();
  let real: string;
  try {
    real = realpathSync(abs);
    if (!statSync(real).isFile()) throw refused();
  } catch {
    throw refused();
  }
  if (!roots.some((r) => inside(real, r))) throw refused();
  return real;
}

/** the job spec of valid input; the brief file must exist (exit 2 otherwise) and lie in its scope */
export function jobSpecOf(o: JobInput, ws: string, topicPrefix: string, scope: BriefScope = { anywhere: true }): JobSpec {
  checkJob(o);
  const brief = o.brief_file !== undefined ? briefPath(o.brief_file, ws, scope) : undefined;
  const type = o.type ?? "single";
  return {
    agent_session: o.to ?? poolSession(o.to_role!),
    ...(o.to_role !== undefined ? { to_role: o.to_role } : {}),
    ...(o.priority !== undefined ? { priority: o.priority } : {}),
    agent: null,
    ...(brief !== undefined ? { brief_file: brief } : { prompt: o.prompt! }),
    delegator: o.from ?? null,
    type,
    reviewer_session: type === "loop" ? o.reviewer! : null,
    max_iterations: type === "loop" ? (o.max_iterations ?? DEFAULT_MAX_ITERATIONS) : null,
    timeout_sec: o.timeout_s ?? DEFAULT_TIMEOUT_SEC,
    idle_timeout_sec: o.idle_timeout_s ?? DEFAULT_IDLE_TIMEOUT_SEC,
    expected_artifacts: o.expect ?? [],
    topic_prefix_base: topicPrefix,
    ...(o.budget_usd !== undefined ? { budget_usd: o.budget_usd } : {}),
    ...(o.max_tokens !== undefined ? { max_tokens: o.max_tokens } : {}),
    ...(o.failover !== undefined ? { failover: parseFailover(o.failover) } : {}),
    ...(o.after?.length ? { after: parseAfter(o.after), ...(o.after_any_end ? { after_any_end: true } : {}) } : {}),
  };
}

export interface Submitted {
  record: JobRecord;
  /** the daemon's PID, when one runs */
  daemon_pid: number | null;
  warnings: Notice[];
  /** its place in its line when it waits its turn (queued), else null */
  position: number | null;
  /** it waits for the jobs it runs after: "after job 1a2b3c4d (running) completes" */
  waits_for?: string;
}

/** the target waits at a dialog: the job header typed now would answer it */
function waitingError(who: string, waiting: string): MamError {
  return new MamError(`${who} waits at ${waiting}; nothing was submitted`, EXIT.FAIL, "answer it, then submit the job again");
}

/** the daemon's PID after making sure it runs; a notice when it is off or would not start */
export async function ensureDaemonNoticed(deps: Deps, warnings: Notice[], what: string): Promise<number | null> {
  try {
    const r = await deps.daemon.ensure();
    if (r.disabled) warnings.push(info(DISABLED_MESSAGE));
    return r.pid ?? null;
  } catch (e) {
    warnings.push(warning(`could not start the subscriber daemon (${(e as Error).message}); ${what}`));
    return null;
  }
}

/** how long a submit to another host waits for a daemon still connecting (its connect timeout, 5 s, and some) */
const LISTEN_WAIT_MS = 6000;
/** and for a daemon that has taken its lock but not yet written its state (mode unknown) */
const STATE_WAIT_MS = 1000;

/**
 * a job for another host: what that host sends back reaches this workspace through its daemon,
 * which must listen before the offer goes out. A daemon that has just started (or connects for
 * the first time: the broker keeps no session for it yet) would miss the first events; its
 * peer sends them again, but after the ones that followed them.
 */
async function untilListening(deps: Deps): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    const mode = deps.daemon.status()?.mode;
    const waited = Date.now() - t0;
    if (!((mode === "connecting" && waited < LISTEN_WAIT_MS) || (mode === "unknown" && waited < STATE_WAIT_MS))) return;
    await Bun.sleep(20);
  }
}

export interface SubmitOptions {
  /**
   * the brief file must lie inside the workspace or the target's worktree: the caller is not the
   * user (an agent through MCP). Default: anywhere (the user's own command line).
   */
  confineBrief?: boolean;
}

/** a loop's review and feedback are prose: a shell (it would run them) can be neither its worker nor its reviewer */
function refuseShellInLoop(who: string, agent: string): void {
  if (readsCommands(agent)) {
    throw usageError(`session '${who}' is a ${agent} session: a loop job's review and feedback are text, which a shell would run; nothing was submitted`, "give a shell single jobs (the prompt is the command it runs)");
  }
}

/** the reviewer of a loop job, found and able to take a prompt: its name as the record keeps it, and its kind */
async function reviewerOf(deps: Deps, spec: JobSpec): Promise<{ name: string; agent: string } | null> {
  if (spec.reviewer_session === null) return null;
  const reviewer = await deps.runtime.findSession(spec.reviewer_session);
  if (!reviewer) throw notFound(`no running session named '${spec.reviewer_session}' (the reviewer) in this workspace (${deps.ws})`, "see: mam status");
  if (reviewer.gone) throw new MamError(`session '${spec.reviewer_session}' (the reviewer) has no agent any more (${reviewer.gone}); nothing was submitted`, EXIT.FAIL, `mam resume ${spec.reviewer_session} starts it again`);
  if (reviewer.waiting) throw waitingError(`session '${spec.reviewer_session}' (the reviewer)`, reviewer.waiting);
  refuseShellInLoop(spec.reviewer_session, reviewer.agent);
  return { name: reviewer.name, agent: reviewer.agent };
}

/** a job that could not be typed: marked error, and the submit fails */
async function failTyping(deps: Deps, record: JobRecord, name: string, remote: boolean, e: unknown): Promise<never> {
  const why = e instanceof Error ? e.message : String(e);
  await deps.jobs.append(record.job_id, { event: "error", detail: `could not ${remote ? "offer the job to" : "prompt"} ${name}: ${why}`.slice(0, 2000), source: "mam" });
  throw new MamError(`job ${record.job_id}: could not ${remote ? "offer the job to" : "prompt session"} ${name} (${why})`, EXIT.FAIL, `the job is marked error; see: mam job status ${record.job_id}`);
}

/** a job that waits its turn: its `queued` event goes out, and the user hears where it stands */
async function waitsItsTurn(deps: Deps, t: InTurn, who: string, warnings: Notice[], daemonPid: number | null): Promise<Submitted> {
  if (t.queued) {
    const n = await publishJournalled(`${t.record.topic_prefix}/events`, t.queued.line, t.record.job_id, t.queued.payload.seq, deps.env);
    if (n) warnings.push(n);
  }
  const waits = t.held !== undefined ? `waits until ${t.held}, then its turn for ${who}` : `waits its turn for ${who} (position ${t.position})`;
  warnings.push(
    daemonPid === null
      ? warning(`job ${t.record.job_id} ${waits}, but no daemon runs to give it its turn: start one with mam daemon ensure`)
      : info(`job ${t.record.job_id} ${waits}; mam's daemon ${who.includes("@") ? `offers it to ${who.slice(who.indexOf("@") + 1)} then` : "gives it to its agent when its turn comes"}`),
  );
  return { record: t.record, daemon_pid: daemonPid, warnings, position: t.position, ...(t.held !== undefined ? { waits_for: t.held } : {}) };
}

const budgeted = (spec: JobSpec) => spec.budget_usd != null || spec.max_tokens != null;

/** a job with a budget needs its sessions' usage (docs/cost.md): each must be of a kind whose records mam reads */
function refuseUnmetered(spec: JobSpec, sessions: { name: string; agent: string | null }[]): void {
  if (!budgeted(spec)) return;
  const s = sessions.find((x) => !meterable(x.agent));
  if (s) throw usageError(`a budget needs the usage of ${s.name}, and mam cannot read the records of ${s.agent} (docs/cost.md); nothing was submitted`, `leave out ${field("budget_usd")} and ${field("max_tokens")}`);
}

/** a session of this workspace past its daily cap takes no job (nothing written) */
function refusePastCap(deps: Deps, names: string[]): void {
  const data = deps.registry.read();
  for (const name of names) {
    const row = allRows(data).find((r) => r.name === name && r.status === "running");
    const past = row ? pastDailyCap(deps, row) : undefined;
    if (past) throw new MamError(`session '${name}' ${past}; nothing was submitted`, EXIT.FAIL, "it takes jobs again at 00:00 UTC");
  }
}

/** a budget is kept by the workspace's daemon: say so when none runs */
function budgetWithoutDaemon(spec: JobSpec, record: JobRecord, daemonPid: number | null, warnings: Notice[]): void {
  if (budgeted(spec) && daemonPid === null) warnings.push(warning(`job ${record.job_id}'s budget is kept by the subscriber daemon, which is not running: nothing counts its usage`));
}

/**
 * "did you mean …? " for a {{to}} or {{to_role}} that names no running session: the nearest
 * running session's name or role (a role given as {{to}} is the other flag's), else ""
 */
function guessTarget(deps: Deps, word: string, given: "to" | "to_role"): string {
  let running;
  try {
    const data = deps.registry.read();
    running = allRows(data).filter((r) => r.status === "running");
  } catch {
    return ""; // a broken registry is status's to report
  }
  const names = running.map((r) => r.name);
  const roles = running.map((r) => r.role).filter((r): r is string => typeof r === "string" && r !== "");
  const [same, other] = given === "to" ? [names, roles] : [roles, names];
  const otherFlag = given === "to" ? "to_role" : "to";
  const near = nearest(word, same);
  if (near.length) return `did you mean ${near.map((n) => field(given, n)).join(" or ")}? `;
  const across = other.includes(word) ? [word] : nearest(word, other);
  return across.length ? `did you mean ${across.map((n) => field(otherFlag, n)).join(" or ")}? ` : "";
}

/** what a job that runs after others waits for now (undefined: nothing, it takes its turn as any job); refused when it could never run */
function heldBy(deps: Deps, spec: JobSpec): string | undefined {
  if (!spec.after?.length) return undefined;
  const v = checkAfter(deps, spec.after, spec.after_any_end === true);
  return v.state === "held" ? heldWords(v.on, spec.after_any_end === true) : undefined;
}

/** submit: nothing is written unless the target (and reviewer) sessions exist and can take a prompt */
export async function submitJob(deps: Deps, o: JobInput, opts: SubmitOptions = {}): Promise<Submitted> {
  checkJob(o);
  // the workspace's default failover (docs/unattended.md#failover), unless the job says
  if (o.failover === undefined && deps.env.MAM_FAILOVER !== undefined) o = { ...o, failover: deps.env.MAM_FAILOVER };
  if (o.to_role !== undefined) return submitToPool(deps, o, opts);
  const to = o.to!;
  const rt = deps.runtime;
  // NAME@HOST: a session another host of the team announces (its errors list what exists)
  const target = await rt.findSession(to);
  // the brief's scope needs the target (its worktree); its checks come before the target's
  const scope: BriefScope = opts.confineBrief ? { within: [deps.ws, ...(target?.worktree ? [target.worktree.path] : [])] } : { anywhere: true };
  const spec = jobSpecOf(o, deps.ws, jobsBase(brokerConfigFromEnv(deps.env), deps.ws, topicHost(deps.env)), scope);
  if (!target) throw notFound(`no running session named '${to}' in this workspace (${deps.ws})`, `${guessTarget(deps, to, "to")}see: mam status (mam status --fleet for the team's other hosts)`);
  if (target.gone) throw new MamError(`session '${to}' has no agent any more (${target.gone}); nothing was submitted`, EXIT.FAIL, `mam resume ${to} starts it again`);
  if (target.waiting) throw waitingError(`session '${to}'`, target.waiting);
  if (spec.type === "loop") refuseShellInLoop(to, target.agent);
  const reviewer = await reviewerOf(deps, spec);
  refuseUnmetered(spec, [{ name: target.name, agent: target.agent }, ...(reviewer ? [reviewer] : [])]);
  refusePastCap(deps, [target.name, ...(reviewer ? [reviewer.name] : [])].filter((n) => !n.includes("@")));
  const full: JobSpec = {
    ...spec,
    agent_session: target.name,
    reviewer_session: reviewer?.name ?? null,
    ...(reviewer ? { reviewer_agent: reviewer.agent } : {}),
    agent: target.agent,
    ...(target.worktree ? { worktree: target.worktree } : {}),
  };
  const held = heldBy(deps, full);
  const warnings: Notice[] = [];
  if (isRemote(target)) {
    // refused before anything is written when its delivery would be too large once sealed
    const { checkJobFits } = await import("../../team/offer.ts");
    checkJobFits(deps.env, full, target);
    // it runs after jobs that have not ended: it waits here, and this host's daemon offers it to
    // its host once they have (lib/ops/job/queue.ts assignWaiting); there it takes its turn
    if (held !== undefined) {
      const t = await registerInTurn(deps, full, { name: target.name, working: false }, teamHost(deps), held);
      const daemonPid = await ensureDaemonNoticed(deps, warnings, `job ${t.record.job_id} is tracked through its journal`);
      return waitsItsTurn(deps, t, target.name, warnings, daemonPid);
    }
    // its host keeps the queue of its own agents (it may journal `queued`), and costs the job
    const record = await deps.jobs.register(full);
    const daemonPid = await ensureDaemonNoticed(deps, warnings, `job ${record.job_id} is tracked through its journal`);
    if (daemonPid !== null) await untilListening(deps);
    try {
      const w = await rt.prompt(target, jobHeader(record, target.name, deps.ws), { purpose: "job", job: record });
      if (w) warnings.push(w);
    } catch (e) {
      return failTyping(deps, record, target.name, true, e);
    }
    return { record, daemon_pid: daemonPid, warnings, position: null };
  }
  const t = await registerInTurn(deps, full, { name: target.name, working: target.working === true }, teamHost(deps), held);
  const daemonPid = await ensureDaemonNoticed(deps, warnings, `job ${t.record.job_id} is tracked through its journal`);
  budgetWithoutDaemon(spec, t.record, daemonPid, warnings);
  if (t.go === null) {
    const unread = await unreadable(deps, target.name, target.agent);
    if (unread) warnings.push(note(unread));
    return waitsItsTurn(deps, t, target.name, warnings, daemonPid);
  }
  try {
    const w = await rt.prompt(target, textForAgent(deps, t.record, target.name), undefined, readsCommands(target.agent) ? "command" : undefined);
    if (w) warnings.push(w);
  } catch (e) {
    return failTyping(deps, t.record, target.name, false, e);
  }
  return { record: t.record, daemon_pid: daemonPid, warnings, position: null };
}

/**
 * a NOTE when mam cannot read the state of the agent a job waits for (issue 39 item 1): what
 * "free" then means for it; undefined when its screen rules (or its multiplexer) tell
 */
async function unreadable(deps: Deps, name: string, kind: string): Promise<string | undefined> {
  const [{ hasScreenRules }, { stillSeconds }] = await Promise.all([import("../../agents/screen/detect.ts"), import("./queue.ts")]);
  const row = [...deps.registry.read().tmux_sessions].find((r) => r.name === name && r.status === "running");
  if (!row) return undefined; // herdr tells its agents' state itself
  if (readsCommands(kind)) return `mam cannot read whether the shell session ${name} is at work: its job goes once the job before it has ended`;
  if (hasScreenRules(kind)) return undefined;
  return `mam cannot read the state of ${name} (no screen rules for ${kind}): its job goes once the job before it has ended and its screen has been still for ${stillSeconds(deps.env)} s (MAM_QUEUE_STILL_S)`;
}

/** this machine's name when it is in a team (a copy of another host's job names its agents name@host) */
function teamHost(deps: Deps): string | undefined {
  try {
    return hostName(deps.env);
  } catch {
    return undefined;
  }
}

/**
 * a pool job on a machine in a team (docs/jobs.md#the-queue): undefined when this machine is in
 * no team or an agent of the role is free here (the job stays here); else the agent of another
 * host it goes to (`to`: poolAgentElsewhere's pick), or none (`to` undefined: it waits here, or
 * there is no agent of the role anywhere; `unreachable` when the broker did not answer)
 */
async function poolElsewhere(deps: Deps, role: string, here: boolean): Promise<{ to?: string; free: boolean; unreachable: boolean } | undefined> {
  const [{ loadTeam }, { freeAgents, readQueue }] = await Promise.all([import("../../team/config.ts"), import("./queue.ts")]);
  let team;
  try {
    team = loadTeam(deps.env);
  } catch {
    return undefined; // a damaged team file: this workspace takes no part in the team (mam team show says why)
  }
  const host = teamHost(deps);
  if (!team || !host) return undefined;
  if (here) {
    const q = readQueue(deps.jobs, host);
    if (!q.waiting.some((w) => w.role === role) && (await freeAgents(deps, new Set(), new Set([role]), q.busy)).length > 0) return undefined;
  }
  const { poolAgentElsewhere, readRoster } = await import("../../team/roster.ts");
  const fleet = await readRoster(brokerConfigFromEnv(deps.env), team, deps.env, deps.ws);
  if (!fleet.reachable) return { free: false, unreachable: true };
  const pick = poolAgentElsewhere(fleet, role, host, here);
  return pick ? { ...pick, unreachable: false } : { free: false, unreachable: false };
}

/** a job for the first free agent of a role: it goes at once when one is free, else waits its turn */
async function submitToPool(deps: Deps, o: JobInput, opts: SubmitOptions): Promise<Submitted> {
  const role = o.to_role!;
  const spec = jobSpecOf(o, deps.ws, jobsBase(brokerConfigFromEnv(deps.env), deps.ws, topicHost(deps.env)), opts.confineBrief ? { within: [deps.ws] } : { anywhere: true });
  const reviewer = await reviewerOf(deps, spec);
  const data = deps.registry.read();
  const here = allRows(data).some((r) => r.role === role && r.status === "running");
  // a machine in a team: with no free agent of the role here, one of another host
  const elsewhere = await poolElsewhere(deps, role, here);
  if (elsewhere?.to) {
    const r = await submitJob(deps, { ...o, to: elsewhere.to, to_role: undefined }, opts);
    const why = elsewhere.free ? `no ${role} is free here; ${elsewhere.to} is` : `no ${role} is free here or on the team's other hosts; its host keeps it in line`;
    return { ...r, warnings: [info(`job ${r.record.job_id} goes to ${elsewhere.to} (${why})`), ...r.warnings] };
  }
  if (!here) {
    const team = elsewhere ? ` or on the team's other hosts${elsewhere.unreachable ? " (the team's broker does not answer)" : ""}` : "";
    throw notFound(`no running session has the role '${role}' in this workspace (${deps.ws})${team}`, `${guessTarget(deps, role, "to_role")}see: mam status (its ROLE column)${elsewhere ? " and mam status --fleet" : ""}; the job would wait for ever`);
  }
  // a budget needs the usage of whichever agent of the role takes it (one past its daily cap is not free: the queue passes it over)
  const pool = allRows(data).filter((r) => r.role === role && r.status === "running");
  refuseUnmetered(spec, [...pool.map((r) => ({ name: r.name, agent: rowAgent(r) ?? null })), ...(reviewer ? [reviewer] : [])]);
  if (reviewer) refusePastCap(deps, [reviewer.name]);
  const warnings: Notice[] = [];
  const held = heldBy(deps, spec);
  const t = await registerInTurn(deps, { ...spec, reviewer_session: reviewer?.name ?? null, ...(reviewer ? { reviewer_agent: reviewer.agent } : {}) }, { role }, teamHost(deps), held);
  const daemonPid = await ensureDaemonNoticed(deps, warnings, `job ${t.record.job_id} is tracked through its journal`);
  budgetWithoutDaemon(spec, t.record, daemonPid, warnings);
  if (t.go === null) return waitsItsTurn(deps, t, `a free ${role}`, warnings, daemonPid);
  const s = await deps.runtime.findSession(t.go);
  if (!s || isRemote(s) || s.gone || s.waiting) return failTyping(deps, t.record, t.go, false, new Error(s?.gone ?? (s?.waiting ? `it waits at ${s.waiting}` : "it is not running any more")));
  if (spec.type === "loop") refuseShellInLoop(t.go, s.agent);
  try {
    const w = await deps.runtime.prompt(s, textForAgent(deps, t.record, t.go), undefined, readsCommands(s.agent) ? "command" : undefined);
    if (w) warnings.push(w);
  } catch (e) {
    return failTyping(deps, t.record, t.go, false, e);
  }
  return { record: t.record, daemon_pid: daemonPid, warnings, position: null };
}
