// A job to a shell session (docs/jobs.md, "Jobs to a shell"): its prompt is the command, a brief
// file is a script. Submit types only `mam shell-job <id> --workspace WS` into the shell (bash
// would run a job header's every line), and that line runs this: `started` first; the command in
// a child bash, in the pane's folder and environment, with no input (stdin /dev/null), its output
// shown in the pane and its last lines kept; `progress` while it runs (the idle timeout measures
// the command, not mam's silence); then `completed` (exit 0) or `error` (another exit, a signal)
// with the last lines as the detail. A job cancelled or timed out meanwhile stops the command
// (SIGTERM to its process group, SIGKILL 5 s later) and nothing more is reported. A job runs
// once: the line run again from the shell's history runs nothing.
import { readsCommands } from "../../agents/kinds/index.ts";
import { publishJournalled } from "../../jobs/publish.ts";
import { isFinal, type JobStatus } from "../../jobs/statuses.ts";
import { type Appended, effectiveStatus, type EventInput, type JobRecord } from "../../jobs/store.ts";
import { conflict, usageError } from "../../sys/errors.ts";
import type { Notice } from "../../sys/notice.ts";
import type { Deps } from "../deps.ts";

export interface ShellJobIO {
  /** the command's output as it comes (1: its stdout, 2: its stderr) */
  output(fd: 1 | 2, chunk: Uint8Array): void;
  /** a line about the job: what runs */
  progress(line: string): void;
  /** aborted when the runner itself is stopped (Ctrl-C in the pane); the reason names the signal */
  signal: AbortSignal;
  /** the folder the command runs in (the pane's) */
  cwd: string;
}

export interface ShellJobRun {
  job_id: string;
  /** completed or error; or what the job became meanwhile (cancelled, timeout), then nothing was reported */
  status: JobStatus;
  /** the command's exit status, null when a signal ended it */
  exit_code: number | null;
  /** the signal that ended it, else null */
  signal: string | null;
  /** the detail reported: the last lines of its output */
  detail: string;
  warnings: Notice[];
}

/** lines of output kept for the detail, and at most this many characters of them */
const TAIL_LINES = 10;
const TAIL_CHARS = 1500;
/** characters of output held while it runs (only the end of it is ever reported) */
const HELD = 16_384;
const TICK_MS = 1000;
const KILL_GRACE_MS = 5000;

/** the last lines of an output, as a terminal shows them (a progress bar's \r redraws keep their last state) */
export function outputTail(text: string, lines = TAIL_LINES, chars = TAIL_CHARS): string {
  const shown = text
    .split("\n")
    .map((l) => l.split("\r").filter((p) => p !== "").pop() ?? "")
    .map((l) => l.trimEnd());
  while (shown.length && shown[shown.length - 1] === "") shown.pop();
  const t = shown.slice(-lines).join("\n").replace(/^\n+/, "");
  return t.length > chars ? `…${t.slice(-(chars - 1))}` : t;
}

/** pure: the event that ends a shell job, from how its command ended */
export function endEvent(source: string, exitCode: number | null, signal: string | null, tail: string, stoppedBy?: string): EventInput {
  if (exitCode === 0 && !stoppedBy) return { event: "completed", detail: tail || "exit 0 (no output)", source, data: { exit_code: 0 } };
  const how = stoppedBy ? `stopped by ${stoppedBy} to mam shell-job` : signal ? `killed by ${signal}` : `exit ${exitCode}`;
  return { event: "error", detail: tail ? `${how}: ${tail}` : `${how} (no output)`, source, data: signal ? { signal } : { exit_code: exitCode ?? -1 } };
}

/** what runs: the prompt as a bash command line, or the brief file as a bash script */
function argvOf(rec: JobRecord): { argv: string[]; what: string } {
  if (rec.brief_file !== undefined) return { argv: ["bash", rec.brief_file], what: `the script ${rec.brief_file}` };
  const cmd = rec.prompt ?? "";
  const first = cmd.split("\n")[0]!.slice(0, 200);
  return { argv: ["bash", "-c", cmd], what: first === cmd ? cmd : `${first} …` };
}

