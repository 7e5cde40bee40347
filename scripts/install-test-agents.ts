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
// --newest: the newest versions mam is verified on, where they are newer than those pins
// (tests/real-agents/newest/: claude 2.1.332 today), into a folder of their own; npm run
// test:agents:newest puts that folder first on the tests' PATH (MAM_TEST_AGENTS_FIRST), so every
// real-agent test runs on the oldest and on the newest supported versions.
// Needs only the npm registry. Not mam's dependencies: nothing here ships in dist/mam.
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/** the oldest supported pins (every kind), or the newest where they are newer */
export type AgentSet = "pinned" | "newest";

const srcOf = (set: AgentSet) => join(import.meta.dir, "..", "tests", "real-agents", ...(set === "newest" ? ["newest"] : []));

export function testAgentsDir(env: Record<string, string | undefined> = process.env, set: AgentSet = "pinned"): string {
  const src = srcOf(set);
  const lock = readFileSync(join(src, "package-lock.json"));
  const hash = createHash("sha256").update(lock).update(readFileSync(join(src, "package.json"))).digest("hex").slice(0, 16);
  const cache = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  return join(cache, "mam", set === "newest" ? "test-agents-newest" : "test-agents", hash);
}

/** the executables the install must hold */
export const TEST_AGENT_EXES = ["claude", "codex", "gemini", "opencode", "qwen", "cline"] as const;

/** the executable of each package a set may name */
const EXE_OF: Record<string, (typeof TEST_AGENT_EXES)[number]> = {
  "@anthropic-ai/claude-code": "claude",
  "@openai/codex": "codex",
  "@google/gemini-cli": "gemini",
  "opencode-ai": "opencode",
  "@qwen-code/qwen-code": "qwen",
  cline: "cline",
};

/** the executables a set's install must hold: every kind pinned, or those the newest set names */
function exesOf(set: AgentSet): string[] {
  if (set === "pinned") return [...TEST_AGENT_EXES];
  const deps = Object.keys(JSON.parse(readFileSync(join(srcOf(set), "package.json"), "utf8")).dependencies ?? {});
  return deps.flatMap((d) => (EXE_OF[d] ? [EXE_OF[d]] : []));
}

/** install (when needed) and return the bin folder holding the agents of the set (TEST_AGENT_EXES when pinned) */
export function installTestAgents(env: Record<string, string | undefined> = process.env, set: AgentSet = "pinned"): string {
  const src = srcOf(set);
  const dir = testAgentsDir(env, set);
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
  for (const exe of exesOf(set)) {
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
    const args = process.argv.slice(2);
    const bad = args.find((a) => a !== "--newest");
    if (bad !== undefined) throw new Error(`unknown argument '${bad}' (usage: bun scripts/install-test-agents.ts [--newest])`);
    console.log(installTestAgents(process.env, args.includes("--newest") ? "newest" : "pinned"));
  } catch (e) {
    console.error(`ERROR: ${(e as Error).message}`);
    process.exit(1);
  }
}
