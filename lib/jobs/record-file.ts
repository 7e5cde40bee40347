// A job's record file, .mam/jobs/<id>.json (0600, atomic replace; SPEC §7.1): its shape, its mark,
// reading and checking it, the jobs folder's locks, registering, importing and changing a record.
// Readers take no lock and create nothing; every read-modify-write runs under the flock on
// .mam/jobs/.lock. The journal beside it is lib/jobs/journal-file.ts; use cases, reactions, the
// dashboard and the CLI reach both through the JobStore (lib/jobs/store.ts), never these functions.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { randomBytes } from "../sys/digest.ts";
import { join } from "node:path";
import { errCode, EXIT, MamError, notFound } from "../sys/errors.ts";
import { withLock } from "../sys/lock-file.ts";
import { ensureMamSubdir } from "../sys/mam-dir.ts";
import { isValidJobId } from "../sys/names.ts";
import { isoUtc } from "../sys/time.ts";
import { atomicWriteFile, sweepTempFiles } from "../sys/atomic.ts";
import { foldStatus, type JobEvent } from "./event.ts";
import { JOB_STATUSES, type JobStatus } from "./statuses.ts";
import type { JobUsage } from "../cost/ledger.ts";
import { notOwn, recordMac } from "../sys/record-key.ts";

export interface JobRecord {
  schema_version: 1;
  job_id: string;
  status: JobStatus;
  created_at: string;
  updated_at: string;
  prompt?: string;
  brief_file?: string;
  /** the target session's agent kind */
  agent: string | null;
  agent_session: string;
  delegator: string | null;
  type: "single" | "loop";
  reviewer_session: string | null;
  max_iterations: number | null;
  iteration: number;
  topic_prefix: string;
  timeout_sec: number;
  idle_timeout_sec: number;
  expected_artifacts: string[];
  last_seq: number;
  auth_token: string;
  /** the worker's git worktree when it runs in one (issue 18): headers and reviews name its branch */
  worktree?: JobWorktree;
  /**
   * a copy of another machine's job (docs/machines.md): the host whose daemon drives it (its
   * timeouts, loop and delegator). This machine's daemon delivers to its own agent and watches it.
   */
  remote_of?: string;
  /** the reviewer's agent kind (loop jobs), for what its usage can be known (docs/cost.md) */
  reviewer_agent?: string | null;
  /** the job's budget in dollars and in tokens (`job submit --budget-usd`, `--max-tokens`); absent or null: none */
  budget_usd?: number | null;
  max_tokens?: number | null;
  /**
   * the tokens the daemon's meter counted for this job, per session and per loop iteration (a copy
   * of its ledger's, .mam/usage.json; written under the jobs lock by setJobUsages)
   */
  usage?: JobUsage;
  /** its place in a queue (docs/jobs.md#the-queue): high, normal (absent) or low */
  priority?: Priority;
  /**
   * a pool job (`--to-role`): the role whose first free agent takes it; agent_session is
   * `role:<role>` until then, and the agent's name from its dispatch on
   */
  to_role?: string;
  /**
   * where the job may go when its agent reaches a usage limit (`job submit --failover`,
   * docs/unattended.md#failover): roles, kinds or names, in order; absent: it stays
   */
  failover?: string[];
  /**
   * the jobs it runs after (`job submit --after`, docs/jobs.md#dependencies): it waits, queued,
   * until each has completed; one that ends otherwise cancels it, unless after_any_end
   */
  after?: string[];
  /** with after: it runs once each has ended, however it ended */
  after_any_end?: true;
  /**
   * the mark of this user's mam (lib/sys/record-key.ts): a MAC over what is typed and to whom,
   * written when mam registers (or imports) the job. A queued job without a valid one is never
   * dispatched: a cloned repository can ship `.mam/jobs/`.
   */
  mac?: string;
}

export type Priority = "high" | "normal" | "low";
/** a pool job's agent_session until it is dispatched (a name never has a colon) */
export const poolSession = (role: string) => `role:${role}`;

