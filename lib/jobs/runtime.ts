// What the job logic (loops, the daemon's reactions) needs from the rest of mam, behind one small
// interface: find a session's pane in the registry, type a prompt into it, show a notice on its
// server. Types only: lib/ops/wiring.ts builds the real one; tests pass their own.
import type { Backend } from "../mux/types.ts";
import type { Notice } from "../sys/notice.ts";
import type { JobRecord, JobWorktree } from "./store.ts";

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
  /** its agent is at work (not at its input prompt): a job for it waits its turn (docs/jobs.md#the-queue) */
  working?: boolean;
}

/**
 * a session on another machine of the team (docs/machines.md), `name@host`: its host's daemon
 * types into it, so what it gets is sent as a delivery, never typed from here
 */
export interface RemoteRef {
  /** name@host */
  name: string;
  /** the agent kind its host announces (unknown when it announces none) */
  agent: string;
  remote: { host: string; ws_id: string; workspace: string; online: boolean };
  gone?: undefined;
  waiting?: undefined;
  worktree?: undefined;
  working?: undefined;
}

/** a session this runtime found: in this workspace, or on another host of the team */
export type Reached = SessionRef | RemoteRef;

export const isRemote = (s: Reached): s is RemoteRef => "remote" in s && s.remote !== undefined;

/** what a prompt is about: a remote host builds the text itself from it (its own workspace, names) */
export interface PromptAbout {
  purpose: "job" | "review" | "feedback";
  job: JobRecord;
  /** review: the worker's hand-in; feedback: the reviewer's words */
  detail?: string;
  iteration?: number;
}

/** a best-effort notice to the user on a multiplexer server (herdr notification show) */
export interface NoticeTarget {
  backend: Backend;
  server: string;
}

/**
 * what a typed text is to the agent: prose to read (every kind but a shell), or the one command
 * line of a job to a shell (`mam shell-job …`); prose is never typed into a shell
 */
export type TextKind = "prose" | "command";

export interface JobRuntime {
  /**
   * the running session of that name in this workspace's registry, with a live pane; for
   * `name@host`, the running session its host announces (a MamError that lists what exists when
   * there is none); undefined when a bare name is not found
   */
  findSession(name: string): Promise<Reached | undefined>;
  /**
   * submit text to the session's agent, made safe to type (lib/sys/sanitize.ts): never into a pane
   * whose agent is gone (AgentGone), into a dialog (MamError), or prose into a shell (MamError,
   * unless `as` says it is a job's command line); a warning when the text may have stayed in the
   * agent's input box. A remote session gets `about` as a delivery its host types (journalled
   * `offered`); `text` is then what this host would have typed.
   */
  prompt(session: Reached, text: string, about?: PromptAbout, as?: TextKind): Promise<Notice | undefined>;
  /** the server of the session of that name (running or not), for a notice (undefined: none known) */
  noticeTarget?(session: string): Promise<NoticeTarget | undefined>;
  /** show a best-effort notice there; false when it was not shown (disabled, rate limited, …) */
  notify?(target: NoticeTarget, title: string, body: string): Promise<boolean>;
}
