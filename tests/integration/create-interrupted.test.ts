// A `mam create` interrupted while its agent starts (issue 39 item 2, review R33): Ctrl-C
// (SIGINT) or SIGTERM either finishes the session's row or closes what the create started, as a
// failed start does; never an agent left running without its row, which the daemon then
// registers as role `unknown` (not resumable). A kill -9 cannot be caught: the tmux session
// carries the kind and role mam started it with, so the daemon's registration (here: one
// `mam reconcile`, the pass the daemon runs) keeps them and the row can be resumed.
// Real tmux; the fake claude (tests/fakes/agents), slow to reach its prompt where a case needs it.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { tmuxSessionName } from "../../lib/mux/tmux.ts";
import { installFakeAgents } from "../helpers/herdr.ts";
import { MAM_CMD, type RunResult, run, runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "../helpers/tmux.ts";

if (!TMUX_BIN) throw new Error("tmux is not installed: these tests need a real tmux (apt install tmux); they are not skipped on purpose");

type Row = Record<string, any>;

interface World {
  sb: Sandbox;
  server: string;
  env: Record<string, string>;
  mam(args: string[], env?: Record<string, string>): Promise<RunResult>;
  rows(): Row[];
  hasSession(name: string): Promise<boolean>;
}

async function withTmux(extraEnv: Record<string, string>, fn: (w: World) => Promise<void>): Promise<void> {
  const sb = makeSandbox("mam-ci-");
  installFakeAgents(sb.bin, ["claude"]);
  const server = tmuxServerName("mamci");
  const env = sb.with({ TMUX_TMPDIR: sb.root, MAM_NO_SUBSCRIBER_DAEMON: "1", ...extraEnv });
  const reg = join(sb.ws, ".mam", "agent-sessions.yaml");
  const w: World = {
    sb,
    server,
    env,
    mam: (args, more = {}) => runMam([...args, "--workspace", sb.ws], { env: { ...env, ...more }, cwd: sb.ws, timeoutMs: 60_000 }),
    rows: () => {
      try {
        return ((Bun.YAML.parse(readFileSync(reg, "utf8")) as { tmux_sessions?: Row[] }).tmux_sessions ?? []) as Row[];
      } catch {
        return [];
      }
    },
    hasSession: async (name) => (await run([TMUX_BIN!, "-L", server, "has-session", "-t", `=${tmuxSessionName(name)}`], { env, timeoutMs: 10_000 })).code === 0,
  };
  try {
    // a session of the workspace on this server already, as in the review: the daemon's pass looks at the servers of its rows
    const base = await w.mam(["create", "--agent", "claude", "--mux", "tmux", "--tmux-server", server, "--role", "base", "--session", "base", "--no-onboard"], { MAM_AGENT_SETTLE_S: "0.2", MAM_PROMPT_WAIT_S: "0", FAKE_AGENT_START_DELAY_MS: "" });
    if (base.code !== 0) throw new Error(`the first create failed: ${base.stderr}`);
    await fn(w);
  } finally {
    await killTmuxServer(server, env, sb.root);
    await sb.cleanup();
  }
}

/** start `mam create` for NAME, send it `sig` once `ready` holds; its exit code and output */
async function interruptCreate(w: World, name: string, role: string, sig: NodeJS.Signals, ready: () => Promise<boolean>): Promise<RunResult> {
  const args = ["create", "--agent", "claude", "--mux", "tmux", "--tmux-server", w.server, "--role", role, "--session", name, "--workspace", w.sb.ws];
  const p = Bun.spawn([...MAM_CMD, ...args], { env: w.env, cwd: w.sb.ws, stdout: "pipe", stderr: "pipe" });
  const stdout = new Response(p.stdout).text();
  const stderr = new Response(p.stderr).text();
  const seen = await waitFor(ready, 20_000, 20);
  if (!seen) {
    p.kill("SIGKILL");
    throw new Error(`the create of ${name} never reached the moment to interrupt it: ${await stderr}`);
  }
  p.kill(sig);
  const code = await p.exited;
  return { code, stdout: await stdout, stderr: await stderr } as RunResult;
}

/** never a row of `name` with role unknown or no agent: either none (and no pane) or a whole one */
function wholeOrNone(w: World, name: string): Row | undefined {
  const rows = w.rows().filter((r) => r.name === name);
  for (const r of rows) {
    expect(r.role, JSON.stringify(r)).not.toBe("unknown");
    expect(r.agent, JSON.stringify(r)).toBe("claude");
  }
  return rows[0];
}

describe("mam create interrupted while its agent starts", () => {
  // the agent runs in its tmux session, and mam waits MAM_AGENT_SETTLE_S to see it stay up before
  // it writes the row: the moment a Ctrl-C used to leave an agent without one
  for (const [sig, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    test(`${sig} before the row is written: the pane is closed, no row; the daemon's pass registers nothing`, async () => {
      await withTmux({ MAM_AGENT_SETTLE_S: "3" }, async (w) => {
        const r = await interruptCreate(w, "intr", "lead", sig, () => w.hasSession("intr"));
        expect(r.code, r.stderr).toBe(code);
        expect(await w.hasSession("intr")).toBe(false);
        expect((await w.mam(["reconcile"])).code).toBe(0);
        expect(wholeOrNone(w, "intr")).toBeUndefined();
        expect(w.rows().filter((x) => x.role === "unknown")).toEqual([]);
        expect(r.stderr).toContain(`ERROR: the create of 'intr' was interrupted by ${sig}: closed its agent's pane`);
      });
    }, 60_000);
  }

  test("SIGINT once the row is written, the agent slow to its prompt: the session stays whole, the wait is given up", async () => {
    // the fake claude shows its prompt 30 s after it starts; mam would wait for it (MAM_PROMPT_WAIT_S)
    await withTmux({ MAM_AGENT_SETTLE_S: "0.3", FAKE_AGENT_START_DELAY_MS: "30000", MAM_PROMPT_WAIT_S: "60" }, async (w) => {
      const r = await interruptCreate(w, "slow", "lead", "SIGINT", async () => w.rows().some((x) => x.name === "slow"));
      expect(r.code, r.stderr).toBe(130);
      expect(r.stderr).toContain("ERROR: the create of 'slow' was interrupted by SIGINT: slow runs in pane %");
      expect(await w.hasSession("slow")).toBe(true);
      expect((await w.mam(["reconcile"])).code).toBe(0);
      expect(wholeOrNone(w, "slow")).toMatchObject({ status: "running", role: "lead", agent: "claude" });
    });
  }, 60_000);

  test("kill -9 before the row is written: the daemon's pass registers the pane with its kind and role, and it resumes", async () => {
    await withTmux({ MAM_AGENT_SETTLE_S: "3" }, async (w) => {
      const r = await interruptCreate(w, "killed", "lead", "SIGKILL", () => w.hasSession("killed"));
      expect(r.code).toBe(137);
      expect(w.rows().filter((x) => x.name === "killed")).toEqual([]);
      // the agent runs on without a row; the daemon's reconcile pass finds it
      expect(await w.hasSession("killed")).toBe(true);
      expect((await w.mam(["reconcile"])).code).toBe(0);
      expect(wholeOrNone(w, "killed")).toMatchObject({ status: "running", role: "lead", agent: "claude" });
      // it can be stopped and resumed as any session (its conversation: the workspace's newest)
      const stop = await w.mam(["stop", "killed"]);
      expect(stop.code, stop.stderr).toBe(0);
      const resume = await w.mam(["resume", "killed"]);
      expect(resume.code, `${resume.stdout}${resume.stderr}`).toBe(0);
      expect(wholeOrNone(w, "killed")).toMatchObject({ status: "running", role: "lead", agent: "claude" });
      await w.mam(["stop", "killed", "--hard"]);
    });
  }, 90_000);
});
