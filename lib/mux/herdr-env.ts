// The herdr binary mam runs and the environment it hands a herdr server: which `herdr` (never a
// mam shim), what a server mam starts inherits (audit #7), how long a fresh pane's shell may take.
import { statSync } from "node:fs";
import { join } from "node:path";
import { EXIT, MamError } from "../sys/errors.ts";
import type { Env } from "../sys/paths.ts";
import { SECRET_ENV } from "../sys/secrets.ts";
import { cleanEnv } from "./exec.ts";
import { isMamShimFile, withoutShimDirs } from "./shim.ts";

/** herdr's own variables of the pane mam may run in: never handed to a server mam starts */
const PANE_VARS = ["HERDR_ENV", "HERDR_SOCKET_PATH", "HERDR_SESSION", "HERDR_PANE_ID", "HERDR_TAB_ID", "HERDR_WORKSPACE_ID", "TMUX", "TMUX_PANE"];

/**
 * The environment of a herdr server mam starts (audit #7): the caller's, without herdr's pane
 * variables, without mam's secrets (lib/sys/secrets.ts: every pane of the server would get them),
 * without every MAM_* variable (an agent's MAM_SESSION / MAM_WORKSPACE would reach every pane of
 * the server) and without the shim folders (withoutShimDirs) on PATH. Pure, for tests.
 */
export function serverEnv(env: Env): Record<string, string> {
  const out = cleanEnv(env, [...PANE_VARS, ...SECRET_ENV]);
  for (const k of Object.keys(out)) if (k.startsWith("MAM_")) delete out[k];
  if (out.PATH !== undefined) out.PATH = withoutShimDirs(out.PATH, env);
  return out;
}

/** MAM_HERDR_SHELL_READY_S in ms (a positive number), else 30 s */
export function shellReadyMs(env: Env): number {
  const v = Number(env.MAM_HERDR_SHELL_READY_S);
  return env.MAM_HERDR_SHELL_READY_S && Number.isFinite(v) && v > 0 ? v * 1000 : 30_000;
}

function isExecutable(p: string): boolean {
  try {
    const st = statSync(p);
    return st.isFile() && (st.mode & 0o111) !== 0;
  } catch {
    return false;
  }
}

/**
 * The herdr binary: MAM_HERDR_BIN, else the first `herdr` on the env's PATH that is not a mam
 * shim (the shim would wait for the pane-claim lock mam itself holds).
 */
export function findHerdr(env: Env): string {
  const given = env.MAM_HERDR_BIN;
  if (given) {
    const p = given.includes("/") ? given : Bun.which(given, { PATH: env.PATH ?? "" });
    if (!p || !isExecutable(p)) throw new MamError(`MAM_HERDR_BIN '${given}' is not an executable file`, EXIT.FAIL, "point it at the herdr binary");
    if (isMamShimFile(p)) throw new MamError(`MAM_HERDR_BIN '${given}' is the mam herdr shim`, EXIT.FAIL, "point it at the real herdr binary");
    return p;
  }
  for (const dir of (env.PATH ?? "").split(":")) {
    const p = join(dir || ".", "herdr");
    if (isExecutable(p) && !isMamShimFile(p)) return p;
  }
  throw new MamError("herdr not found on PATH", EXIT.FAIL, "install herdr or set MAM_HERDR_BIN (or use --mux tmux)");
}