export async function runShellJob(deps: Deps, id: string, io: ShellJobIO): Promise<ShellJobRun> {
  const rec = deps.jobs.require(id);
  if (!readsCommands(rec.agent ?? undefined)) {
    throw usageError(`job ${id} was given to ${rec.agent_session} (${rec.agent ?? "unknown kind"}), not to a shell session; nothing was run`, "mam shell-job runs only jobs submitted to a shell session");
  }
  const source = rec.agent_session;
  const warnings: Notice[] = [];
  const publish = async (a: Appended | undefined) => {
    if (!a) return;
    const n = await publishJournalled(`${a.record?.topic_prefix ?? rec.topic_prefix}/events`, a.line, id, a.payload.seq, deps.env);
    if (n && warnings.length === 0) warnings.push(n); // one note of a broker that is down is enough
  };
  /** an event, unless the job ended meanwhile */
  const append = (input: EventInput) => deps.jobs.append(id, (r, evs) => (r && !isFinal(effectiveStatus(r, evs)) ? input : undefined));
  const { argv, what } = argvOf(rec);

  // started, once: a job that already started or ended runs nothing
  let before: JobStatus = rec.status;
  const started = await deps.jobs.append(id, (r, evs) => {
    before = r ? effectiveStatus(r, evs) : before;
    return r && !isFinal(before) && !evs.some((e) => e.event === "started") ? { event: "started", detail: `running ${what}`.slice(0, 2000), source } : undefined;
  });
  if (!started) {
    const was = isFinal(before) ? `ended (${before})` : "started";
    throw conflict(`job ${id} has already ${was}; nothing was run`, "a job to a shell runs once: submit it again to run it again");
  }
  await publish(started);
  io.progress(`[mam] job ${id}: running ${what}`);

  const proc = Bun.spawn(argv, { cwd: io.cwd, env: deps.env, stdin: "ignore", stdout: "pipe", stderr: "pipe", detached: true });
  let held = "";
  const pump = async (stream: ReadableStream<Uint8Array>, fd: 1 | 2) => {
    const dec = new TextDecoder();
    for await (const chunk of stream) {
      io.output(fd, chunk);
      held = (held + dec.decode(chunk, { stream: true })).slice(-HELD);
    }
  };
  const pumps = Promise.all([pump(proc.stdout, 1), pump(proc.stderr, 2)]).catch(() => {});

  // stop the command's whole process group: SIGTERM, then SIGKILL
  let stopping: ReturnType<typeof setTimeout> | undefined;
  const stop = () => {
    if (stopping || proc.exitCode !== null || proc.signalCode !== null) return;
    const kill = (sig: NodeJS.Signals) => {
      try {
        process.kill(-proc.pid, sig);
      } catch {}
    };
    kill("SIGTERM");
    stopping = setTimeout(() => kill("SIGKILL"), KILL_GRACE_MS);
  };
  let stoppedBy: string | undefined;
  let endedAs: JobStatus | undefined;
  const onAbort = () => {
    stoppedBy = String(io.signal.reason ?? "a signal");
    stop();
  };
  io.signal.addEventListener("abort", onAbort, { once: true });
  if (io.signal.aborted) onAbort();

  // every second: has the job ended meanwhile (cancelled, timed out)? a progress now and then
  const idle = rec.idle_timeout_sec > 0 ? rec.idle_timeout_sec : 120;
  const everyMs = Math.max(1, Math.min(60, Math.floor(idle / 2))) * 1000;
  const t0 = Date.now();
  let lastReport = t0;
  let ticking = false;
  const tick = setInterval(async () => {
    if (ticking || stopping) return;
    ticking = true;
    try {
      const r = deps.jobs.read(id);
      const st = r ? effectiveStatus(r, deps.jobs.journal(id)) : undefined;
      if (st && isFinal(st)) {
        endedAs = st;
        stop();
      } else if (Date.now() - lastReport >= everyMs) {
        lastReport = Date.now();
        const last = outputTail(held, 1, 200);
        await publish(await append({ event: "progress", detail: `running for ${Math.round((Date.now() - t0) / 1000)} s${last ? `: ${last}` : ""}`, source }));
      }
    } catch {} // a failed look is tried again next tick; the end is reported regardless
    ticking = false;
  }, TICK_MS);

  try {
    await proc.exited;
    // output still buffered in the pipes; a background child that keeps them open is not waited for
    await Promise.race([pumps, Bun.sleep(2000)]);
  } finally {
    clearInterval(tick);
    clearTimeout(stopping);
    io.signal.removeEventListener("abort", onAbort);
  }
  const signal = proc.signalCode === null || proc.signalCode === undefined ? null : String(proc.signalCode);
  const exitCode = signal ? null : proc.exitCode;
  const ran = { job_id: id, exit_code: exitCode, signal, warnings };
  if (endedAs) return { ...ran, status: endedAs, detail: "" };
  const end = endEvent(source, exitCode, signal, outputTail(held), stoppedBy);
  const a = await append(end);
  if (!a) return { ...ran, status: deps.jobs.require(id).status, detail: "" }; // it ended meanwhile
  await publish(a);
  return { ...ran, status: a.statusAfter, detail: end.detail };
}
