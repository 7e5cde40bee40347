// Scheduled jobs (docs/jobs.md#schedules), their I/O side: a schedule is a file in
// .mam/schedules/<id>.json (0600) holding the job to submit, its next time, its period and its
// choices (lib/jobs/schedule.ts); the daemon submits each run when it is due (fireDue) and keeps
// the last runs in the file. Every change of a schedule is made under .mam/schedules/.lock, so a
// cancel and a run never overwrite each other.
//
// A workspace's `.mam/` can come from someone else (a cloned repository): the daemon runs only the
// schedules this user's mam wrote, each marked with a MAC under this user's record key
// (lib/sys/record-key.ts), and a schedule's brief file must lie inside the workspace. A file it
// cannot read or did not write is skipped alone, and said once.
import { randomBytes } from "../../sys/digest.ts";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { notOwn, recordKey, recordKeyPath, recordMac } from "../../sys/record-key.ts";
import type { Env } from "../../sys/paths.ts";
import { join } from "node:path";
import { due, type Missed, type Overlap, parseDuration, parseTime } from "../../jobs/schedule.ts";
import { isFinal } from "../../jobs/statuses.ts";
import { effectiveStatus } from "../../jobs/store.ts";
import { atomicWriteFile } from "../../sys/atomic.ts";
import { EXIT, MamError, notFound, usageError } from "../../sys/errors.ts";
import { field } from "../../sys/fields.ts";
import { withLock } from "../../sys/lock-file.ts";
import { ensureMamSubdir } from "../../sys/mam-dir.ts";
import type { Notice } from "../../sys/notice.ts";
import { isoUtc } from "../../sys/time.ts";
import type { Deps } from "../deps.ts";
import { checkJob } from "./rules.ts";
import { briefPath, ensureDaemonNoticed, type JobInput } from "./submit.ts";
import { allRows } from "../../registry/rows.ts";

/** a schedule id: `s` and 7 hex digits (never a job id) */
const SCHEDULE_ID_RE = /^s[0-9a-f]{7}$/;
const RUNS_KEPT = 50;

export interface ScheduleRun {
  /** when it was due (UTC) */
  due: string;
  /** when it was acted on (UTC) */
  at: string;
  job_id: string | null;
  /** what happened: submitted, queued, skipped (and why), failed (and why) */
  note: string;
}

export interface Schedule {
  schema_version: 1;
  schedule_id: string;
  created_at: string;
  /** the job each run submits */
  job: JobInput;
  /** epoch seconds of the next run; null once it has ended */
  next_at: number | null;
  every_s: number | null;
  missed: Missed;
  overlap: Overlap;
  runs: ScheduleRun[];
  /** set when it ended (cancelled, its one run done, missed and skipped) */
  ended?: { at: string; why: string };
  /** the mark of this user's mam: a MAC over the job and its times' rules (never next_at or runs, which change) */
  mac?: string;
}

const markedFields = (s: Schedule): unknown[] => [s.schedule_id, s.created_at, JSON.stringify(s.job), s.every_s, s.missed, s.overlap];

/** why a schedule was not written by this user's mam (undefined: it was) */
const notOwnSchedule = (s: Schedule, key: string | undefined): string | undefined => notOwn(key, "schedule", markedFields(s), s.mac);

export const schedulesDir = (ws: string) => join(ws, ".mam", "schedules");
const schedulePath = (ws: string, id: string) => join(schedulesDir(ws), `${id}.json`);

function withSchedulesLock<T>(ws: string, fn: () => T | Promise<T>): Promise<T> {
  ensureMamSubdir(ws, "schedules");
  return withLock(join(schedulesDir(ws), ".lock"), "schedules", 30_000, fn);
}

