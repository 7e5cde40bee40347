// Creating a session (docs/sessions.md): validate, check for a conflict, claim a pane and start
// the agent under the server's pane-claim lock, write the row (adopting the daemon's registration
// of our own pane), onboard, submit a job, reconcile once, make sure the daemon runs. With a
// worktree the agent runs in a git worktree of its own (lib/worktrees): checked before, made
// before the launch (tmux) or by herdr in it, and removed again when the create fails.
import { existsSync } from "node:fs";
import onboardingTemplate from "../../assets/onboarding.md" with { type: "text" };
import { type AgentKind, agentKind, agentMcpArgs, commandLine, grantArgs, idField, isVerified } from "../../agents/kinds/index.ts";
import { serverEntry } from "../../sys/self.ts";
import { adoptPane, decide, placeRow } from "../../fleet/adopt.ts";
import { defaultSessionName } from "../../fleet/naming.ts";
import { hasPolicy, markPolicy } from "../../fleet/policy.ts";
import { shJoin } from "../../mux/exec.ts";
import { resolveMuxTarget } from "../../mux/index.ts";
import { defaultTmuxServer, rememberTmuxServer } from "../../mux/workspace-server.ts";
import { findRows, sectionOf } from "../../registry/rows.ts";
import type { Row } from "../../registry/types.ts";
import { agentMam } from "../../sys/agent-mam.ts";
import { conflict, EXIT, MamError, usageError } from "../../sys/errors.ts";
import { field } from "../../sys/fields.ts";
import { info, type Notice, note, warning } from "../../sys/notice.ts";
import { checkName } from "../../sys/names.ts";
import { recordKey } from "../../sys/record-key.ts";
import { isoUtc } from "../../sys/time.ts";
import { addWorktree } from "../../worktrees/git.ts";
import { ensureWorktreesDir, liveWorktreeOf, planWorktree, recordOf, type WorktreeRecord } from "../../worktrees/plan.ts";
import { undoWorktree } from "../../worktrees/remove.ts";
import type { Deps } from "../deps.ts";
import { checkJob } from "../job/rules.ts";
import { briefPath, ensureDaemonNoticed, type JobInput, submitJob, type SubmitOptions } from "../job/submit.ts";
import { checkCreate, checkRole } from "./rules.ts";
import { reconcileOnce } from "../reconcile.ts";
import { type AfterStart, afterStart } from "./after-start.ts";
import { askedSpec, checkSandbox } from "../../sandbox/spec.ts";
import { readSandboxDefault } from "../../sandbox/default.ts";
import { agentEnv, forgetTriedPane, launch } from "./launch.ts";

export const CREATED_NOTE = "created by mam create";

/** a job for the new session: a job's input without its target */
export type JobForNew = Omit<JobInput, "to">;

export interface CreateInput {
  agent: string;
  role: string;
  /** default <workspace slug>-<role>-<agent> */
  name?: string;
  mux?: "herdr" | "tmux";
  herdr_server?: string;
  tmux_server?: string;
  start_server: boolean;
  /** type the onboarding message into the new agent */
  onboard: boolean;
  /** a job (its text) for the new session, submitted right after it is created */
  submit_job?: string;
  /** give the agent mam's MCP tools (`mam mcp` for this workspace; claude and codex) */
  mcp: boolean;
  /** with mcp: every mam tool pre-approved (claude: --allowedTools=mcp__mam), not only those that cannot run a command or answer a dialog */
  mcp_all_tools?: boolean;
  /** false: start the agent without mam's pre-approved commands (the kind's grants, lib/agents/kinds/) */
  grant: boolean;
  /** the agent's own extra arguments */
  agent_args: string[];
  /** a git worktree of its own on this branch ("" or absent with worktree_default: the session's name) */
  worktree?: string;
  /** with worktree: the commit a new branch starts from */
  base?: string;
  /** a daily cap (per UTC day) in dollars and in tokens (docs/cost.md) */
  daily_budget_usd?: number;
  daily_max_tokens?: number;
  /** on-failure: the daemon resumes the agent when it dies (lib/fleet/restart.ts); default no */
  restart?: "no" | "on-failure";
  /** with restart on-failure: restarts per hour before the daemon gives up (default 3) */
  max_restarts?: number;
  /** what mam does when the agent reaches a usage limit (docs/unattended.md): wait (default), resume at the reset, fail its job over */
  on_limit?: "wait" | "resume" | "failover";
  /** bwrap: the agent runs in a sandbox (docs/sandbox.md); default MAM_SANDBOX, else none */
  sandbox?: "none" | "bwrap";
  /** with sandbox bwrap: none, model (default: MAM_SANDBOX_NET, else model) or all */
  net?: "none" | "model" | "all";
  /** with net model: endpoints HOST:PORT besides the model's */
  allow?: string[];
}

