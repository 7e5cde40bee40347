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
  /**
   * set when the row's pane lives but its agent is gone (a herdr pane left as a bare shell):
   * why, in a few words. Nothing may be typed into it.
   */
  gone?: string;
  /**
   * set when the agent waits at a dialog (a start dialog, a permission prompt): what it waits at
   * and where to answer it. Text typed now would answer the dialog, so nothing may be typed.
   */
  waiting?: string;
}

/** a best-effort notice to the user on a multiplexer server (herdr notification show) */
export interface NoticeTarget {
  backend: Backend;
  server: string;
}

export interface JobRuntime {
  /** the running session of that name in this workspace's registry, with a live pane, or undefined */
  findSession(name: string): Promise<SessionRef | undefined>;
  /**
   * submit text to the session's agent: never into a pane whose agent is gone (AgentGone) or into
   * a dialog (MamError); a warning line when the text may have stayed in the agent's input box
   */
  prompt(session: SessionRef, text: string): Promise<string | void>;
  /** the server of the session of that name (running or not), for a notice (undefined: none known) */
  noticeTarget?(session: string): Promise<NoticeTarget | undefined>;
  /** show a best-effort notice there; false when it was not shown (disabled, rate limited, …) */
  notify?(target: NoticeTarget, title: string, body: string): Promise<boolean>;
  /** make sure the workspace's subscriber daemon runs; its PID, or undefined when disabled */
  ensureDaemon(): Promise<string | undefined>;
}

/** the runtime of the real binary: the registry, the multiplexer drivers, the daemon */
export async function loadJobRuntime(ws: string, env: Env = process.env): Promise<JobRuntime> {
  const [{ readRegistry, registryPath }, { backendOf, serverOf }, { muxFor }, { findPane }, { ensureDaemon }, { liveWorktreeOf }, { isHerdrManaged }, { answerHint, lookAt, typeInto, waitingAt }] = await Promise.all([
    import("../registry/index.ts"),
    import("../registry/rows.ts"),
    import("../mux/index.ts"),
    import("../fleet/classify.ts"),
    import("../sys/daemon-proc.ts"),
    import("../worktrees/plan.ts"),
    import("../agents/kinds/index.ts"),
    import("../ops/session/at-prompt.ts"),
  ]);
  /** the running row of that name; with anyStatus, failing that any row of that name (a job's worker may end with its job) */
  const rowOf = (name: string, anyStatus = false) => {
    const data = readRegistry(registryPath(ws, env));
    for (const section of ["herdr_sessions", "tmux_sessions"] as const) {
      const row = data[section].find((r) => r.name === name && r.status === "running") ?? (anyStatus ? data[section].find((r) => r.name === name) : undefined);
      if (row) return { row, section, backend: backendOf(section), server: serverOf(row, section) };
    }
    return undefined;
  };
  return {
    async findSession(name) {
      const r = rowOf(name);
      if (!r) return undefined;
      const mux = muxFor(r.backend, r.server, env);
      const l = await mux.list();
      const pane = l.state === "ok" ? findPane(r.row, l.panes, r.section) : undefined;
      if (!pane) return undefined;
      const agent = typeof r.row.agent === "string" ? r.row.agent : "unknown";
      const st = await lookAt(mux, pane.id, agent, env, pane);
      const gone = st.at === "gone" ? st.why : undefined;
      const waiting = st.at === "dialog" ? `${waitingAt(st)} in ${pane.id} (answer it there: ${answerHint(r.backend, r.server, name, pane.id)})` : undefined;
      const wt = liveWorktreeOf(r.row);
      const worktree = wt ? { path: wt.path, branch: wt.branch, base: wt.base, base_commit: wt.base_commit } : undefined;
      return { name, backend: r.backend, server: r.server, paneId: pane.id, agent, ...(gone ? { gone } : {}), ...(waiting ? { waiting } : {}), ...(worktree ? { worktree } : {}) };
    },
    async prompt(s, text) {
      return typeInto(muxFor(s.backend, s.server, env), s, text, isHerdrManaged(s.agent === "unknown" ? undefined : s.agent), env);
    },
    async noticeTarget(name) {
      const r = rowOf(name, true);
      return r ? { backend: r.backend, server: r.server } : undefined;
    },
    async notify(t, title, body) {
      const mux = muxFor(t.backend, t.server, env);
      if (!mux.notify) return false;
      return (await mux.notify({ title, body })).shown;
    },
    async ensureDaemon() {
      const pid = await ensureDaemon(ws, env);
      return pid === undefined ? undefined : String(pid);
    },
  };
}
