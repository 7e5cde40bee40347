// Whose pane is it (docs/security.md#a-hostile-workspace). Several workspaces share a multiplexer
// server (tmux's `mam`, herdr's default), and a registry is a file a repository can ship: a row
// named like another workspace's agent, or naming its pane id, must never reach that pane (be
// typed into, told of a job, stopped, adopted). A workspace's muxes leave such panes out of their
// listings (lib/ops/wiring.ts; registry rebuild lists them all and says why it leaves one out).
//
// tmux: mam records the workspace of every session it starts (@mam_workspace): another one's is
// foreign. herdr keeps nothing of the kind for a pane; its shell's folder tells: a pane that
// works outside this workspace, in a folder of another mam workspace (the nearest folder above
// it with a `.mam/`), is that workspace's. A pane in this workspace (its worktrees included), or
// in a folder no workspace holds (a shell session that went to /tmp), stays.
import { existsSync, lstatSync } from "node:fs";
import { realOr } from "../sys/paths.ts";
import { dirname, join } from "node:path";
import type { MuxPane } from "./types.ts";

const inside = (path: string, root: string) => path === root || path.startsWith(root.endsWith("/") ? root : `${root}/`);

/** the nearest folder at or above `dir` that holds a `.mam` folder, else undefined */
function workspaceAbove(dir: string): string | undefined {
  for (let d = dir; ; d = dirname(d)) {
    try {
      if (existsSync(join(d, ".mam")) && lstatSync(join(d, ".mam")).isDirectory()) return d;
    } catch {}
    if (dirname(d) === d) return undefined;
  }
}

/** is the pane another workspace's than `ws` (an absolute, real path) */
export function foreignPane(p: MuxPane, ws: string): boolean {
  if (p.owner !== undefined) return p.owner !== ws && realOr(p.owner) !== ws;
  if (p.cwd === undefined || !p.cwd.startsWith("/")) return false;
  if (inside(p.cwd, ws)) return false;
  const cwd = realOr(p.cwd);
  if (inside(cwd, ws)) return false;
  const other = workspaceAbove(cwd);
  return other !== undefined && realOr(other) !== ws;
}
