// The merge queue's use cases (docs/merge-queue.md): put a job's branch in line (`mam merge
// enqueue`, `job submit --merge`), configure the target and the check, show the queue, and run it
// (the daemon's merge.queue reaction, `mam merge run`). A run takes each ready target's lock (one
// runner per target: a daemon, or a `mam merge run`), then merges its entries one at a time in a
// scratch worktree (lib/worktrees/merge.ts), deciding each next step with ./merge-plan.ts. What it
// leaves in queue.json before each step that takes time (state merging, the check's process) is
// what lets the next runner start again after one that was killed: the target moves only in the
// last step, a compare-and-swap, so a run killed before it leaves the target as it was.
import { closeSync, mkdirSync, openSync, readlinkSync } from "node:fs";
import { dirname } from "node:path";
import type { Json } from "../../jobs/canonical.ts";
import type { EventName } from "../../jobs/statuses.ts";
import type { Appended, JobRecord } from "../../jobs/store.ts";
import { conflict, notFound, usageError } from "../../sys/errors.ts";
import { field } from "../../sys/fields.ts";
import { info, type Notice } from "../../sys/notice.ts";
import { branchCommit, checkBranchName, repoOf } from "../../worktrees/git.ts";
import { checkedOutAt, commitOf, dirtyFiles, dropOrig, followBranch, freshScratch, isAncestor, keepOrig, landTarget, rebaseIn, removeScratch } from "../../worktrees/merge.ts";
import type { Deps } from "../deps.ts";
import { DEFAULT_CHECK_TIMEOUT_S, logPath, type MergeConfig, mutateMergeConfig, mutateQueue, readMergeConfig, readQueue, scratchPath, tryTargetLock } from "./merge-files.ts";
import { afterOutcome, checkTail, isLive, type MergeEntry, nextMerge, type Outcome, positions, promote, readyTargets } from "./merge-plan.ts";

/** how a run tells what it does (the daemon's log; `mam merge run` collects the lines) and publishes what it journals */
export interface RunHooks {
  log(line: string): void;
  publish?(topic: string, payload: string): Promise<unknown>;
}

/** the branch merges land on: the config's, else the one the main checkout is on */
export function targetOf(deps: Deps, cfg: MergeConfig = readMergeConfig(deps.ws)): string {
  if (cfg.target) return cfg.target;
  const repo = repoOf(deps.ws, deps.git);
  if (!repo.headBranch) throw usageError(`the main checkout of ${deps.ws} is on a detached HEAD: the merge queue has no target branch`, `name one: mam merge config ${field("target")} BRANCH`);
  return repo.headBranch;
}

async function journal(deps: Deps, rec: JobRecord | undefined, id: string, ev: { event: EventName; detail: string; data: { [k: string]: Json } }, hooks: RunHooks): Promise<void> {
  let a: Appended | undefined;
  try {
    a = await deps.jobs.append(id, { event: ev.event, detail: ev.detail.slice(0, 2000), source: "mam", data: ev.data });
  } catch (e) {
    hooks.log(`merge queue: could not journal ${ev.event} on job ${id} (${(e as Error).message})`);
    return;
  }
  const prefix = rec?.topic_prefix ?? a?.record?.topic_prefix;
  if (a && prefix && hooks.publish) await hooks.publish(`${prefix}/events`, a.line);
}

// ---- enqueue ---------------------------------------------------------------------------------

export interface Enqueued {
  entry: MergeEntry;
  /** its place in line for its target, null while its job has not completed */
  position: number | null;
  warnings: Notice[];
}

/**
 * put a job's branch in line for the target: at once when the job has completed, else once it does
 * (awaiting). The job must be this workspace's, in a worktree; a job already in line is refused
 * (exit 4), one merged or dropped before goes in again.
 */
