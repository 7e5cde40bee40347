// mam job submit | event | status | list | logs | cancel | wait (SPEC §7.4)
import { type BrokerConfig, brokerConfigFromEnv, eventsTopic } from "../jobs/broker-config.ts";
import { CanonicalJsonError, canonicalJson, type Json } from "../jobs/canonical.ts";
import { EVENT_NAMES, isEventName, isFinal, JOB_STATUSES, type JobEvent, type JobStatus } from "../jobs/event.ts";
import { eventLine, listText, statusText, waitLine } from "../jobs/render.ts";
import { publishJournalled, savedNote } from "../jobs/publish.ts";
import { jobStatus, listJobs } from "../jobs/query.ts";
import { appendEvent, effectiveStatus, jobView, publicRecord, readJournal, requireRecord, type JobRecord } from "../jobs/store.ts";
import { JournalReader, JournalWatch, publicWait, waitExitCode, waitJobs } from "../jobs/wait.ts";
import { EXIT, usageError } from "../sys/errors.ts";
import { err, out, outJson, warn } from "../sys/io.ts";
import { checkJobId } from "../sys/names.ts";
import { resolveWorkspace } from "../sys/paths.ts";
import { bool, defineCommand, jsonArg, list, str, workspaceArg, type ParsedArgs } from "./command.ts";
import { worktreeArgs, worktreeOption } from "./worktree.ts";

const ws = (a: ParsedArgs) => resolveWorkspace(str(a, "workspace"));

function seconds(a: ParsedArgs, flag: string, opts: { decimal?: boolean } = {}): number | undefined {
  const v = str(a, flag);
  if (v === undefined) return undefined;
  const re = opts.decimal ? /^\d+(\.\d+)?$/ : /^\d+$/;
  if (!re.test(v)) throw usageError(`--${flag} must be a number of seconds${opts.decimal ? "" : " (whole)"} (got '${v}')`);
  return Number(v);
}

/** SIGINT / SIGTERM abort a long wait; the command then returns 130 / 143 */
function interruptible(): { signal: AbortSignal; code: () => number; dispose: () => void } {
  const ac = new AbortController();
  let code: number = EXIT.OK;
  const onInt = () => ((code = 130), ac.abort());
  const onTerm = () => ((code = 143), ac.abort());
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  return {
    signal: ac.signal,
    code: () => code,
    dispose() {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
    },
  };
}

/** publish a journalled event; a configured broker that does not take it: one NOTE (the journal keeps it) */
async function publish(topic: string, line: string, id: string, seq: number): Promise<void> {
  const note = await publishJournalled(topic, line, id, seq);
  if (note) err(note);
}

/**
 * A worker on another machine (no record here) holds the only copy of its events: each report
 * sends again, in order, its earlier events that the delegator's journal does not hold yet (the
 * daemon's signed, retained ack says which; without one it can verify: all of them, bounded), so
 * that one published while the broker was down, or lost by a restarted broker, still reaches
 * the delegator's daemon with the next report. Receivers drop repeats (SPEC §7.2).
 */
async function publishRemote(cfg: BrokerConfig, ws: string, id: string, token: string, ev: JobEvent, line: string): Promise<void> {
  const { publishReport } = await import("../jobs/transport.ts");
  const { ackTopicOf, readAck } = await import("../jobs/acks.ts");
  const topic = eventsTopic(cfg, id);
  const r = await publishReport(cfg, topic, ackTopicOf(topic), (ack) => {
    const mark = ack && ev.origin !== undefined ? (readAck(ack, id, token)?.[ev.origin] ?? 0) : 0;
    return [...resendable(ws, id, ev, mark), line];
  });
  if (!r.ok) err(savedNote(id, ev.seq, r.reason, true));
}

/** this journal's own events before `ev` and past `mark` (and any from an older mam), oldest first, at most RESEND_MAX */
function resendable(ws: string, id: string, ev: JobEvent, mark: number): string[] {
  return readJournal(ws, id)
    .filter((x) => x.seq < ev.seq && (x.origin === undefined || (x.origin === ev.origin && x.seq > mark)))
    .sort((a, b) => a.seq - b.seq)
    .slice(-RESEND_MAX)
    .map((x) => canonicalJson(x));
}

/** at most this many earlier events go again with a report (a bound on a long job's reports) */
const RESEND_MAX = 200;

