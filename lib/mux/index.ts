// Which multiplexer and which server (SPEC §3), and the Mux for them.
import { EXIT, MamError, usageError } from "../sys/errors.ts";
import { field } from "../sys/fields.ts";
import { checkName } from "../sys/names.ts";
import { ambientHerdrServer, type Env } from "../sys/paths.ts";
import { HerdrMux, type HerdrOptions } from "./herdr.ts";
import { customHerdrSocket, rememberSocket, socketOf } from "./herdr-socket.ts";
import { TmuxMux, type TmuxOptions } from "./tmux.ts";
import type { Backend, Mux } from "./types.ts";

export const DEFAULT_TMUX_SERVER = "mam";

/** what a create asked for (the fields of its input, named in messages as {{field}}) */
export interface MuxChoice {
  /** the herdr server for the pane */
  herdr_server?: string;
  /** herdr or tmux */
  mux?: string;
  /** the private tmux server (tmux -L NAME) */
  tmux_server?: string;
  /**
   * the tmux server when none is asked for: MAM_TMUX_SERVER, else the one the workspace remembers
   * (workspace-server.ts); it also means tmux when nothing else chooses the backend
   */
  tmux_default?: string;
}

export interface MuxTarget {
  backend: Backend;
  server: string;
}

function backendName(v: string, from: string): Backend {
  if (v === "herdr" || v === "tmux") return v;
  throw usageError(`${from} must be herdr or tmux (got '${v}')`);
}

/** is `cmd` an executable on the env's PATH */
export function onPath(cmd: string, env: Env): boolean {
  return Bun.which(cmd, { PATH: env.PATH ?? "" }) !== null;
}

/**
 * The backend of a create (docs/sessions.md): a herdr server → herdr; mux (a tmux server alone
 * means tmux) or MAM_MUX; else herdr when
 * herdr is on PATH (or MAM_HERDR_BIN is set), else tmux when tmux is on PATH, else exit 1.
 */
export function chooseBackend(choice: MuxChoice, env: Env, has: (cmd: string) => boolean = (c) => onPath(c, env)): Backend {
  const flag = choice.mux !== undefined && choice.mux !== "" ? backendName(choice.mux, field("mux")) : undefined;
  if (choice.herdr_server !== undefined && choice.herdr_server !== "") {
    if (flag === "tmux") throw usageError(`${field("herdr_server")} and ${field("mux", "tmux")} contradict each other`, "give one of them");
    return "herdr";
  }
  if (choice.tmux_server !== undefined && choice.tmux_server !== "" && flag === "herdr") {
    throw usageError(`${field("tmux_server")} and ${field("mux", "herdr")} contradict each other`, "give one of them");
  }
  if (flag) return flag;
  if (choice.tmux_server !== undefined && choice.tmux_server !== "") return "tmux";
  const fromEnv = env.MAM_MUX;
  if (fromEnv !== undefined && fromEnv !== "") return backendName(fromEnv, "MAM_MUX");
  if (choice.tmux_default) return "tmux";
  if (env.MAM_HERDR_BIN || has("herdr")) return "herdr";
  if (has("tmux")) return "tmux";
  throw new MamError("neither herdr nor tmux is on PATH", EXIT.FAIL, `install herdr (or set MAM_HERDR_BIN) or tmux, or pass ${field("mux")}`);
}

/**
 * The server: herdr → the herdr server asked for ("default" is the default server), else the caller's own
 * (ambient, SPEC §4.1; "default" outside herdr; a custom HERDR_SOCKET_PATH → its sock-<hash>
 * server, herdr-socket.ts); tmux → the tmux server asked for, else the default one (MAM_TMUX_SERVER
 * or the workspace's), else "mam".
 */
export function chooseServer(backend: Backend, choice: MuxChoice, env: Env): string {
  if (backend === "herdr") {
    const s = choice.herdr_server;
    if (s !== undefined && s !== "") return s === "default" ? "default" : checkName(s, "herdr server name");
    const custom = customHerdrSocket(env);
    return custom ? rememberSocket(custom, env) : ambientHerdrServer(env);
  }
  const t = choice.tmux_server;
  if (t !== undefined && t !== "") return checkName(t, "tmux server name");
  return choice.tmux_default ? checkName(choice.tmux_default, "tmux server name (MAM_TMUX_SERVER)") : DEFAULT_TMUX_SERVER;
}

/** backend and server of a create, in one call */
export function resolveMuxTarget(choice: MuxChoice, env: Env, has?: (cmd: string) => boolean): MuxTarget {
  const backend = chooseBackend(choice, env, has);
  return { backend, server: chooseServer(backend, choice, env) };
}

export interface MuxOptions {
  herdr?: HerdrOptions;
  tmux?: TmuxOptions;
}

/** the Mux of (backend, server); env is the environment its CLI calls get (PATH decides the binary) */
export function muxFor(backend: Backend, server: string, env: Env = process.env, opts: MuxOptions = {}): Mux {
  checkName(server, `${backend} server name`);
  if (backend === "tmux") return new TmuxMux(server, env, opts.tmux);
  const socketPath = socketOf(server, env);
  return new HerdrMux(server, env, socketPath ? { ...opts.herdr, socketPath } : opts.herdr);
}

