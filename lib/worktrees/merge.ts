// The git steps of the merge queue (docs/merge-queue.md), each a few `git` calls run without
// blocking (the daemon runs them): a scratch worktree (detached, never a user's checkout), a rebase
// in it with the conflict read back, the original tip kept under refs/mam/merge/<job>/orig, and the
// one move of the target branch: a compare-and-swap `git update-ref` when no worktree has it
// checked out, else `git merge --ff-only` in that worktree when it is clean and still at the old
// tip. Nothing here decides what to do next (lib/ops/job/merge-plan.ts does); nothing here ever
// force-pushes, makes a merge commit or moves a branch that is not a fast-forward of where it was.
import { existsSync, rmSync } from "node:fs";
import { type Git, type GitResult, gitWhy, parseWorktreeList } from "./git.ts";

/** the ref that keeps a queued branch's tip as it was before mam first touched it */
export const origRef = (job: string) => `refs/mam/merge/${job}/orig`;

const ok = (r: GitResult) => r.code === 0;

/** the commit a ref names, or undefined */
export async function commitOf(ws: string, ref: string, g: Git): Promise<string | undefined> {
  const r = await g.runAsync(ws, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`]);
  return ok(r) ? r.stdout.trim() : undefined;
}

/** keep `tip` under the job's orig ref unless one is there already (the first original wins) */
export async function keepOrig(ws: string, job: string, tip: string, g: Git): Promise<void> {
  if (await commitOf(ws, origRef(job), g)) return;
  const r = await g.runAsync(ws, ["update-ref", "-m", `mam merge: ${job}'s branch as it was`, origRef(job), tip, ""]);
  if (!ok(r) && !(await commitOf(ws, origRef(job), g))) throw new Error(`cannot keep the branch's tip under ${origRef(job)} (${gitWhy(r)})`);
}

/** the merge landed: the original tip is no longer needed */
export async function dropOrig(ws: string, job: string, g: Git): Promise<void> {
  await g.runAsync(ws, ["update-ref", "-d", origRef(job)]);
}

/** remove a scratch worktree, whatever state a killed run left it in */
export async function removeScratch(ws: string, path: string, g: Git): Promise<void> {
  if (existsSync(path)) {
    await g.runAsync(path, ["rebase", "--abort"]);
    await g.runAsync(ws, ["worktree", "remove", "--force", "--force", "--", path]);
    rmSync(path, { recursive: true, force: true });
  }
  await g.runAsync(ws, ["worktree", "prune"]);
}

/** a fresh scratch worktree at `commit`, detached (no branch is checked out in it) */
export async function freshScratch(ws: string, path: string, commit: string, g: Git): Promise<void> {
  await removeScratch(ws, path, g);
  const r = await g.runAsync(ws, ["worktree", "add", "--detach", "--", path, commit]);
  if (!ok(r)) throw new Error(`git worktree add ${path} failed (${gitWhy(r)})`);
}

export type Rebased =
  | { kind: "clean"; head: string }
  | { kind: "conflict"; files: string[]; diff: string; commit: string }
  | { kind: "error"; why: string };

/** the conflict's hunks are cut at this many characters (the fix job's prompt carries them) */
const DIFF_MAX = 6000;

/** rebase the scratch worktree's detached HEAD onto `onto`; on a conflict, read it back and abort */
export async function rebaseIn(scratch: string, onto: string, g: Git): Promise<Rebased> {
  const r = await g.runAsync(scratch, ["-c", "rebase.autoStash=false", "-c", "rebase.updateRefs=false", "rebase", "--no-autosquash", onto]);
  if (ok(r)) {
    const h = await g.runAsync(scratch, ["rev-parse", "HEAD"]);
    return ok(h) ? { kind: "clean", head: h.stdout.trim() } : { kind: "error", why: gitWhy(h) };
  }
  const u = await g.runAsync(scratch, ["diff", "--name-only", "--diff-filter=U"]);
  const files = u.stdout.split("\n").filter((l) => l.trim() !== "");
  if (files.length === 0) {
    await g.runAsync(scratch, ["rebase", "--abort"]);
    return { kind: "error", why: gitWhy(r) };
  }
  const d = await g.runAsync(scratch, ["diff", "--no-color", "--", ...files]);
  const c = await g.runAsync(scratch, ["log", "-1", "--format=%h %s", "REBASE_HEAD"]);
  await g.runAsync(scratch, ["rebase", "--abort"]);
  const diff = d.stdout.length > DIFF_MAX ? `${d.stdout.slice(0, DIFF_MAX)}\n… (cut at ${DIFF_MAX} characters)` : d.stdout;
  return { kind: "conflict", files, diff, commit: ok(c) ? c.stdout.trim() : "" };
}

/** the worktree (the main checkout or another) that has `branch` checked out, if any */
export async function checkedOutAt(ws: string, branch: string, g: Git): Promise<string | undefined> {
  const r = await g.runAsync(ws, ["worktree", "list", "--porcelain"]);
  if (!ok(r)) return undefined;
  return parseWorktreeList(r.stdout).find((w) => w.branch === branch && !w.prunable)?.path;
}

/** tracked files with changes in a worktree (untracked files do not count: git refuses a move that would overwrite one) */
export async function dirtyFiles(path: string, g: Git): Promise<string[] | undefined> {
  const r = await g.runAsync(path, ["status", "--porcelain", "--untracked-files=no"]);
  return ok(r) ? r.stdout.split("\n").filter((l) => l.trim() !== "") : undefined;
}

export type Landed = { kind: "landed"; via: "update-ref" | "merge --ff-only"; at?: string } | { kind: "moved"; now?: string } | { kind: "blocked"; why: string };

/**
 * Move `target` from `old` to `next` (a descendant of `old`), never anything else. Checked out
 * nowhere: `git update-ref refs/heads/T next old` (refused when it moved meanwhile). Checked out in
 * a worktree: only when that worktree is clean and at `old`, with `git merge --ff-only next` there,
 * so its files move with the branch; a dirty one is left alone (blocked).
 */
export async function landTarget(ws: string, target: string, old: string, next: string, g: Git): Promise<Landed> {
  const at = await checkedOutAt(ws, target, g);
  if (at === undefined) {
    const r = await g.runAsync(ws, ["update-ref", "-m", `mam merge: fast-forward ${target}`, `refs/heads/${target}`, next, old]);
    if (ok(r)) return { kind: "landed", via: "update-ref" };
    const now = await commitOf(ws, `refs/heads/${target}`, g);
    if (now !== old) return { kind: "moved", now };
    return { kind: "blocked", why: `git update-ref refused (${gitWhy(r)})` };
  }
  const dirty = await dirtyFiles(at, g);
  if (dirty === undefined) return { kind: "blocked", why: `git cannot read the status of ${at}` };
  if (dirty.length) return { kind: "blocked", why: `${target} is checked out in ${at}, which has uncommitted changes (${dirty.length} file${dirty.length === 1 ? "" : "s"}): commit or stash them there; the queue tries again` };
  const head = await commitOf(at, "HEAD", g);
  if (head !== old) return { kind: "moved", now: head };
  const r = await g.runAsync(at, ["merge", "--ff-only", "--no-edit", next]);
  if (ok(r)) return { kind: "landed", via: "merge --ff-only", at };
  const now = await commitOf(ws, `refs/heads/${target}`, g);
  if (now !== old) return { kind: "moved", now };
  return { kind: "blocked", why: `git merge --ff-only in ${at} refused (${gitWhy(r)}): clear what it names there; the queue tries again` };
}

/**
 * after landing, the job's branch follows the target when that is safe: its worktree clean and
 * still at the tip that was merged (`git reset --keep`, which refuses to touch local changes), or
 * no worktree has it (`git update-ref` with the old value). Else it is left as it was.
 */
export async function followBranch(ws: string, branch: string, wasAt: string, next: string, g: Git): Promise<boolean> {
  const at = await checkedOutAt(ws, branch, g);
  if (at === undefined) return ok(await g.runAsync(ws, ["update-ref", "-m", "mam merge: landed", `refs/heads/${branch}`, next, wasAt]));
  const dirty = await dirtyFiles(at, g);
  if (dirty === undefined || dirty.length) return false;
  if ((await commitOf(at, "HEAD", g)) !== wasAt) return false;
  return ok(await g.runAsync(at, ["reset", "--keep", next]));
}

/** is `a` an ancestor of (or the same commit as) `b` */
export async function isAncestor(ws: string, a: string, b: string, g: Git): Promise<boolean> {
  return ok(await g.runAsync(ws, ["merge-base", "--is-ancestor", a, b]));
}