/** the worker's git worktree as a job knows it */
export interface JobWorktree {
  path: string;
  branch: string;
  base: string;
  base_commit: string;
}

export type PublicRecord = Omit<JobRecord, "auth_token" | "mac">;

export const DEFAULT_TIMEOUT_SEC = 3600;
export const DEFAULT_IDLE_TIMEOUT_SEC = 120;
export const DEFAULT_MAX_ITERATIONS = 3;
const LOCK_BUDGET_MS = 30_000;

export const jobsDir = (ws: string) => join(ws, ".mam", "jobs");
export const recordPath = (ws: string, id: string) => join(jobsDir(ws), `${id}.json`);
export const journalPath = (ws: string, id: string) => join(jobsDir(ws), `${id}.events.ndjson`);
export const jobsLockPath = (ws: string) => join(jobsDir(ws), ".lock");
/** this journal's origin id (identity.ts): the `origin` of the events written here */
export const originPath = (ws: string, id: string) => join(jobsDir(ws), `${id}.origin`);

export const newJobId = () => randomBytes(4).toString("hex");
export const newToken = () => randomBytes(32).toString("base64url");

export function publicRecord(r: JobRecord): PublicRecord {
  const { auth_token: _t, mac: _m, ...rest } = r;
  return rest;
}

/** what a job's mark covers: what its agent gets typed and who is told (never its status, times or usage, which change) */
const markedFields = (r: JobRecord): unknown[] => [
  r.job_id,
  r.created_at,
  r.auth_token,
  r.prompt ?? null,
  r.brief_file ?? null,
  r.to_role !== undefined ? poolSession(r.to_role) : r.agent_session,
  r.type,
  r.delegator,
  r.reviewer_session,
  r.remote_of ?? null,
  r.failover ?? null,
  // what it waits for (only when it waits for something: the marks of earlier records hold)
  ...(r.after !== undefined ? [r.after, r.after_any_end === true] : []),
];

/** the record with this user's mark (unchanged without a key) */
const marked = (r: JobRecord, key: string | undefined): JobRecord => (key === undefined ? r : { ...r, mac: recordMac(key, "job", markedFields(r)) });

/** why a job was not written by this user's mam (undefined: it was) */
export const notOwnJob = (r: JobRecord, key: string | undefined): string | undefined => notOwn(key, "job", markedFields(r), r.mac);

// ---- reading -------------------------------------------------------------------------------

const isInt = (v: unknown) => Number.isSafeInteger(v);
const isStrOrNull = (v: unknown) => v === null || typeof v === "string";

function malformed(path: string, what: string): MamError {
  return new MamError(`job file ${path} is malformed (${what})`, EXIT.FAIL, "fix or remove it; mam never overwrites it");
}

