// The git facts a worktree per agent needs, each one `git` call (Bun.spawnSync, no shell):
// the repository of a workspace, branch and ref checks, `git worktree add|remove|list`, and the
// cheap numbers `mam status --json` shows (ahead/behind, changed files). Every failure is a
// MamError that names the thing and the fix; nothing here decides policy (see plan.ts).
import { conflict, EXIT, MamError, usageError } from "../sys/errors.ts";
import { field } from "../sys/fields.ts";
import type { Env } from "../sys/paths.ts";

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * git's environment: no credential prompts, C messages (matched below), and no optional locks, so
 * that the status checks of read-only commands never write the index (GIT_OPTIONAL_LOCKS=0)
 */
function gitEnv(env: Env): Record<string, string> {
  return { ...env, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C", GIT_OPTIONAL_LOCKS: "0" } as Record<string, string>;
}

/** git for the worktree code: `git -C dir args…`, blocking or not; never throws for a non-zero exit */
export interface Git {
  run(dir: string, args: string[]): GitResult;
  /** without blocking: status asks several worktrees at once */
  runAsync(dir: string, args: string[]): Promise<GitResult>;
}

/** the real git, run with `env` (lib/ops/wiring.ts builds it) */
export function gitFor(env: Env): Git {
  return { run: (dir, args) => git(dir, args, env), runAsync: (dir, args) => gitAsync(dir, args, env) };
}

/** run `git -C dir args…`; never throws for a non-zero exit */
function git(dir: string, args: string[], env: Env): GitResult {
  let r;
  try {
    r = Bun.spawnSync(["git", "-C", dir, ...args], {
      env: gitEnv(env),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
  } catch (e) {
    throw new MamError(`cannot run git: ${(e as Error).message}`, EXIT.FAIL, "install git");
  }
  return { code: r.exitCode ?? 1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

async function gitAsync(dir: string, args: string[], env: Env): Promise<GitResult> {
  try {
    const p = Bun.spawn(["git", "-C", dir, ...args], {
      env: gitEnv(env),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
    return { code, stdout, stderr };
  } catch (e) {
    return { code: 127, stdout: "", stderr: `cannot run git: ${(e as Error).message}` };
  }
}

/** git's own error line (`fatal: …` / `error: …`; git prints progress lines before it), else its last line, else the exit code */
export function gitWhy(r: GitResult): string {
  const lines = r.stderr.split("\n").filter((l) => l.trim() !== "");
  const line = lines.find((l) => /^(fatal|error): /.test(l)) ?? lines[lines.length - 1] ?? `exit ${r.code}`;
  return line.replace(/^(fatal|error): /, "").trim();
}

export interface Repo {
  /** the main checkout's top folder (git rev-parse --show-toplevel) */
  top: string;
  /** the commit HEAD names in the workspace */
  head: string;
  /** the branch the workspace has checked out, or undefined when HEAD is detached */
  headBranch?: string;
}

/** the repository the workspace is in; exit 2 when it is not in a git work tree */
export function repoOf(ws: string, g: Git): Repo {
  const r = g.run(ws, ["rev-parse", "--show-toplevel", "--verify", "--quiet", "HEAD"]);
  const lines = r.stdout.trim().split("\n");
  if (r.code !== 0 || lines.length < 2) {
    if (/not a git repository/i.test(r.stderr)) throw usageError(`${ws} is not in a git repository`, `${field("worktree")} needs one: run git init (and commit once), or leave ${field("worktree")} out`);
    if (lines.length === 1 && lines[0] !== "") throw usageError(`the repository of ${ws} has no commit yet`, `commit once, then use ${field("worktree")}`);
    throw new MamError(`git cannot read the repository of ${ws} (${gitWhy(r)})`, EXIT.FAIL);
  }
  const b = g.run(ws, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
  return { top: lines[0]!, head: lines[1]!, headBranch: b.code === 0 ? b.stdout.trim() || undefined : undefined };
}

/** a branch name git accepts (`git check-ref-format --branch`); exit 2 otherwise */
export function checkBranchName(ws: string, branch: string, g: Git): string {
  if (branch === "" || branch.startsWith("-") || /[\s\x00-\x1f]/.test(branch)) throw usageError(`invalid branch name '${branch.slice(0, 60)}'`, "see: git check-ref-format --help");
  const r = g.run(ws, ["check-ref-format", "--branch", branch]);
  if (r.code !== 0) throw usageError(`invalid branch name '${branch.slice(0, 60)}' (${gitWhy(r)})`, "see: git check-ref-format --help");
  return branch;
}

/** the commit a ref names; exit 2 when it names none */
export function resolveCommit(ws: string, ref: string, g: Git): string {
  if (ref === "" || ref.startsWith("-")) throw usageError(`invalid ${field("base")} '${ref.slice(0, 60)}'`, "give a branch, tag or commit");
  const r = g.run(ws, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`]);
  if (r.code !== 0) throw usageError(`${field("base")} '${ref.slice(0, 60)}' is not a commit of this repository`, "give a branch, tag or commit (see: git log --oneline)");
  return r.stdout.trim();
}

export function branchExists(ws: string, branch: string, g: Git): boolean {
  return g.run(ws, ["show-ref", "--verify", "--quiet", `refs/heads/${branch}`]).code === 0;
}

export function branchCommit(ws: string, branch: string, g: Git): string | undefined {
  const r = g.run(ws, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`]);
  return r.code === 0 ? r.stdout.trim() : undefined;
}

export interface WorktreeEntry {
  path: string;
  branch?: string;
  head?: string;
  detached: boolean;
  prunable: boolean;
}

/** `git worktree list --porcelain`, parsed (the main checkout first) */
export function parseWorktreeList(text: string): WorktreeEntry[] {
  const out: WorktreeEntry[] = [];
  let cur: WorktreeEntry | undefined;
  for (const line of text.split("\n")) {
    if (line.startsWith("worktree ")) {
      cur = { path: line.slice(9), detached: false, prunable: false };
      out.push(cur);
    } else if (!cur) continue;
    else if (line.startsWith("branch ")) cur.branch = line.slice(7).replace(/^refs\/heads\//, "");
    else if (line.startsWith("HEAD ")) cur.head = line.slice(5);
    else if (line === "detached") cur.detached = true;
    else if (line.startsWith("prunable")) cur.prunable = true;
  }
  return out;
}

export function listWorktrees(ws: string, g: Git): WorktreeEntry[] {
  const r = g.run(ws, ["worktree", "list", "--porcelain"]);
  if (r.code !== 0) throw new MamError(`git worktree list failed in ${ws} (${gitWhy(r)})`, EXIT.FAIL);
  return parseWorktreeList(r.stdout);
}

/** `git worktree add` on a new branch from `base`, or on an existing branch; exit 4 when git refuses a branch in use */
export function addWorktree(ws: string, path: string, branch: string, base: string | undefined, g: Git): void {
  const args = base !== undefined ? ["worktree", "add", "-b", branch, "--", path, base] : ["worktree", "add", "--", path, branch];
  const r = g.run(ws, args);
  if (r.code === 0) return;
  const why = gitWhy(r);
  if (/already (checked out|used by worktree)|already exists/i.test(why)) throw conflict(`git worktree add refused: ${why}`, `pick another branch with ${field("worktree")} BRANCH`);
  throw new MamError(`git worktree add failed: ${why}`, EXIT.FAIL);
}

/** `git worktree remove [--force] <path>`; the branch stays */
export function removeWorktree(ws: string, path: string, force: boolean, g: Git): void {
  const r = g.run(ws, ["worktree", "remove", ...(force ? ["--force", "--force"] : []), "--", path]);
  if (r.code !== 0) throw new MamError(`git worktree remove ${path} failed (${gitWhy(r)})`, EXIT.FAIL, force ? undefined : `add ${field("force")} to remove it anyway`);
}

/** delete a branch this command created a moment ago (undoing a half-made create) */
export function deleteBranch(ws: string, branch: string, g: Git): void {
  g.run(ws, ["branch", "-D", "--", branch]);
}

export interface WorktreeCounts {
  /** commits on the worktree's HEAD that `against` lacks */
  ahead: number;
  /** commits of `against` that the worktree's HEAD lacks */
  behind: number;
  /** files with uncommitted changes (tracked or untracked), as `git status --porcelain` lists them */
  changed: number;
}

/** ahead/behind against a commit, and uncommitted files: two git calls at once; undefined when git cannot tell */
export async function worktreeCounts(path: string, against: string, g: Git): Promise<WorktreeCounts | undefined> {
  const [lr, st] = await Promise.all([g.runAsync(path, ["rev-list", "--left-right", "--count", `${against}...HEAD`]), g.runAsync(path, ["status", "--porcelain", "--untracked-files=all"])]);
  if (lr.code !== 0 || st.code !== 0) return undefined;
  const [behind, ahead] = lr.stdout.trim().split(/\s+/).map(Number);
  return { ahead: ahead ?? 0, behind: behind ?? 0, changed: st.stdout.split("\n").filter((l) => l.trim() !== "").length };
}