/** what a create does and reports: the created session, then its job, the reconcile, the daemon */
export interface CreateOutcome extends Created {
  job_id: string | null;
  /** the subscriber daemon's pid; null when none runs (MAM_NO_SUBSCRIBER_DAEMON=1): the name every result gives it */
  daemon_pid: number | null;
  /** the same as daemon_pid: its name before, kept for scripts that read it */
  watchdog_pid: number | null;
}

export interface Created extends AfterStart {
  name: string;
  agent: string;
  role: string;
  backend: "herdr" | "tmux";
  /** the same as backend (the name the JSON and the MCP results use) */
  mux: "herdr" | "tmux";
  server: string;
  pane: string;
  adopted: boolean;
  session_id: string | null;
  session_id_source: "assigned" | "pending-discovery";
  start_command: string;
  /** the session's git worktree, when it has one */
  worktree: WorktreeRecord | null;
}

export function conflictError(name: string): MamError {
  const e = conflict(`${name} already running in agent-sessions.yaml`);
  return new MamError(e.message, e.exitCode, undefined, { stdout: true });
}

/** said once by a create of a kind mam has not run for real (agent kinds: VERIFIED) */
export function unverifiedNote(kind: string): Notice {
  return note(`mam has not verified the ${kind} kind: its start and resume arguments, dialogs and screen rules come from ${kind}'s docs; see the kinds table in docs/sessions.md`);
}

/** the onboarding message; `mam` is the words that run mam in the agent's shell (agentMam) */
export function onboardingText(name: string, agent: string, role: string, ws: string, wt?: WorktreeRecord, mam: string = agentMam()): string {
  const text = onboardingTemplate
    .trim()
    .replaceAll("{{mam}}", mam)
    .replaceAll("{{name}}", name)
    .replaceAll("{{agent}}", agent)
    .replaceAll("{{role}}", role)
    .replaceAll("{{workspace}}", ws);
  // the skills and other docs say `mam`: name what the agent's shell runs instead
  const named = mam === "mam" ? text : `${text} Where the mam skills say \`mam\`, run \`${mam}\`.`;
  if (!wt) return named;
  return `${named} You work in your own git worktree ${wt.path} on branch ${wt.branch} (made from ${wt.base}): edit and commit there, never in ${ws}; mam's state stays in ${ws}, so run mam commands with --workspace ${ws}.`;
}

/**
 * The whole create: the session, then `job` (or the submit_job text) submitted to it, one
 * reconcile pass (a failure there does not undo the create), and the daemon.
 */
export async function createAndFollowUp(deps: Deps, o: CreateInput, jobFor?: JobForNew, submit: SubmitOptions = {}, signal: AbortSignal = NEVER): Promise<CreateOutcome> {
  const job: JobForNew | undefined = jobFor ?? (o.submit_job !== undefined ? { prompt: o.submit_job } : undefined);
  // the job's own options are checked before the session is made (a bad one changes nothing);
  // its brief file too (the new session's worktree lies inside the workspace)
  if (job) checkJob({ ...job, to: sessionNameOf(deps.ws, o) });
  if (job?.brief_file !== undefined) briefPath(job.brief_file, deps.ws, submit.confineBrief ? { within: [deps.ws] } : { anywhere: true });
  const c = await createSession(deps, o, signal);
  const warnings: Notice[] = [...c.warnings];
  // a job for the new session
  let jobId: string | null = null;
  if (job && c.waiting_at !== null) {
    // typed into a dialog, the job header would answer it: the user answers it first
    warnings.push(warning(`the job was not submitted: ${c.name} waits at ${c.waiting_at}; once it is answered: mam job submit --to ${c.name} …`));
  } else if (job) {
    const s = await submitJob(deps, { ...job, to: c.name }, submit);
    warnings.push(...s.warnings);
    jobId = s.record.job_id;
    await deps.registry.mutate((d) => {
      const r = d[sectionOf(c.backend)].find((x) => x.name === c.name && x.status === "running");
      if (r) r.delegate_job_id = jobId!;
    });
  }
  // one reconcile pass; a failure here does not undo the create
  try {
    await reconcileOnce(deps, { dry_run: false });
  } catch (e) {
    warnings.push(warning(`the end-of-create reconcile failed (${(e as Error).message})`));
  }
  // the daemon
  const pid = await ensureDaemonNoticed(deps, warnings, "jobs are tracked through their journals");
  return { ...c, job_id: jobId, daemon_pid: pid, watchdog_pid: pid, warnings: dedupe(warnings) };
}

