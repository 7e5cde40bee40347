// mam create (SPEC §5.2): validate, check for a conflict, claim a pane and start the agent under
// the server's pane-claim lock, write the row (adopting the monitor's registration of our own
// pane), onboard, submit a job, reconcile once, ensure the daemon. With --worktree the agent runs
// in a git worktree of its own (lib/worktrees): checked before, made before the launch (tmux) or
// by herdr in it, and removed again when the create fails.
import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import onboardingTemplate from "../../assets/onboarding.md" with { type: "text" };
import { agentKind, agentMcpArgs, grantArgs, idField } from "../../agents/kinds/index.ts";
import { type MuxChoice, resolveMuxTarget } from "../../mux/index.ts";
import { shJoin } from "../../mux/exec.ts";
import { findRows, sectionOf } from "../../registry/rows.ts";
import { mutateRegistry, readRegistry, registryPath } from "../../registry/index.ts";
import type { Row } from "../../registry/types.ts";
import { conflict, MamError, usageError } from "../../sys/errors.ts";
import { checkName } from "../../sys/names.ts";
import type { Env } from "../../sys/paths.ts";
import { epochNow, isoUtc } from "../../sys/time.ts";
import type { SubmitOptions } from "../job/submit.ts";
import { addWorktree } from "../../worktrees/git.ts";
import { ensureWorktreesDir, liveWorktreeOf, planWorktree, recordOf, type WorktreeRecord } from "../../worktrees/plan.ts";
import { undoWorktree } from "../../worktrees/remove.ts";
import { serverEntry } from "../../sys/self.ts";
import { agentMam } from "../../sys/agent-mam.ts";
import { decide, placeRow } from "../../fleet/adopt.ts";
import { launch } from "./launch.ts";
import { type AfterStart, afterStart } from "./after-start.ts";
import { defaultSessionName } from "../../fleet/naming.ts";

export const CREATED_NOTE = "created by mam create";

/** a job for the new session: `mam job submit`'s options without the target */
export type JobOptions = Omit<SubmitOptions, "to" | "topicPrefix">;

export interface CreateOptions {
  ws: string;
  agent: string;
  role: string;
  name?: string;
  choice: MuxChoice;
  startServer: boolean;
  onboard: boolean;
  agentArgs: string[];
  env: Env;
  /**
   * submit this job to the new session right after it is created (SPEC §5.2 step 6): its text
   * (`--submit-job`), or every option of `mam job submit` but the target (`job submit --worktree`)
   */
  submitJob?: string | JobOptions;
  /** `--worktree [BRANCH] [--base REF]`: the agent gets a git worktree of its own (issue 18) */
  worktree?: { branch?: string; base?: string };
  /** give the agent mam's MCP tools (`mam mcp` for this workspace; claude and codex) */
  mcp?: boolean;
  /** false (`--no-grant`): start the agent without mam's pre-approved commands (lib/agents/kinds/) */
  grant?: boolean;
}

/** what `mam create` does and reports: the created session, then steps 6–8 of SPEC §5.2 */
export interface CreateOutcome extends Created {
  job_id: string | null;
  /** the subscriber daemon's pid; null when none runs (MAM_NO_SUBSCRIBER_DAEMON=1) */
  watchdog_pid: number | null;
}

