// A git worktree per agent (issue 18): where worktrees live, what a registry row records about
// its worktree, and the checks `mam create --worktree` makes before anything is changed.
//
// Place: <workspace>/.mam/worktrees/<session name>, one folder per session, on both backends.
// Inside .mam/ so that mam's own state stays next to it and a `mam` call from inside the worktree
// finds the main workspace as the nearest folder holding .mam/ (SPEC §1); the folder holds a
// .gitignore of `*` so the main checkout's `git status` does not list the worktrees.
//
// Row field (SPEC §2.1 extension; rows without it are ordinary sessions):
//   worktree: {path: /abs/ws/.mam/worktrees/NAME, branch: NAME, base: main, base_commit: 3f0c…,
//              herdr_workspace: w3}      # herdr_workspace only on herdr
// `base` is the ref as the user gave it (default: the workspace's branch, else HEAD);
// `base_commit` the commit it named when the worktree was made: diffs are taken against it.
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Row, WorktreeBlock } from "../registry/types.ts";
import { atomicWriteFile } from "../sys/atomic.ts";
import { conflict, usageError } from "../sys/errors.ts";
import { field } from "../sys/fields.ts";
import { ensureMamDir } from "../sys/mam-dir.ts";
import { mamDir } from "../sys/paths.ts";
import { branchCommit, branchExists, checkBranchName, type Git, listWorktrees, repoOf, resolveCommit } from "./git.ts";

export interface WorktreeRecord extends WorktreeBlock {
  base: string;
  base_commit: string;
}

export function worktreesDir(ws: string): string {
  return join(mamDir(ws), "worktrees");
}

export function worktreePath(ws: string, name: string): string {
  return join(worktreesDir(ws), name);
}

/** the worktree a row records, when the field is well-formed */
export function worktreeOf(row: Row): WorktreeRecord | undefined {
  const w = row.worktree;
  if (typeof w !== "object" || w === null || Array.isArray(w)) return undefined;
  const o = w as Record<string, unknown>;
  if (typeof o.path !== "string" || o.path === "" || typeof o.branch !== "string" || o.branch === "") return undefined;
  const s = (v: unknown) => (typeof v === "string" ? v : "");
  return {
    path: o.path,
    branch: o.branch,
    base: s(o.base),
    base_commit: s(o.base_commit),
    ...(typeof o.herdr_workspace === "string" ? { herdr_workspace: o.herdr_workspace } : {}),
    ...(typeof o.removed_at === "string" ? { removed_at: o.removed_at } : {}),
  };
}

/** the worktree the row's agent runs in, unless it was removed */
export function liveWorktreeOf(row: Row): WorktreeRecord | undefined {
  const wt = worktreeOf(row);
  return wt && wt.removed_at === undefined ? wt : undefined;
}

/** the folder the row's agent runs in: its worktree, else the workspace */
export function rowCwd(row: Row, ws: string): string {
  return liveWorktreeOf(row)?.path ?? ws;
}

export interface WorktreePlan extends WorktreeRecord {
  /** the branch does not exist yet: create it at base_commit (and delete it again on failure) */
  newBranch: boolean;
}

/**
 * Everything `--worktree [BRANCH] [--base REF]` needs, checked before any side effect: a git
 * repository with a commit (exit 2), a valid branch name (2), a base that names a commit (2), a
 * branch that is not checked out anywhere (4), a folder that is not taken (4). An existing
 * branch is reused (its work continues); then --base is refused (2).
 */
export function planWorktree(ws: string, name: string, branchArg: string | undefined, baseArg: string | undefined, g: Git): WorktreePlan {
  const repo = repoOf(ws, g);
  const branch = checkBranchName(ws, branchArg === undefined || branchArg === "" ? name : branchArg, g);
  const path = worktreePath(ws, name);
  if (existsSync(path)) {
    throw conflict(`worktree folder ${path} already exists and no session of this workspace keeps it`, `pick another ${field("name")} name, or remove it with: git worktree remove ${path}`);
  }
  if (branchExists(ws, branch, g)) {
    if (baseArg !== undefined) throw usageError(`branch '${branch}' already exists; ${field("base")} only applies to a new branch`, `leave ${field("base")} out to continue that branch, or pick a new name with ${field("worktree")} BRANCH`);
    const at = listWorktrees(ws, g).find((w) => w.branch === branch);
    if (at) throw conflict(`branch '${branch}' is already checked out at ${at.path}`, `pick another branch with ${field("worktree")} BRANCH`);
    const tip = branchCommit(ws, branch, g)!;
    const mb = g.run(ws, ["merge-base", repo.head, tip]);
    return { path, branch, base: repo.headBranch ?? "HEAD", base_commit: mb.code === 0 ? mb.stdout.trim() : tip, newBranch: false };
  }
  const base = baseArg ?? repo.headBranch ?? "HEAD";
  return { path, branch, base, base_commit: resolveCommit(ws, base, g), newBranch: true };
}

/** the worktrees folder with its .gitignore (`*`: git status of the main checkout stays quiet) */
export function ensureWorktreesDir(ws: string): string {
  const dir = worktreesDir(ws);
  ensureMamDir(ws); // .mam/ and its own .gitignore first
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ignore = join(dir, ".gitignore");
  if (!existsSync(ignore)) atomicWriteFile(ignore, "# mam: one git worktree per agent session (see docs/worktrees.md)\n*\n", { mode: 0o644 });
  return dir;
}

/** the record a row keeps */
export function recordOf(p: WorktreePlan, herdrWorkspace?: string): WorktreeRecord {
  return { path: p.path, branch: p.branch, base: p.base, base_commit: p.base_commit, ...(herdrWorkspace ? { herdr_workspace: herdrWorkspace } : {}) };
}