function readSchedule(ws: string, id: string): Schedule | undefined {
  const p = schedulePath(ws, id);
  let text: string;
  try {
    text = readFileSync(p, "utf8");
  } catch {
    return undefined;
  }
  try {
    const s = JSON.parse(text) as Schedule;
    if (s?.schema_version !== 1 || s.schedule_id !== id || typeof s.job !== "object") throw new Error("not a schedule");
    return s;
  } catch (e) {
    throw new MamError(`schedule file ${p} is malformed (${(e as Error).message})`, EXIT.FAIL, FIX);
  }
}

const writeSchedule = (ws: string, s: Schedule) => atomicWriteFile(schedulePath(ws, s.schedule_id), `${JSON.stringify(s, null, 2)}\n`, { mode: 0o600, regularOnly: true });

/** every schedule of the workspace, newest first */
export function listSchedules(ws: string): Schedule[] {
  if (!existsSync(schedulesDir(ws))) return [];
  const out: Schedule[] = [];
  for (const f of readdirSync(schedulesDir(ws))) {
    const m = /^(s[0-9a-f]{7})\.json$/.exec(f);
    if (!m) continue;
    const s = readSchedule(ws, m[1]!);
    if (s) out.push(s);
  }
  return out.sort((a, b) => (a.created_at < b.created_at ? 1 : -1));
}

/** a schedule file the daemon does not act on: its path and why */
export interface SkippedSchedule {
  file: string;
  why: string;
  /** what the user can do */
  fix: string;
}

/** the shortest period between runs unless MAM_MIN_EVERY_S says otherwise (review 2, Q2: `--every 1s` made a job a second, forever) */
const DEFAULT_MIN_EVERY_S = 60;

/** MAM_MIN_EVERY_S: the shortest `--every`, in seconds (a whole number ≥ 1; default 60) */
function minEvery(env: Env): number {
  const v = env.MAM_MIN_EVERY_S?.trim();
  return v !== undefined && /^\d+$/.test(v) && Number(v) >= 1 ? Number(v) : DEFAULT_MIN_EVERY_S;
}

const shortEvery = (every: string, env: Env): MamError => {
  const min = minEvery(env);
  const as = min % 60 === 0 ? `${min / 60}m` : `${min}s`;
  return usageError(`${field("every")} ${every.slice(0, 40)} is shorter than the shortest period between runs (${as})`, `give ${field("every")} ${as} or more (MAM_MIN_EVERY_S sets the floor, in seconds)`);
};

const RECREATE = "re-create the schedule (mam job submit --at/--every; mam job list --scheduled lists them), then remove the file";
const FIX = "fix or remove it";

/**
 * the schedules the daemon may run (this user's mam wrote them), and the files it skips (one that
 * cannot be read or parsed, or was not written by this user's mam), each on its own
 */
function scanSchedules(ws: string, env: Env): { own: Schedule[]; skipped: SkippedSchedule[] } {
  const out = { own: [] as Schedule[], skipped: [] as SkippedSchedule[] };
  let names: string[];
  try {
    names = readdirSync(schedulesDir(ws));
  } catch {
    return out;
  }
  const key = recordKey(env, false);
  for (const f of names) {
    const m = /^(s[0-9a-f]{7})\.json$/.exec(f);
    if (!m) continue;
    const file = schedulePath(ws, m[1]!);
    try {
      const s = readSchedule(ws, m[1]!);
      if (!s) continue;
      const why = notOwnSchedule(s, key);
      if (why !== undefined) out.skipped.push({ file, why: `this user's mam did not write it: ${why}`, fix: RECREATE });
      else out.own.push(s);
    } catch (e) {
      out.skipped.push({ file, why: (e as Error).message, fix: FIX });
    }
  }
  return out;
}

/** are there schedules of this user's still to run? (the daemon stays while there are) */
export const hasActiveSchedules = (ws: string, env: Env): boolean => scanSchedules(ws, env).own.some((s) => !s.ended);

export interface ScheduleInput {
  at?: string;
  every?: string;
  missed?: Missed;
  overlap?: Overlap;
}

export interface Scheduled {
  schedule: Schedule;
  daemon_pid: number | null;
  warnings: Notice[];
}

