// What the agent's own records say about its start dialogs (issue 39 item 0): gemini's folder
// trust (~/.gemini/settings.json, trustedFolders.json) and claude's .claude.json
// (hasCompletedOnboarding, hasTrustDialogAccepted). While they say a dialog will come, `mam
// create` types nothing, however the screen looks (a TUI may draw its input box before its dialog,
// for longer than any wait on a loaded machine: the real gemini once got an onboarding typed into
// its trust dialog, which saved TRUST_PARENT for the user), and says what the agent waits at. Once
// they say no dialog comes, the onboarding goes as before. The fake agents (tests/fakes/agents) draw
// no dialog and echo what they get, so anything typed shows; the screen detector is off for claude,
// so only its records can tell. The real CLIs under load: tests/real-agents/gemini-trust-load and
// start-records.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { installFakeAgents } from "../helpers/herdr.ts";
import { type RunResult, run, runMam } from "../helpers/mam.ts";
import { makeSandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "../helpers/tmux.ts";

if (!TMUX_BIN) throw new Error("tmux is not installed: these tests need a real tmux (apt install tmux); they are not skipped on purpose");

const sb = makeSandbox("mam-srec-");
const server = tmuxServerName("mamsrec");
const claudeDir = join(sb.root, "claude-config");
const env = sb.with({ TMUX_TMPDIR: sb.root, MAM_AGENT_SETTLE_S: "0.3", CLAUDE_CONFIG_DIR: claudeDir });

const mam = (args: string[], more: Record<string, string> = {}) => runMam([...args, "--workspace", sb.ws], { env: { ...env, ...more }, cwd: sb.ws, timeoutMs: 60_000 });
const screen = async (name: string) => (await run([TMUX_BIN!, "-L", server, "capture-pane", "-p", "-J", "-t", `=${name}:`, "-S", "-100"], { env })).stdout;

async function create(agent: string, name: string, more: Record<string, string> = {}): Promise<{ r: RunResult; doc: Record<string, unknown> }> {
  const r = await mam(["create", "--agent", agent, "--mux", "tmux", "--tmux-server", server, "--session", name, "--json"], more);
  expect(r.code, r.stdout + r.stderr).toBe(0);
  return { r, doc: JSON.parse(r.stdout) };
}

/** nothing of mam's was typed: the fake agent echoes every line it gets as "got: …" */
async function nothingTyped(name: string): Promise<void> {
  await Bun.sleep(1000);
  const s = await screen(name);
  expect(s).not.toContain("got:");
  expect(s).not.toContain(`You are ${name}`);
}

beforeAll(() => {
  installFakeAgents(sb.bin, ["gemini", "claude"]);
});

afterAll(async () => {
  await killTmuxServer(server, env, sb.root);
  await sb.cleanup();
});

describe("the agent's records say a start dialog comes: nothing is typed", () => {
  test("gemini: folder trust on (its default) and no rule for the folder: waits at its trust dialog, no onboarding; a TRUST_FOLDER rule: the onboarding goes", async () => {
    const { r, doc } = await create("gemini", "g1");
    const at = 'its "trust this folder" dialog';
    expect(doc).toMatchObject({ at_prompt: false, waiting_at: at, onboarding: "not sent" });
    expect(r.stderr).toContain(`WARNING: gemini waits at ${at} in ${doc.pane}: answer it there (tmux -L ${server} attach -t g1); the onboarding was not sent`);
    await nothingTyped("g1");
    // folder trust off in the user's settings: gemini asks nothing
    mkdirSync(join(sb.home, ".gemini"), { recursive: true });
    writeFileSync(join(sb.home, ".gemini", "settings.json"), JSON.stringify({ security: { folderTrust: { enabled: false } } }));
    const off = await create("gemini", "g2");
    expect(off.doc).toMatchObject({ waiting_at: null, onboarding: "sent" });
    // folder trust on again, and the folder trusted by its rule
    writeFileSync(join(sb.home, ".gemini", "settings.json"), JSON.stringify({ security: { folderTrust: { enabled: true } } }));
    writeFileSync(join(sb.home, ".gemini", "trustedFolders.json"), JSON.stringify({ [sb.ws]: "TRUST_FOLDER" }));
    const trusted = await create("gemini", "g3");
    expect(trusted.doc).toMatchObject({ waiting_at: null, onboarding: "sent" });
    expect(trusted.r.stderr).not.toContain("WARNING");
    expect(await waitFor(async () => (await screen("g3")).includes("got: "), 10_000, 100), await screen("g3")).toBe(true);
  }, 90_000);

  test("claude (the screen detector off): onboarding not done, then the folder not trusted: nothing typed, the dialog named; trusted: the onboarding goes", async () => {
    const blind = { MAM_SCREEN_DETECT: "0" };
    mkdirSync(claudeDir, { recursive: true });
    const config = (o: Record<string, unknown>) => writeFileSync(join(claudeDir, ".claude.json"), JSON.stringify(o));
    config({ hasCompletedOnboarding: false });
    const first = await create("claude", "c1", blind);
    expect(first.doc).toMatchObject({ at_prompt: false, waiting_at: 'its "first-run setup" dialog', onboarding: "not sent" });
    await nothingTyped("c1");
    config({ hasCompletedOnboarding: true, projects: { [sb.ws]: { hasTrustDialogAccepted: false } } });
    const untrusted = await create("claude", "c2", blind);
    expect(untrusted.doc).toMatchObject({ at_prompt: false, waiting_at: 'its "trust this folder" dialog', onboarding: "not sent" });
    expect(untrusted.r.stderr).toContain(`WARNING: claude waits at its "trust this folder" dialog in ${untrusted.doc.pane}: answer it there (tmux -L ${server} attach -t c2); the onboarding was not sent`);
    await nothingTyped("c2");
    config({ hasCompletedOnboarding: true, projects: { [sb.ws]: { hasTrustDialogAccepted: true } } });
    const trusted = await create("claude", "c3", blind);
    expect(trusted.doc).toMatchObject({ waiting_at: null, onboarding: "sent" });
    expect(await waitFor(async () => (await screen("c3")).includes("got: "), 10_000, 100), await screen("c3")).toBe(true);
  }, 90_000);
});
