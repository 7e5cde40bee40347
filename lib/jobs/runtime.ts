// What the job logic (loops, the daemon's reactions) needs from the rest of mam, behind one small
// interface: find a session's pane in the registry, type a prompt into it, show a notice on its
// server. Types only: lib/ops/wiring.ts builds the real one; tests pass their own.
import type { Backend } from "../mux/types.ts";
import type { Notice } from "../sys/notice.ts";
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
   * a dialog (MamError); a warning when the text may have stayed in the agent's input box
   */
  prompt(session: SessionRef, text: string): Promise<Notice | undefined>;
  /** the server of the session of that name (running or not), for a notice (undefined: none known) */
  noticeTarget?(session: string): Promise<NoticeTarget | undefined>;
  /** show a best-effort notice there; false when it was not shown (disabled, rate limited, …) */
  notify?(target: NoticeTarget, title: string, body: string): Promise<boolean>;
}