export async function enqueueMerge(deps: Deps, jobId: string, hooks: RunHooks = { log: () => {} }): Promise<Enqueued> {
  const rec = deps.jobs.read(jobId);
  if (!rec) throw notFound(`no job ${jobId} in ${deps.jobs.dir}`, "see: mam job list");
  if (rec.remote_of) throw usageError(`job ${jobId} is a copy of a job of ${rec.remote_of}: its branch is merged there`, "run mam merge enqueue on that host");
  const wt = rec.worktree;
  if (!wt) throw usageError(`job ${jobId} did not run in a worktree: the merge queue has no branch to merge`, `submit it to a session made with ${field("worktree")}`);
  const target = targetOf(deps);
  checkBranchName(deps.ws, target, deps.git);
  if (branchCommit(deps.ws, target, deps.git) === undefined) throw usageError(`the merge queue's target branch '${target}' does not exist`, `create it, or name another: mam merge config ${field("target")} BRANCH`);
  if (wt.branch === target) throw usageError(`job ${jobId} worked on ${target} itself: there is nothing to merge into it`);
  if (rec.status === "error" || rec.status === "cancelled" || rec.status === "timeout" || rec.status === "budget_exceeded") {
    throw conflict(`job ${jobId} ended ${rec.status}: its branch is not queued`, "submit the work again, or merge the branch by hand");
  }
  const now = deps.clock.epoch();
  const state = rec.status === "completed" ? "queued" : "awaiting";
  const entry = await mutateQueue(deps.ws, (q) => {
    const had = q.entries.find((e) => e.job_id === jobId && isLive(e));
    if (had) throw conflict(`job ${jobId}'s branch ${had.branch} is in the merge queue already (${had.state})`, "see: mam merge status");
    q.entries = q.entries.filter((e) => e.job_id !== jobId);
    const e: MergeEntry = { job_id: jobId, session: rec.agent_session, branch: wt.branch, worktree: wt.path, target, state, order: q.next++, since: now, fixes: 0, tries: 0, note: state === "queued" ? "queued" : `waits for job ${jobId} to complete` };
    q.entries.push(e);
    return e;
  });
  const position = state === "queued" ? (positions(readQueue(deps.ws).entries, target).get(jobId) ?? null) : null;
  if (state === "queued") await journal(deps, rec, jobId, { event: "merge_queued", detail: `${wt.branch} queued for ${target} (position ${position})`, data: { target, branch: wt.branch, position } }, hooks);
  return { entry, position, warnings: [] };
}

// ---- config and status -------------------------------------------------------------------------

export interface MergeConfigInput {
  target?: string;
  check?: string;
  check_timeout_s?: number;
  no_check?: boolean;
}

export interface MergeConfigView {
  target: string | null;
  /** where target comes from: the config, or the main checkout's branch */
  target_from: "config" | "checkout";
  check: string | null;
  check_timeout_s: number;
}

function configView(deps: Deps, cfg: MergeConfig): MergeConfigView {
  let target: string | null = cfg.target ?? null;
  if (target === null) {
    try {
      target = targetOf(deps, cfg);
    } catch {
      target = null;
    }
  }
  return { target, target_from: cfg.target ? "config" : "checkout", check: cfg.check ?? null, check_timeout_s: cfg.check_timeout_s ?? DEFAULT_CHECK_TIMEOUT_S };
}

/** set what is given (nothing given: show the config as it is) */
export async function configureMerge(deps: Deps, i: MergeConfigInput): Promise<MergeConfigView> {
  if (i.no_check && i.check !== undefined) throw usageError(`${field("check")} and ${field("no_check")} do not go together`);
  if (i.target !== undefined) checkBranchName(deps.ws, i.target, deps.git);
  if (i.target === undefined && i.check === undefined && i.check_timeout_s === undefined && !i.no_check) return configView(deps, readMergeConfig(deps.ws));
  const cfg = await mutateMergeConfig(deps.ws, (c) => {
    const n: MergeConfig = { ...c };
    if (i.target !== undefined) n.target = i.target;
    if (i.check !== undefined) n.check = i.check;
    if (i.no_check) delete n.check;
    if (i.check_timeout_s !== undefined) n.check_timeout_s = i.check_timeout_s;
    return n;
  });
  return configView(deps, cfg);
}

export interface MergeStatusRow extends MergeEntry {
  position: number | null;
}

export interface MergeStatus {
  config: MergeConfigView;
  entries: MergeStatusRow[];
}

