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
import { brokerConfigFromEnv } from "../../jobs/broker-config.ts";
import { isRemote } from "../../jobs/runtime.ts";
import { readsCommands } from "../../agents/kinds/index.ts";
import { jobHeader, shellJobLine } from "../../jobs/header.ts";
import { DEFAULT_IDLE_TIMEOUT_SEC, DEFAULT_MAX_ITERATIONS, DEFAULT_TIMEOUT_SEC, type JobRecord, type JobSpec } from "../../jobs/store.ts";
import { DISABLED_MESSAGE } from "../../sys/daemon-proc.ts";
import { EXIT, MamError, notFound, usageError } from "../../sys/errors.ts";
import { field } from "../../sys/fields.ts";
import { agentMam } from "../../sys/agent-mam.ts";
import { info, type Notice, warning } from "../../sys/notice.ts";
import { checkLimits, dailyLimits, hasLimits, PRICE_HINT } from "../../cost/budget.ts";
import { dayOf, readLedger } from "../../cost/ledger.ts";
import { loadPrices } from "../../cost/prices.ts";
import { meterable } from "../../cost/summary.ts";
import { usageView } from "../../cost/view.ts";
import type { Deps } from "../deps.ts";
import { checkJob } from "./rules.ts";

/** a job, as its op takes it */
export interface JobInput {
  to: string;
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
    agent_session: o.to,
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
  };
}

export interface Submitted {
  record: JobRecord;
  /** the daemon's PID, when one runs */
  daemon_pid: number | null;
  warnings: Notice[];
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

/** a session past its daily cap today takes no job (exit 1, nothing written) */
function overDailyCap(deps: Deps, name: string): void {
  const data = deps.registry.read();
  const row = [...data.herdr_sessions, ...data.tmux_sessions].find((r) => r.name === name && r.status === "running");
  if (!row) return;
  const lim = dailyLimits(row);
  if (!hasLimits(lim)) return;
  const ledger = readLedger(deps.ws);
  if (ledger === "none" || ledger === "broken") return;
  const today = dayOf(deps.clock.ms());
  const c = checkLimits(usageView(ledger.sessions[name]?.days[today] ?? {}, loadPrices(deps.env)), lim, "its daily cap", PRICE_HINT);
  if (c.over) throw new MamError(`session '${name}' ${c.detail} (UTC day ${today}); nothing was submitted`, EXIT.FAIL, "it takes jobs again at 00:00 UTC");
}

/** submit: nothing is written unless the target (and reviewer) sessions exist and can take a prompt */
export async function submitJob(deps: Deps, o: JobInput, opts: SubmitOptions = {}): Promise<Submitted> {
  checkJob(o);
  const rt = deps.runtime;
  // NAME@HOST: a session another host of the team announces (its errors list what exists)
  const target = await rt.findSession(o.to);
  // the brief's scope needs the target (its worktree); its checks come before the target's
  const scope: BriefScope = opts.confineBrief ? { within: [deps.ws, ...(target?.worktree ? [target.worktree.path] : [])] } : { anywhere: true };
  const spec = jobSpecOf(o, deps.ws, brokerConfigFromEnv(deps.env).topicPrefix, scope);
  if (!target) throw notFound(`no running session named '${o.to}' in this workspace (${deps.ws})`, "see: mam status (mam status --fleet for the team's other hosts)");
  if (target.gone) throw new MamError(`session '${o.to}' has no agent any more (${target.gone}); nothing was submitted`, EXIT.FAIL, `mam resume ${o.to} starts it again`);
  if (target.waiting) throw waitingError(`session '${o.to}'`, target.waiting);
  let reviewerName: string | null = null;
  if (spec.type === "loop") refuseShellInLoop(o.to, target.agent);
  let reviewerAgent: string | undefined;
  if (spec.reviewer_session !== null) {
    const reviewer = await rt.findSession(spec.reviewer_session);
    if (!reviewer) throw notFound(`no running session named '${spec.reviewer_session}' (the reviewer) in this workspace (${deps.ws})`, "see: mam status");
    if (reviewer.gone) throw new MamError(`session '${spec.reviewer_session}' (the reviewer) has no agent any more (${reviewer.gone}); nothing was submitted`, EXIT.FAIL, `mam resume ${spec.reviewer_session} starts it again`);
    if (reviewer.waiting) throw waitingError(`session '${spec.reviewer_session}' (the reviewer)`, reviewer.waiting);
    reviewerName = reviewer.name;
    refuseShellInLoop(spec.reviewer_session, reviewer.agent);
    reviewerAgent = reviewer.agent;
  }
  const budgeted = spec.budget_usd != null || spec.max_tokens != null;
  for (const [s, kind] of [[target.name, target.agent], ...(reviewerName ? [[reviewerName, reviewerAgent]] : [])] as [string, string][]) {
    if (budgeted && !meterable(kind)) {
      throw usageError(`a budget needs the usage of ${s}, and mam cannot read the records of ${kind} (docs/cost.md); nothing was submitted`, `leave out ${field("budget_usd")} and ${field("max_tokens")}`);
    }
    if (!s.includes("@")) overDailyCap(deps, s);
  }
  const record = await deps.jobs.register({
    ...spec,
    agent_session: target.name,
    reviewer_session: reviewerName,
    ...(reviewerAgent ? { reviewer_agent: reviewerAgent } : {}),
    agent: target.agent,
    ...(target.worktree ? { worktree: target.worktree } : {}),
  });
  const warnings: Notice[] = [];
  const daemonPid = await ensureDaemonNoticed(deps, warnings, `job ${record.job_id} is tracked through its journal`);
  if (budgeted && daemonPid === null && !target.name.includes("@")) warnings.push(warning(`job ${record.job_id}'s budget is kept by the subscriber daemon, which is not running: nothing counts its usage`));
  try {
    const about = { purpose: "job" as const, job: record };
    const w = readsCommands(target.agent)
      ? await rt.prompt(target, shellJobLine(record, deps.ws, agentMam(deps.env)), about, "command")
      : await rt.prompt(target, jobHeader(record, target.name, deps.ws), about);
    if (w) warnings.push(w);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    await deps.jobs.append(record.job_id, { event: "error", detail: `could not ${isRemote(target) ? "offer the job to" : "prompt"} ${target.name}: ${why}`.slice(0, 2000), source: "mam" });
    throw new MamError(`job ${record.job_id}: could not ${isRemote(target) ? "offer the job to" : "prompt session"} ${target.name} (${why})`, EXIT.FAIL, `the job is marked error; see: mam job status ${record.job_id}`);
  }
  return { record, daemon_pid: daemonPid, warnings };
}
