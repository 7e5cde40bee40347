// Removing an agent's worktree (issue 18): `mam stop --remove-worktree`, `mam worktree remove`,
// and undoing a create that failed half-way. Work is never thrown away by default: a worktree
// with uncommitted changes, or a branch with commits the main checkout's HEAD lacks, is refused
// (exit 4, nothing changed) unless forced. The branch itself always stays.
import { existsSync } from "node:fs";
import type { Mux } from "../mux/types.ts";
import { conflict } from "../sys/errors.ts";
import { field } from "../sys/fields.ts";
import { branchExists, deleteBranch, type Git, listWorktrees, removeWorktree } from "./git.ts";
import type { WorktreePlan, WorktreeRecord } from "./plan.ts";

export interface WorkAtRisk {
  /** files with uncommitted changes (tracked or untracked) */
  uncommitted: number;
  /** commits on the branch that the main checkout's HEAD does not contain */
  unmerged: number;
}

/** what removing the worktree would lose; Infinity where git cannot tell (counts as risk) */
export function workAtRisk(ws: string, wt: WorktreeRecord, g: Git): WorkAtRisk {
  let uncommitted = 0;
  if (existsSync(wt.path)) {
    const st = g.run(wt.path, ["status", "--porcelain", "--untracked-files=all"]);
    uncommitted = st.code === 0 ? st.stdout.split("\n").filter((l) => l.trim() !== "").length : Number.POSITIVE_INFINITY;
  }
  let unmerged = 0;
  if (branchExists(ws, wt.branch, g)) {
    const rl = g.run(ws, ["rev-list", "--count", `HEAD..refs/heads/${wt.branch}`]);
    unmerged = rl.code === 0 ? Number(rl.stdout.trim()) : Number.POSITIVE_INFINITY;
  }
  return { uncommitted, unmerged };
}

/** the refusal, as one line, or undefined when nothing would be lost */
export function riskText(r: WorkAtRisk): string | undefined {
  const parts: string[] = [];
  if (r.uncommitted > 0) parts.push(Number.isFinite(r.uncommitted) ? `${r.uncommitted} uncommitted file(s)` : "uncommitted changes (git status failed)");
  if (r.unmerged > 0) parts.push(Number.isFinite(r.unmerged) ? `${r.unmerged} commit(s) not merged into the workspace's HEAD` : "commits of unknown merge state");
  return parts.length ? parts.join(" and ") : undefined;
}

/** exit 4 (nothing changed) when removing the worktree would lose work */
export function refuseAtRisk(name: string, wt: WorktreeRecord, risk: WorkAtRisk): void {
  const why = riskText(risk);
  if (why) throw conflict(`the worktree of ${name} (${wt.path}, branch ${wt.branch}) has ${why}`, `nothing was changed; commit and merge it first, or add ${field("force")} to remove it anyway (branch ${wt.branch} is kept)`);
}

/** is `path` one of the repository's registered worktrees? */
function registered(ws: string, path: string, g: Git): boolean {
  try {
    return listWorktrees(ws, g).some((w) => w.path === path);
  } catch {
    return false;
  }
}

export interface RemoveOptions {
  force: boolean;
  /** herdr: the multiplexer that shows the worktree as a workspace (removed through it while open) */
  herdr?: Mux;
  /** herdr: the worktree's workspace is open there */
  herdrOpen?: boolean;
  git: Git;
}

/**
 * remove the session's worktree (the branch stays): refused with exit 4 when work would be lost
 * and not forced. A worktree whose folder already vanished is pruned from git's list.
 */
export async function removeSessionWorktree(ws: string, name: string, wt: WorktreeRecord, o: RemoveOptions): Promise<{ removed: boolean; at_risk: WorkAtRisk }> {
  const g = o.git;
  const risk = workAtRisk(ws, wt, g);
  if (!o.force) refuseAtRisk(name, wt, risk);
  if (!existsSync(wt.path)) {
    g.run(ws, ["worktree", "prune"]);
    return { removed: false, at_risk: risk };
  }
  if (o.herdr?.removeWorktree && o.herdrOpen && wt.herdr_workspace) await o.herdr.removeWorktree(wt.herdr_workspace, true);
  else removeWorktree(ws, wt.path, true, g);
  return { removed: true, at_risk: risk };
}

/** undo a create that failed after the worktree was (maybe) made: no half-made worktree, no new branch */
export function undoWorktree(ws: string, plan: WorktreePlan, g: Git): void {
  if (registered(ws, plan.path, g) || existsSync(plan.path)) {
    try {
      removeWorktree(ws, plan.path, true, g);
    } catch {
      g.run(ws, ["worktree", "prune"]);
    }
  }
  if (plan.newBranch && branchExists(ws, plan.branch, g) && !listWorktrees(ws, g).some((w) => w.branch === plan.branch)) deleteBranch(ws, plan.branch, g);
}