/** the queue: the entries in line (in their order), then the ones waiting or fixing, then the last ones done */
export function mergeStatus(deps: Deps, all = false): MergeStatus {
  const cfg = readMergeConfig(deps.ws);
  const q = readQueue(deps.ws);
  const pos = new Map<string, number>();
  for (const t of new Set(q.entries.map((e) => e.target))) for (const [k, v] of positions(q.entries, t)) pos.set(k, v);
  const rank = (e: MergeEntry) => (e.state === "merging" ? 0 : e.state === "queued" ? 1 : e.state === "fixing" || e.state === "awaiting" ? 2 : 3);
  const live = q.entries.filter(isLive);
  const done = q.entries.filter((e) => !isLive(e)).sort((a, b) => b.since - a.since);
  const rows = [...live.sort((a, b) => rank(a) - rank(b) || a.order - b.order), ...(all ? done : done.slice(0, 10))];
  return { config: configView(deps, cfg), entries: rows.map((e) => ({ ...e, position: pos.get(e.job_id) ?? null })) };
}

// ---- running the queue --------------------------------------------------------------------------

/** entries waiting on a job (their own, or their fix job) that ended: in line, or out of it */
export async function promoteWaiting(deps: Deps, hooks: RunHooks): Promise<number> {
  const q = readQueue(deps.ws);
  const decided: { e: MergeEntry; to: "queued" | "dropped"; note: string }[] = [];
  for (const e of q.entries) {
    if (e.state !== "awaiting" && e.state !== "fixing") continue;
    const id = e.state === "awaiting" ? e.job_id : e.fix_job;
    let status;
    try {
      status = id ? deps.jobs.read(id)?.status : undefined;
    } catch {
      continue; // a broken record: job status says so; tried again next time
    }
    const p = promote(e, status);
    if (p) decided.push({ e, ...p });
  }
  if (decided.length === 0) return 0;
  const now = deps.clock.epoch();
  const done = await mutateQueue(deps.ws, (doc) => {
    const out: MergeEntry[] = [];
    for (const d of decided) {
      const cur = doc.entries.find((x) => x.job_id === d.e.job_id && x.state === d.e.state && x.fix_job === d.e.fix_job);
      if (!cur) continue;
      cur.state = d.to;
      cur.since = now;
      cur.note = d.note;
      if (d.to === "queued") {
        cur.order = doc.next++;
        cur.tries = 0;
      }
      out.push({ ...cur });
    }
    return out;
  });
  const after = readQueue(deps.ws).entries;
  for (const e of done) {
    if (e.state === "queued") {
      const position = positions(after, e.target).get(e.job_id) ?? null;
      const again: { [k: string]: Json } = e.fixes > 0 && e.fix_job ? { after_fix: e.fix_job } : {};
      await journal(deps, deps.jobs.read(e.job_id), e.job_id, { event: "merge_queued", detail: `${e.branch} queued for ${e.target} (position ${position})${e.fixes > 0 ? ` again, after fix job ${e.fix_job}` : ""}`, data: { target: e.target, branch: e.branch, position, ...again } }, hooks);
      hooks.log(`merge queue: job ${e.job_id} (${e.branch}) queued for ${e.target}`);
    } else hooks.log(`merge queue: job ${e.job_id} (${e.branch}) dropped: ${e.note}`);
  }
  return done.length;
}

/** the check's process group of a runner that died: ended, when it is still in the scratch worktree */
function endOrphan(pid: number, scratch: string): void {
  try {
    const cwd = readlinkSync(`/proc/${pid}/cwd`);
    if (cwd !== scratch && !cwd.startsWith(`${scratch}/`)) return;
  } catch {
    return; // gone (or not ours to read)
  }
  try {
    process.kill(-pid, "SIGKILL");
  } catch {}
}

/** run the check in the scratch worktree: sh -c, its own process group, output to a file, bounded in time */
async function runCheck(deps: Deps, e: MergeEntry, cmd: string, scratch: string, timeoutS: number, log: string): Promise<{ exit: number | null; timedOut: boolean }> {
  mkdirSync(dirname(log), { recursive: true, mode: 0o700 });
  const fd = openSync(log, "w", 0o600);
  let p;
  try {
    p = Bun.spawn(["sh", "-c", cmd], {
      cwd: scratch,
      env: { ...deps.env, MAM_MERGE_JOB: e.job_id, MAM_MERGE_BRANCH: e.branch, MAM_MERGE_TARGET: e.target } as Record<string, string>,
      stdin: "ignore",
      stdout: fd,
      stderr: fd,
      detached: true,
    });
  } finally {
    closeSync(fd);
  }
  const pid = p.pid;
  await mutateQueue(deps.ws, (q) => {
    const cur = q.entries.find((x) => x.job_id === e.job_id && x.state === "merging");
    if (cur) cur.check_pid = pid;
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = await Promise.race([p.exited.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeoutS * 1000)))]);
  clearTimeout(timer);
  if (timedOut) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {}
    await p.exited;
    return { exit: null, timedOut: true };
  }
  // what it left behind in its group (a background job of the check) goes with it
  try {
    process.kill(-pid, "SIGKILL");
  } catch {}
  return { exit: p.exitCode, timedOut: false };
}

