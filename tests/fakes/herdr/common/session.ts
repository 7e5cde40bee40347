// Sessions, session directories and socket resolution, as herdr 0.8 does them (herdr.md §1.2, §1.4).
import { join } from "node:path";

export const DEFAULT_SESSION = "default";

/** herdr's rule: 1-64 bytes of [A-Za-z0-9._-], not "." or ".." */
export function validateSessionName(name: string): string | undefined {
  if (name === "") return "session name cannot be empty";
  if (Buffer.byteLength(name) > 64) return "session name cannot be longer than 64 bytes";
  if (name === "." || name === "..") return "session name cannot be . or ..";
  if (!/^[A-Za-z0-9._-]+$/.test(name)) return "session name may only contain ASCII letters, numbers, '.', '_' and '-'";
  return undefined;
}

type Env = Record<string, string | undefined>;

/** `$XDG_CONFIG_HOME/herdr`, else `~/.config/herdr` */
export function configDir(env: Env): string {
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg) return join(xdg, "herdr");
  return join(env.HOME ?? "/", ".config", "herdr");
}

/** the session directory; undefined name = the default session */
export function sessionDir(env: Env, name?: string): string {
  return name && name !== DEFAULT_SESSION ? join(configDir(env), "sessions", name) : configDir(env);
}

export function apiSocketPath(env: Env, name?: string): string {
  return join(sessionDir(env, name), "herdr.sock");
}

export function clientSocketPath(env: Env, name?: string): string {
  return join(sessionDir(env, name), "herdr-client.sock");
}

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * Remove the global `--session NAME` / `--session=NAME` from argv (anywhere before a literal
 * `--`), like herdr's configure_from_args. Returns the cleaned argv and the requested name.
 */
export function stripSessionFlag(argv: string[]): { argv: string[]; session?: string } {
  const out: string[] = [];
  let session: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") {
      out.push(...argv.slice(i));
      break;
    }
    if (a === "--session") {
      if (i + 1 >= argv.length) throw new UsageError("missing value for --session");
      session = argv[++i]!;
      continue;
    }
    if (a.startsWith("--session=")) {
      session = a.slice("--session=".length);
      continue;
    }
    out.push(a);
  }
  return { argv: out, session };
}

export interface Target {
  socket: string;
  /** the named session in force (undefined = default or an explicit socket path) */
  name?: string;
  /** how the socket was chosen */
  via: "flag" | "socket-path" | "env" | "default";
}

/**
 * herdr's precedence: --session > HERDR_SOCKET_PATH > HERDR_SESSION > default. An invalid
 * --session, or an empty/invalid HERDR_SESSION when it is the one in force, is a usage error.
 */
export function resolveTarget(env: Env, flagSession?: string): Target {
  if (flagSession !== undefined) {
    if (flagSession === DEFAULT_SESSION) return { socket: apiSocketPath(env), via: "flag" };
    const err = validateSessionName(flagSession);
    if (err) throw new UsageError(err);
    return { socket: apiSocketPath(env, flagSession), name: flagSession, via: "flag" };
  }
  const sock = env.HERDR_SOCKET_PATH;
  if (sock !== undefined) {
    const s = env.HERDR_SESSION;
    const name = s && s !== DEFAULT_SESSION && !validateSessionName(s) ? s : undefined;
    return { socket: sock, name, via: "socket-path" };
  }
  const s = env.HERDR_SESSION;
  if (s !== undefined) {
    if (s === DEFAULT_SESSION) return { socket: apiSocketPath(env), via: "env" };
    const err = validateSessionName(s);
    if (err) throw new UsageError(err);
    return { socket: apiSocketPath(env, s), name: s, via: "env" };
  }
  return { socket: apiSocketPath(env), via: "default" };
}

/** the command herdr suggests in its server_not_running message */
export function attachCommand(t: Target): string {
  return t.name ? `herdr session attach ${t.name}` : "herdr";
}

export function serverNotRunningMessage(t: Target): string {
  return `no herdr server is running at ${t.socket}; run \`${attachCommand(t)}\` to start or attach it`;
}