async function waitAndReport(w: string, records: JobRecord[], any: boolean, timeoutS: number | undefined, json: "wait" | "view" | false): Promise<number> {
  const sig = interruptible();
  try {
    const r = await waitJobs(w, records, { any, timeoutMs: timeoutS === undefined ? undefined : timeoutS * 1000, signal: sig.signal, broker: brokerConfigFromEnv() });
    if (r.outcome === "interrupted") return sig.code();
    if (json === "wait") outJson(publicWait(r));
    else if (json === "view") outJson({ ...jobView(records[0]!, readJournal(w, records[0]!.job_id)), status: r.jobs[0]!.status });
    else for (const j of r.jobs) out(waitLine(j));
    if (r.outcome === "timeout") {
      const open = r.jobs.filter((j) => !isFinal(j.status)).map((j) => j.job_id);
      err(`ERROR: timed out after ${timeoutS} s waiting for job${open.length > 1 ? "s" : ""} ${open.join(", ")}`);
    }
    return waitExitCode(r, any);
  } finally {
    sig.dispose();
  }
}

const submit = defineCommand({
  meta: {
    name: "submit",
    description: "delegate a job to an agent session: register it, prompt the agent with its job header, print the job id",
    examples: [
      'mam job submit --to repo-worker-claude --prompt "Add a --json flag to status" --expect lib/cli/status.ts',
      "mam job submit --to repo-worker-claude --brief-file brief.md --from repo-creator-claude --wait",
      'mam job submit --to worker --type loop --reviewer reviewer --max-iterations 3 --prompt "Fix issue 12"',
      'mam job submit --to fix-login --worktree --agent claude --prompt "Fix the login bug"   # a new worker in its own worktree',
      'mam job submit --to fix-login --worktree fix/login --base main --agent codex --type loop --reviewer rev --prompt "…"',
    ],
  },
  args: {
    to: { type: "string", required: true, description: "the session that does the work (with --worktree: the name of the new worker)", valueHint: "NAME" },
    prompt: { type: "string", description: "the task, as text", valueHint: "TEXT" },
    "brief-file": { type: "string", description: "the task, as a file the agent reads", valueHint: "FILE" },
    from: { type: "string", description: "the delegating session (told when the job ends)", valueHint: "NAME" },
    timeout: { type: "string", description: "overall time limit in seconds (default 3600; 0 = none)", valueHint: "S" },
    "idle-timeout": { type: "string", description: "time limit without events after started, in seconds (default 120; 0 = none)", valueHint: "S" },
    expect: { type: "string", multiple: true, description: "an expected artifact (repeatable)", valueHint: "PATH" },
    type: { type: "enum", options: ["single", "loop"], description: "single (default) or loop (worker–reviewer)", valueHint: "single|loop" },
    reviewer: { type: "string", description: "the reviewing session of a loop job", valueHint: "NAME" },
    "max-iterations": { type: "string", description: "loop jobs: review rounds before giving up (default 3)", valueHint: "N" },
    wait: { type: "boolean", description: "then wait for the job as `mam job wait` does" },
    ...worktreeArgs,
    agent: { type: "string", description: "with --worktree: the new worker's agent kind", valueHint: "KIND" },
    role: { type: "string", description: "with --worktree: the new worker's role (default worker)", valueHint: "ROLE" },
    mux: { type: "string", description: "with --worktree: herdr or tmux for the new worker (as mam create --mux)", valueHint: "herdr|tmux" },
    "herdr-session": { type: "string", description: "with --worktree: the herdr server of the new worker (as mam create)", valueHint: "SERVER" },
    "tmux-server": { type: "string", description: "with --worktree: the private tmux server of the new worker (as mam create)", valueHint: "NAME" },
    ...jsonArg,
    ...workspaceArg,
  },
  async run({ args }) {
    const w = ws(args);
    const mi = str(args, "max-iterations");
    if (mi !== undefined && !/^\d+$/.test(mi)) throw usageError(`--max-iterations must be a whole number (got '${mi}')`);
    const cfg = brokerConfigFromEnv();
    const opts = {
      prompt: str(args, "prompt"),
      briefFile: str(args, "brief-file"),
      from: str(args, "from"),
      timeoutSec: seconds(args, "timeout"),
      idleTimeoutSec: seconds(args, "idle-timeout"),
      expect: list(args, "expect"),
      type: str(args, "type") as "single" | "loop" | undefined,
      reviewer: str(args, "reviewer"),
      maxIterations: mi === undefined ? undefined : Number(mi),
    };
    const worktree = worktreeOption(args);
    for (const f of ["agent", "role", "mux", "herdr-session", "tmux-server"]) if (!worktree && str(args, f) !== undefined) throw usageError(`--${f} goes with --worktree (a new worker); without it the job goes to the running session --to`);
    let record: JobRecord;
    if (worktree) {
      // a fresh worktree for a new worker, in one step: mam create --worktree … --submit-job
      const agent = str(args, "agent");
      if (agent === undefined) throw usageError("--worktree makes a new worker: give its --agent KIND");
      const { createAndFollowUp } = await import("../ops/session/create.ts");
      const c = await createAndFollowUp({
        ws: w,
        agent,
        role: str(args, "role") ?? "worker",
        name: str(args, "to")!,
        choice: { mux: str(args, "mux"), herdrSession: str(args, "herdr-session"), tmuxServer: str(args, "tmux-server") },
        startServer: false,
        onboard: true,
        agentArgs: [],
        env: process.env,
        submitJob: opts,
        worktree,
      });
      for (const x of c.warnings) err(x);
      record = requireRecord(w, c.job_id!);
    } else {
      const [{ submitJob }, { loadJobRuntime }] = await Promise.all([import("../ops/job/submit.ts"), import("../jobs/runtime.ts")]);
      record = (await submitJob(w, { ...opts, to: str(args, "to")!, topicPrefix: cfg.topicPrefix }, await loadJobRuntime(w))).record;
    }
    if (!bool(args, "wait")) {
      if (bool(args, "json")) outJson(publicRecord(record));
      else out(record.job_id);
      return;
    }
    if (!bool(args, "json")) out(record.job_id);
    return waitAndReport(w, [record], false, undefined, bool(args, "json") ? "view" : false);
  },
});

