// What job submission needs from the rest of mam, behind one small interface: find a session's
// pane in the registry, type a prompt into it, make sure the subscriber daemon runs. Tests pass
// their own; `loadJobRuntime` is the one place that wires the real registry, mux and daemon.
import type { Backend } from "../mux/types.ts";

export interface SessionRef {
  name: string;
  backend: Backend;
  server: string;
  paneId: string;
  /** the agent kind of the session (claude, codex, …) */
  agent: string;
}

export interface JobRuntime {
  /** the running session of that name in this workspace's registry, or undefined */
  findSession(name: string): Promise<SessionRef | undefined>;
  /** type text into the session's pane and submit it */
  prompt(session: SessionRef, text: string): Promise<void>;
  /** make sure the workspace's subscriber daemon runs; its PID, or undefined when disabled */
  ensureDaemon(): Promise<string | undefined>;
}

/**
 * The runtime of the real binary. The registry (lib/registry) and the mux drivers (lib/mux) are
 * not wired yet: no session can be found, so `job submit` fails with "not found" (exit 3).
 * Wiring them is this one function: findSession → readRegistry(registryPath(ws)) running row of
 * that name; prompt → mux(row).sendText(pane, text, true); ensureDaemon → the daemon's ensure.
 */
export async function loadJobRuntime(ws: string): Promise<JobRuntime> {
  void ws;
  return {
    async findSession() {
      return undefined;
    },
    async prompt(s) {
      throw new Error(`cannot prompt ${s.name}: no multiplexer driver is wired yet`);
    },
    async ensureDaemon() {
      return undefined;
    },
  };
}
