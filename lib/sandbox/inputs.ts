// What a sandbox's plan (./plan.ts) needs from the machine: bwrap itself and whether it can make
// namespaces here, where the agent's program and its interpreter are installed, and which files
// are the agent's own (its config and conversation store, read-write inside).
import { spawnSync } from "node:child_process";
import { accessSync, closeSync, constants, openSync, readSync, realpathSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { MamError, EXIT, usageError } from "../sys/errors.ts";
import { field } from "../sys/fields.ts";
import { homeDir, type Env } from "../sys/paths.ts";

/** what mam knows of a kind to sandbox it: its own files, and its arguments inside */
interface Sandboxed {
  stores: (env: Env, home: string) => string[];
  /** after its program's name, inside a sandbox */
  args?: string[];
}

const KINDS: Record<string, Sandboxed> = {
  // ~/.claude.json is claude's settings and its folder trust: without it, every start is a first run
  claude: { stores: (env, home) => (env.CLAUDE_CONFIG_DIR ? [env.CLAUDE_CONFIG_DIR] : [join(home, ".claude"), join(home, ".claude.json")]) },
  // codex runs its commands in a sandbox of its own, whose seccomp filter refuses every socket
  // connect: `mam job event` could not reach its supervisor. mam's sandbox is the boundary instead
  codex: { stores: (env, home) => [env.CODEX_HOME || join(home, ".codex")], args: ["--sandbox", "danger-full-access"] },
  demo: { stores: () => [] },
};

export const SANDBOX_KINDS = Object.keys(KINDS);

function known(kind: string): Sandboxed {
  const k = KINDS[kind];
  if (!k) throw usageError(`${field("sandbox")} is not available for ${kind} agents yet`, `it is for: ${SANDBOX_KINDS.join(", ")} (docs/sandbox.md)`);
  return k;
}

/** the agent's own files (read-write inside), or a refusal for a kind mam cannot sandbox */
export function agentStores(kind: string, env: Env): string[] {
  return known(kind).stores(env, homeDir(env));
}

/** the agent's command line inside a sandbox: the kind's own arguments there after its program */
export function insideArgv(kind: string, argv: string[]): string[] {
  const extra = known(kind).args ?? [];
  return extra.length ? [argv[0]!, ...extra, ...argv.slice(1)] : argv;
}

function executable(p: string): boolean {
  try {
    if (!statSync(p).isFile()) return false;
    accessSync(p, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** the program `name` as PATH finds it (a name with a slash is itself) */
export function onPath(name: string, env: Env): string | undefined {
  if (name.includes("/")) return executable(name) ? name : undefined;
  for (const d of (env.PATH ?? "").split(":")) if (d && executable(join(d, name))) return join(d, name);
  return undefined;
}

const real = (p: string): string | undefined => {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
};

/** the interpreter a script's first line names (`#!/usr/bin/env node`, `#!/opt/node/bin/node`) */
function shebang(p: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(p, "r");
    const b = Buffer.alloc(256);
    const n = readSync(fd, b, 0, 256, 0);
    const line = b.subarray(0, n).toString("utf8").split("\n")[0]!;
    if (!line.startsWith("#!")) return undefined;
    const words = line.slice(2).trim().split(/\s+/);
    if (words[0]?.endsWith("/env")) return words.find((w, i) => i > 0 && !w.startsWith("-"));
    return words[0];
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** where a program's install lies: its package (…/node_modules/<pkg>) or its folder's parent */
function installRoot(file: string): string {
  const m = /^(.*\/node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(file);
  if (m) return m[1]!;
  const dir = dirname(file);
  return dir.endsWith("/bin") ? dirname(dir) : dir;
}

/** what the agent's program needs to be read inside: the program as found, its install, its interpreter's */
export function programPaths(program: string, env: Env): string[] {
  const found = onPath(program, env);
  if (!found) return [];
  const out = [found];
  const r = real(found);
  if (r) {
    out.push(installRoot(r));
    const interp = shebang(r);
    const ip = interp ? onPath(interp, env) : undefined;
    const ir = ip ? real(ip) : undefined;
    if (ip) out.push(ip);
    if (ir) out.push(installRoot(ir));
  }
  return out;
}

/** git's own config (the name commits carry), read-only inside: the worktree's commits need it */
export function gitConfigPaths(env: Env): string[] {
  const home = homeDir(env);
  return [join(home, ".gitconfig"), join(env.XDG_CONFIG_HOME || join(home, ".config"), "git", "config")];
}

/** PATH's absolute folders (their programs stay where the agent looks for them) */
export const pathDirs = (env: Env): string[] => (env.PATH ?? "").split(":").filter((d) => d.startsWith("/"));

/** /etc/resolv.conf's target when it is a link (systemd-resolved keeps it under /run) */
export function resolvTarget(): string | undefined {
  const r = real("/etc/resolv.conf");
  return r && r !== "/etc/resolv.conf" ? r : undefined;
}

/** bwrap as mam runs it: MAM_BWRAP, else `bwrap` on PATH */
export function bwrapPath(env: Env): string {
  const p = env.MAM_BWRAP ? onPath(env.MAM_BWRAP, env) : onPath("bwrap", env);
  if (!p) {
    if (env.MAM_BWRAP) throw new MamError(`MAM_BWRAP=${env.MAM_BWRAP} is not an executable file`, EXIT.FAIL, "set MAM_BWRAP to bwrap's path, or unset it to use the one on PATH");
    throw new MamError(`${field("sandbox", "bwrap")}: bwrap is not installed`, EXIT.FAIL, "install bubblewrap (Debian, Ubuntu: apt install bubblewrap; Fedora: dnf install bubblewrap), or set MAM_BWRAP to its path");
  }
  return p;
}

/** can bwrap make the namespaces a sandbox needs on this machine? (a clear refusal when not) */
export function probeBwrap(bwrap: string, net: boolean): void {
  const r = spawnSync(bwrap, ["--ro-bind", "/", "/", "--unshare-user", "--unshare-pid", ...(net ? ["--unshare-net"] : []), "--", "/bin/true"], { encoding: "utf8", timeout: 10_000 });
  if (r.status === 0) return;
  const why = (r.stderr || r.error?.message || `exit ${r.status}`).trim().split("\n")[0];
  throw new MamError(
    `${field("sandbox", "bwrap")}: bwrap cannot make a sandbox on this machine: ${why}`,
    EXIT.FAIL,
    "unprivileged user namespaces must be allowed (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04, an AppArmor profile for bwrap); see docs/sandbox.md",
  );
}
