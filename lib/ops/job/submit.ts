// Submitting a job (SPEC §7.4 `job submit`): validate, find the target session, register the
// job (pending), ensure the daemon, prompt the agent with its header. Used by `mam job submit`
// and by `mam create --submit-job`.
import { statSync } from "node:fs";
import { resolve } from "node:path";
import { MamError, notFound, usageError } from "../../sys/errors.ts";
import { checkName } from "../../sys/names.ts";
import { err, warn } from "../../sys/io.ts";
import { jobHeader } from "../../jobs/header.ts";
import type { JobRuntime } from "../../jobs/runtime.ts";
import { appendEvent, DEFAULT_IDLE_TIMEOUT_SEC, DEFAULT_MAX_ITERATIONS, DEFAULT_TIMEOUT_SEC, type JobRecord, type JobSpec, registerJob } from "../../jobs/store.ts";

export interface SubmitOptions {
  to: string;
  prompt?: string;
  briefFile?: string;
  from?: string;
  timeoutSec?: number;
  idleTimeoutSec?: number;
  expect?: string[];
  type?: "single" | "loop";
  reviewer?: string;
  maxIterations?: number;
  /** MAM_MQTT_TOPIC_PREFIX */
  topicPrefix: string;
  /** resolves a relative --brief-file */
  cwd?: string;
}

/** the job spec of valid options; usage errors (exit 2) otherwise, before any side effect */
export function jobSpecOf(o: SubmitOptions): JobSpec {
  checkName(o.to, "session name (--to)");
  if (o.from !== undefined) checkName(o.from, "session name (--from)");
  if ((o.prompt === undefined) === (o.briefFile === undefined)) throw usageError("give exactly one of --prompt and --brief-file");
  if (o.prompt !== undefined && o.prompt.trim() === "") throw usageError("--prompt is empty");
  let brief: string | undefined;
  if (o.briefFile !== undefined) {
    brief = resolve(o.cwd ?? process.cwd(), o.briefFile);
    let ok = false;
    try {
      ok = statSync(brief).isFile();
    } catch {}
    if (!ok) throw usageError(`brief file '${o.briefFile}' does not exist or is not a file`);
  }
  const type = o.type ?? "single";
  if (type === "loop") {
    if (o.reviewer === undefined) throw usageError("--type loop needs --reviewer NAME");
    checkName(o.reviewer, "session name (--reviewer)");
    if (o.reviewer === o.to) throw usageError("the reviewer must be another session than the worker (--to)");
  } else {
    if (o.reviewer !== undefined) throw usageError("--reviewer goes with --type loop");
    if (o.maxIterations !== undefined) throw usageError("--max-iterations goes with --type loop");
  }
  if (o.maxIterations !== undefined && o.maxIterations < 1) throw usageError("--max-iterations must be at least 1");
  for (const a of o.expect ?? []) if (a === "" || a.includes("\n")) throw usageError(`invalid --expect '${a}'`);
  return {
    agent_session: o.to,
    agent: null,
    ...(brief !== undefined ? { brief_file: brief } : { prompt: o.prompt! }),
    delegator: o.from ?? null,
    type,
    reviewer_session: type === "loop" ? o.reviewer! : null,
    max_iterations: type === "loop" ? (o.maxIterations ?? DEFAULT_MAX_ITERATIONS) : null,
    timeout_sec: o.timeoutSec ?? DEFAULT_TIMEOUT_SEC,
    idle_timeout_sec: o.idleTimeoutSec ?? DEFAULT_IDLE_TIMEOUT_SEC,
    expected_artifacts: o.expect ?? [],
    topic_prefix_base: o.topicPrefix,
  };
}

export interface Submitted {
  record: JobRecord;
  /** the daemon's PID, when one runs */
  daemonPid?: string;
}

/** the target waits at a dialog: the job header typed now would answer it */
function waitingError(who: string, waiting: string): MamError {
  return new MamError(`${who} waits at ${waiting}; nothing was submitted`, 1, "answer it, then submit the job again");
}

/** submit: nothing is written unless the target (and reviewer) sessions exist and can take a prompt */
export async function submitJob(ws: string, o: SubmitOptions, runtime: JobRuntime): Promise<Submitted> {
  const spec = jobSpecOf(o);
  const target = await runtime.findSession(o.to);
  if (!target) throw notFound(`no running session named '${o.to}' in this workspace (${ws})`, "see: mam status");
  if (target.gone) throw new MamError(`session '${o.to}' has no agent any more (${target.gone}); nothing was submitted`, 1, `mam resume ${o.to} starts it again`);
  if (target.waiting) throw waitingError(`session '${o.to}'`, target.waiting);
  if (spec.reviewer_session !== null) {
    const reviewer = await runtime.findSession(spec.reviewer_session);
    if (!reviewer) throw notFound(`no running session named '${spec.reviewer_session}' (the reviewer) in this workspace (${ws})`, "see: mam status");
    if (reviewer.gone) throw new MamError(`session '${spec.reviewer_session}' (the reviewer) has no agent any more (${reviewer.gone}); nothing was submitted`, 1, `mam resume ${spec.reviewer_session} starts it again`);
    if (reviewer.waiting) throw waitingError(`session '${spec.reviewer_session}' (the reviewer)`, reviewer.waiting);
  }
  const record = await registerJob(ws, { ...spec, agent: target.agent, ...(target.worktree ? { worktree: target.worktree } : {}) });
  let daemonPid: string | undefined;
  try {
    daemonPid = await runtime.ensureDaemon();
  } catch (e) {
    warn(`could not start the subscriber daemon (${(e as Error).message}); job ${record.job_id} is tracked through its journal`);
  }
  try {
    const w = await runtime.prompt(target, jobHeader(record, o.to, ws));
    if (w) err(w);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    await appendEvent(ws, record.job_id, { event: "error", detail: `could not prompt ${o.to}: ${why}`.slice(0, 2000), source: "mam" });
    throw new MamError(`job ${record.job_id}: could not prompt session ${o.to} (${why})`, 1, `the job is marked error; see: mam job status ${record.job_id}`);
  }
  return { record, daemonPid };
}
