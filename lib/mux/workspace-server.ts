// The tmux server a workspace remembers (docs/tmux.md#a-server-per-workspace): a create given
// --tmux-server writes its name into `.mam/tmux-server`, and the workspace's later creates use it
// when they are given none, so that a second workspace, kept apart from the first on a server of
// its own, does not need the flag on every create. MAM_TMUX_SERVER names one for every workspace
// the environment reaches. The order: the flag, then MAM_TMUX_SERVER, then the workspace's, then
// `mam`. A file whose name mam would refuse, or that is not this user's, is ignored.
import { lstatSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile } from "../sys/atomic.ts";
import { ensureMamDir } from "../sys/mam-dir.ts";
import { isValidName } from "../sys/names.ts";
import { type Env, mamDir } from "../sys/paths.ts";

const FILE = "tmux-server";

/** the tmux server the workspace remembers, else undefined */
export function rememberedTmuxServer(ws: string): string | undefined {
  const path = join(mamDir(ws), FILE);
  try {
    const st = lstatSync(path);
    // a file this user's mam did not write (a cloned repository's) chooses nothing
    if (!st.isFile() || (typeof process.getuid === "function" && st.uid !== process.getuid())) return undefined;
    const name = readFileSync(path, "utf8").trim();
    return isValidName(name) ? name : undefined;
  } catch {
    return undefined;
  }
}

/** the tmux server of a create given none: MAM_TMUX_SERVER, else the workspace's, else undefined (mam's default) */
export function defaultTmuxServer(ws: string, env: Env): { server: string; from: "MAM_TMUX_SERVER" | "workspace" } | undefined {
  const fromEnv = env.MAM_TMUX_SERVER?.trim();
  if (fromEnv) return { server: fromEnv, from: "MAM_TMUX_SERVER" };
  const own = rememberedTmuxServer(ws);
  return own ? { server: own, from: "workspace" } : undefined;
}

/** remember the server a create was given (nothing written when it is already the one) */
export function rememberTmuxServer(ws: string, server: string): void {
  if (rememberedTmuxServer(ws) === server) return;
  atomicWriteFile(join(ensureMamDir(ws), FILE), `${server}\n`);
}