/** parse and check a record; a file that is not JSON or not a record is an error (exit 1) */
export function parseRecord(text: string, path: string, id: string): JobRecord {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new MamError(`job file ${path} is not valid JSON (${(e as Error).message})`, EXIT.FAIL, "fix or remove it; mam never overwrites it");
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw malformed(path, "not a JSON object");
  const r = v as Record<string, unknown>;
  if (r.schema_version !== 1) throw malformed(path, `schema_version ${JSON.stringify(r.schema_version)} is not 1`);
  if (r.job_id !== id) throw malformed(path, `job_id ${JSON.stringify(r.job_id)} does not match the file name`);
  if (!(JOB_STATUSES as readonly unknown[]).includes(r.status)) throw malformed(path, `unknown status ${JSON.stringify(r.status)}`);
  if (r.type !== "single" && r.type !== "loop") throw malformed(path, `unknown type ${JSON.stringify(r.type)}`);
  for (const k of ["created_at", "updated_at", "agent_session", "topic_prefix", "auth_token"]) {
    if (typeof r[k] !== "string" || r[k] === "") throw malformed(path, `${k} is not a string`);
  }
  for (const k of ["agent", "delegator", "reviewer_session"]) if (!isStrOrNull(r[k])) throw malformed(path, `${k} is not a string or null`);
  for (const k of ["iteration", "timeout_sec", "idle_timeout_sec", "last_seq"]) if (!isInt(r[k])) throw malformed(path, `${k} is not an integer`);
  if (!(r.max_iterations === null || isInt(r.max_iterations))) throw malformed(path, "max_iterations is not an integer or null");
  if (!Array.isArray(r.expected_artifacts) || !r.expected_artifacts.every((x) => typeof x === "string")) throw malformed(path, "expected_artifacts is not a list of strings");
  if (typeof r.prompt !== "string" && typeof r.brief_file !== "string") throw malformed(path, "neither prompt nor brief_file");
  if (r.budget_usd !== undefined && r.budget_usd !== null && !(typeof r.budget_usd === "number" && Number.isFinite(r.budget_usd) && r.budget_usd > 0)) throw malformed(path, "budget_usd is not a positive number or null");
  if (r.max_tokens !== undefined && r.max_tokens !== null && !(isInt(r.max_tokens) && (r.max_tokens as number) > 0)) throw malformed(path, "max_tokens is not a positive integer or null");
  if (r.after !== undefined && !(Array.isArray(r.after) && r.after.length > 0 && r.after.every((x) => typeof x === "string" && isValidJobId(x)))) throw malformed(path, "after is not a list of job ids");
  if (r.usage !== undefined && (typeof r.usage !== "object" || r.usage === null || Array.isArray(r.usage))) throw malformed(path, "usage is not an object");
  return r as unknown as JobRecord;
}

/** the record, or undefined when the job has no record here */
export function readRecord(ws: string, id: string): JobRecord | undefined {
  const p = recordPath(ws, id);
  let text: string;
  try {
    text = readFileSync(p, "utf8");
  } catch (e) {
    if (errCode(e) === "ENOENT") return undefined;
    throw new MamError(`cannot read job file ${p} (${(e as Error).message})`, EXIT.FAIL);
  }
  return parseRecord(text, p, id);
}

/** the record, or exit 3 */
export function requireRecord(ws: string, id: string): JobRecord {
  const r = readRecord(ws, id);
  if (!r) throw notFound(`no job ${id} in ${jobsDir(ws)}`, "see: mam job list");
  return r;
}


/**
 * How long the jobs folder must have been unchanged before a listing of it is kept: a change made
 * after the listing then gives the folder a modification time the listing did not see, even on a
 * file system that keeps it to the second or two, or with a clock that moves in coarse steps.
 */
const SETTLED_LISTING_NS = 3_000_000_000n;

/** the last listing of a settled jobs folder, per folder: its inode, mtime, ctime and ids */
const listings = new Map<string, { stamp: string; ids: readonly string[] }>();

/**
 * ids of the jobs with a record here, sorted. A long-lived reader (the subscriber daemon lists the
 * folder in most of its rounds) gets the last listing again, for one stat, while the folder is the
 * one it listed, unchanged (every record is written by a rename into it, every job removed from
 * it) and was already settled then (SETTLED_LISTING_NS).
 */
export function listJobIds(ws: string, now: number = Date.now()): string[] {
  const dir = jobsDir(ws);
  let stamp: string | undefined;
  let settled = false;
  try {
    const st = statSync(dir, { bigint: true });
    stamp = `${st.ino}:${st.mtimeNs}:${st.ctimeNs}`;
    // a folder's ctime moves whenever its mtime does (and when only its mode does)
    settled = BigInt(Math.floor(now)) * 1_000_000n - st.ctimeNs > SETTLED_LISTING_NS;
  } catch {}
  const kept = listings.get(dir);
  if (kept && kept.stamp === stamp) return [...kept.ids];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    listings.delete(dir);
    if (errCode(e) === "ENOENT" || errCode(e) === "ENOTDIR") return [];
    throw new MamError(`cannot list ${dir} (${(e as Error).message})`, EXIT.FAIL);
  }
  const ids = names
    .map((n) => /^([0-9a-f]{8})\.json$/.exec(n)?.[1])
    .filter((x): x is string => x !== undefined)
    .sort();
  if (settled && stamp !== undefined) listings.set(dir, { stamp, ids });
  else listings.delete(dir);
  return ids;
}

