// The MCP tools of `mam mcp` (issue 17): each one validates its arguments with a JSON schema (zod),
// calls the same use-case function as its CLI command, and returns a structured result plus the
// command's text rendering. Errors are MamErrors; server.ts turns them into tool errors.
import { z } from "zod";
import { kindNames } from "../agents/kinds/index.ts";
import { JOB_STATUSES, type JobEvent, type JobStatus } from "../jobs/event.ts";
import type { Env } from "../sys/paths.ts";

/** what a tool gets besides its arguments */
export interface ToolContext {
  ws: string;
  env: Env;
  /** aborted when the client cancels the call */
  signal: AbortSignal;
  /** an MCP progress notification, when the client asked for them (no-op otherwise) */
  progress(progress: number, message: string, total?: number): Promise<void>;
}

export interface ToolResult {
  data: Record<string, unknown>;
  text: string;
}

export interface ToolDef<S extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  description: string;
  input: S;
  readOnly: boolean;
  run(args: z.infer<z.ZodObject<S>>, ctx: ToolContext): Promise<ToolResult>;
}

const def = <S extends z.ZodRawShape>(d: ToolDef<S>): ToolDef<S> => d;

const sessionName = z.string().min(1).max(64).describe("session name, as `status` lists it");
const jobId = z.string().describe("job id: 8 hex digits, as submit_job returned it");
const seconds = (what: string) => z.number().int().min(0).max(7 * 86400).describe(what);

export const WAIT_DEFAULT_S = 600;
export const WAIT_MAX_S = 3600;
/** a progress notification at least this often during wait_jobs (when the client asked for progress) */
export const HEARTBEAT_MS = Number(process.env.MAM_MCP_HEARTBEAT_MS) > 0 ? Number(process.env.MAM_MCP_HEARTBEAT_MS) : 20_000;

const status = def({
  name: "status",
  description: "List every agent session of the workspace: registry status, live state (working/blocked/idle/dead), pane, current job, drift.",
  input: {},
  readOnly: true,
  async run(_a, ctx) {
    const { sessionStatus } = await import("../ops/session/status-run.ts");
    const s = await sessionStatus(ctx.ws, ctx.env);
    return { data: { ...s.doc }, text: s.text(false) };
  },
});

const createAgent = def({
  name: "create_agent",
  description: "Start a new coding agent (claude, codex, …) in its own pane, register it, and optionally hand it a first job; returns its session name.",
  input: {
    agent: z.string().describe(`agent kind: ${kindNames().join(", ")}`),
    role: z.string().min(1).max(64).describe("its role, e.g. worker or reviewer (immutable once set)"),
    name: sessionName.optional().describe("session name (default <workspace slug>-<role>-<agent>)"),
    mux: z.enum(["herdr", "tmux"]).optional().describe("multiplexer (default: MAM_MUX, else herdr when installed, else tmux)"),
    herdr_server: z.string().optional().describe("herdr server for the pane (default: the one mam runs in, else default)"),
    tmux_server: z.string().optional().describe("private tmux server name (default mam)"),
    start_server: z.boolean().optional().describe("start the herdr server when it is not running"),
    onboard: z.boolean().optional().describe("type the onboarding message into the new agent (default true)"),
    submit_job: z.string().min(1).optional().describe("a job (prompt text) to submit to the new agent right away"),
    mcp: z.boolean().optional().describe("give the new agent these mam tools too (claude and codex)"),
    grant: z.boolean().optional().describe("pre-approve mam's own reporting commands in the agent (claude: mam job event / job status / status; default true); false is create --no-grant"),
    agent_args: z.array(z.string()).optional().describe("extra command-line arguments for the agent itself"),
  },
  readOnly: false,
  async run(a, ctx) {
    const [{ createAndFollowUp }, { createdText }] = await Promise.all([import("../ops/session/create.ts"), import("../ops/session/render.ts")]);
    const c = await createAndFollowUp({
      ws: ctx.ws,
      agent: a.agent,
      role: a.role,
      name: a.name,
      choice: { herdrSession: a.herdr_server, mux: a.mux, tmuxServer: a.tmux_server },
      startServer: a.start_server ?? false,
      onboard: a.onboard ?? true,
      agentArgs: a.agent_args ?? [],
      env: ctx.env,
      submitJob: a.submit_job,
      mcp: a.mcp ?? false,
      grant: a.grant ?? true,
    });
    const { warnings, ...doc } = c;
    return { data: { ...doc, mux: c.backend, warnings }, text: [createdText(c), ...warnings].join("\n") };
  },
});

const stopAgent = def({
  name: "stop_agent",
  description: "Stop an agent session: graceful (resumable later), hard (close its pane now) or soft (archive the row, leave the pane).",
  input: {
    name: sessionName,
    mode: z.enum(["graceful", "hard", "soft"]).optional().describe("graceful (default), hard or soft"),
    reason: z.string().max(500).optional().describe("why (stored as stop_reason; default requested)"),
  },
  readOnly: false,
  async run(a, ctx) {
    const [{ stopSession }, { stoppedText }] = await Promise.all([import("../ops/session/stop.ts"), import("../ops/session/render.ts")]);
    const r = await stopSession({ ws: ctx.ws, name: a.name, mode: a.mode ?? "graceful", purge: false, reason: a.reason ?? "requested", env: ctx.env });
    return { data: { ...r }, text: stoppedText(r) };
  },
});