/**
 * Make a schedule: the job is checked now (its fields, its brief file, its target's existence), so
 * that a mistake is not found at 3 am. The first run is at `at`, else one period from now.
 */
export async function createSchedule(deps: Deps, job: JobInput, o: ScheduleInput): Promise<Scheduled> {
  checkJob(job);
  if (o.at === undefined && o.every === undefined) throw usageError(`give ${field("at")} or ${field("every")}`);
  const now = Math.floor(deps.clock.ms() / 1000);
  const every = o.every !== undefined ? parseDuration(o.every) : null;
  const first = o.at !== undefined ? parseTime(o.at, now) : now + every!;
  if (o.at !== undefined && first < now - 1 && every === null) throw usageError(`${field("at")} ${o.at} has passed`);
  if (every !== null && every < minEvery(deps.env)) throw shortEvery(o.every!, deps.env);
  // the brief as an absolute path now (the daemon runs elsewhere), inside the workspace whoever
  // asks: the daemon reads it at every run, long after this check
  const brief = job.brief_file !== undefined ? briefPath(job.brief_file, deps.ws, { within: [deps.ws] }) : undefined;
  await checkTarget(deps, job);
  // the daemon runs only schedules marked with this user's key: without one it would never run
  const key = recordKey(deps.env, true);
  if (key === undefined) throw new MamError(`cannot keep mam's record key in ${recordKeyPath(deps.env)}: the daemon would never run this schedule; nothing was scheduled`, EXIT.FAIL, "make your home folder writable (or set HOME to one that is)");
  const id = `s${randomBytes(4).toString("hex").slice(0, 7)}`;
  const s: Schedule = {
    schema_version: 1,
    schedule_id: id,
    created_at: isoUtc(now),
    job: { ...job, ...(brief !== undefined ? { brief_file: brief } : {}) },
    next_at: first,
    every_s: every,
    missed: o.missed ?? "once",
    overlap: o.overlap ?? "skip",
    runs: [],
  };
  s.mac = recordMac(key, "schedule", markedFields(s));
  await withSchedulesLock(deps.ws, () => writeSchedule(deps.ws, s));
  const warnings: Notice[] = [];
  const daemonPid = await ensureDaemonNoticed(deps, warnings, `schedule ${id} runs only while a daemon runs (mam daemon ensure)`);
  return { schedule: s, daemon_pid: daemonPid, warnings };
}

/** the target of a scheduled job exists now (a session by name, or a session of the role) */
async function checkTarget(deps: Deps, job: JobInput): Promise<void> {
  const data = deps.registry.read();
  const rows = allRows(data);
  if (job.to_role !== undefined) {
    if (!rows.some((r) => r.role === job.to_role)) throw notFound(`no session has the role '${job.to_role}' in this workspace (${deps.ws})`, "see: mam status");
  } else if (!job.to!.includes("@") && !rows.some((r) => r.name === job.to)) {
    throw notFound(`no session named '${job.to}' in this workspace (${deps.ws})`, "see: mam status");
  }
}

export interface Unscheduled {
  schedule_id: string;
  /** false: it had ended already */
  cancelled: boolean;
  /** as a job cancel's result: the schedule's id, "cancelled", nobody told */
  job_id: string;
  status: "cancelled";
  told: null;
  warnings: Notice[];
}

/** stop a schedule's future runs (jobs it submitted stay as they are) */
export async function cancelSchedule(deps: Deps, id: string): Promise<Unscheduled> {
  if (!SCHEDULE_ID_RE.test(id)) throw usageError(`invalid schedule id '${id.slice(0, 40)}'`, "schedule ids are s and 7 hex digits: see mam job list --scheduled");
  return withSchedulesLock(deps.ws, () => {
    const s = readSchedule(deps.ws, id);
    if (!s) throw notFound(`no schedule ${id} in ${schedulesDir(deps.ws)}`, "see: mam job list --scheduled");
    const result = { schedule_id: id, job_id: id, status: "cancelled" as const, told: null, warnings: [] };
    if (s.ended) return { ...result, cancelled: false };
    writeSchedule(deps.ws, { ...s, next_at: null, ended: { at: isoUtc(), why: "cancelled" } });
    return { ...result, cancelled: true };
  });
}