/** each notice once (the daemon says it is off once, though submit and create both ask) */
const dedupe = (ns: Notice[]): Notice[] => ns.filter((n, i) => ns.findIndex((m) => m.level === n.level && m.text === n.text) === i);

/** the session's name: the one asked for, else `<slug>-<role>-<agent>`; exit 2 when invalid */
export function sessionNameOf(ws: string, o: Pick<CreateInput, "agent" | "role" | "name">): string {
  return checkName(o.name ?? defaultSessionName(ws, checkRole(o.role), agentKind(o.agent).kind), "session name");
}

/**
 * the kind's executable is on the PATH the agent gets, where mam decides that PATH: tmux (its
 * launcher sets exactly that PATH) and kinds mam types into a herdr pane it made with it. A kind
 * herdr starts itself (`agent start`) is typed by herdr into the pane's own shell, whose start-up
 * files may add folders mam does not see (~/.local/bin): herdr resolves it, mam does not refuse.
 */
export function checkInstalled(kind: AgentKind, backend: "herdr" | "tmux", path: string): void {
  if (backend === "herdr" && kind.herdrKind !== null) return;
  const exe = commandLine(kind, [])[0]!;
  if (Bun.which(exe, { PATH: path }) !== null) return;
  throw new MamError(
    `agent kind '${kind.kind}' runs '${exe}', which is not on the agent's PATH; nothing was started`,
    EXIT.FAIL,
    `install it (or put its folder on PATH), or choose another ${field("agent")} (${field("agent", "demo")} tries mam without an AI agent)`,
  );
}

const NEVER = new AbortController().signal;

/**
 * the error of a create stopped by its signal (SIGINT / SIGTERM through the CLI: exit 130 / 143;
 * an MCP client's cancel): what it left, said in `left`
 */
function interrupted(signal: AbortSignal, name: string, left: string, hint: string): MamError {
  const r = signal.reason;
  const why = r instanceof MamError ? r.message : "interrupted";
  return new MamError(`the create of '${name}' was ${why}: ${left}`, r instanceof MamError ? r.exitCode : EXIT.FAIL, hint);
}

/**
 * Create one session. An interruption (`signal`: Ctrl-C, SIGTERM, an MCP cancel) never leaves an
 * agent without its row (review R33): before the row is written, what this create started (its
 * pane, its worktree) is closed, as a failed start does; once it is written, the session stays
 * and only the wait for its prompt (and the onboarding) is given up. A kill -9 cannot be caught:
 * the tmux session carries the agent's kind and role (@mam_agent, @mam_role) for the daemon's
 * adoption.
 */