const event = defineCommand({
  meta: {
    name: "event",
    description: "report a job event (run by the agent doing the job): journal it, then publish it",
    examples: [
      'mam job event abc12345 started --source repo-worker-claude --detail "reading the brief"',
      'mam job event abc12345 progress --detail "tests pass" --data \'{"files":3}\'',
      'mam job event abc12345 completed --detail "done: lib/cli/status.ts"',
      'MAM_JOB_TOKEN=… mam job event abc12345 error --detail "build fails"   # on another machine',
    ],
  },
  args: {
    id: { type: "positional", description: "job id (8 hex digits)", valueHint: "ID" },
    event: { type: "positional", description: `one of ${EVENT_NAMES.join(", ")}`, valueHint: "EVENT" },
    detail: { type: "string", description: "a short human-readable text", valueHint: "TEXT" },
    data: { type: "string", description: "extra metadata: a JSON object (integers only in numbers)", valueHint: "JSON" },
    source: { type: "string", description: "who reports it (your session name; default: agent)", valueHint: "NAME" },
    token: { type: "string", description: "the job's token when this machine has no record of the job (else MAM_JOB_TOKEN)", valueHint: "T" },
    ...workspaceArg,
  },
  async run({ args }) {
    const id = checkJobId(str(args, "id")!);
    const name = str(args, "event")!;
    if (!isEventName(name)) throw usageError(`unknown event '${name.slice(0, 40)}'`, `use one of ${EVENT_NAMES.join(", ")}`);
    let data: { [k: string]: Json } = {};
    const rawData = str(args, "data");
    if (rawData !== undefined) {
      try {
        data = JSON.parse(rawData);
      } catch {
        throw usageError("--data is not valid JSON");
      }
      if (typeof data !== "object" || data === null || Array.isArray(data)) throw usageError("--data must be a JSON object");
      if ("hmac_sig" in data) throw usageError("--data must not contain hmac_sig (mam signs the event)");
      try {
        canonicalJson(data);
      } catch (e) {
        if (e instanceof CanonicalJsonError) throw usageError(`--data: ${e.message.replace(/^\$\.?/, "")}`);
        throw e;
      }
    }
    const source = str(args, "source") ?? "agent";
    if (source === "" || source.length > 128) throw usageError("--source must be 1-128 characters");
    const w = ws(args);
    const cfg = brokerConfigFromEnv(); // a bad MQTT_* setting fails before anything is written
    const token = str(args, "token") ?? (process.env.MAM_JOB_TOKEN || undefined);
    const a = (await appendEvent(w, id, { event: name, detail: str(args, "detail") ?? "", source, data }, { token }))!;
    if (a.record && isFinal(a.statusBefore)) warn(`job ${id} had already ended (${a.statusBefore}); the event is recorded, the status stays`);
    if (a.record) await publish(`${a.record.topic_prefix}/events`, a.line, id, a.payload.seq);
    else await publishRemote(cfg, w, id, token!, a.payload, a.line);
  },
});

