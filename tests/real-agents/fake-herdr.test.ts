// The real claude (and codex) in a fake herdr pane: the fake herdr's panes are real terminals (a pty running
// bash, a headless xterm as the screen), so the real Claude Code TUI runs there as it would in
// herdr 0.8.0. mam drives it the way it drives herdr: create (agent start, onboarding through
// `agent prompt`), a job completed by the agent's own `mam job event` commands, stop, resume.
// The model is the scripted endpoint (tests/fakes/model-api); the header names mam by its
// absolute path, and mam's grants let claude run its commands.
import { afterEach, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { jobWorker } from "../fakes/model-api/scripts.ts";
import { type FakeHerdrServer, installFakeHerdr, startFakeHerdr } from "../helpers/herdr.ts";
import { claudeFooter, codexDaemons, type RealAgentWorld, realAgentWorld } from "../helpers/real-agents.ts";
import { waitFor } from "../helpers/sandbox.ts";

const SERVER = "ra";
let w: RealAgentWorld | undefined;
let h: FakeHerdrServer | undefined;

afterEach(async () => {
  try {
    await h?.stop();
  } finally {
    h = undefined;
    await w?.cleanup();
    w = undefined;
  }
});

function rows(w: RealAgentWorld): any[] {
  const f = join(w.sb.ws, ".mam", "agent-sessions.yaml");
  return existsSync(f) ? ((parse(require("node:fs").readFileSync(f, "utf8")) ?? {}).herdr_sessions ?? []) : [];
}

async function read(pane: string): Promise<string> {
  return ((await h!.call("pane.read", { pane_id: pane, source: "visible" })) as any).read.text;
}

test("the real claude in a fake herdr pane: create with onboarding, a job completed, stop, resume", async () => {
  w = await realAgentWorld({ script: jobWorker({ detail: "done: job finished" }) });
  const { sb } = w;
  installFakeHerdr(sb.bin);
  h = await startFakeHerdr(sb, { session: SERVER, env: w.env, settleMs: 3000 });

  // create: herdr agent start types claude into a fresh pane's bash; the onboarding goes through
  // herdr agent prompt (bracketed paste, as claude asks for it)
  const c = await w.mam(["create", "--agent", "claude", "--herdr-session", SERVER, "--session", "worker"]);
  expect(c.code, c.stdout + c.stderr).toBe(0);
  const row = rows(w).find((r) => r.name === "worker");
  expect(row).toMatchObject({ status: "running", agent: "claude", herdr_server: SERVER, session_id_source: "assigned" });
  const pane: string = row.pane.id;
  const info = ((await h.call("pane.get", { pane_id: pane })) as any).pane;
  expect(info).toMatchObject({ agent: "claude", label: "mam:worker (claude, creator)" });
  const fg = ((await h.call("pane.process_info", { pane_id: pane })) as any).process_info;
  expect(fg.foreground_process_group_id).not.toBe(fg.shell_pid);
  expect(fg.foreground_processes.some((p: any) => p.name === "claude" || (p.argv ?? []).some((a: string) => a.endsWith("/claude")))).toBe(true);
  expect(await waitFor(() => w!.api.turns("anthropic").length >= 1, 60_000, 200)).toBe(true);
  const onboarding = w.api.turns("anthropic")[0]!;
  expect(onboarding.lastUserText).toContain("worker");
  expect(await waitFor(async () => claudeFooter(await read(pane)), 30_000, 200)).toBe(true);

  // a job: the header reaches claude as one pasted message; claude runs started and completed
  const s = await w.mam(["job", "submit", "--to", "worker", "--prompt", "say hello", "--json"]);
  expect(s.code, s.stdout + s.stderr).toBe(0);
  const id: string = JSON.parse(s.stdout).job_id;
  const wait = await w.mam(["job", "wait", id, "--timeout", "120"], 150_000);
  expect(wait.code, wait.stdout + wait.stderr + (await read(pane))).toBe(0);
  const st = JSON.parse((await w.mam(["job", "status", id, "--json"])).stdout);
  expect(st).toMatchObject({ status: "completed" });
  const jobTurns = w.api.turns("anthropic").filter((t) => t.lastUserText.includes(`Job ${id}`));
  expect(jobTurns.length).toBeGreaterThanOrEqual(1);
  // the whole header arrived in one message (bracketed paste), not line by line
  expect(jobTurns[0]!.lastUserText).toContain(`mam job event ${id} completed`);

  // stop: the agent goes, the row is resumable
  const stop = await w.mam(["stop", "worker"]);
  expect(stop.code, stop.stdout + stop.stderr).toBe(0);
  expect(rows(w).find((r) => r.name === "worker")).toMatchObject({ status: "stopped" });

  // resume: claude comes back with its own conversation
  const r = await w.mam(["resume", "worker"]);
  expect(r.code, r.stdout + r.stderr).toBe(0);
  const back = rows(w).find((x) => x.name === "worker");
  expect(back).toMatchObject({ status: "running" });
  const inputs = await h.inputs(back.pane.id);
  expect(inputs.some((i) => (i.text ?? "").includes("--resume"))).toBe(true);
  expect(await waitFor(async () => claudeFooter(await read(back.pane.id)), 30_000, 200)).toBe(true);
  expect(((await h.call("pane.get", { pane_id: back.pane.id })) as any).pane.agent).toBe("claude");
}, 300_000);

// a codex job (its login shell finds mam by the header's absolute path) is in grants.test.ts;
// this case covers what the fake herdr must carry: the TUI in a pty pane, agent start, the
// onboarding through agent prompt, stop and resume
test("the real codex in a fake herdr pane: create with onboarding, stop, resume", async () => {
  w = await realAgentWorld({ script: jobWorker() });
  const { sb } = w;
  installFakeHerdr(sb.bin);
  h = await startFakeHerdr(sb, { session: SERVER, env: w.env, settleMs: 3000 });
  const c = await w.mam(["create", "--agent", "codex", "--herdr-session", SERVER, "--session", "coder"]);
  expect(c.code, c.stdout + c.stderr).toBe(0);
  const row = rows(w).find((r) => r.name === "coder");
  expect(row).toMatchObject({ status: "running", agent: "codex", herdr_server: SERVER });
  expect(((await h.call("pane.get", { pane_id: row.pane.id })) as any).pane.agent).toBe("codex");
  expect(await waitFor(() => w!.api.turns("openai").length >= 1, 60_000, 200)).toBe(true);
  expect(w.api.turns("openai")[0]!.lastUserText).toContain("coder");
  const stop = await w.mam(["stop", "coder"]);
  expect(stop.code, stop.stdout + stop.stderr).toBe(0);
  expect(rows(w).find((r) => r.name === "coder")).toMatchObject({ status: "stopped" });
  const r = await w.mam(["resume", "coder"]);
  expect(r.code, r.stdout + r.stderr).toBe(0);
  const back = rows(w).find((x) => x.name === "coder");
  expect(back).toMatchObject({ status: "running" });
  expect(await waitFor(async () => ((await h!.call("pane.get", { pane_id: back.pane.id })) as any).pane.agent === "codex", 30_000, 200)).toBe(true);
  expect((await h.inputs(back.pane.id)).some((i) => /\bresume\b/.test(i.text ?? ""))).toBe(true);
  const home = w.codexHome;
  await h.stop();
  h = undefined;
  await w.cleanup();
  w = undefined;
  expect(codexDaemons(home)).toEqual([]);
}, 300_000);