const resumeAgent = def({
  name: "resume_agent",
  description: "Bring a stopped agent session back with its own conversation (else this workspace's newest of that agent).",
  input: {
    name: sessionName,
    fresh: z.boolean().optional().describe("start a fresh conversation when none is found"),
    start_server: z.boolean().optional().describe("start the herdr server when it is not running"),
  },
  readOnly: false,
  async run(a, ctx) {
    const [{ resumeSession }, { resumedText }] = await Promise.all([import("../ops/session/resume.ts"), import("../ops/session/render.ts")]);
    const r = await resumeSession({ ws: ctx.ws, name: a.name, fresh: a.fresh ?? false, startServer: a.start_server ?? false, env: ctx.env });
    return { data: { ...r }, text: [resumedText(r), ...r.warnings].join("\n") };
  },
});

const submitJobTool = def({
  name: "submit_job",
  description: "Delegate a job to a running agent session (single, or a worker-reviewer loop); returns the job id to pass to wait_jobs.",
  input: {
    to: sessionName.describe("the session that does the work"),
    prompt: z.string().min(1).optional().describe("the task as text (give prompt or brief_file)"),
    brief_file: z.string().min(1).optional().describe("the task as a file the agent reads (relative to the workspace)"),
    from: sessionName.optional().describe("your own session name, to be told when the job ends"),
    type: z.enum(["single", "loop"]).optional().describe("single (default) or loop (a reviewer checks the work until PASS)"),
    reviewer: sessionName.optional().describe("loop jobs: the reviewing session"),
    max_iterations: z.number().int().min(1).max(100).optional().describe("loop jobs: review rounds before giving up (default 3)"),
    timeout_s: seconds("overall time limit in seconds (default 3600; 0 = none)").optional(),
    idle_timeout_s: seconds("time limit without events after started, in seconds (default 120; 0 = none)").optional(),
    expect: z.array(z.string().min(1)).optional().describe("files the job is expected to produce"),
  },
  readOnly: false,
  async run(a, ctx) {
    const [{ submitJob }, { loadJobRuntime }, { brokerConfigFromEnv }, { publicRecord }] = await Promise.all([
      import("../ops/job/submit.ts"),
      import("../jobs/runtime.ts"),
      import("../jobs/broker-config.ts"),
      import("../jobs/store.ts"),
    ]);
    const { record } = await submitJob(
      ctx.ws,
      {
        to: a.to,
        prompt: a.prompt,
        briefFile: a.brief_file,
        from: a.from,
        timeoutSec: a.timeout_s,
        idleTimeoutSec: a.idle_timeout_s,
        expect: a.expect,
        type: a.type,
        reviewer: a.reviewer,
        maxIterations: a.max_iterations,
        topicPrefix: brokerConfigFromEnv(ctx.env).topicPrefix,
        cwd: ctx.ws,
      },
      await loadJobRuntime(ctx.ws, ctx.env),
    );
    return { data: { ...publicRecord(record) }, text: `job ${record.job_id} submitted to ${record.agent_session}` };
  },
});

const jobStatusTool = def({
  name: "job_status",
  description: "Show one job: its status (from its event journal), task, target session, last event.",
  input: { job_id: jobId },
  readOnly: true,
  async run(a, ctx) {
    const [{ jobStatus }, { statusText }] = await Promise.all([import("../jobs/query.ts"), import("../jobs/render.ts")]);
    const v = jobStatus(ctx.ws, a.job_id);
    return { data: { ...v }, text: statusText(v) };
  },
});

const listJobsTool = def({
  name: "list_jobs",
  description: "List the jobs of the workspace, optionally only those in one status.",
  input: { status: z.enum(JOB_STATUSES).optional().describe("only jobs in this status") },
  readOnly: true,
  async run(a, ctx) {
    const [{ listJobs }, { listText }] = await Promise.all([import("../jobs/query.ts"), import("../jobs/render.ts")]);
    const jobs = listJobs(ctx.ws, a.status as JobStatus | undefined);
    return { data: { workspace: ctx.ws, jobs }, text: jobs.length ? listText(jobs) : a.status ? `no ${a.status} jobs` : "no jobs" };
  },
});

const jobLogs = def({
  name: "job_logs",
  description: "Read a job's event journal (started, progress, permission_required, completed, …), oldest first.",
  input: {
    job_id: jobId,
    last: z.number().int().min(1).max(10000).optional().describe("only the last N events"),
  },
  readOnly: true,
  async run(a, ctx) {
    const [{ jobEvents }, { eventLine }] = await Promise.all([import("../jobs/query.ts"), import("../jobs/render.ts")]);
    const all = jobEvents(ctx.ws, a.job_id);
    const events = a.last === undefined ? all : all.slice(-a.last);
    return { data: { job_id: a.job_id, total: all.length, events }, text: events.length ? events.map(eventLine).join("\n") : `job ${a.job_id} has no events yet` };
  },
});

