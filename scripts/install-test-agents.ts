// Installs the real agent CLIs the real-agent tests drive (tests/real-agents/package.json and its
// lockfile: the pinned agent CLIs, claude, codex, gemini, opencode, qwen and cline) into a cache folder
// outside the repo: ${XDG_CACHE_HOME:-$HOME/.cache}/mam/test-agents/<first 16 hex of the lockfile's SHA-256>.
// Idempotent: a folder that holds a finished install (its `.installed` marker) is reused at once.
// A new install goes to a temp folder beside it and is renamed into place when npm succeeded, so an
// interrupted run never leaves a half install that looks finished. `npm install` with the lockfile,
// not `npm ci`: @qwen-code/qwen-code names optional platform packages of @teddyzhu/clipboard that
// were never published, so no lockfile can list them and `npm ci` refuses every lockfile; `npm
// install` takes every version from the lockfile all the same (package.json pins exact versions).
// Prints the folder's node_modules/.bin on stdout (the one line a caller needs).
// Needs only the npm registry. Not mam's dependencies: nothing here ships in dist/mam.
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

const src = join(import.meta.dir, "..", "tests", "real-agents");

export function testAgentsDir(env: Record<string, string | undefined> = process.env): string {
  const lock = readFileSync(join(src, "package-lock.json"));
  const hash = createHash("sha256").update(lock).update(readFileSync(join(src, "package.json"))).digest("hex").slice(0, 16);
  const cache = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  return join(cache, "mam", "test-agents", hash);
}

/** the executables the install must hold */
export const TEST_AGENT_EXES = ["claude", "codex", "gemini", "opencode", "qwen", "cline"] as const;

/** install (when needed) and return the bin folder holding the agents (TEST_AGENT_EXES) */
export function installTestAgents(env: Record<string, string | undefined> = process.env): string {
  const dir = testAgentsDir(env);
  const bin = join(dir, "node_modules", ".bin");
  if (existsSync(join(dir, ".installed"))) return bin;
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  copyFileSync(join(src, "package.json"), join(tmp, "package.json"));
  copyFileSync(join(src, "package-lock.json"), join(tmp, "package-lock.json"));
  console.error(`installing the test agents into ${dir} …`);
  const r = Bun.spawnSync(["npm", "install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error"], {
    cwd: tmp,
    stdin: "ignore",
    stdout: "inherit",
    stderr: "inherit",
    env: { ...process.env, npm_config_update_notifier: "false" },
  });
  if (r.exitCode !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`npm install of the test agents failed (exit ${r.exitCode}); see the output above`);
  }
  for (const exe of TEST_AGENT_EXES) {
    if (!existsSync(join(tmp, "node_modules", ".bin", exe))) throw new Error(`the test agents install has no ${exe} in node_modules/.bin`);
  }
  writeFileSync(join(tmp, ".installed"), `${new Date().toISOString()}\n`);
  if (existsSync(dir)) {
    // another run finished first: keep its install
    rmSync(tmp, { recursive: true, force: true });
  } else {
    renameSync(tmp, dir);
  }
  return bin;
}

if (import.meta.main) {
  try {
    console.log(installTestAgents());
  } catch (e) {
    console.error(`ERROR: ${(e as Error).message}`);
    process.exit(1);
  }
}