export async function createSession(deps: Deps, o: CreateInput, signal: AbortSignal = NEVER): Promise<Created> {
  // 1. validate everything before any side effect
  checkCreate(o);
  const ws = deps.ws;
  const kind = agentKind(o.agent);
  const role = o.role;
  const name = sessionNameOf(ws, o);
  const mcpArgs = o.mcp ? agentMcpArgs(kind.kind, serverEntry(ws), o.mcp_all_tools === true) : [];
  if ((o.daily_budget_usd !== undefined || o.daily_max_tokens !== undefined) && kind.usage === null) {
    throw usageError(`a daily cap needs the agent's usage, and mam cannot read the records of ${kind.kind} (docs/cost.md)`, `leave out ${field("daily_budget_usd")} and ${field("daily_max_tokens")}`);
  }
  if (o.on_limit === "resume" && kind.continueAtReset === null) {
    throw usageError(`${field("on_limit", "resume")} types the agent's own "continue" after the reset, and mam knows none for ${kind.kind} (docs/unattended.md#resume-at-reset)`, `give ${field("on_limit", "wait")} or ${field("on_limit", "failover")}`);
  }
  const grant = o.grant !== false;
  const grants = grant ? grantArgs(kind.kind, deps.env) : [];
  // no --tmux-server: MAM_TMUX_SERVER, else the one this workspace remembers (docs/tmux.md)
  const target = resolveMuxTarget({ ...o, tmux_default: defaultTmuxServer(ws, deps.env)?.server }, deps.env);
  // the sandbox: its options, the workspace, bwrap itself (docs/sandbox.md)
  const wsDefault = o.sandbox === undefined && deps.env.MAM_SANDBOX === undefined ? readSandboxDefault(ws) : undefined;
  const sandboxSpec = askedSpec(o, kind.kind, deps.env, wsDefault);
  if (sandboxSpec && o.mcp) throw usageError(`${field("mcp")} cannot go with ${field("sandbox", "bwrap")}: mam's MCP server needs the workspace the sandbox hides`);
  checkInstalled(kind, target.backend, agentEnv(ws, name, deps.env).PATH!);
  const sandbox = sandboxSpec ? { spec: sandboxSpec, bwrap: checkSandbox(sandboxSpec, { ws, backend: target.backend }, deps.env) } : undefined;
  const section = sectionOf(target.backend);
  const t0 = deps.clock.epoch();

  // 2. conflict check
  const before = deps.registry.read();
  const d0 = decide(before, name, t0, { section, server: target.server });
  if (d0.kind === "conflict") throw conflictError(name);
  // a stopped session of this name that keeps its worktree is not replaced: its work would be lost from view
  const kept = findRows(before, name)
    .map((r) => liveWorktreeOf(r.row))
    .find((w) => w !== undefined && existsSync(w.path));
  if (kept) throw conflict(`session '${name}' keeps its worktree ${kept.path} (branch ${kept.branch})`, `resume it with: mam resume ${name}; or remove the worktree first: mam worktree remove ${name}`);
  // the worktree's checks (git repository, branch, base, folder) before anything is made
  const plan = o.worktree !== undefined ? planWorktree(ws, name, o.worktree === "" ? undefined : o.worktree, o.base, deps.git) : undefined;
  // only what this create made is undone (a concurrent create of the same name made its own)
  const made: { worktree: boolean; pane?: string } = { worktree: false };
  const undo = () => {
    if (plan && made.worktree) undoWorktree(ws, plan, deps.git);
  };
  if (plan) {
    ensureWorktreesDir(ws);
    // tmux: mam makes it; herdr makes it itself (launch), so that it shows it as a workspace
    if (target.backend === "tmux") {
      addWorktree(ws, plan.path, plan.branch, plan.newBranch ? plan.base_commit : undefined, deps.git);
      made.worktree = true;
    }
  }

  // 3. claim a pane and start the agent, under the pane-claim lock
  const sessionId = kind.assignsId ? crypto.randomUUID() : undefined;
  const taken = new Set<string>(
    before[section].filter((r) => r.status === "running" && typeof r.pane?.id === "string").map((r) => r.pane!.id as string),
  );
  if (signal.aborted) {
    undo();
    throw interrupted(signal, name, "nothing was started", "run the create again");
  }
  let l: Awaited<ReturnType<typeof launch>>;
  try {
    l = await launch(deps, {
      name,
      kind,
      role,
      args: [...kind.freshArgs(sessionId), ...grants, ...mcpArgs, ...o.agent_args],
      backend: target.backend,
      server: target.server,
      startServer: o.start_server,
      taken,
      cwd: plan?.path,
      made,
      sandbox,
      herdrWorktree:
        plan && target.backend === "herdr" ? { cwd: ws, branch: plan.branch, base: plan.newBranch ? plan.base_commit : undefined, path: plan.path, label: name } : undefined,
    });
  } catch (e) {
    undo();
    await forgetTriedPane(deps, section, target.server, made.pane, t0, name);
    throw e;
  }
  // interrupted while the agent started: close it, as a failed start does (no agent without a row)
  if (signal.aborted) {
    await l.mux.close(l.pane.id).catch(() => {});
    l.lock.close();
    undo();
    throw interrupted(signal, name, `closed its agent's pane ${l.pane.id}; no session was made`, "run the create again");
  }
  const wt = plan ? recordOf(plan, l.worktreeWorkspace) : undefined;

  // 4. the row, under the registry lock; then the pane lock goes
  let adopted = false;
  let renamed: string[] = [];
  try {
    const row: Row = {
      name,
      status: "running",
      role,
      agent: kind.kind,
      ...(target.backend === "herdr"
        ? { herdr_session: target.server, herdr_server: target.server, herdr_session_created_at: isoUtc(t0), herdr_session_epoch: t0 }
        : { tmux_server: target.server, tmux_session_created_at: isoUtc(t0), tmux_session_epoch: t0 }),
      ...(l.agentName && l.agentName !== name ? { herdr_agent_name: l.agentName } : {}),
      pane: {
        id: l.pane.id,
        ...(l.pid !== undefined ? { pid: l.pid } : {}),
        ...(l.cmd !== undefined ? { cmd: l.cmd } : {}),
        cmd_full: l.cmdFull,
        cwd: wt?.path ?? ws,
      },
      session_id_source: sessionId ? "assigned" : "pending-discovery",
      ...(sessionId ? { [idField(kind.kind)]: sessionId } : {}),
      last_visible_status: "running",
      last_visible_note: CREATED_NOTE,
      start_command: shJoin(l.argv),
      ...(wt ? { worktree: wt } : {}),
      // resume and restart start it in the same sandbox
      ...(sandboxSpec ? { sandbox: sandboxSpec } : {}),
      // resume gives the agent the mam tools again
      ...(o.mcp ? { mcp_tools: o.mcp_all_tools ? "all" : true } : {}),
      // resume keeps an opt-out of the grants
      ...(grant ? {} : { grants: false }),
      ...(o.daily_budget_usd !== undefined ? { daily_budget_usd: o.daily_budget_usd } : {}),
      ...(o.daily_max_tokens !== undefined ? { daily_max_tokens: o.daily_max_tokens } : {}),
      // the daemon brings it back when it dies (resume keeps both)
      ...(o.restart === "on-failure" ? { restart: "on-failure" as const, ...(o.max_restarts !== undefined ? { max_restarts: o.max_restarts } : {}) } : {}),
      ...(o.on_limit !== undefined && o.on_limit !== "wait" ? { on_limit: o.on_limit } : {}),
    };
    // the daemon acts on a policy only under this user's mark (a cloned repository's rows carry none)
    if (hasPolicy(row)) {
      const key = recordKey(deps.env, true);
      if (key !== undefined) markPolicy(row, key, ws);
    }
    await deps.registry.mutate((d, tx) => {
      const dn = decide(d, name, t0, { section, server: target.server });
      if (dn.kind === "conflict") throw conflictError(name);
      tx.allowRoleChange(name);
      adopted = placeRow(d, section, row).adopted;
      renamed = adoptPane(d, section, target.server, l.pane.id, t0, name);
    });
  } catch (e) {
    // our agent must not be left running without a row: close the pane we claimed (it carries our label)
    await l.mux.close(l.pane.id).catch(() => {});
    undo();
    throw e;
  } finally {
    l.lock.close();
  }
  // a server given to a create is the workspace's from now on (its later creates need no flag)
  const rememberNote: Notice[] = [];
  if (target.backend === "tmux" && o.tmux_server !== undefined && o.tmux_server !== "") {
    try {
      rememberTmuxServer(ws, target.server);
    } catch (e) {
      rememberNote.push(warning(`could not remember tmux server '${target.server}' for this workspace (${(e as Error).message}); give ${field("tmux_server")} again next time`));
    }
  }

  // 5. once the agent is at its input prompt, its onboarding; never into a dialog (after-start.ts),
  // never into a shell (it would run the text: kind.reads)
  const onboard = o.onboard && kind.reads === "prose";
  const after = await afterStart({
    mux: l.mux,
    name,
    kind: kind.kind,
    backend: target.backend,
    server: target.server,
    paneId: l.pane.id,
    cwd: wt?.path ?? ws,
    env: deps.env,
    text: onboard ? onboardingText(name, kind.kind, role, ws, wt, agentMam(deps.env)) : undefined,
    started: l.pane,
    ...(l.pid !== undefined ? { pid: l.pid } : {}),
    signal,
  });
  // interrupted once the row was written: the session is whole; its wait (and onboarding) is given up
  if (signal.aborted) {
    const typed = after.onboarding !== "not sent";
    throw interrupted(signal, name, `${name} runs in pane ${l.pane.id}${typed ? "" : ", without its onboarding"}`, `it is registered: mam status shows it, mam stop ${name} closes it`);
  }
  if (o.onboard && !onboard) after.warnings.push(info(`no onboarding for a ${kind.kind} session (it would run the text); a job to it is a command that mam runs`));
  return {
    name,
    agent: kind.kind,
    role,
    backend: target.backend,
    mux: target.backend,
    server: target.server,
    pane: l.pane.id,
    adopted,
    session_id: sessionId ?? null,
    session_id_source: sessionId ? "assigned" : "pending-discovery",
    start_command: shJoin(l.argv),
    worktree: wt ?? null,
    ...after,
    // the daemon saw the pane before its label and registered it under a name of its own
    warnings: [
      ...(isVerified(kind.kind) ? [] : [unverifiedNote(kind.kind)]),
      ...renamed.map((n) => note(`the daemon registered pane ${l.pane.id} as ${n} while ${name} was being created; ${name} took it over`)),
      ...rememberNote,
      ...after.warnings,
    ],
  };
}
