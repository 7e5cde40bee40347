// What a use case gets from the outside world, as small interfaces: the registry, the
// multiplexers, the job store, git, the daemon, the clock, and a way to reach a session's agent.
// lib/ops/wiring.ts builds the real ones (the only place that does); tests hand in their own.
import type { JobRuntime } from "../jobs/runtime.ts";
import type { JobStore } from "../jobs/store.ts";
import type { MuxFactory } from "../mux/types.ts";
import type { MutateOptions, ReadOptions, RegistryTx } from "../registry/index.ts";
import type { RegistryData } from "../registry/types.ts";
import type { DaemonStatus, EnsureResult, StopResult } from "../sys/daemon-proc.ts";
import type { Env } from "../sys/paths.ts";
import type { Git } from "../worktrees/git.ts";

/** the workspace's registry file: read it, or change it under its lock (the one writer) */
export interface RegistryStore {
  readonly path: string;
  read(opts?: ReadOptions): RegistryData;
  mutate<T>(fn: (data: RegistryData, tx: RegistryTx) => T | Promise<T>, opts?: MutateOptions): Promise<{ result: T; changed: boolean }>;
}

/** the workspace's daemon: start it if none runs, look at it, stop it */
export interface DaemonControl {
  ensure(): Promise<EnsureResult>;
  status(): DaemonStatus | undefined;
  stop(graceMs?: number): Promise<StopResult | undefined>;
}

export interface Clock {
  /** seconds since the epoch, whole */
  epoch(): number;
  /** milliseconds since the epoch */
  ms(): number;
}

export interface Deps {
  /** the workspace: an absolute real path */
  ws: string;
  /** the environment mam runs in (knobs such as MAM_PROMPT_WAIT_S; the agents' environment) */
  env: Env;
  registry: RegistryStore;
  muxFor: MuxFactory;
  jobs: JobStore;
  git: Git;
  daemon: DaemonControl;
  clock: Clock;
  /** find a session's pane and type into its agent, never into a dialog or a bare shell */
  runtime: JobRuntime;
}
