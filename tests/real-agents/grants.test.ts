// mam's grants with the real Claude Code (npm run test:agents): mam is run by absolute path, as a
// user who downloaded it runs it (no mam on any PATH), so the job header names that path; the
// grants `mam create` gives claude (--allowedTools=Bash(<that path> job event:*), …) let claude
// run the header's commands without a dialog, also when the path must be quoted. With
// --no-grant the same command stops at claude's permission dialog. codex gets no grant and
// needs none in a trusted folder: its login shell finds mam by that path. The test presses no key.
import { afterEach, expect, test } from "bun:test";
import { copyFileSync, existsSync, linkSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { jobWorker } from "../fakes/model-api/scripts.ts";
import { MAM_BIN } from "../helpers/mam.ts";
import { type RealAgentWorld, realAgentWorld, waitScreen, claudeFooter } from "../helpers/real-agents.ts";

let w: RealAgentWorld | undefined;
afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

type Ev = { event: string; source: string; detail: string };

async function createClaude(w: RealAgentWorld, name: string, extra: string[] = []): Promise<{ pane: string; start_command: string }> {
  const r = await w.mam(["create", "--agent", "claude", "--mux", "tmux", "--tmux-server", w.server, "--session", name, "--no-onboard", "--json", ...extra]);
  expect(r.code, `${r.stdout}${r.stderr}`).toBe(0);
  const c = JSON.parse(r.stdout) as { pane: string; start_command: string };
  await waitScreen(w, c.pane, claudeFooter, "claude's prompt box", 60_000);
  return c;
}

function journal(w: RealAgentWorld, id: string): Ev[] {
  const f = join(w.sb.ws, ".mam", "jobs", `${id}.events.ndjson`);
  const text = existsSync(f) ? readFileSync(f, "utf8").trim() : "";
  return text ? text.split("\n").map((l) => JSON.parse(l) as Ev) : [];
}

/** the shell commands the scripted model had claude run */
function ranCommands(w: RealAgentWorld): string[] {
  return w.api.requests.map((q) => q.reply?.shell).filter((s): s is string => s !== undefined);
}

for (const [label, spaced] of [
  ["its absolute path", false],
  ["an absolute path that needs quoting (a folder with a space)", true],
] as const) {
  test(`granted: claude runs the header's commands, named by ${label}, without a dialog; the job completes`, async () => {
    w = await realAgentWorld({ script: jobWorker({ detail: "done: granted" }), env: { MAM_NO_SUBSCRIBER_DAEMON: "1" } });
    let mam = MAM_BIN!;
    if (spaced) {
      // the same binary in a folder with a space (a hard link or a copy: not a symlink, whose target is what runs)
      const dir = join(w.sb.root, "my downloads");
      mkdirSync(dir);
      mam = join(dir, "mam");
      try {
        linkSync(MAM_BIN!, mam);
      } catch {
        copyFileSync(MAM_BIN!, mam);
      }
    }
    const world = w;
    const run = async (args: string[]) => {
      const p = Bun.spawn([mam, ...args], { env: world.env, cwd: world.sb.ws, stdout: "pipe", stderr: "pipe" });
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      return { code, stdout: out, stderr: err };
    };
    const words = spaced ? `'${mam}'` : mam;
    const r = await run(["create", "--agent", "claude", "--mux", "tmux", "--tmux-server", world.server, "--session", "wrk", "--no-onboard", "--json"]);
    expect(r.code, `${r.stdout}${r.stderr}`).toBe(0);
    const c = JSON.parse(r.stdout) as { pane: string; start_command: string };
    expect(c.start_command).toContain(`job event:*)`);
    await waitScreen(world, c.pane, claudeFooter, "claude's prompt box", 60_000);

    const sub = await run(["job", "submit", "--to", "wrk", "--prompt", "say hello"]);
    expect(sub.code, sub.stderr).toBe(0);
    const id = sub.stdout.trim();
    const wait = await run(["job", "wait", id, "--timeout", "90"]);
    expect(wait.code, `${wait.stdout}${wait.stderr}\n${await world.screen(c.pane)}`).toBe(0);
    expect(journal(world, id).map((e) => [e.event, e.source, e.detail])).toEqual([
      ["started", "wrk", "starting the job"],
      ["completed", "wrk", "done: granted"],
    ]);
    // the commands claude ran were the header's, naming mam as the grants do
    const ran = ranCommands(world);
    expect(ran).toHaveLength(2);
    for (const cmd of ran) expect(cmd).toStartWith(`${words} job event ${id} `);
    expect(await world.screen(c.pane)).not.toContain("Do you want to proceed?");
  }, 240_000);
}

test("--no-grant: the header's own command stops at claude's permission dialog", async () => {
  w = await realAgentWorld({ script: jobWorker(), env: { MAM_NO_SUBSCRIBER_DAEMON: "1" } });
  const world = w;
  // the permission mode that asks: claude 2.1.332 starts in auto mode, where this command runs unasked
  const c = await createClaude(world, "asks", ["--no-grant", "--", "--permission-mode", "default"]);
  expect(c.start_command).not.toContain("--allowedTools");
  const sub = await world.mam(["job", "submit", "--to", "asks", "--prompt", "say hello"]);
  expect(sub.code, sub.stderr).toBe(0);
  const id = sub.stdout.trim();
  const screen = await waitScreen(world, c.pane, (s) => s.includes("Do you want to proceed?"), "claude's permission dialog", 60_000);
  expect(screen).toContain(`job event ${id} started`);
  // nothing ran: the job was never started
  expect(journal(world, id).map((e) => e.event)).toEqual([]);
  expect((await world.mam(["stop", "asks", "--hard"])).code).toBe(0);
}, 240_000);

test("codex: no grant; in a trusted folder it runs the header's commands, named by mam's absolute path, without asking", async () => {
  w = await realAgentWorld({ script: jobWorker({ detail: "done: codex" }), env: { MAM_NO_SUBSCRIBER_DAEMON: "1" } });
  const world = w;
  const r = await world.mam(["create", "--agent", "codex", "--mux", "tmux", "--tmux-server", world.server, "--session", "cx", "--no-onboard", "--json"]);
  expect(r.code, `${r.stdout}${r.stderr}`).toBe(0);
  const c = JSON.parse(r.stdout) as { pane: string; start_command: string };
  expect(c.start_command).toBe("codex -c notice.hide_rate_limit_model_nudge=true");
  await waitScreen(world, c.pane, (s) => s.includes("› ") && s.includes("? for shortcuts"), "codex's prompt", 60_000);
  const sub = await world.mam(["job", "submit", "--to", "cx", "--prompt", "say hello"]);
  expect(sub.code, sub.stderr).toBe(0);
  const id = sub.stdout.trim();
  const wait = await world.mam(["job", "wait", id, "--timeout", "90"]);
  expect(wait.code, `${wait.stdout}${wait.stderr}\n${await world.screen(c.pane)}`).toBe(0);
  expect(journal(world, id).map((e) => [e.event, e.detail])).toEqual([
    ["started", "starting the job"],
    ["completed", "done: codex"],
  ]);
  expect(ranCommands(world)).toHaveLength(2);
  for (const cmd of ranCommands(world)) expect(cmd).toStartWith(`${MAM_BIN} job event ${id} `);
}, 240_000);
