// mam create (SPEC §5.2): validate, check for a conflict, claim a pane and start the agent under
// the server's pane-claim lock, write the row (adopting the monitor's registration of our own
// pane), onboard, submit a job, reconcile once, ensure the daemon.
import { randomUUID } from "node:crypto";
import onboardingTemplate from "../assets/onboarding.md" with { type: "text" };
import { agentKind, idField, isHerdrManaged } from "../agents/kinds.ts";
import { type MuxChoice, resolveMuxTarget } from "../mux/index.ts";
import { shJoin } from "../mux/exec.ts";
import { sectionOf } from "../registry/rows.ts";
import { mutateRegistry, readRegistry, registryPath } from "../registry/index.ts";
import type { Row } from "../registry/types.ts";
import { conflict, MamError, usageError } from "../sys/errors.ts";
import { checkName } from "../sys/names.ts";
import type { Env } from "../sys/paths.ts";
import { epochNow, isoUtc } from "../sys/time.ts";
import { decide, placeRow } from "./adopt.ts";
import { launch } from "./launch.ts";
import { awaitOnboardReady } from "./ready.ts";
import { defaultSessionName } from "./naming.ts";

export const CREATED_NOTE = "created by mam create";

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
  /** submit this job text to the new session right after it is created (SPEC §5.2 step 6) */
  submitJob?: string;
}

/** what `mam create` does and reports: the created session, then steps 6–8 of SPEC §5.2 */
export interface CreateOutcome extends Created {
  job_id: string | null;
  /** the subscriber daemon's pid; null when none runs (MAM_NO_SUBSCRIBER_DAEMON=1) */
  watchdog_pid: number | null;
  /** non-fatal problems after the session was created, one line each (printed on stderr) */
  warnings: string[];
}

export interface Created {
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

export function onboardingText(name: string, agent: string, role: string, ws: string): string {
  return onboardingTemplate
    .trim()
    .replaceAll("{{name}}", name)
    .replaceAll("{{agent}}", agent)
    .replaceAll("{{role}}", role)
    .replaceAll("{{workspace}}", ws);
}

/**
 * The whole use case of `mam create` (SPEC §5.2), shared by the CLI, the demo and other front
 * ends: create the session, submit `submitJob` to it, run one reconcile pass (a failure there
 * does not undo the create) and make sure the subscriber daemon runs.
 */
export async function createAndFollowUp(o: CreateOptions): Promise<CreateOutcome> {
  const c = await createSession(o);
  const warnings: string[] = [];
  // 6. a job for the new session
  let jobId: string | null = null;
  if (o.submitJob !== undefined) {
    const [{ submitJob }, { loadJobRuntime }, { brokerConfigFromEnv }] = await Promise.all([
      import("../jobs/submit.ts"),
      import("../jobs/runtime.ts"),
      import("../jobs/broker-config.ts"),
    ]);
    const s = await submitJob(
      o.ws,
      { to: c.name, prompt: o.submitJob, topicPrefix: brokerConfigFromEnv(o.env).topicPrefix, cwd: process.cwd() },
      await loadJobRuntime(o.ws, o.env),
    );
    jobId = s.record.job_id;
    const path = registryPath(o.ws, o.env);
    await mutateRegistry(path, (d) => {
      const r = d[sectionOf(c.backend)].find((x) => x.name === c.name && x.status === "running");
      if (r) r.delegate_job_id = jobId!;
    });
  }
  // 7. one reconcile pass; a failure here does not undo the create
  const { reconcileOnce } = await import("../monitor/reconcile.ts");
  try {
    await reconcileOnce(o.ws, o.env, { dryRun: false });
  } catch (e) {
    warnings.push(`WARNING: the end-of-create reconcile failed (${(e as Error).message})`);
  }
  // 8. the subscriber daemon
  const { ensureDaemon } = await import("../monitor/spawn.ts");
  const pid = await ensureDaemon(o.ws, o.env);
  return { ...c, job_id: jobId, watchdog_pid: pid ?? null, warnings };
}

export async function createSession(o: CreateOptions): Promise<Created> {
  // 1. validate everything before any side effect
  const kind = agentKind(o.agent);
  const role = checkRole(o.role);
  const name = checkName(o.name ?? defaultSessionName(o.ws, role, kind.kind), "session name");
  const target = resolveMuxTarget(o.choice, o.env);
  const section = sectionOf(target.backend);
  const t0 = epochNow();
  const path = registryPath(o.ws, o.env);

  // 2. conflict check
  const before = readRegistry(path);
  const d0 = decide(before, name, t0, { section, server: target.server });
  if (d0.kind === "conflict") throw conflictError(name);

  // 3. claim a pane and start the agent, under the pane-claim lock
  const sessionId = kind.assignsId ? randomUUID() : undefined;
  const taken = new Set<string>(
    before[section].filter((r) => r.status === "running" && typeof r.pane?.id === "string").map((r) => r.pane!.id as string),
  );
  const l = await launch({
    ws: o.ws,
    name,
    kind,
    args: [...kind.freshArgs(sessionId), ...o.agentArgs],
    backend: target.backend,
    server: target.server,
    startServer: o.startServer,
    taken,
    env: o.env,
  });

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
        cwd: o.ws,
      },
      session_id_source: sessionId ? "assigned" : "pending-discovery",
      ...(sessionId ? { [idField(kind.kind)]: sessionId } : {}),
      last_visible_status: "running",
      last_visible_note: CREATED_NOTE,
      start_command: shJoin(l.argv),
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
    throw e;
  } finally {
    l.lock.close();
  }

  // 5. onboarding, never into a dialog (ready.ts)
  if (o.onboard) {
    const r = await awaitOnboardReady(l.mux, l.pane.id, kind.kind, o.env);
    if (r.kind !== "ready") {
      throw new MamError(`${name} started, but the onboarding prompt was not sent: ${r.why}`, 1, `answer it in pane ${l.pane.id}, then send the session its instructions yourself`);
    }
    try {
      await l.mux.submit(l.pane.id, onboardingText(name, kind.kind, role, o.ws), isHerdrManaged(kind.kind));
    } catch (e) {
      throw new MamError(`${name} started, but the onboarding prompt could not be sent (${(e as Error).message})`, 1, "the session runs; send it instructions yourself");
    }
  }
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
  };
}