async function readTail(path: string): Promise<string> {
  try {
    const f = Bun.file(path);
    const size = f.size;
    return checkTail(await f.slice(Math.max(0, size - 16384), size).text());
  } catch {
    return "";
  }
}

/** one merge of one entry, to its outcome; the target moves only in landTarget, the last step */
async function attempt(deps: Deps, e: MergeEntry, cfg: MergeConfig, hooks: RunHooks): Promise<Outcome> {
  const { ws, git: g } = deps;
  const scratch = scratchPath(ws, e.target);
  if (e.state === "merging" && e.check_pid) endOrphan(e.check_pid, scratch);
  const tip = await commitOf(ws, `refs/heads/${e.branch}`, g);
  if (!tip) return { kind: "error", why: `branch ${e.branch} does not exist any more` };
  const onto = await commitOf(ws, `refs/heads/${e.target}`, g);
  if (!onto) return { kind: "error", why: `the target branch ${e.target} does not exist` };
  // a target checked out in a dirty worktree cannot move: nothing is done until it is clean
  const at = await checkedOutAt(ws, e.target, g);
  const dirty = at ? await dirtyFiles(at, g) : [];
  if (at && dirty?.length) return { kind: "blocked", why: `${e.target} is checked out in ${at}, which has uncommitted changes (${dirty.length} file${dirty.length === 1 ? "" : "s"}): commit or stash them there; the queue tries again` };
  await keepOrig(ws, e.job_id, tip, g);
  const n = e.fixes + e.tries + 1;
  await mutateQueue(ws, (q) => {
    const cur = q.entries.find((x) => x.job_id === e.job_id && (x.state === "queued" || x.state === "merging"));
    if (cur) Object.assign(cur, { state: "merging", since: deps.clock.epoch(), note: `rebasing onto ${e.target} at ${onto.slice(0, 12)}`, blocked: undefined, retry_at: undefined, check_pid: undefined });
  });
  if (await isAncestor(ws, tip, onto, g)) return { kind: "landed", commit: onto, onto, noop: true, via: "none", followed: false };
  hooks.log(`merge queue: job ${e.job_id}: rebasing ${e.branch} onto ${e.target} (${onto.slice(0, 12)}) in ${scratch}`);
  await freshScratch(ws, scratch, tip, g);
  try {
    const rb = await rebaseIn(scratch, onto, g);
    if (rb.kind === "conflict") return { kind: "conflict", onto, files: rb.files, diff: rb.diff, commit: rb.commit };
    if (rb.kind === "error") return { kind: "error", why: `git rebase failed (${rb.why})` };
    const rebased = rb.head;
    if (rebased === onto) return { kind: "landed", commit: onto, onto, noop: true, via: "none", followed: false };
    const rec = deps.jobs.read(e.job_id);
    const log = logPath(ws, e.job_id, n);
    await journal(deps, rec, e.job_id, { event: "merge_checking", detail: cfg.check ? `${e.branch} rebased onto ${e.target} cleanly; checking: ${cfg.check}` : `${e.branch} rebased onto ${e.target} cleanly; no check configured`, data: { target: e.target, branch: e.branch, onto, rebased, check: cfg.check ?? null, ...(cfg.check ? { log } : {}) } }, hooks);
    if (cfg.check) {
      hooks.log(`merge queue: job ${e.job_id}: checking ${rebased.slice(0, 12)}: ${cfg.check}`);
      const c = await runCheck(deps, e, cfg.check, scratch, cfg.check_timeout_s ?? DEFAULT_CHECK_TIMEOUT_S, log);
      if (c.timedOut || c.exit !== 0) return { kind: "check_failed", onto, rebased, exit: c.exit, timedOut: c.timedOut, tail: await readTail(log), log };
    }
    const l = await landTarget(ws, e.target, onto, rebased, g);
    if (l.kind === "moved") return { kind: "moved", onto };
    if (l.kind === "blocked") return l;
    const followed = await followBranch(ws, e.branch, tip, rebased, g);
    return { kind: "landed", commit: rebased, onto, noop: false, via: l.via, followed };
  } finally {
    await removeScratch(ws, scratch, g);
  }
}

