// What claude's and qwen's own records say about their start dialogs (issue 39 #0), with the real
// CLIs: in a folder claude does not trust (.claude.json) or with no qwen provider (settings.json),
// `mam create` types nothing even where it cannot see the dialog (the screen detector off,
// MAM_SCREEN_DETECT=0: before, mam typed the onboarding at once, into the dialog): one WARNING
// names the dialog, the onboarding is not sent, nothing is decided for the user. Once the records
// say there is no dialog, a create works as today (detector on): at its prompt, onboarding sent.
import { afterEach, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { jobWorker } from "../fakes/model-api/scripts.ts";
import { type RealAgentWorld, realAgentWorld, waitScreen } from "../helpers/real-agents.ts";
import { runMam } from "../helpers/mam.ts";
import { create, typedPart } from "../helpers/real-flow.ts";
import { waitFor } from "../helpers/sandbox.ts";

let w: RealAgentWorld | undefined;
afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

/** create with the screen detector off: only the agent's records can tell mam about the dialog */
async function createBlind(w: RealAgentWorld, agent: string, name: string, dialog: string, shows: RegExp): Promise<void> {
  const c = await runMam(["create", "--agent", agent, "--mux", "tmux", "--tmux-server", w.server, "--session", name, "--json"], { env: { ...w.env, MAM_SCREEN_DETECT: "0" }, cwd: w.sb.ws, timeoutMs: 120_000 });
  expect(c.code, c.stdout + c.stderr).toBe(0);
  const r = JSON.parse(c.stdout);
  const line = `WARNING: ${agent} waits at its "${dialog}" dialog in ${r.pane}: answer it there (tmux -L ${w.server} attach -t ${name}); the onboarding was not sent`;
  expect(c.stderr.split("\n").filter((l) => l.startsWith("WARNING"))).toEqual([line]);
  expect(r).toMatchObject({ at_prompt: false, waiting_at: `its "${dialog}" dialog`, onboarding: "not sent" });
  // the dialog comes, and stays: nothing was typed into it
  await waitScreen(w, `=${name}:`, (s) => shows.test(s), `the "${dialog}" dialog`, 60_000);
  await Bun.sleep(1500);
  expect(await w.screen(`=${name}:`)).toMatch(shows);
  expect(w.api.turns()).toHaveLength(0);
}

test("real claude: not trusted in .claude.json, the detector off: nothing typed, the trust dialog named; trusted: works as today", async () => {
  w = await realAgentWorld({ script: jobWorker(), trustClaude: false });
  const world = w;
  await createBlind(world, "claude", "cblind", "trust this folder", /Yes, I trust this folder/);
  expect(world.claudeConfig().projects?.[world.sb.ws]?.hasTrustDialogAccepted).not.toBe(true);
  const s = await world.mam(["stop", "cblind", "--hard"]);
  expect(s.code, s.stdout + s.stderr).toBe(0);
  // the user trusts the folder in claude's own config: a create types the onboarding, as before
  const cfg = world.claudeConfig();
  writeFileSync(join(world.claudeConfigDir, ".claude.json"), JSON.stringify({ ...cfg, projects: { ...cfg.projects, [world.sb.ws]: { hasTrustDialogAccepted: true } } }));
  const c = await create(world, "claude", "ctrust");
  expect(c, c.stderr).toMatchObject({ at_prompt: true, waiting_at: null, onboarding: "sent", warnings: [] });
  expect(await waitFor(() => world.api.turns("anthropic").length >= 1, 60_000, 100)).toBe(true);
  expect(typedPart(world.api.turns("anthropic")[0]!.lastUserText)).toStartWith("You are ctrust, a claude agent");
  await world.mam(["stop", "ctrust", "--hard"]);
}, 300_000);

test("real qwen: no provider in its settings or env, the detector off: nothing typed, its provider dialog named; a provider: works as today", async () => {
  w = await realAgentWorld({ script: jobWorker(), qwenProvider: false });
  const world = w;
  const settings = join(world.sb.with({}).HOME!, ".qwen", "settings.json");
  await createBlind(world, "qwen", "qblind", "connect a provider", /connect a provider/i);
  expect(existsSync(settings) ? JSON.parse(readFileSync(settings, "utf8")).security?.auth?.selectedType : undefined).toBeUndefined();
  const s = await world.mam(["stop", "qblind", "--hard"]);
  expect(s.code, s.stdout + s.stderr).toBe(0);
  // the user gives qwen a provider in its settings (its `env` holds the endpoint): as before
  const current = JSON.parse(readFileSync(settings, "utf8"));
  const env = { OPENAI_API_KEY: "mock-key", OPENAI_BASE_URL: `${world.api.url}/v1`, OPENAI_MODEL: "mock-model" };
  writeFileSync(settings, JSON.stringify({ ...current, security: { auth: { selectedType: "openai" } }, model: { name: "mock-model" }, env }));
  const c = await create(world, "qwen", "qprov");
  expect(c, c.stderr).toMatchObject({ at_prompt: true, waiting_at: null, onboarding: "sent", warnings: [] });
  expect(await waitFor(() => world.api.turns("chat").length >= 1, 60_000, 100)).toBe(true);
  expect(typedPart(world.api.turns("chat")[0]!.lastUserText)).toStartWith("You are qprov, a qwen agent");
  await world.mam(["stop", "qprov", "--hard"]);
}, 300_000);
