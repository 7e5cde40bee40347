// The steps of a real-agent flow test (tests/real-agents): create an agent on the world's tmux
// server (also one that opens a start dialog), submit a job and wait for it, and read the registry
// row, the job's journal and the text a user typed (without the agents' own additions).
import { expect } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { type RealAgentWorld, waitScreen } from "./real-agents.ts";
import { waitFor } from "./sandbox.ts";

export function row(w: RealAgentWorld, name: string): any {
  const f = join(w.sb.ws, ".mam", "agent-sessions.yaml");
  const d = existsSync(f) ? (parse(readFileSync(f, "utf8")) ?? {}) : {};
  return (d.tmux_sessions ?? []).find((r: any) => r.name === name);
}

/** a user message as the user typed it: claude and qwen add their own <system-reminder> blocks to it */
export const typedPart = (t: string) => t.replace(/<system-reminder>[\s\S]*?<\/system-reminder>\s*/g, "").trim();

export function journal(w: RealAgentWorld, id: string): { event: string; source: string }[] {
  return readFileSync(join(w.sb.ws, ".mam", "jobs", `${id}.events.ndjson`), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

export async function create(w: RealAgentWorld, agent: string, name: string): Promise<any> {
  const c = await w.mam(["create", "--agent", agent, "--mux", "tmux", "--tmux-server", w.server, "--session", name, "--json"]);
  expect(c.code, c.stdout + c.stderr).toBe(0);
  return { ...JSON.parse(c.stdout), stderr: c.stderr };
}

/**
 * wait until mam sees the session idle at its prompt (LIVE idle), as a user waits for an agent to
 * finish its answer: a job for an agent at work is queued (docs/jobs.md#the-queue), and only a
 * daemon, which these worlds do not run, would give it to the agent later
 */
export async function untilIdle(w: RealAgentWorld, name: string, timeoutMs = 60_000): Promise<void> {
  let live: string | undefined;
  const idle = async () => {
    const r = await w.mam(["status", "--json"]);
    live = r.code === 0 ? JSON.parse(r.stdout).sessions.find((s: any) => s.name === name)?.live : undefined;
    return live === "idle";
  };
  if (!(await waitFor(idle, timeoutMs, 250))) throw new Error(`session ${name} never went idle (LIVE ${live}):\n${await w.screen(`=${name}:`)}`);
}

/** submit a job once the agent is idle at its prompt, and wait for its end; the job's id */
export async function delegate(w: RealAgentWorld, to: string, prompt: string): Promise<string> {
  await untilIdle(w, to);
  const s = await w.mam(["job", "submit", "--to", to, "--prompt", prompt, "--json"]);
  expect(s.code, s.stdout + s.stderr).toBe(0);
  const id: string = JSON.parse(s.stdout).job_id;
  const wait = await w.mam(["job", "wait", id, "--timeout", "120"], 150_000);
  expect(wait.code, `${wait.stdout}${wait.stderr}\n${await w.screen(`=${to}:`)}`).toBe(0);
  return id;
}

/**
 * create an agent that opens a start dialog and check that mam left it alone: create names it in
 * one WARNING, the onboarding was not sent, the dialog is still on screen a moment later and
 * nothing reached the model. The create's JSON result.
 */
export async function createAtDialog(w: RealAgentWorld, agent: string, name: string, dialog: string, shows: RegExp): Promise<any> {
  const c = await create(w, agent, name);
  const line = `WARNING: ${agent} waits at its "${dialog}" dialog in ${c.pane}: answer it there (tmux -L ${w.server} attach -t ${name}); the onboarding was not sent`;
  expect(c.stderr.split("\n").filter((l: string) => l.startsWith("WARNING"))).toEqual([line]);
  expect(c).toMatchObject({ at_prompt: false, waiting_at: `its "${dialog}" dialog`, onboarding: "not sent", warnings: [line] });
  await waitScreen(w, `=${name}:`, (s) => shows.test(s), `the "${dialog}" dialog`);
  await Bun.sleep(1500);
  expect(await w.screen(`=${name}:`)).toMatch(shows);
  expect(w.api.turns()).toHaveLength(0);
  return c;
}
