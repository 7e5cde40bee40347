// worktree.create | remove | list, as herdr 0.8.0 does them (src/app/api/worktrees.rs,
// src/app/api/worktrees/deferred.rs, src/worktree.rs): real `git worktree` commands on the
// repository of the source workspace, each worktree shown as a workspace of its own (with the
// `worktree` membership in its WorkspaceInfo). worktree.open opens an existing linked worktree
// (the source checkout itself is not opened as a worktree here: worktree_not_found).
//
// Differences, on purpose: git runs synchronously inside the mutation queue (herdr runs it on a
// thread and answers later); the default checkout folder is $HOME/.herdr/worktrees/<repo>/<branch
// slug> (herdr's configurable `worktree_directory` with its default).
import { mkdirSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import type { MethodDef } from "../context.ts";
import type { FakeHerdr } from "../core.ts";
import { ApiError, type Workspace } from "../model.ts";

interface Space {
  repo_key: string;
  repo_name: string;
  repo_root: string;
  is_linked_worktree: boolean;
}

function git(dir: string, args: string[]): { code: number; out: string; err: string } {
  const r = Bun.spawnSync(["git", "-C", dir, ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { ...process.env, GIT_TERMINAL_PROMPT: "0", LC_ALL: "C" } });
  return { code: r.exitCode ?? 1, out: r.stdout.toString(), err: r.stderr.toString().trim() };
}

const canonical = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

/** herdr's git_space_metadata: the repository a folder is in, or undefined outside a work tree */
function spaceOf(path: string): Space | undefined {
  const r = git(path, ["rev-parse", "--show-toplevel", "--git-common-dir", "--git-dir"]);
  if (r.code !== 0) return undefined;
  const [top, common, gitDir] = r.out.trim().split("\n");
  if (!top || !common || !gitDir) return undefined;
  const commonAbs = canonical(resolve(path, common));
  const linked = canonical(resolve(path, gitDir)) !== commonAbs;
  // the parent repository's root: the folder holding the common .git
  const root = linked ? dirname(commonAbs) : top;
  return { repo_key: commonAbs, repo_name: basename(root), repo_root: root, is_linked_worktree: linked };
}

function absolute(path: string): string {
  const p = path.startsWith("~/") ? join(process.env.HOME ?? "/", path.slice(2)) : path;
  if (!isAbsolute(p)) throw new ApiError("invalid_request", "worktree path must be absolute");
  return p;
}

/** the source of create/list: a workspace id, a cwd, else the focused workspace */
function source(h: FakeHerdr, p: { workspace_id?: string | null; cwd?: string | null }, forCreate: boolean): { space: Space; ws?: Workspace } {
  if (p.workspace_id && p.cwd) throw new ApiError("invalid_request", "only one of workspace_id or cwd may be supplied");
  let ws: Workspace | undefined;
  let space: Space | undefined;
  if (p.workspace_id) {
    ws = h.state.workspaces.find((w) => w.id === p.workspace_id);
    if (!ws) throw new ApiError("workspace_not_found", `workspace ${p.workspace_id} not found`);
  } else if (p.cwd) {
    space = spaceOf(absolute(p.cwd));
    if (!space) throw new ApiError("not_git_worktree", "Herdr worktree actions require a path inside a Git work tree");
    ws = h.state.workspaces.find((w) => !w.worktree?.is_linked_worktree && w.panes()[0] && spaceOf(w.panes()[0]!.currentCwd())?.repo_key === space!.repo_key);
  } else {
    ws = h.state.focusedWs();
    if (!ws) throw new ApiError("invalid_request", "workspace_id or cwd is required when no workspace is active");
  }
  if (!space) {
    const root = ws!.panes()[0];
    space = ws!.worktree ? { ...ws!.worktree } : root ? spaceOf(root.currentCwd()) : undefined;
    if (!space) throw new ApiError("not_git_worktree", "Herdr worktree actions require a workspace inside a Git work tree");
  }
  if (forCreate && space.is_linked_worktree) throw new ApiError("linked_worktree_source", "New and open worktree actions start from the repo parent workspace.");
  return { space, ws };
}

/** herdr's branch_to_path_slug: a branch as one folder name */
function slug(branch: string): string {
  return branch.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "") || "worktree";
}

function worktreeInfo(h: FakeHerdr, e: { path: string; branch?: string; detached?: boolean; prunable?: boolean }, linked: boolean): Record<string, unknown> {
  const open = h.state.workspaces.find((w) => w.worktree && canonical(w.worktree.checkout_path) === canonical(e.path));
  return {
    path: e.path,
    ...(e.branch ? { branch: e.branch } : {}),
    is_bare: false,
    is_detached: e.detached === true,
    is_prunable: e.prunable === true,
    is_linked_worktree: linked,
    ...(open ? { open_workspace_id: open.id } : {}),
    label: e.branch ?? basename(e.path),
  };
}

function porcelain(text: string): { path: string; branch?: string; detached: boolean; prunable: boolean }[] {
  const out: { path: string; branch?: string; detached: boolean; prunable: boolean }[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("worktree ")) out.push({ path: line.slice(9), detached: false, prunable: false });
    else if (!out.length) continue;
    else if (line.startsWith("branch ")) out[out.length - 1]!.branch = line.slice(7).replace(/^refs\/heads\//, "");
    else if (line === "detached") out[out.length - 1]!.detached = true;
    else if (line.startsWith("prunable")) out[out.length - 1]!.prunable = true;
  }
  return out;
}

