// The composition root: the one place where the real registry, multiplexers, job store, git, daemon
// control and clock are built and handed to use cases (lib/ops/deps.ts says what each is). The
// front doors (CLI, MCP, dashboard, demo, daemon) call realDeps once per workspace; tests build
// their own Deps instead.
//
// Each part is built, and its modules loaded, on first use: `mam job event` (run by agents many
// times a minute) loads the job store and not the multiplexer drivers, the registry's YAML code or
// git.
import type { JobStore } from "../jobs/store.ts";
import type { Backend, Mux } from "../mux/types.ts";
import type { Env } from "../sys/paths.ts";
import { epochNow } from "../sys/time.ts";
import type { Clock, DaemonControl, Deps, RegistryStore } from "./deps.ts";

export const systemClock: Clock = { epoch: epochNow, ms: () => Date.now() };

export interface WiringOptions {
  /** where a warning that is no result goes (a herdr newer than mam knows): the front door's stderr */
  warn?: (line: string) => void;
}

// (each `require` names its module literally, so that the bundler keeps it in the binary)
type MuxModule = typeof import("../mux/index.ts");
type DaemonModule = typeof import("../sys/daemon-proc.ts");
const daemonProc = (): DaemonModule => require("../sys/daemon-proc.ts") as DaemonModule;

export function realDeps(ws: string, env: Env = process.env, o: WiringOptions = {}): Deps {
  let registry: RegistryStore | undefined;
  let jobs: JobStore | undefined;
  let git: Deps["git"] | undefined;
  let runtime: Deps["runtime"] | undefined;
  // one driver per server (and view) for the life of the process (the daemon asks every second):
  // the binary's path, the environment of its calls and herdr's version check are worked out once.
  // Panes of another workspace (lib/mux/owner.ts) are left out of every listing but the rebuild's.
  const muxes = new Map<string, Mux>();
  const muxFor = (backend: Backend, server: string, mo: { allWorkspaces?: boolean } = {}): Mux => {
    const key = `${backend}:${server}:${mo.allWorkspaces ? "all" : "own"}`;
    let mux = muxes.get(key);
    if (!mux) {
      const m = require("../mux/index.ts") as MuxModule;
      const workspace = mo.allWorkspaces ? undefined : ws;
      mux = m.muxFor(backend, server, env, { herdr: { ...(o.warn ? { warn: o.warn } : {}), ...(workspace ? { workspace } : {}) }, tmux: workspace ? { workspace } : {} });
      muxes.set(key, mux);
    }
    return mux;
  };
  const daemon: DaemonControl = {
    ensure: () => daemonProc().ensureDaemonDetailed(ws, env),
    status: () => daemonProc().daemonStatus(ws),
    stop: (graceMs) => daemonProc().stopDaemon(ws, graceMs),
  };
  const deps: Deps = {
    ws,
    env,
    get registry() {
      if (!registry) {
        const r = require("../registry/index.ts") as typeof import("../registry/index.ts");
        const path = r.registryPath(ws, env);
        registry = { path, read: r.registryReader(path), mutate: (fn, opts) => r.mutateRegistry(path, fn, opts) };
      }
      return registry;
    },
    muxFor,
    get jobs() {
      return (jobs ??= (require("../jobs/store.ts") as typeof import("../jobs/store.ts")).jobStore(ws, env));
    },
    get git() {
      return (git ??= (require("../worktrees/git.ts") as typeof import("../worktrees/git.ts")).gitFor(env));
    },
    daemon,
    clock: systemClock,
    get runtime() {
      return (runtime ??= (require("./session/reach.ts") as typeof import("./session/reach.ts")).sessionReach(() => deps.registry.read(), muxFor, env, () => deps.jobs, deps.ws));
    },
  };
  return deps;
}