/** carry out an outcome: the fix job sent, the entry's next state written, the event journalled */
async function apply(deps: Deps, e: MergeEntry, o: Outcome, cfg: MergeConfig, hooks: RunHooks): Promise<MergeEntry | undefined> {
  const now = deps.clock.epoch();
  const step = afterOutcome(e, o, now, cfg.check);
  let fixJob: string | undefined;
  if (step.fix) {
    try {
      const { submitJob } = await import("./submit.ts");
      const s = await submitJob(deps, { to: e.session, prompt: step.fix });
      fixJob = s.record.job_id;
      hooks.log(`merge queue: job ${e.job_id}: fix job ${fixJob} sent to ${e.session}`);
    } catch (err) {
      const why = `could not send a fix job to ${e.session} (${(err as Error).message}): fix ${e.branch} by hand, then mam merge enqueue ${e.job_id}`;
      step.set = { state: "dropped", since: now, note: why };
      hooks.log(`merge queue: job ${e.job_id}: ${why}`);
    }
  }
  if (o.kind === "landed") await dropOrig(deps.ws, e.job_id, deps.git);
  const after = await mutateQueue(deps.ws, (q) => {
    const cur = q.entries.find((x) => x.job_id === e.job_id && (x.state === "merging" || x.state === "queued"));
    if (!cur) return undefined;
    Object.assign(cur, step.set, fixJob ? { fix_job: fixJob } : {});
    for (const k of Object.keys(cur) as (keyof MergeEntry)[]) if (cur[k] === undefined) delete cur[k];
    return { ...cur };
  });
  if (step.event) await journal(deps, deps.jobs.read(e.job_id), e.job_id, { ...step.event, data: { ...step.event.data, fix_job: fixJob ?? null } }, hooks);
  hooks.log(`merge queue: job ${e.job_id} (${e.branch} → ${e.target}): ${after?.note ?? o.kind}`);
  return after;
}

export interface MergeRun {
  /** the entries a step was taken for, as they are after it */
  steps: MergeEntry[];
  /** targets another runner holds */
  busy: string[];
  warnings: Notice[];
}

/**
 * promote what waited, then merge every ready target's entries, one at a time, under its lock;
 * a target another runner holds is left to it
 */
export async function runMerges(deps: Deps, hooks: RunHooks): Promise<MergeRun> {
  await promoteWaiting(deps, hooks);
  const out: MergeRun = { steps: [], busy: [], warnings: [] };
  for (const target of readyTargets(readQueue(deps.ws).entries, deps.clock.epoch())) {
    const lock = await tryTargetLock(deps.ws, target);
    if (!lock) {
      out.busy.push(target);
      out.warnings.push(info(`another runner (the daemon, or a mam merge run) is merging into ${target} now; it goes on with that line`));
      continue;
    }
    try {
      for (;;) {
        const e = nextMerge(readQueue(deps.ws).entries, target, deps.clock.epoch());
        if (!e) break;
        const cfg = readMergeConfig(deps.ws);
        let o: Outcome;
        try {
          o = await attempt(deps, e, cfg, hooks);
        } catch (err) {
          o = { kind: "error", why: (err as Error).message };
          await removeScratch(deps.ws, scratchPath(deps.ws, target), deps.git).catch(() => {});
        }
        const after = await apply(deps, e, o, cfg, hooks);
        if (after) out.steps.push(after);
      }
    } finally {
      lock.close();
    }
  }
  return out;
}

/** an entry a runner could take or that waits on a job: the daemon has work to come */
export function queueBusy(deps: Deps): boolean {
  try {
    return readQueue(deps.ws).entries.some(isLive);
  } catch {
    return false;
  }
}