export interface Created extends AfterStart {
  name: string;
  agent: string;
  role: string;
  backend: "herdr" | "tmux";
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

export function checkRole(role: string): string {
  if (role.trim() === "" || /[\n\r\t]/.test(role) || role.length > 64) {
    throw usageError(`invalid role '${role.slice(0, 40)}'`, "a role is 1-64 characters on one line");
  }
  return role;
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
 * The whole use case of `mam create` (SPEC §5.2), shared by the CLI, the demo and other front
 * ends: create the session, submit `submitJob` to it, run one reconcile pass (a failure there
 * does not undo the create) and make sure the subscriber daemon runs.
 */
export async function createAndFollowUp(o: CreateOptions): Promise<CreateOutcome> {
  const job: JobOptions | undefined = typeof o.submitJob === "string" ? { prompt: o.submitJob, cwd: process.cwd() } : o.submitJob;
  // the job's own options are checked before the session is made (a bad one changes nothing)
  if (job) (await import("../job/submit.ts")).jobSpecOf({ ...job, to: sessionNameOf(o), topicPrefix: "" });
  const c = await createSession(o);
  const warnings: string[] = [];
  // 6. a job for the new session
  let jobId: string | null = null;
  if (job && c.waiting_at !== null) {
    // typed into a dialog, the job header would answer it: the user answers it first
    warnings.push(`WARNING: the job was not submitted: ${c.name} waits at ${c.waiting_at}; once it is answered: mam job submit --to ${c.name} …`);
  } else if (job) {
    const [{ submitJob }, { loadJobRuntime }, { brokerConfigFromEnv }] = await Promise.all([
      import("../job/submit.ts"),
      import("../../jobs/runtime.ts"),
      import("../../jobs/broker-config.ts"),
    ]);
    const s = await submitJob(o.ws, { ...job, to: c.name, topicPrefix: brokerConfigFromEnv(o.env).topicPrefix }, await loadJobRuntime(o.ws, o.env));
    jobId = s.record.job_id;
    const path = registryPath(o.ws, o.env);
    await mutateRegistry(path, (d) => {
      const r = d[sectionOf(c.backend)].find((x) => x.name === c.name && x.status === "running");
      if (r) r.delegate_job_id = jobId!;
    });
  }
  // 7. one reconcile pass; a failure here does not undo the create
  const { reconcileOnce } = await import("../reconcile.ts");
  try {
    await reconcileOnce(o.ws, o.env, { dryRun: false });
  } catch (e) {
    warnings.push(`WARNING: the end-of-create reconcile failed (${(e as Error).message})`);
  }
  // 8. the subscriber daemon
  const { ensureDaemon } = await import("../../sys/daemon-proc.ts");
  const pid = await ensureDaemon(o.ws, o.env);
  return { ...c, job_id: jobId, watchdog_pid: pid ?? null, warnings: [...c.warnings, ...warnings] };
}

/** the session's name: --session, else `<slug>-<role>-<agent>`; exit 2 when invalid */
export function sessionNameOf(o: Pick<CreateOptions, "ws" | "agent" | "role" | "name">): string {
  return checkName(o.name ?? defaultSessionName(o.ws, checkRole(o.role), agentKind(o.agent).kind), "session name");
}

export async function createSession(o: CreateOptions): Promise<Created> {
  // 1. validate everything before any side effect
  const kind = agentKind(o.agent);
  const role = checkRole(o.role);
  const name = sessionNameOf(o);
  const mcpArgs = o.mcp ? agentMcpArgs(kind.kind, serverEntry(o.ws)) : [];
  const grant = o.grant !== false;
  const grants = grant ? grantArgs(kind.kind, o.env) : [];
  const target = resolveMuxTarget(o.choice, o.env);
  const section = sectionOf(target.backend);
  const t0 = epochNow();
  const path = registryPath(o.ws, o.env);

  // 2. conflict check
  const before = readRegistry(path);
  const d0 = decide(before, name, t0, { section, server: target.server });
  if (d0.kind === "conflict") throw conflictError(name);
  // a stopped session of this name that keeps its worktree is not replaced: its work would be lost from view
  const kept = findRows(before, name)
    .map((r) => liveWorktreeOf(r.row))
    .find((w) => w !== undefined && existsSync(w.path));
  if (kept) throw conflict(`session '${name}' keeps its worktree ${kept.path} (branch ${kept.branch})`, `resume it with: mam resume ${name}; or remove the worktree first: mam worktree remove ${name}`);
  // the worktree's checks (git repository, branch, base, folder) before anything is made
  const plan = o.worktree ? planWorktree(o.ws, name, o.worktree.branch, o.worktree.base, o.env) : undefined;
  // only what this create made is undone (a concurrent create of the same name made its own)
  const made = { worktree: false };
  const undo = () => {
    if (plan && made.worktree) undoWorktree(o.ws, plan, o.env);
  };
  if (plan) {
    ensureWorktreesDir(o.ws);
    // tmux: mam makes it; herdr makes it itself (launch), so that it shows it as a workspace
    if (target.backend === "tmux") {
      addWorktree(o.ws, plan.path, plan.branch, plan.newBranch ? plan.base_commit : undefined, o.env);
      made.worktree = true;
    }
  }

  // 3. claim a pane and start the agent, under the pane-claim lock
  const sessionId = kind.assignsId ? randomUUID() : undefined;
  const taken = new Set<string>(
    before[section].filter((r) => r.status === "running" && typeof r.pane?.id === "string").map((r) => r.pane!.id as string),
  );
  let l: Awaited<ReturnType<typeof launch>>;
  try {
    l = await launch({
      ws: o.ws,
      name,
      kind,
      args: [...kind.freshArgs(sessionId), ...grants, ...mcpArgs, ...o.agentArgs],
      backend: target.backend,
      server: target.server,
      startServer: o.startServer,
      taken,
      env: o.env,
      cwd: plan?.path,
      made,
      herdrWorktree:
        plan && target.backend === "herdr" ? { cwd: o.ws, branch: plan.branch, base: plan.newBranch ? plan.base_commit : undefined, path: plan.path, label: name } : undefined,
    });
  } catch (e) {
    undo();
    throw e;
  }
  const wt = plan ? recordOf(plan, l.worktreeWorkspace) : undefined;

  // 4. the row, under the registry lock; then the pane lock goes
  let adopted = false;
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
        cwd: wt?.path ?? o.ws,
      },
      session_id_source: sessionId ? "assigned" : "pending-discovery",
      ...(sessionId ? { [idField(kind.kind)]: sessionId } : {}),
      last_visible_status: "running",
      last_visible_note: CREATED_NOTE,
      start_command: shJoin(l.argv),
      ...(wt ? { worktree: wt } : {}),
      // resume gives the agent the mam tools again
      ...(o.mcp ? { mcp_tools: true } : {}),
      // resume keeps an opt-out of the grants
      ...(grant ? {} : { grants: false }),
    };
    await mutateRegistry(path, (d, tx) => {
      const dn = decide(d, name, t0, { section, server: target.server });
      if (dn.kind === "conflict") throw conflictError(name);
      tx.allowRoleChange(name);
      adopted = placeRow(d, section, row).adopted;
    });
  } catch (e) {
    // our agent must not be left running without a row: close the pane we claimed (it carries our label)
    await l.mux.close(l.pane.id).catch(() => {});
    undo();
    throw e;
  } finally {
    l.lock.close();
  }

  // 5. once the agent is at its input prompt, its onboarding; never into a dialog (after-start.ts)
  const after = await afterStart({
    mux: l.mux,
    name,
    kind: kind.kind,
    backend: target.backend,
    server: target.server,
    paneId: l.pane.id,
    env: o.env,
    text: o.onboard ? onboardingText(name, kind.kind, role, o.ws, wt, agentMam(o.env)) : undefined,
  });
  return {
    name,
    agent: kind.kind,
    role,
    backend: target.backend,
    server: target.server,
    pane: l.pane.id,
    adopted,
    session_id: sessionId ?? null,
    session_id_source: sessionId ? "assigned" : "pending-discovery",
    start_command: shJoin(l.argv),
    worktree: wt ?? null,
    ...after,
  };
}