/** status from the journal (the truth); the record's own status only when nothing is journalled */
export function effectiveStatus(r: JobRecord, events: readonly JobEvent[]): JobStatus {
  return events.length ? foldStatus(events, r) : r.status;
}

export interface JobView extends PublicRecord {
  events: number;
  last_event: JobEvent | null;
  /** a job waiting its turn: its place in its line (1 = next) */
  position?: number;
  /** a job waiting its turn: why its agent (every agent of its role) takes none now, when it is at a limit; or the jobs it runs after that have not ended */
  waits_for?: string;
}

/** what `job status --json` prints: the record without its token, with the folded status */
export function jobView(r: JobRecord, events: readonly JobEvent[]): JobView {
  const last = events.length ? events[events.length - 1]! : null;
  let lastShown: JobEvent | null = null;
  if (last) {
    const { hmac_sig: _s, ...data } = last.data ?? {};
    lastShown = { ...last, data };
  }
  return { ...publicRecord(r), status: effectiveStatus(r, events), events: events.length, last_event: lastShown };
}

// ---- writing -------------------------------------------------------------------------------

/** .mam/jobs/ (0700) in a .mam/ with its .gitignore (lib/sys/mam-dir.ts) */
function ensureJobsDir(ws: string): void {
  ensureMamSubdir(ws, "jobs");
}

/** run fn under the exclusive jobs lock (creates .mam/jobs/) */
export async function withJobsLock<T>(ws: string, fn: () => T | Promise<T>): Promise<T> {
  ensureJobsDir(ws);
  return withLock(jobsLockPath(ws), "jobs", LOCK_BUDGET_MS, fn);
}

/**
 * run fn under the workspace's dispatch lock (docs/jobs.md#the-queue): whoever decides that an
 * agent is free and gives it a job holds it, so no agent ever gets two jobs at once. Taken before
 * the jobs lock, never inside it.
 */
export async function withDispatchLock<T>(ws: string, fn: () => T | Promise<T>): Promise<T> {
  ensureJobsDir(ws);
  return withLock(join(jobsDir(ws), ".dispatch.lock"), "dispatch", LOCK_BUDGET_MS, fn);
}

/** replace a record (call under the jobs lock) */
export function writeRecord(ws: string, r: JobRecord): void {
  atomicWriteFile(recordPath(ws, r.job_id), `${JSON.stringify(r, null, 2)}\n`, { mode: 0o600, regularOnly: true });
}

export interface JobSpec {
  agent_session: string;
  agent: string | null;
  prompt?: string;
  brief_file?: string;
  delegator: string | null;
  type: "single" | "loop";
  reviewer_session: string | null;
  max_iterations: number | null;
  timeout_sec: number;
  idle_timeout_sec: number;
  expected_artifacts: string[];
  /** MAM_MQTT_TOPIC_PREFIX; the record keeps <prefix>/<id> */
  topic_prefix_base: string;
  worktree?: JobWorktree;
  reviewer_agent?: string | null;
  budget_usd?: number | null;
  max_tokens?: number | null;
  priority?: Priority;
  to_role?: string;
  failover?: string[];
  after?: string[];
  after_any_end?: boolean;
}

