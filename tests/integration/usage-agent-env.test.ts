// The usage meter finds an agent's records by the agent's own environment (issue 39 item 3): the
// user's daemon runs from a shell without CLAUDE_CONFIG_DIR, and `mam create` starts claude with
// CLAUDE_CONFIG_DIR at another config folder. Before, the meter looked under the daemon's
// ~/.claude, found nothing, and `job status --json` showed the job's usage as a known 0. Now it
// reads the agent process's environment and counts the answers in the agent's folder; and where
// it finds none of an agent's answers for a job the agent reported on, it says unknown, not 0.
// The real claude: tests/real-agents/usage-config-dir.test.ts. Here the fake claude
// (tests/fakes/agents, "Usage") on real tmux, the binary's daemon (polling).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { installFakeAgents } from "../helpers/herdr.ts";
import { JOB_AGENT } from "../helpers/jobs-e2e.ts";
import { logText, startSubscriber, type Subscriber, unreachableBrokerEnv } from "../helpers/daemon.ts";
import { type RunResult, runMam } from "../helpers/mam.ts";
import { makeSandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName, writeScript } from "../helpers/tmux.ts";

if (!TMUX_BIN) throw new Error("tmux is not installed: these tests need a real tmux (apt install tmux); they are not skipped on purpose");

const sb = makeSandbox("mam-uae-");
const server = tmuxServerName("mamuae");
const agentConfig = join(sb.root, "agent-claude");
// the daemon's shell: no CLAUDE_CONFIG_DIR (claude's default is ~/.claude, the sandbox HOME's)
const shell = sb.with({ TMUX_TMPDIR: sb.root, ...unreachableBrokerEnv, MAM_STATE_POLL_MS: "300" });
let daemon: Subscriber;

const mam = (args: string[], env = shell) => runMam([...args, "--workspace", sb.ws], { env, cwd: sb.ws, timeoutMs: 60_000 });
function ok(r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`mam exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

/** the answers (assistant lines with usage) in the claude transcripts under `dir`/projects */
function answers(dir: string): { input: number; output: number }[] {
  const projects = join(dir, "projects");
  if (!existsSync(projects)) return [];
  return readdirSync(projects)
    .flatMap((p) => readdirSync(join(projects, p)).filter((f) => f.endsWith(".jsonl")).map((f) => join(projects, p, f)))
    .flatMap((f) => readFileSync(f, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)))
    .filter((o) => o.type === "assistant" && o.message?.usage)
    .map((o) => ({ input: o.message.usage.input_tokens, output: o.message.usage.output_tokens }));
}

beforeAll(async () => {
  installFakeAgents(sb.bin, ["claude"]);
  const reporter = writeScript(sb.bin, "job-agent", JOB_AGENT);
  daemon = startSubscriber(sb, join(sb.root, "daemon.log"), shell);
  // the agent alone gets CLAUDE_CONFIG_DIR (as a user's `CLAUDE_CONFIG_DIR=… mam create`)
  const agentEnv = { ...shell, CLAUDE_CONFIG_DIR: agentConfig, FAKE_AGENT_ON_PROMPT: reporter, FAKE_AGENT_USAGE: "1013,37,0,0" };
  ok(await mam(["create", "--agent", "claude", "--mux", "tmux", "--tmux-server", server, "--session", "wrk", "--role", "worker", "--no-onboard"], agentEnv));
});

afterAll(async () => {
  await daemon?.kill();
  await killTmuxServer(server, shell, sb.root);
  await sb.cleanup();
});

describe("the meter reads an agent's records where the agent keeps them", () => {
  test("CLAUDE_CONFIG_DIR set for the agent only: the job's answers are counted from the agent's folder, not a known 0", async () => {
    const id = ok(await mam(["job", "submit", "--to", "wrk", "--prompt", "say hello"])).stdout.trim();
    const w = await mam(["job", "wait", id, "--timeout", "60"]);
    expect(w.code, `${w.stdout}${w.stderr}\n${logText(daemon.log)}`).toBe(0);
    // the fake claude wrote its answers in the agent's config folder, none under the daemon's ~/.claude
    const got = answers(agentConfig);
    expect(got.length).toBeGreaterThan(0);
    expect(got.every((a) => a.input === 1013 && a.output === 37)).toBe(true);
    expect(answers(join(sb.home, ".claude"))).toEqual([]);
    const want = { input: 1013 * got.length, output: 37 * got.length, cache_write: 0, cache_read: 0, total: 1050 * got.length };
    let usage: any;
    const counted = await waitFor(async () => (usage = JSON.parse(ok(await mam(["job", "status", id, "--json"])).stdout).usage).tokens?.total === want.total, 20_000, 250);
    expect({ counted, usage }, logText(daemon.log)).toMatchObject({ counted: true, usage: { known: true, tokens: want } });
  }, 90_000);
});
