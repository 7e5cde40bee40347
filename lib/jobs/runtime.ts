// What job submission and the daemon need from the rest of mam, behind one small interface: find
// a session's pane in the registry, type a prompt into it, make sure the subscriber daemon runs.
// Tests pass their own; `loadJobRuntime` wires the real registry, multiplexers and daemon.
import type { Backend } from "../mux/types.ts";
import type { Env } from "../sys/paths.ts";
import type { JobWorktree } from "./store.ts";

export interface SessionRef {
  name: string;
  backend: Backend;
  server: string;
  paneId: string;
  /** the agent kind of the session (claude, codex, …) */
  agent: string;
  /** the git worktree the session runs in, when it has one */
  worktree?: JobWorktree;
}

export interface JobRuntime {
  /** the running session of that name in this workspace's registry, with a live pane, or undefined */
  findSession(name: string): Promise<SessionRef | undefined>;
  /** type text into the session's pane and submit it */
  prompt(session: SessionRef, text: string): Promise<void>;
  /** make sure the workspace's subscriber daemon runs; its PID, or undefined when disabled */
  ensureDaemon(): Promise<string | undefined>;
}

/** the runtime of the real binary: the registry, the multiplexer drivers, the daemon */
export async function loadJobRuntime(ws: string, env: Env = process.env): Promise<JobRuntime> {
  const [{ readRegistry, registryPath }, { backendOf, serverOf }, { muxFor }, { findPane }, { ensureDaemon }, { liveWorktreeOf }] = await Promise.all([
    import("../registry/index.ts"),
    import("../registry/rows.ts"),
    import("../mux/index.ts"),
    import("../monitor/classify.ts"),
    import("../monitor/spawn.ts"),
    import("../worktrees/plan.ts"),
  ]);
  return {
    async findSession(name) {
      const data = readRegistry(registryPath(ws, env));
      for (const section of ["herdr_sessions", "tmux_sessions"] as const) {
        const row = data[section].find((r) => r.name === name && r.status === "running");
        if (!row) continue;
        const backend = backendOf(section);
        const server = serverOf(row, section);
        const l = await muxFor(backend, server, env).list();
        const pane = l.state === "ok" ? findPane(row, l.panes, section) : undefined;
        if (!pane) return undefined;
        const wt = liveWorktreeOf(row);
        const worktree = wt ? { path: wt.path, branch: wt.branch, base: wt.base, base_commit: wt.base_commit } : undefined;
        return { name, backend, server, paneId: pane.id, agent: typeof row.agent === "string" ? row.agent : "unknown", ...(worktree ? { worktree } : {}) };
      }
      return undefined;
    },
    async prompt(s, text) {
      await muxFor(s.backend, s.server, env).sendText(s.paneId, text, true);
    },
    async ensureDaemon() {
      const pid = await ensureDaemon(ws, env);
      return pid === undefined ? undefined : String(pid);
    },
  };
}
