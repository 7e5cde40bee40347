// The job operations: submit, event, status, list, logs, cancel, wait. Each entry is the one
// definition of its input, its text and how the command line and MCP name it; the use cases live
// in lib/ops/job/ and lib/jobs/ and load only when the operation runs.
import * as z from "zod/mini";
import { type JobEvent } from "../../jobs/event.ts";
import { EVENT_NAMES, type EventName, JOB_STATUSES, MAM_EVENTS } from "../../jobs/statuses.ts";
import { eventNote, listText, logText, statusText, treeText, waitLine } from "../../jobs/render.ts";
import type { CostedJobView } from "../../jobs/query.ts";
import { usageError } from "../../sys/errors.ts";
import { field } from "../../sys/fields.ts";
import { choice, count, flag, jobId, jobOrScheduleId, list, name, optional, seconds, secondsFrac, sessionAddress, sessionName, text, usd, withDefault } from "../input.ts";
import { type CommandGroup, defineOp, type Shape } from "../op.ts";
import { eventOut, int, jobRecordShape, jobViewOut, scheduleOut, str, strOrNull, warnings } from "../results.ts";
import type { Cancelled } from "../job/cancel.ts";
import { checkJob } from "../job/rules.ts";
import type { Submitted } from "../job/submit.ts";
import type { Schedule, Scheduled, Unscheduled } from "../job/schedule.ts";
import { visible } from "../../sys/sanitize.ts";
import { table } from "../../sys/io.ts";
import type { Waited } from "../job/wait.ts";

