// Run mam as users and bash shims do: the compiled binary (MAM_BIN), else `bun mam.ts`.
import { join, resolve } from "node:path";
import { grantArgs } from "../../lib/agents/kinds/index.ts";
import { shJoin } from "../../lib/mux/exec.ts";
import { shq } from "../../lib/sys/shell.ts";

export const ROOT = join(import.meta.dir, "..", "..");
export const MAM_BIN = process.env.MAM_BIN ? resolve(process.env.MAM_BIN) : undefined;
export const MAM_CMD: string[] = MAM_BIN ? [MAM_BIN] : [process.execPath, join(ROOT, "mam.ts")];
/** a command line prefix usable from bash */
export const MAM_SH = MAM_CMD.map((a) => `'${a}'`).join(" ");
/**
 * how the texts mam types into agents name it here (agentMam): its absolute path, since a
 * sandbox's HOME and the system folders hold no mam
 */
export const AGENT_MAM = MAM_CMD.map(shq).join(" ");
/** claude's grants, as a start_command and the typed command line show them */
export const CLAUDE_GRANTS = shJoin(grantArgs("claude", {}, AGENT_MAM));

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface RunOptions {
  env: Record<string, string>;
  cwd?: string;
  stdin?: string;
  timeoutMs?: number;
}

export async function runMam(args: string[], opts: RunOptions): Promise<RunResult> {
  return run([...MAM_CMD, ...args], opts);
}

export async function run(argv: string[], opts: RunOptions): Promise<RunResult> {
  const t0 = performance.now();
  const p = Bun.spawn(argv, {
    cwd: opts.cwd,
    env: opts.env,
    stdin: opts.stdin !== undefined ? new TextEncoder().encode(opts.stdin) : "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: opts.timeoutMs ?? 60_000,
  });
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  return { code, stdout, stderr, ms: performance.now() - t0 };
}

/** run a bash snippet; $MAM is the mam command */
export async function bash(script: string, opts: RunOptions, ...args: string[]): Promise<RunResult> {
  return run(["bash", "-c", `MAM=(${MAM_SH}); ${script}`, "bash", ...args], opts);
}