export const worktreeMethods: Record<string, MethodDef> = {
  "worktree.create": {
    run: (h, p) => {
      const branch = (p.branch ?? `worktree-${Date.now().toString(36)}`).trim();
      if (branch === "") throw new ApiError("invalid_request", "branch is required");
      const base = p.base ?? "HEAD";
      const { space } = source(h, p, true);
      const path = p.path ? absolute(p.path) : join(process.env.HOME ?? "/", ".herdr", "worktrees", space.repo_name, slug(branch));
      // herdr's run_worktree_add_command: an existing local branch is checked out, else -b from base
      const exists = git(space.repo_root, ["show-ref", "--verify", "--quiet", `refs/heads/${branch}`]).code === 0;
      mkdirSync(dirname(path), { recursive: true });
      const r = git(space.repo_root, exists ? ["worktree", "add", path, branch] : ["worktree", "add", "-b", branch, path, base]);
      if (r.code !== 0) throw new ApiError("worktree_create_failed", r.err || `git failed with status ${r.code}`);
      const c = h.createWorkspace({ cwd: path, label: typeof p.label === "string" ? p.label : undefined, focus: p.focus === true });
      c.ws.worktree = { repo_key: space.repo_key, repo_name: space.repo_name, repo_root: space.repo_root, checkout_path: path, is_linked_worktree: true };
      const worktree = worktreeInfo(h, { path, branch }, true);
      const workspace = h.state.workspaceInfo(c.ws);
      h.hub.emit("worktree_created", { workspace, worktree });
      return { type: "worktree_created", workspace, tab: h.state.tabInfo(c.tab), root_pane: h.state.paneInfo(c.pane), worktree };
    },
  },
  "worktree.open": {
    run: (h, p) => {
      if ((p.path === undefined || p.path === null) === (p.branch === undefined || p.branch === null)) throw new ApiError("invalid_request", "exactly one of path or branch is required");
      const { space } = source(h, p, true);
      const r = git(space.repo_root, ["worktree", "list", "--porcelain"]);
      if (r.code !== 0) throw new ApiError("worktree_list_failed", r.err);
      const want = p.path ? canonical(absolute(p.path)) : undefined;
      const entry = porcelain(r.out).find((e) => (want ? canonical(e.path) === want : e.branch === p.branch));
      if (!entry || canonical(entry.path) === canonical(space.repo_root)) throw new ApiError("worktree_not_found", "worktree not found");
      if (entry.prunable) throw new ApiError("worktree_not_found", "worktree cannot be opened");
      let ws = h.state.workspaces.find((w) => w.worktree && canonical(w.worktree.checkout_path) === canonical(entry.path));
      const already = ws !== undefined;
      if (!ws) {
        ws = h.createWorkspace({ cwd: entry.path, focus: p.focus === true }).ws;
        ws.worktree = { repo_key: space.repo_key, repo_name: space.repo_name, repo_root: space.repo_root, checkout_path: entry.path, is_linked_worktree: true };
      } else if (p.focus === true) h.focusWorkspace(ws);
      if (typeof p.label === "string") {
        ws.customLabel = p.label;
        if (already) h.hub.emit("workspace_renamed", { workspace_id: ws.id, label: p.label });
      }
      const tab = h.state.activeTab(ws)!;
      const root = tab.orderedPanes()[0]!;
      const worktree = worktreeInfo(h, entry, true);
      const workspace = h.state.workspaceInfo(ws);
      h.hub.emit("worktree_opened", { workspace, worktree, already_open: already });
      return { type: "worktree_opened", workspace, tab: h.state.tabInfo(tab), root_pane: h.state.paneInfo(root), worktree, already_open: already };
    },
  },
  "worktree.remove": {
    run: (h, p) => {
      const ws = h.state.workspaces.find((w) => w.id === p.workspace_id);
      if (!ws) throw new ApiError("workspace_not_found", `workspace ${p.workspace_id} not found`);
      if (!ws.worktree) throw new ApiError("not_linked_worktree", "workspace is not a Herdr-managed worktree checkout");
      if (!ws.worktree.is_linked_worktree) throw new ApiError("not_linked_worktree", "workspace is not a linked worktree checkout");
      const space = ws.worktree;
      const forced = p.force === true;
      const r = git(space.repo_root, ["worktree", "remove", ...(forced ? ["--force"] : []), space.checkout_path]);
      if (r.code !== 0) {
        const lower = r.err.toLowerCase();
        const dirty = !forced && lower.includes("contains modified or untracked files") && lower.includes("use --force to delete it");
        throw new ApiError(dirty ? "dirty_worktree_requires_force" : "worktree_remove_failed", r.err);
      }
      const workspace = h.state.workspaceInfo(ws);
      const worktree = worktreeInfo(h, { path: space.checkout_path }, true);
      h.closeWorkspace(ws);
      h.hub.emit("worktree_removed", { workspace_id: ws.id, workspace, worktree, forced });
      return { type: "worktree_removed", workspace_id: ws.id, path: space.checkout_path, forced };
    },
  },
  "worktree.list": {
    run: (h, p) => {
      const { space, ws } = source(h, p, false);
      const r = git(space.repo_root, ["worktree", "list", "--porcelain"]);
      if (r.code !== 0) throw new ApiError("worktree_list_failed", r.err);
      const entries = porcelain(r.out);
      return {
        type: "worktree_list",
        source: { repo_key: space.repo_key, repo_name: space.repo_name, repo_root: space.repo_root, source_checkout_path: space.repo_root, ...(ws && !ws.worktree?.is_linked_worktree ? { source_workspace_id: ws.id } : {}) },
        worktrees: entries.map((e) => worktreeInfo(h, e, canonical(e.path) !== canonical(space.repo_root))),
      };
    },
  },
};
