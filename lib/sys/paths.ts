// Where things live: mam's per-user state, the workspace, and the herdr server a caller runs in.
import { existsSync, realpathSync, statSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { usageError } from "./errors.ts";
import { field } from "./fields.ts";
import { checkName, isValidName } from "./names.ts";

export type Env = Record<string, string | undefined>;

/** HOME_DIR if set, else HOME (SPEC §1) */
export function homeDir(env: Env = process.env): string {
  const h = env.HOME_DIR || env.HOME;
  if (!h) throw usageError("neither HOME_DIR nor HOME is set", "set HOME");
  return h;
}

export function stateDir(env: Env = process.env): string {
  return join(homeDir(env), ".local", "state", "mam");
}

export function paneLockDir(env: Env = process.env): string {
  return join(stateDir(env), "pane-lock");
}

/** herdr's config base: XDG_CONFIG_HOME, else <home>/.config */
export function configBase(env: Env = process.env): string {
  return env.XDG_CONFIG_HOME || join(homeDir(env), ".config");
}

/**
 * The herdr server a caller runs in (SPEC §4.1, the "ambient" target), by herdr's own precedence
 * (src/session.rs:80-91, 173-181: without --session, HERDR_SOCKET_PATH wins over HERDR_SESSION):
 * a non-empty HERDR_SOCKET_PATH names the server: <config>/herdr/sessions/<name>/herdr.sock →
 * <name>, <config>/herdr/herdr.sock or any other path → "default"; else HERDR_SESSION if set and
 * non-empty (must be a valid name); else "default".
 * (SPEC §4.1 and the seed put HERDR_SESSION first; herdr does not, and a pane of server A with
 * HERDR_SESSION=B exported would then have its `herdr …` calls go to A but mam's lock to B.)
 */
export function ambientHerdrServer(env: Env = process.env): string {
  const sock = env.HERDR_SOCKET_PATH;
  if (sock) {
    const herdrDir = join(configBase(env), "herdr");
    const norm = resolve(sock);
    if (norm === join(herdrDir, "herdr.sock")) return "default";
    const prefix = join(herdrDir, "sessions") + sep;
    if (norm.startsWith(prefix) && norm.endsWith(`${sep}herdr.sock`)) {
      const name = norm.slice(prefix.length, -`${sep}herdr.sock`.length);
      if (!name.includes(sep) && isValidName(name)) return name;
    }
    return "default";
  }
  const s = env.HERDR_SESSION;
  if (s !== undefined && s !== "") {
    if (s === "default") return "default";
    return checkName(s, "herdr server name in HERDR_SESSION");
  }
  return "default";
}

/** a server target: a named one (valid name, not "default"), or the ambient one */
export function resolveHerdrServer(target: string | undefined, env: Env = process.env): string {
  if (target === undefined || target === "" || target === "default") return ambientHerdrServer(env);
  return checkName(target, "herdr server name");
}

export function paneLockPath(server: string, env: Env = process.env): string {
  return join(paneLockDir(env), `${checkName(server, "herdr server name")}.lock`);
}

/**
 * The workspace (SPEC §1): --workspace DIR, else MAM_WORKSPACE, else the nearest ancestor of the
 * cwd holding .mam/, else the cwd. Always an absolute real path; a missing one is a usage error.
 */
export function resolveWorkspace(flag: string | undefined, env: Env = process.env, cwd: string = process.cwd()): string {
  const given = flag !== undefined && flag !== "" ? flag : env.MAM_WORKSPACE || undefined;
  if (given !== undefined) {
    const abs = resolve(cwd, given);
    let st;
    try {
      st = statSync(abs);
    } catch {
      throw usageError(`workspace '${given}' does not exist`, `pass an existing folder with ${field("workspace")}`);
    }
    if (!st.isDirectory()) throw usageError(`workspace '${given}' is not a folder`);
    return realpathSync(abs);
  }
  let dir = realpathSync(cwd);
  for (;;) {
    if (existsSync(join(dir, ".mam"))) return dir;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return realpathSync(cwd);
}

export function mamDir(workspace: string): string {
  return join(workspace, ".mam");
}

/** `p` with its symbolic links resolved; `p` itself when it cannot be (it does not exist) */
export function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
