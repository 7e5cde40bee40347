// The composition root: the one place where the real registry, multiplexers, job store, git, daemon
// control and clock are built and handed to use cases (lib/ops/deps.ts says what each is). The
// front doors (CLI, MCP, dashboard, demo, daemon) call realDeps once per workspace; tests build
// their own Deps instead.
import { jobStore } from "../jobs/store.ts";
import { muxFor } from "../mux/index.ts";
import { mutateRegistry, readRegistry, registryPath } from "../registry/index.ts";
import { daemonStatus, ensureDaemonDetailed, stopDaemon } from "../sys/daemon-proc.ts";
import type { Env } from "../sys/paths.ts";
import { epochNow } from "../sys/time.ts";
import { gitFor } from "../worktrees/git.ts";
import type { Clock, Deps, RegistryStore } from "./deps.ts";
import { sessionReach } from "./session/reach.ts";

export const systemClock: Clock = { epoch: epochNow, ms: () => Date.now() };

export interface WiringOptions {
  /** where a warning that is no result goes (a herdr newer than mam knows): the front door's stderr */
  warn?: (line: string) => void;
}

export function realDeps(ws: string, env: Env = process.env, o: WiringOptions = {}): Deps {
  const path = registryPath(ws, env);
  const registry: RegistryStore = {
    path,
    read: (opts) => readRegistry(path, opts),
    mutate: (fn, opts) => mutateRegistry(path, fn, opts),
  };
  const mux = (backend: "herdr" | "tmux", server: string) => muxFor(backend, server, env, o.warn ? { herdr: { warn: o.warn } } : {});
  return {
    ws,
    env,
    registry,
    muxFor: mux,
    jobs: jobStore(ws),
    git: gitFor(env),
    daemon: {
      ensure: () => ensureDaemonDetailed(ws, env),
      status: () => daemonStatus(ws),
      stop: (graceMs) => stopDaemon(ws, graceMs),
    },
    clock: systemClock,
    runtime: sessionReach(() => registry.read(), mux, env),
  };
}