/**
 * The daemon's step: submit every run that is due (each schedule under the lock, so a cancel in
 * between wins), of the schedules this user's mam wrote. Returns the log lines, and the files
 * skipped (the caller says each once).
 */
export async function fireDue(deps: Deps, nowS: number): Promise<{ log: string[]; skipped: SkippedSchedule[] }> {
  const log: string[] = [];
  if (!existsSync(schedulesDir(deps.ws))) return { log, skipped: [] };
  const { own, skipped } = scanSchedules(deps.ws, deps.env);
  const key = recordKey(deps.env, false);
  for (const s0 of own.sort((a, b) => (a.created_at < b.created_at ? 1 : -1))) {
    if (s0.ended || s0.next_at === null || due(times(s0), nowS).kind === "wait") continue;
    await withSchedulesLock(deps.ws, async () => {
      let s: Schedule | undefined;
      try {
        s = readSchedule(deps.ws, s0.schedule_id);
      } catch (e) {
        skipped.push({ file: schedulePath(deps.ws, s0.schedule_id), why: (e as Error).message, fix: FIX });
        return;
      }
      if (!s || s.ended || s.next_at === null) return;
      const foreign = notOwnSchedule(s, key);
      if (foreign !== undefined) {
        skipped.push({ file: schedulePath(deps.ws, s.schedule_id), why: `this user's mam did not write it: ${foreign}`, fix: RECREATE });
        return;
      }
      const d = due(times(s), nowS);
      if (d.kind === "wait") return;
      const run: ScheduleRun = { due: isoUtc(s.next_at), at: isoUtc(Math.floor(nowS)), job_id: null, note: "" };
      if (d.kind === "skip") run.note = `missed ${d.missedRuns} run(s) while no daemon ran; skipped (--missed skip)`;
      else {
        const busy = s.overlap === "skip" ? previousUnfinished(deps, s) : undefined;
        if (busy) run.note = `skipped: the previous run's job ${busy} has not ended (--overlap skip)`;
        else {
          try {
            const { submitJob } = await import("./submit.ts");
            // its brief inside the workspace, as when it was made (the file may have become a link)
            const r = await submitJob(deps, s.job, { confineBrief: true });
            run.job_id = r.record.job_id;
            run.note = `${d.late ? `late (${d.missedRuns} missed while no daemon ran; run once)` : "on time"}: ${r.position === null ? "submitted" : `queued (position ${r.position})`}`;
          } catch (e) {
            run.note = `failed: ${(e as Error).message}`;
          }
        }
      }
      const next = d.next ?? null;
      writeSchedule(deps.ws, {
        ...s,
        next_at: next,
        runs: [...s.runs, run].slice(-RUNS_KEPT),
        ...(next === null ? { ended: { at: isoUtc(Math.floor(nowS)), why: d.kind === "skip" ? "its one run was missed" : "its one run is done" } } : {}),
      });
      log.push(`schedule ${s.schedule_id}: ${run.job_id ? `job ${run.job_id} ` : ""}${run.note}`);
    });
  }
  return { log, skipped };
}

const times = (s: Schedule) => ({ next_at: s.next_at!, ...(s.every_s !== null ? { every_s: s.every_s } : {}), missed: s.missed });

/** the job of this schedule's last run, when it has not ended */
function previousUnfinished(deps: Deps, s: Schedule): string | undefined {
  const last = [...s.runs].reverse().find((r) => r.job_id !== null);
  if (!last?.job_id) return undefined;
  try {
    const rec = deps.jobs.read(last.job_id);
    if (!rec) return undefined;
    return isFinal(effectiveStatus(rec, deps.jobs.journal(last.job_id))) ? undefined : last.job_id;
  } catch {
    return undefined;
  }
}