const cancelJobTool = def({
  name: "cancel_job",
  description: "Cancel a job that has not ended: journal a cancelled event and tell its agent to stop.",
  input: { job_id: jobId },
  readOnly: false,
  async run(a, ctx) {
    const { cancelJob } = await import("../ops/job/cancel.ts");
    const c = await cancelJob(ctx.ws, a.job_id, ctx.env);
    const text = c.cancelled ? `job ${c.job_id} cancelled${c.told ? `; told ${c.told}` : ""}` : `job ${c.job_id} has already ended (${c.status}); nothing to cancel`;
    return { data: { ...c }, text: [text, ...c.warnings.map((w) => `WARNING: ${w}`)].join("\n") };
  },
});

/** one progress line per arriving event */
const eventNote = (e: JobEvent) => `job ${e.job_id} ${e.event}${e.detail ? `: ${e.detail.slice(0, 200)}` : ""}`;

const waitJobsTool = def({
  name: "wait_jobs",
  description:
    "Wait until jobs end (all, or any), up to a timeout; streams progress as events arrive and returns early when an agent needs permission (outcome attention).",
  input: {
    job_ids: z.array(jobId).min(1).max(100).describe("the jobs to wait for"),
    mode: z.enum(["all", "any"]).optional().describe("all (default): until every job ends; any: until the first one ends"),
    timeout_s: z.number().min(0).max(WAIT_MAX_S).optional().describe(`give up after this many seconds (default ${WAIT_DEFAULT_S}); call again to keep waiting`),
    return_on_permission: z.boolean().optional().describe("return as soon as an agent reports permission_required (default true)"),
  },
  readOnly: true,
  async run(a, ctx) {
    const [{ checkJobId }, { requireRecord }, { waitJobs, publicWait, waitExitCode }, { brokerConfigFromEnv }, { waitLine }] = await Promise.all([
      import("../sys/names.ts"),
      import("../jobs/store.ts"),
      import("../jobs/wait.ts"),
      import("../jobs/broker-config.ts"),
      import("../jobs/render.ts"),
    ]);
    const ids = [...new Set(a.job_ids.map((id) => checkJobId(id)))];
    const records = ids.map((id) => requireRecord(ctx.ws, id));
    const timeoutS = a.timeout_s ?? WAIT_DEFAULT_S;
    const stopOnPermission = a.return_on_permission ?? true;
    let n = 0;
    const sent: Promise<void>[] = [];
    const note = (message: string) => void sent.push(ctx.progress(++n, message).catch(() => {}));
    // a quiet job still sends a sign of life now and then: clients that time a call out unless
    // progress arrives keep waiting
    const t0 = Date.now();
    const beat = setInterval(() => note(`waiting for ${ids.length} job(s) (${Math.round((Date.now() - t0) / 1000)} s)`), HEARTBEAT_MS);
    let r;
    try {
      r = await waitJobs(ctx.ws, records, {
        any: a.mode === "any",
        timeoutMs: timeoutS * 1000,
        signal: ctx.signal,
        broker: brokerConfigFromEnv(ctx.env),
        onEvent: (e) => note(eventNote(e)),
        stopOn: (e) => stopOnPermission && e.event === "permission_required",
      });
    } finally {
      clearInterval(beat);
    }
    await Promise.all(sent);
    const doc = publicWait(r);
    const lines = r.jobs.map(waitLine);
    if (r.outcome === "attention" && r.event) lines.unshift(`ATTENTION: ${eventNote(r.event)} (the job is still open; act, then call wait_jobs again)`);
    if (r.outcome === "timeout") lines.push(`timed out after ${timeoutS} s; call wait_jobs again to keep waiting`);
    const all_completed = r.outcome === "done" && waitExitCode(r, a.mode === "any") === 0;
    return { data: { ...doc, all_completed }, text: lines.join("\n") };
  },
});

const reconcile = def({
  name: "reconcile",
  description: "Make the registry match the panes: mark sessions whose pane is gone terminated, register unknown agent panes (dry_run: only report).",
  input: { dry_run: z.boolean().optional().describe("compute drift and actions, change nothing") },
  readOnly: false,
  async run(a, ctx) {
    const [{ reconcileOnce }, { reconcileText }] = await Promise.all([import("../ops/reconcile.ts"), import("../ops/reconcile-text.ts")]);
    const r = await reconcileOnce(ctx.ws, ctx.env, { dryRun: a.dry_run ?? false });
    return { data: { ...r }, text: reconcileText(r) };
  },
});

/** every tool of `mam mcp`, in the order clients list them */
export const TOOLS: ToolDef[] = [
  status,
  createAgent,
  stopAgent,
  resumeAgent,
  submitJobTool,
  jobStatusTool,
  listJobsTool,
  jobLogs,
  cancelJobTool,
  waitJobsTool,
  reconcile,
] as unknown as ToolDef[];