/** the fields that make a new worker in its own worktree (job.submit with worktree) */
const whenText = (epoch: number | null) => (epoch === null ? "-" : new Date(epoch * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"));
const everyText = (s: number | null) => (s === null ? "once" : s % 86400 === 0 ? `${s / 86400}d` : s % 3600 === 0 ? `${s / 3600}h` : s % 60 === 0 ? `${s / 60}m` : `${s}s`);
const targetText = (j: { to?: string; to_role?: string }) => j.to ?? `a free ${j.to_role}`;

function scheduledLine(s: Schedule): string {
  return `schedule ${s.schedule_id}: ${targetText(s.job)}, first at ${whenText(s.next_at)}${s.every_s !== null ? `, then every ${everyText(s.every_s)}` : ""} (missed runs: ${s.missed}${s.every_s !== null ? `, overlap: ${s.overlap}` : ""})`;
}

function schedulesText(list: Schedule[]): string {
  if (list.length === 0) return "no schedules";
  return table(
    ["SCHEDULE", "NEXT", "EVERY", "TO", "TASK", "RUNS", "LAST"],
    list.map((s) => {
      const last = s.runs.at(-1);
      return [
        s.schedule_id,
        s.ended ? `ended (${s.ended.why})` : whenText(s.next_at),
        everyText(s.every_s),
        targetText(s.job),
        s.job.brief_file !== undefined ? `brief ${s.job.brief_file}` : (s.job.prompt ?? "").replace(/\s+/g, " ").slice(0, 40),
        String(s.runs.length),
        last ? `${last.job_id ?? "-"} ${last.note}`.slice(0, 60) : "-",
      ].map(visible);
    }),
  );
}

/** what an agent reports (the delivery and queue stages, the user's answers, budgets and usage reports are mam's own) */
const REPORTED_EVENTS = EVENT_NAMES.filter((e) => !MAM_EVENTS.includes(e)) as unknown as readonly [string, ...string[]];

const NEW_WORKER = ["agent", "role", "mux", "herdr_server", "tmux_server"] as const;

/** `mam job …`: its help (the commands come from the entries below) */
const JOB: CommandGroup = {
  name: "job",
  description: "delegate work to agent sessions and hear back (journals, MQTT events)",
  examples: ['mam job submit --to worker --prompt "…"', "mam job wait <id>", "mam job list"],
  group: "jobs",
  listed: "each",
};

export const jobSubmit = defineOp({
  name: "job.submit",
  summary: "delegate a job to an agent session: register it, prompt the agent with its job header, print the job id",
  readOnly: false,
  input: () => ({
    to: optional(sessionAddress("the session that does the work: NAME here, NAME@HOST on another host of the team (with {{worktree}}: the name of the new worker); or {{to_role}}")),
    to_role: optional(text("a pool: the first free session of this role takes the job (on a machine in a team, of another host when none is free here); it waits its turn while none is free", { max: 64, oneLine: true })),
    priority: optional(choice(["high", "normal", "low"], "its place in a queue: high, normal (default) or low; a waiting job rises one step every MAM_QUEUE_AGING_S seconds")),
    at: optional(text("submit it later, at this time: +5m, 18:30 (the next one), 2026-12-24 09:00 (local) or an ISO time; the daemon submits it", { max: 40, oneLine: true })),
    every: optional(text("submit it again and again, every DURATION (5m, 1h30m, 2d; at least 1m, MAM_MIN_EVERY_S), from {{at}} (default: one period from now); its brief file must be in the workspace", { max: 40, oneLine: true })),
    missed: optional(choice(["once", "skip"], "with {{at}}/{{every}}: a run missed while no daemon ran is run once when one runs (once, default) or dropped (skip)")),
    overlap: optional(choice(["skip", "queue"], "with {{every}}: a run due while the previous run's job has not ended is skipped (default) or submitted to wait its turn (queue)")),
    prompt: optional(text("the task, as text (give {{prompt}} or {{brief_file}})")),
    brief_file: optional(text("the task, as a file the agent reads (a relative path is from the current folder of a command, else from the workspace; through MCP only a file inside the workspace)")),
    from: optional(sessionName("the delegating session (told when the job ends)")),
    timeout_s: optional(seconds("overall time limit in seconds (default 3600; 0 = none)")),
    idle_timeout_s: optional(seconds("time limit without events after started, in seconds (default 120; 0 = none)")),
    expect: optional(list("a file the job is expected to produce (repeatable)")),
    type: optional(choice(["single", "loop"], "single (default) or loop (a reviewer checks the work until PASS)")),
    reviewer: optional(sessionAddress("loop jobs: the reviewing session (NAME, or NAME@HOST)")),
    max_iterations: optional(count("loop jobs: review rounds before giving up (default 3)", 1, 100)),
    budget_usd: optional(usd("stop the job (budget_exceeded) when its agents' tokens cost more than this many US dollars (docs/cost.md)")),
    max_tokens: optional(count("stop the job (budget_exceeded) when its agents used more than this many tokens", 1, 1e12)),
    failover: optional(
      text("when its agent reaches a usage limit, hand the job to a free agent of these roles, kinds or names (comma-separated, in order; another vendor is fine), with what was reported so far; none: never (default: MAM_FAILOVER, else none)", { max: 400, oneLine: true }),
    ),
    after: optional(list("run it after these jobs (ids, comma-separated or repeated): it waits, queued, until each has completed; one that ends otherwise cancels it (docs/jobs.md#dependencies)")),
    after_any_end: withDefault(flag("with {{after}}: run it once each has ended, however it ended"), false),
    worktree: optional(z.string().check(z.describe("a new worker in its own git worktree <workspace>/.mam/worktrees/<to> on branch BRANCH (empty: the {{to}} name); give its {{agent}}"))),
    base: optional(text("with {{worktree}}: the commit a new branch starts from (default: the workspace's HEAD)")),
    agent: optional(text("with {{worktree}}: the new worker's agent kind", { max: 40 })),
    role: optional(text("with {{worktree}}: the new worker's role (default worker)", { max: 64, oneLine: true })),
    mux: optional(choice(["herdr", "tmux"], "with {{worktree}}: herdr or tmux for the new worker (as a create's)")),
    herdr_server: optional(name("herdr server name", "with {{worktree}}: the herdr server of the new worker (as a create's)")),
    tmux_server: optional(name("tmux server name", "with {{worktree}}: the private tmux server of the new worker (as a create's)")),
    merge: withDefault(flag("a worktree job: once it completes (a loop job: once its review passes), queue its branch for the target branch (docs/merge-queue.md)"), false),
  }),
  check(i) {
    checkJob(i);
    if (i.at === undefined && i.every === undefined) {
      if (i.missed !== undefined) throw usageError(`${field("missed")} goes with ${field("at")} or ${field("every")}`);
      if (i.overlap !== undefined) throw usageError(`${field("overlap")} goes with ${field("every")}`);
    } else if (i.worktree !== undefined) throw usageError(`${field("worktree")} makes a new worker now; it does not go with ${field("at")} or ${field("every")}`);
    else if (i.overlap !== undefined && i.every === undefined) throw usageError(`${field("overlap")} goes with ${field("every")}`);
    if (i.worktree === undefined) {
      if (i.base !== undefined) throw usageError(`${field("base")} goes with ${field("worktree")}`);
      for (const f of NEW_WORKER) if (i[f] !== undefined) throw usageError(`${field(f)} goes with ${field("worktree")} (a new worker); without it the job goes to the running session ${field("to")}`);
    } else if (i.agent === undefined) throw usageError(`${field("worktree")} makes a new worker: give its ${field("agent")}`);
    else if (i.to === undefined) throw usageError(`${field("worktree")} makes a new worker: give its name as ${field("to")}, not ${field("to_role")}`);
    else if (i.to.includes("@")) throw usageError(`${field("worktree")} makes a new worker on this host: ${field("to")} is its name, without @HOST`);
    if (i.after_any_end && i.after === undefined) throw usageError(`${field("after_any_end")} goes with ${field("after")}`);
    if (i.after !== undefined && (i.at !== undefined || i.every !== undefined)) throw usageError(`${field("after")} goes with a job submitted now, not with ${field("at")} or ${field("every")}`);
    if (i.merge) {
      if (i.at !== undefined || i.every !== undefined) throw usageError(`${field("merge")} goes with a job submitted now, not with ${field("at")} or ${field("every")}`);
      if (i.to === undefined) throw usageError(`${field("merge")} needs the worktree of a named session: give ${field("to")}, not ${field("to_role")}`);
      if (i.to.includes("@")) throw usageError(`${field("merge")} merges a branch of this host: ${field("to")} is a session here, without @HOST`);
    }
  },
  async run(deps, i, ctx): Promise<Submitted | Scheduled> {
    const { to, worktree, base, agent, role, mux, herdr_server, tmux_server, at, every, missed, overlap, merge, ...job } = i;
    // the user's own command line may name any brief file; an agent (MCP) only one in the workspace;
    // a schedule's only one in the workspace, whoever asks (the daemon reads it at every run)
    const opts = { confineBrief: ctx.surface !== "cli" };
    if (at !== undefined || every !== undefined) return (await import("../job/schedule.ts")).createSchedule(deps, { ...job, to }, { at, every, missed, overlap });
    const merging = merge ? await import("../job/merge-run.ts") : undefined;
    if (merging) merging.targetOf(deps); // a target to merge into, before anything is written
    if (worktree === undefined) {
      if (merging) {
        const t = await deps.runtime.findSession(to!);
        if (t && !t.worktree) throw usageError(`session '${to}' does not work in a worktree: ${field("merge")} has no branch to merge; nothing was submitted`, `make a worker with ${field("worktree")}`);
      }
      const s = await (await import("../job/submit.ts")).submitJob(deps, { ...job, to }, opts);
      if (merging) s.warnings.push(...(await merging.enqueueMerge(deps, s.record.job_id)).warnings);
      return s;
    }
    // a fresh worktree for a new worker, in one step: create with this job
    const { createAndFollowUp } = await import("../session/create.ts");
    const c = await createAndFollowUp(
      deps,
      { agent: agent!, role: role ?? "worker", name: to!, mux, herdr_server, tmux_server, start_server: false, onboard: true, mcp: false, grant: true, agent_args: [], worktree, base },
      job,
      opts,
    );
    if (merging) c.warnings.push(...(await merging.enqueueMerge(deps, c.job_id!)).warnings);
    return { record: deps.jobs.require(c.job_id!), daemon_pid: c.daemon_pid, warnings: c.warnings, position: null };
  },
  text: (s: Submitted | Scheduled) =>
    "schedule" in s
      ? scheduledLine(s.schedule)
      : s.position === null && s.waits_for === undefined
        ? `job ${s.record.job_id} submitted to ${s.record.agent_session}`
        : `job ${s.record.job_id} queued for ${s.record.to_role !== undefined ? `a free ${s.record.to_role}` : s.record.agent_session} (${s.waits_for ?? `position ${s.position}`})`,
  json: (s: Submitted | Scheduled) =>
    "schedule" in s ? { ...s.schedule, warnings: s.warnings } : { ...(require("../../jobs/store.ts") as typeof import("../../jobs/store.ts")).publicRecord(s.record), position: s.position, ...(s.waits_for !== undefined ? { waits_for: s.waits_for } : {}) },
  // with --at / --every (the command line's): the schedule
  result: () => z.union([z.looseObject({ ...jobRecordShape(), position: z.nullable(int()) }), z.extend(scheduleOut(), { warnings: warnings() })]),
  cli: {
    path: "job submit",
    under: JOB,
    extra: "submit-wait",
    print: (s) => ("schedule" in (s as object) ? (s as Scheduled).schedule.schedule_id : (s as Submitted).record.job_id),
    flags: {
      to: { valueHint: "NAME" },
      to_role: { valueHint: "ROLE" },
      priority: { valueHint: "high|normal|low" },
      at: { valueHint: "TIME" },
      every: { valueHint: "DURATION" },
      missed: { valueHint: "once|skip" },
      overlap: { valueHint: "skip|queue" },
      prompt: { valueHint: "TEXT" },
      brief_file: { valueHint: "FILE" },
      from: { valueHint: "NAME" },
      timeout_s: { flag: "timeout", valueHint: "S" },
      idle_timeout_s: { flag: "idle-timeout", valueHint: "S" },
      expect: { valueHint: "PATH" },
      reviewer: { valueHint: "NAME" },
      max_iterations: { valueHint: "N" },
      budget_usd: { valueHint: "USD" },
      max_tokens: { valueHint: "N" },
      failover: { valueHint: "TARGETS" },
      after: { valueHint: "ID[,ID…]" },
      worktree: { optionalValue: "", optionalValuePattern: /^[^-]/, valueHint: "BRANCH" },
      base: { valueHint: "REF" },
      agent: { valueHint: "KIND" },
      role: { valueHint: "ROLE" },
      mux: { valueHint: "herdr|tmux" },
      herdr_server: { flag: "herdr-session", valueHint: "SERVER" },
      tmux_server: { valueHint: "NAME" },
    },
    examples: [
      'mam job submit --to repo-worker-claude --prompt "Add a --json flag to status" --expect lib/cli/status.ts',
      "mam job submit --to repo-worker-claude --brief-file brief.md --from repo-creator-claude --wait",
      'mam job submit --to worker --type loop --reviewer reviewer --max-iterations 3 --prompt "Fix issue 12"',
      'mam job submit --to worker --type loop --reviewer reviewer --budget-usd 2 --prompt "Fix issue 12"   # stops at $2',
      'mam job submit --to claude-1 --failover worker,codex --prompt "Fix issue 12"   # moves on at a usage limit',
      'mam job submit --to reviewer --after 1a2b3c4d,5e6f7a8b --prompt "Review both changes"   # once both have completed',
      'mam job submit --to fix-login --worktree --agent claude --prompt "Fix the login bug"   # a new worker in its own worktree',
      'mam job submit --to fix-login --worktree fix/login --base main --agent codex --type loop --reviewer rev --prompt "…"',
      'mam job submit --to fix-login --worktree --agent claude --merge --prompt "Fix the login bug"   # lands on main once done',
    ],
  },
  mcp: {
    aliases: ["submit_job"],
    // schedules are the user's (mam job submit --at / --every): the tool's result is one job
    hide: ["at", "every", "missed", "overlap", "merge"],
    description: "Delegate a job to a running agent session by name, or to the first free session of a role (to_role); single, or a worker-reviewer loop. A busy agent's job waits its turn (status queued, position). Returns the job id to pass to job_wait.",
  },
});

export const jobEvent = defineOp({
  name: "job.event",
  summary: "report a job event (run by the agent doing the job): journal it, then publish it",
  readOnly: false,
  input: () => ({
    job_id: jobId("job id (8 hex digits)"),
    event: choice(REPORTED_EVENTS, `one of ${REPORTED_EVENTS.join(", ")}`),
    detail: optional(z.string().check(z.describe("a short human-readable text"))),
    data: optional(z.record(z.string(), z.unknown()).check(z.describe("extra metadata: a JSON object (integers only in numbers)"))),
    source: withDefault(text("who reports it (your session name; default: agent)", { max: 128 }), "agent"),
    token: optional(text("the job's token when this machine has no record of the job; every user of the machine can read it in ps: prefer MAM_JOB_TOKEN")),
  }),
  async run(deps, i) {
    const { reportEvent } = await import("../job/event.ts");
    return reportEvent(deps, { ...i, event: i.event as EventName, detail: i.detail, data: i.data as never, token: i.token ?? (deps.env.MAM_JOB_TOKEN || undefined) });
  },
  text: () => "",
  result: () => z.looseObject({ job_id: str(), seq: int(), event: str(), status: str(), warnings: warnings() }),
  cli: {
    path: "job event",
    under: JOB,
    extra: "event-data",
    positionals: ["job_id", "event"],
    flags: { detail: { valueHint: "TEXT" }, data: { valueHint: "JSON" }, source: { valueHint: "NAME" }, token: { valueHint: "T" } },
    examples: [
      'mam job event abc12345 started --source repo-worker-claude --detail "reading the brief"',
      'mam job event abc12345 progress --detail "tests pass" --data \'{"files":3}\'',
      'mam job event abc12345 completed --detail "done: lib/cli/status.ts"',
      'MAM_JOB_TOKEN=… mam job event abc12345 error --detail "build fails"   # on another machine',
      "mam job event abc12345 progress --json      # {job_id, seq, event, status, warnings}",
    ],
  },
  mcp: false,
});

export const jobStatus = defineOp({
  name: "job.status",
  summary: "show one job: its record (without the token), its status from the journal, its last event",
  readOnly: true,
  input: () => ({ job_id: jobId("job id: 8 hex digits, as job_submit returned it") }),
  async run(deps, i) {
    const [{ jobStatus }, { placeInLine }, { loadPrices }] = await Promise.all([import("../../jobs/query.ts"), import("../job/queue.ts"), import("../../cost/prices.ts")]);
    return placeInLine(deps, [jobStatus(deps.ws, i.job_id, loadPrices(deps.env))])[0]!;
  },
  text: (v: CostedJobView) => statusText(v),
  result: jobViewOut,
  cli: { path: "job status", under: JOB, positionals: ["job_id"], examples: ["mam job status abc12345", "mam job status abc12345 --json"] },
  mcp: { aliases: ["job_status"], description: "Show one job: its status (from its event journal), task, target session, last event." },
});

interface JobList {
  workspace: string;
  jobs: CostedJobView[];
  status: string | null;
  /** with scheduled: the schedules */
  schedules?: Schedule[];
  /** the text draws the graph of what runs after what */
  tree?: boolean;
}

export const jobList = defineOp({
  name: "job.list",
  summary: "list the jobs of the workspace",
  readOnly: true,
  input: () => ({
    status: optional(choice(JOB_STATUSES, `only jobs in this status (${JOB_STATUSES.join(", ")})`)),
    scheduled: withDefault(flag("the schedules instead (job submit --at / --every): next run, period, last runs"), false),
    tree: withDefault(flag("the jobs as a graph: each job under the jobs it runs after (job submit --after)"), false),
  }),
  check(i) {
    if (i.scheduled && i.status !== undefined) throw usageError(`${field("status")} does not go with ${field("scheduled")}`);
    if (i.scheduled && i.tree) throw usageError(`${field("tree")} does not go with ${field("scheduled")}`);
  },
  async run(deps, i) {
    if (i.scheduled) return { workspace: deps.ws, jobs: [], status: null, schedules: (await import("../job/schedule.ts")).listSchedules(deps.ws) } as JobList;
    const [{ listJobs }, { placeInLine }, { loadPrices }] = await Promise.all([import("../../jobs/query.ts"), import("../job/queue.ts"), import("../../cost/prices.ts")]);
    return { workspace: deps.ws, jobs: placeInLine(deps, listJobs(deps.ws, loadPrices(deps.env), i.status)), status: i.status ?? null, tree: i.tree } as JobList;
  },
  text: (r: JobList) => (r.schedules ? schedulesText(r.schedules) : r.jobs.length ? (r.tree ? treeText(r.jobs) : listText(r.jobs)) : r.status ? `no ${r.status} jobs` : "no jobs"),
  json: (r: JobList) => (r.schedules ? { workspace: r.workspace, jobs: [], schedules: r.schedules } : { workspace: r.workspace, jobs: r.jobs }),
  // with --scheduled: no jobs, the schedules
  result: () => z.looseObject({ workspace: str(), jobs: z.array(jobViewOut()), schedules: z.optional(z.array(scheduleOut())) }),
  cli: {
    path: "job list",
    under: JOB,
    flags: { status: { valueHint: "S" } },
    textToStderr: (r) => (r as JobList).schedules === undefined && (r as JobList).jobs.length === 0,
    examples: ["mam job list", "mam job list --status running --json", "mam job list --tree", "mam job list --scheduled"],
  },
  mcp: { aliases: ["list_jobs"], description: "List the jobs of the workspace, optionally only those in one status." },
});

interface JobLogs {
  job_id: string;
  total: number;
  events: JobEvent[];
  /** the text shows UTC time stamps (else how long ago) */
  utc: boolean;
  /** now, for "… ago" */
  now_ms: number;
}

export const jobLogs = defineOp({
  name: "job.logs",
  summary: "print a job's event journal, human readable; --follow until the job ends (or Ctrl-C)",
  readOnly: true,
  input: () => ({
    job_id: jobId(),
    last: optional(count("only the last N events", 1, 10000)),
    utc: withDefault(flag("each event's UTC time stamp instead of how long ago it was"), false),
  }),
  async run(deps, i): Promise<JobLogs> {
    const { jobEvents } = await import("../../jobs/query.ts");
    const all = jobEvents(deps.ws, i.job_id);
    return { job_id: i.job_id, total: all.length, events: i.last === undefined ? all : all.slice(-i.last), utc: i.utc, now_ms: deps.clock.ms() };
  },
  text: (r: JobLogs) => (r.events.length ? logText(r.events, { utc: r.utc, nowMs: r.now_ms }) : `job ${r.job_id} has no events yet`),
  // the events keep their UTC time stamps; how the text shows them is the text's
  json: ({ job_id, total, events }: JobLogs) => ({ job_id, total, events }),
  result: () => z.looseObject({ job_id: str(), total: int(), events: z.array(eventOut()) }),
  cli: {
    path: "job logs",
    under: JOB,
    extra: "logs-follow",
    positionals: ["job_id"],
    textToStderr: (r) => (r as JobLogs).events.length === 0,
    examples: ["mam job logs abc12345", "mam job logs abc12345 --follow", "mam job logs abc12345 --last 5", "mam job logs abc12345 --utc     # time stamps instead of how long ago"],
  },
  mcp: { aliases: ["job_logs"], hide: ["utc"], description: "Read a job's event journal (started, progress, permission_required, completed, …), oldest first." },
});

export const jobCancel = defineOp({
  name: "job.cancel",
  summary: "cancel a job: journal and publish a cancelled event (source mam) and tell its agent",
  readOnly: false,
  input: () => ({ job_id: jobOrScheduleId("job id (8 hex digits), or a schedule id (s and 7 hex digits) to stop its future runs") }),
  async run(deps, i): Promise<Cancelled | Unscheduled> {
    if (i.job_id.startsWith("s")) return (await import("../job/schedule.ts")).cancelSchedule(deps, i.job_id);
    const { cancelJob } = await import("../job/cancel.ts");
    return cancelJob(deps, i.job_id);
  },
  text: (c: Cancelled | Unscheduled) =>
    "schedule_id" in c
      ? c.cancelled
        ? `schedule ${c.schedule_id} cancelled: no more runs (the jobs it submitted stay)`
        : `schedule ${c.schedule_id} has already ended`
      : c.cancelled
        ? `job ${c.job_id} cancelled${c.told ? `; told ${c.told}` : ""}`
        : `job ${c.job_id} has already ended (${c.status}); nothing to cancel`,
  // a schedule's cancel answers in the same shape (its id as job_id)
  result: () => z.looseObject({ job_id: str(), cancelled: z.boolean(), status: str(), told: strOrNull(), warnings: warnings() }),
  cli: { path: "job cancel", under: JOB, positionals: ["job_id"], textToStderr: (c) => !(c as Cancelled).cancelled, examples: ["mam job cancel abc12345", "mam job cancel s1a2b3c4     # a schedule: no more runs", "mam job cancel abc12345 --json   # {job_id, cancelled, status, told, warnings}"] },
  mcp: { aliases: ["cancel_job"], description: "Cancel a job that has not ended: journal a cancelled event and tell its agent to stop." },
  ui: { fields: ["job_id"] },
});

/** how long job.wait waits over MCP when not told, and at most (codex cuts a tool call after its tool_timeout_sec) */
const WAIT_DEFAULT_S = 600;
const WAIT_MAX_S = 3600;

export const jobWait = defineOp({
  name: "job.wait",
  summary: "wait until the jobs end: exit 0 if all completed, 6 if the others went over their budget, 1 if one ended otherwise, 5 on --timeout",
  readOnly: true,
  interruptible: true,
  input: () => ({
    job_ids: z.array(jobId()).check(z.minLength(1), z.maxLength(100), z.describe("the jobs to wait for")),
    mode: withDefault(choice(["all", "any"], "all (default): until every job ends; any: until the first one ends"), "all"),
    timeout_s: optional(secondsFrac("give up after this many seconds (the command: exit 5)")),
    return_on_permission: withDefault(flag("return as soon as an agent reports permission_required"), false),
  }),
  async run(deps, i, ctx) {
    const { waitForJobs } = await import("../job/wait.ts");
    return waitForJobs(deps, i, ctx);
  },
  text: (w: Waited) => waitedText(w),
  json: ({ warnings: _w, exit_code: _e, timeout_s: _t, ...w }: Waited) => w,
  result: () =>
    z.looseObject({
      outcome: z.enum(["done", "timeout", "interrupted", "attention"]),
      jobs: z.array(z.looseObject({ job_id: str(), status: str(), last_event: z.nullable(eventOut()) })),
      event: z.optional(eventOut()),
      all_completed: z.boolean(),
    }),
  exitCode: (w: Waited) => w.exit_code,
  cli: {
    path: "job wait",
    under: JOB,
    extra: "wait-any",
    positionals: ["job_ids"],
    hide: ["mode", "return_on_permission"],
    flags: { timeout_s: { flag: "timeout", valueHint: "S" } },
    examples: ["mam job wait abc12345", "mam job wait abc12345 deadbeef --any --timeout 600", "mam job wait abc12345 --json"],
  },
  mcp: {
    aliases: ["wait_jobs"],
    heartbeat: true,
    description:
      "Wait until jobs end (all, or any), up to a timeout; streams progress as events arrive and returns early when an agent needs permission (outcome attention).",
    input: (s: Shape) => ({
      ...s,
      timeout_s: withDefault(secondsFrac(`give up after this many seconds (default ${WAIT_DEFAULT_S}); call again to keep waiting`, WAIT_MAX_S), WAIT_DEFAULT_S),
      return_on_permission: withDefault(flag("return as soon as an agent reports permission_required (default true)"), true),
    }),
  },
});

function waitedText(w: Waited): string {
  const lines = w.jobs.map(waitLine);
  if (w.outcome === "attention" && w.event) lines.unshift(`ATTENTION: ${eventNote(w.event)} (the job is still open; act, then wait again)`);
  return lines.join("\n");
}
