// Issue 12's done-when with the real claude (npm run test:agents): on tmux, mam sees claude
// waiting at its Bash permission dialog (status says blocked within 2 s, the job gets one
// permission_required naming the command, and after the user approves the job completes); and
// with `mam hooks install claude`, claude's own hooks report its session id and its state
// (checked with the screen detector off).
import { afterEach, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { eventLine, isJobText, withDetail } from "../fakes/model-api/scripts.ts";
import type { Turn } from "../fakes/model-api/server.ts";
import { startSubscriber } from "../helpers/daemon.ts";
import { MAM_CMD } from "../helpers/mam.ts";
import { type RealAgentWorld, realAgentWorld, typeAndSubmit, waitScreen, claudeFooter } from "../helpers/real-agents.ts";
import { waitFor } from "../helpers/sandbox.ts";

let w: RealAgentWorld | undefined;
afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

type Sess = { name: string; live: string; reason?: string; dialog?: string; live_source?: string };

/**
 * a user's own allow rule in the workspace (mam hooks install keeps it); mam's grants let claude
 * run the header's `<mam> job event` lines, so only the test's own command asks
 */
function prepare(w: RealAgentWorld): void {
  mkdirSync(join(w.sb.ws, ".claude"), { recursive: true });
  writeFileSync(join(w.sb.ws, ".claude", "settings.local.json"), `${JSON.stringify({ permissions: { allow: ["Bash(mam job event:*)"] } }, null, 2)}\n`);
}

async function live(w: RealAgentWorld, name: string): Promise<Sess> {
  const r = await w.mam(["status", "--json"]);
  if (r.code !== 0) throw new Error(`status exited ${r.code}: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { sessions: Sess[] }).sessions.find((s) => s.name === name)!;
}

async function createClaude(w: RealAgentWorld, name: string): Promise<string> {
  // claude 2.1.332 runs in auto mode by default (no dialog for most commands): the mode that asks, in every version
  const r = await w.mam(["create", "--agent", "claude", "--mux", "tmux", "--tmux-server", w.server, "--session", name, "--no-onboard", "--", "--permission-mode", "default"]);
  if (r.code !== 0) throw new Error(`create exited ${r.code}: ${r.stdout}${r.stderr}`);
  const pane = `=${name}:`;
  await waitScreen(w, pane, claudeFooter, "claude's prompt box", 60_000);
  return pane;
}

test("real claude at its Bash permission dialog: status blocked within 2 s, one permission_required naming the command, approved → completed", async () => {
  const command = "touch made-by-claude.txt";
  w = await realAgentWorld({
    script: (t: Turn) => {
      if (!isJobText(t)) return { text: "ready" };
      const steps = [withDetail(eventLine(t.lastUserText, "started")!, "starting"), command, withDetail(eventLine(t.lastUserText, "completed")!, "made the file")];
      return t.toolOutputs.length < steps.length ? { shell: steps[t.toolOutputs.length] } : { text: "job done" };
    },
  });
  prepare(w);
  const world = w;
  const pane = await createClaude(world, "wrk");
  const log = join(world.sb.root, "daemon.log");
  const d = startSubscriber(world.sb, log, { ...world.env, MQTT_BROKER: "127.0.0.1", MQTT_PORT: "9" });
  try {
    const sub = await world.mam(["job", "submit", "--to", "wrk", "--prompt", "make the file"]);
    expect(sub.code).toBe(0);
    const id = sub.stdout.trim();
    await waitScreen(world, pane, (s) => s.includes("Do you want to proceed?") && s.includes(command), "the Bash permission dialog", 60_000);
    const t0 = Date.now();
    let seen: Sess | undefined;
    expect(await waitFor(async () => (seen = await live(world, "wrk")).live === "blocked", 2000, 50)).toBe(true);
    expect(Date.now() - t0).toBeLessThanOrEqual(2000);
    expect(seen).toMatchObject({ live: "blocked", dialog: "permission", live_source: "screen" });
    expect(seen!.reason).toContain(command);
    const journal = () =>
      readFileSync(join(world.sb.ws, ".mam", "jobs", `${id}.events.ndjson`), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { event: string; detail: string; source: string });
    const perms = () => journal().filter((e) => e.event === "permission_required");
    expect(await waitFor(() => perms().length > 0, 10_000, 100)).toBe(true);
    expect(perms()[0]!.detail).toContain(command);
    expect(perms()[0]!.source).toBe("monitor");
    // the user approves (option 1 is selected): the command runs and the job goes on
    await world.tmux(["send-keys", "-t", pane, "Enter"]);
    const wait = await world.mam(["job", "wait", id, "--timeout", "90"]);
    expect(wait.code).toBe(0);
    expect(journal().map((e) => e.event)).toEqual(["started", "permission_required", "completed"]);
    expect(readdirSync(world.sb.ws)).toContain("made-by-claude.txt");
  } finally {
    await d.kill();
  }
}, 240_000);

test("mam hooks install claude: a real claude reports its session id (source hook) and its states, the screen detector off", async () => {
  w = await realAgentWorld({ script: (t: Turn) => ({ text: `answer to ${t.lastUserText.split("\n").pop()}`, delayMs: t.lastUserText.includes("slow") ? 4000 : 0 }) });
  prepare(w);
  const world = w;
  const inst = await world.mam(["hooks", "install", "claude"]);
  expect(inst.code).toBe(0);
  // the user's own permission stays beside mam's hooks
  const settings = JSON.parse(readFileSync(join(world.sb.ws, ".claude", "settings.local.json"), "utf8"));
  expect(settings.permissions.allow).toEqual(["Bash(mam job event:*)"]);
  expect(Object.keys(settings.hooks)).toContain("SessionStart");
  const pane = await createClaude(world, "hk");
  const reg = () => (Bun.YAML.parse(readFileSync(join(world.sb.ws, ".mam", "agent-sessions.yaml"), "utf8")) as { tmux_sessions: Record<string, unknown>[] }).tmux_sessions[0]!;
  // create's own reconcile pass or the hook itself puts the id in the row; a reconcile (the daemon's) at the latest
  expect(await waitFor(async () => reg().session_id_source === "hook" || ((await world.mam(["reconcile"])).code === 0 && reg().session_id_source === "hook"), 20_000, 500)).toBe(true);
  const sid = reg().claude_session_id_own as string;
  expect(String((reg().pane as Record<string, unknown>).cmd_full)).toContain(`--session-id ${sid}`); // the id create gave it, confirmed by claude

  const off = { ...world.env, MAM_SCREEN_DETECT: "0" };
  const status = async () => {
    const r = await Bun.spawn([...MAM_CMD, "status", "--json"], { env: off, cwd: world.sb.ws, stdout: "pipe" });
    return (JSON.parse(await new Response(r.stdout).text()) as { sessions: Sess[] }).sessions[0]!;
  };
  expect(await waitFor(async () => (await status()).live === "idle", 10_000, 200)).toBe(true);
  expect((await status()).live_source).toBe("hook");
  await typeAndSubmit(world, pane, "a slow question");
  expect(await waitFor(async () => (await status()).live === "working", 10_000, 100)).toBe(true);
  await waitScreen(world, pane, (s) => s.includes("answer to a slow question"), "the answer", 30_000);
  expect(await waitFor(async () => (await status()).live === "idle", 10_000, 100)).toBe(true);
  // claude's conversation file (written with the first message) has the reported id
  const convs = readdirSync(join(world.claudeConfigDir, "projects"), { recursive: true }).map(String);
  expect(convs.some((f) => f.endsWith(`${sid}.jsonl`))).toBe(true);
}, 240_000);