const status = defineCommand({
  meta: {
    name: "status",
    description: "show one job: its record (without the token), its status from the journal, its last event",
    examples: ["mam job status abc12345", "mam job status abc12345 --json"],
  },
  args: { id: { type: "positional", description: "job id", valueHint: "ID" }, ...jsonArg, ...workspaceArg },
  run({ args }) {
    const v = jobStatus(ws(args), str(args, "id")!);
    if (bool(args, "json")) outJson(v);
    else out(statusText(v));
  },
});

const listCmd = defineCommand({
  meta: {
    name: "list",
    description: "list the jobs of the workspace",
    examples: ["mam job list", "mam job list --status running --json"],
  },
  args: {
    status: { type: "enum", options: [...JOB_STATUSES], description: `only jobs in this status (${JOB_STATUSES.join(", ")})`, valueHint: "S" },
    ...jsonArg,
    ...workspaceArg,
  },
  run({ args }) {
    const w = ws(args);
    const want = str(args, "status") as JobStatus | undefined;
    const views = listJobs(w, want);
    if (bool(args, "json")) outJson({ workspace: w, jobs: views });
    else if (views.length) out(listText(views));
    else err(want ? `no ${want} jobs` : "no jobs");
  },
});

const logs = defineCommand({
  meta: {
    name: "logs",
    description: "print a job's event journal, human readable; --follow until the job ends (or Ctrl-C)",
    examples: ["mam job logs abc12345", "mam job logs abc12345 --follow"],
  },
  args: {
    id: { type: "positional", description: "job id", valueHint: "ID" },
    follow: { type: "boolean", description: "keep printing new events until the job ends" },
    ...workspaceArg,
  },
  async run({ args }) {
    const id = checkJobId(str(args, "id")!);
    const w = ws(args);
    const rec = requireRecord(w, id);
    const reader = new JournalReader(w, id);
    reader.refresh();
    let shown = 0;
    const flush = () => {
      for (; shown < reader.events.length; shown++) out(eventLine(reader.events[shown]!));
    };
    flush();
    if (!bool(args, "follow")) return;
    const sig = interruptible();
    const watch = new JournalWatch(w);
    try {
      while (!isFinal(effectiveStatus(rec, reader.events))) {
        await watch.sleep(1000, sig.signal);
        if (sig.signal.aborted) return sig.code();
        if (reader.refresh()) flush();
      }
    } finally {
      watch.close();
      sig.dispose();
    }
  },
});

const cancel = defineCommand({
  meta: {
    name: "cancel",
    description: "cancel a job: journal and publish a cancelled event (source mam) and tell its agent",
    examples: ["mam job cancel abc12345"],
  },
  args: { id: { type: "positional", description: "job id", valueHint: "ID" }, ...workspaceArg },
  async run({ args }) {
    const { cancelJob } = await import("../ops/job/cancel.ts");
    const c = await cancelJob(ws(args), str(args, "id")!);
    for (const w of c.warnings) warn(w);
    if (!c.cancelled) err(`job ${c.job_id} has already ended (${c.status}); nothing to cancel`);
  },
});

const wait = defineCommand({
  meta: {
    name: "wait",
    description: "wait until the jobs end: exit 0 if all completed, 1 if one ended otherwise, 5 on --timeout",
    examples: ["mam job wait abc12345", "mam job wait abc12345 deadbeef --any --timeout 600", "mam job wait abc12345 --json"],
  },
  args: {
    ids: { type: "positional", variadic: true, description: "job ids", valueHint: "ID…" },
    any: { type: "boolean", description: "return when the first job ends" },
    timeout: { type: "string", description: "give up after S seconds (exit 5)", valueHint: "S" },
    ...jsonArg,
    ...workspaceArg,
  },
  async run({ args }) {
    const ids = [...new Set(list(args, "ids").map(checkJobId))];
    const timeoutS = seconds(args, "timeout", { decimal: true });
    const w = ws(args);
    const records = ids.map((id) => requireRecord(w, id));
    return waitAndReport(w, records, bool(args, "any"), timeoutS, bool(args, "json") ? "wait" : false);
  },
});

export default defineCommand({
  meta: {
    name: "job",
    description: "delegate work to agent sessions and hear back (journals, MQTT events)",
    examples: ['mam job submit --to worker --prompt "…"', "mam job wait <id>", "mam job list"],
  },
  subCommands: { submit, event, status, list: listCmd, logs, cancel, wait },
});