/** register a new pending job with a fresh id (retried on collision) and token */
export async function registerJob(ws: string, spec: JobSpec, now: number = Date.now() / 1000, key?: string): Promise<JobRecord> {
  return withJobsLock(ws, () => {
    sweepTempFiles(jobsDir(ws));
    let id = newJobId();
    for (let i = 0; existsSync(recordPath(ws, id)) || existsSync(journalPath(ws, id)); i++) {
      if (i >= 50) throw new MamError(`could not find a free job id in ${jobsDir(ws)}`, EXIT.FAIL);
      id = newJobId();
    }
    const t = isoUtc(Math.floor(now));
    const r: JobRecord = {
      schema_version: 1,
      job_id: id,
      status: "pending",
      created_at: t,
      updated_at: t,
      ...(spec.brief_file !== undefined ? { brief_file: spec.brief_file } : { prompt: spec.prompt ?? "" }),
      agent: spec.agent,
      agent_session: spec.agent_session,
      delegator: spec.delegator,
      type: spec.type,
      reviewer_session: spec.reviewer_session,
      max_iterations: spec.max_iterations,
      iteration: 1,
      topic_prefix: `${spec.topic_prefix_base}/${id}`,
      timeout_sec: spec.timeout_sec,
      idle_timeout_sec: spec.idle_timeout_sec,
      expected_artifacts: spec.expected_artifacts,
      last_seq: 0,
      auth_token: newToken(),
      ...(spec.worktree ? { worktree: spec.worktree } : {}),
      ...(spec.reviewer_agent ? { reviewer_agent: spec.reviewer_agent } : {}),
      ...(spec.budget_usd != null ? { budget_usd: spec.budget_usd } : {}),
      ...(spec.max_tokens != null ? { max_tokens: spec.max_tokens } : {}),
      ...(spec.priority && spec.priority !== "normal" ? { priority: spec.priority } : {}),
      ...(spec.to_role !== undefined ? { to_role: spec.to_role } : {}),
      ...(spec.failover?.length ? { failover: spec.failover } : {}),
      ...(spec.after?.length ? { after: spec.after, ...(spec.after_any_end ? { after_any_end: true as const } : {}) } : {}),
    };
    const out = marked(r, key);
    writeRecord(ws, out);
    return out;
  });
}

/**
 * keep a copy of another machine's job (its id and token as they are), once: true when this call
 * wrote it, false when a copy was there already
 */
export async function importJob(ws: string, r: JobRecord, from: string, key?: string): Promise<boolean> {
  if (!isValidJobId(r.job_id)) throw new MamError(`invalid job id '${String(r.job_id).slice(0, 40)}'`, EXIT.FAIL);
  return withJobsLock(ws, () => {
    if (existsSync(recordPath(ws, r.job_id))) return false;
    // the sender's mark (if any) is its user's: this copy gets this user's
    const { mac: _m, ...rest } = r;
    writeRecord(ws, marked({ ...rest, status: "pending", last_seq: 0, remote_of: from }, key));
    return true;
  });
}


/** update a record under the jobs lock (fn returns the new record, or undefined for no change) */
export async function mutateRecord(ws: string, id: string, fn: (r: JobRecord) => JobRecord | undefined, key?: string): Promise<JobRecord> {
  return withJobsLock(ws, () => {
    const r = requireRecord(ws, id);
    const next = fn(r);
    if (next === undefined) return r;
    // a record of this user's stays theirs when their mam changes what the mark covers (a failover
    // names another agent); one that was not theirs never becomes so
    const own = key !== undefined && notOwnJob(r, key) === undefined;
    const out = own ? marked({ ...next, updated_at: isoUtc() }, key) : { ...next, updated_at: isoUtc() };
    writeRecord(ws, out);
    return out;
  });
}

/**
 * write the meter's counts into the records that have them (one pass under the jobs lock; a record
 * whose usage is already that is not rewritten, nor is its updated_at moved)
 */
export async function setJobUsages(ws: string, usages: ReadonlyMap<string, JobUsage>): Promise<void> {
  if (usages.size === 0) return;
  await withJobsLock(ws, () => {
    for (const [id, usage] of usages) {
      let rec: JobRecord | undefined;
      try {
        rec = readRecord(ws, id);
      } catch {
        continue; // a broken record is reported by job status
      }
      if (!rec || JSON.stringify(rec.usage) === JSON.stringify(usage)) continue;
      writeRecord(ws, { ...rec, usage });
    }
  });
}
