// Which mam the texts typed into agents name (job header, loop review and feedback, onboarding).
// An agent's command shell does not always see the PATH mam gave it (codex runs a login shell
// that resets PATH; `./mam create` from a download folder puts mam on no PATH at all), so the
// word `mam` is named only when a plain login PATH finds this very binary; otherwise its
// absolute path. The grants (lib/agents/kinds/) pre-approve exactly these words.
import { accessSync, constants, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Env } from "./paths.ts";
import { selfCommand } from "./self.ts";
import { shq } from "./shell.ts";

/** the folders a login shell searches without any profile of the user's, in its order */
export function loginPathDirs(home: string | undefined): string[] {
  return [...(home ? [join(home, ".local", "bin"), join(home, "bin")] : []), "/usr/local/bin", "/usr/bin", "/bin"];
}

/** the file `name` in the first of `dirs` that holds an executable of that name */
function firstOnPath(name: string, dirs: string[]): string | undefined {
  for (const d of dirs) {
    const p = join(d, name);
    try {
      if (!statSync(p).isFile()) continue;
      accessSync(p, constants.X_OK);
      return p;
    } catch {}
  }
  return undefined;
}

function sameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

export interface SelfInfo {
  /** this process's command words (selfCommand) */
  command: string[];
  /** a compiled binary (command is [the binary]) rather than bun running mam.ts */
  compiled: boolean;
}

function selfInfo(): SelfInfo {
  return { command: selfCommand(), compiled: Bun.isStandaloneExecutable };
}

/**
 * The command words that run this mam from an agent's shell: MAM_AGENT_MAM verbatim when set;
 * else `mam` when a login PATH finds this binary under that name; else this binary's absolute
 * path (from source: bun and mam.ts), each word shell-quoted when needed. Only stat and realpath,
 * no process: `mam job submit` calls it for every header.
 */
export function resolveAgentMam(env: Env, self: SelfInfo = selfInfo()): string {
  const override = env.MAM_AGENT_MAM;
  if (override !== undefined && override.trim() !== "") return override;
  if (self.compiled) {
    const found = firstOnPath("mam", loginPathDirs(env.HOME));
    if (found && sameFile(found, self.command[0]!)) return "mam";
  }
  return self.command.map(shq).join(" ");
}

const cache = new Map<string, string>();

/** resolveAgentMam, looked up once per process (and HOME) */
export function agentMam(env: Env = process.env): string {
  const key = `${env.MAM_AGENT_MAM ?? ""}\0${env.HOME ?? ""}`;
  let v = cache.get(key);
  if (v === undefined) cache.set(key, (v = resolveAgentMam(env)));
  return v;
}
