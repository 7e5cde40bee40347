// The worktrees of a workspace's sessions (issue 18): `mam worktree list`, `mam worktree remove
// NAME`, and the removal step of `mam stop --remove-worktree`. The registry row keeps its
// `worktree` block after removal, with `removed_at`, so status and history still name the branch.
import { existsSync } from "node:fs";
import { backendOf, serverOf } from "../registry/rows.ts";
import type { RegistryData, Row, Section } from "../registry/types.ts";
import { SECTIONS } from "../registry/types.ts";
import { conflict, notFound, usageError } from "../sys/errors.ts";
import { field } from "../sys/fields.ts";
import { isoUtc } from "../sys/time.ts";
import { type Git, repoOf, worktreeCounts } from "../worktrees/git.ts";
import { type WorktreeRecord, worktreeOf } from "../worktrees/plan.ts";
import { refuseAtRisk, removeSessionWorktree, type WorkAtRisk, workAtRisk } from "../worktrees/remove.ts";
import type { Deps } from "./deps.ts";

export interface WorktreeView {
  session: string;
  status: Row["status"];
  mux: "herdr" | "tmux";
  path: string;
  branch: string;
  base: string;
  base_commit: string;
  /** the folder is there (false: removed by mam, or vanished) */
  exists: boolean;
  removed_at: string | null;
  /** against the main checkout's HEAD; null when the folder is gone or git cannot tell */
  ahead: number | null;
  behind: number | null;
  changed: number | null;
}

/** one row per session with a worktree (the newest row of each name) */
export function worktreeRows(data: RegistryData): { section: Section; row: Row; wt: WorktreeRecord }[] {
  const byName = new Map<string, { section: Section; row: Row; wt: WorktreeRecord }>();
  for (const section of SECTIONS) {
    for (const row of data[section]) {
      const wt = worktreeOf(row);
      if (!wt) continue;
      const had = byName.get(row.name);
      if (!had || had.row.status !== "running") byName.set(row.name, { section, row, wt });
    }
  }
  return [...byName.values()];
}

/** the view of one worktree: two git calls (at once) when its folder exists and counts are wanted */
export async function viewOf(section: Section, row: Row, wt: WorktreeRecord, head: string | undefined, git: Git, counts = true): Promise<WorktreeView> {
  const exists = existsSync(wt.path);
  const c = exists && head && counts ? await worktreeCounts(wt.path, head, git) : undefined;
  return {
    session: row.name,
    status: row.status,
    mux: backendOf(section),
    path: wt.path,
    branch: wt.branch,
    base: wt.base,
    base_commit: wt.base_commit,
    exists,
    removed_at: wt.removed_at ?? null,
    ahead: c?.ahead ?? null,
    behind: c?.behind ?? null,
    changed: c?.changed ?? null,
  };
}

/** the main checkout's HEAD commit, or undefined when the workspace is not (any more) a repository */
export function headOf(ws: string, git: Git): string | undefined {
  try {
    return repoOf(ws, git).head;
  } catch {
    return undefined;
  }
}

export async function listSessionWorktrees(deps: Deps): Promise<WorktreeView[]> {
  const rows = worktreeRows(deps.registry.read());
  if (rows.length === 0) return [];
  const head = headOf(deps.ws, deps.git);
  return Promise.all(rows.map(({ section, row, wt }) => viewOf(section, row, wt, head, deps.git)));
}

export interface Removed {
  session: string;
  path: string;
  branch: string;
  removed: boolean;
  at_risk: WorkAtRisk;
}

/** refuse (exit 4, nothing changed) when removing the session's worktree would lose work */
export function checkRemovable(deps: Deps, name: string, wt: WorktreeRecord): void {
  refuseAtRisk(name, wt, workAtRisk(deps.ws, wt, deps.git));
}

/**
 * remove the worktree of session `name` (not running: stop it first), keep its branch, mark the
 * row's worktree `removed_at`
 */
export async function removeWorktreeOfSession(deps: Deps, name: string, force: boolean): Promise<Removed> {
  const path = deps.registry.path;
  const data = deps.registry.read();
  const rows = worktreeRows(data).filter((r) => r.row.name === name);
  if (rows.length === 0) {
    const any = SECTIONS.some((s) => data[s].some((r) => r.name === name));
    if (any) throw usageError(`session '${name}' has no worktree`, "see: mam worktree list");
    throw notFound(`no session named '${name}' in ${path}`, "see: mam worktree list");
  }
  const { section, row, wt } = rows[0]!;
  if (row.status === "running") throw conflict(`session ${name} is running in its worktree ${wt.path}`, `stop it first: mam stop ${name} ${field("remove_worktree")}`);
  if (wt.removed_at !== undefined && !existsSync(wt.path)) return { session: name, path: wt.path, branch: wt.branch, removed: false, at_risk: { uncommitted: 0, unmerged: 0 } };
  const server = serverOf(row, section);
  // a pane still in the worktree (an archived session's agent, a shell): refused unless forced
  const mux = deps.muxFor(backendOf(section), server);
  const l = await mux.list().catch(() => undefined);
  const panes = l?.state === "ok" ? l.panes : [];
  const inside = panes.filter((p) => p.cwd !== undefined && (p.cwd === wt.path || p.cwd.startsWith(`${wt.path}/`)));
  if (inside.length && !force) {
    throw conflict(`pane ${inside.map((p) => p.id).join(", ")} on ${backendOf(section)} server '${server}' still runs in the worktree of ${name} (${wt.path})`, `nothing was changed; close it first, or add ${field("force")}`);
  }
  const herdrOpen = section === "herdr_sessions" && wt.herdr_workspace !== undefined && panes.some((p) => p.workspaceId === wt.herdr_workspace);
  const r = await removeSessionWorktree(deps.ws, name, wt, { force, herdr: herdrOpen ? mux : undefined, herdrOpen, git: deps.git });
  const removedAt = isoUtc(deps.clock.epoch());
  await deps.registry.mutate((d) => {
    for (const x of d[section]) {
      if (x.name !== name || serverOf(x, section) !== server || x.status === "running") continue;
      const w = worktreeOf(x);
      if (w && w.path === wt.path && x.worktree && w.removed_at === undefined) x.worktree.removed_at = removedAt;
    }
  });
  return { session: name, path: wt.path, branch: wt.branch, ...r };
}
