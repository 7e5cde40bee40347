// Issue 11's done-when with the real CLIs on tmux (npm run test:agents): mam creates the agent,
// waits for its input prompt, sends the onboarding as one message, and a delegated job ends
// `completed` through the agent's own `mam job event` commands, with no key pressed by the test
// and no `mam` on the test's PATH (mam names its own path in the texts it types, and grants
// claude exactly its reporting commands). A first-run trust dialog is left for the user.
import { afterEach, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { jobWorker } from "../fakes/model-api/scripts.ts";
import { codexDaemons, type RealAgentWorld, realAgentWorld } from "../helpers/real-agents.ts";
import { create, createAtDialog, delegate, journal, row, typedPart } from "../helpers/real-flow.ts";
import { waitFor } from "../helpers/sandbox.ts";

let w: RealAgentWorld | undefined;
afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

test("real claude on tmux, mam not on PATH: onboarding as one message, a job completed with no key pressed; stop → resume keeps the conversation", async () => {
  w = await realAgentWorld({ script: jobWorker({ detail: "done: job finished" }) });
  expect(Bun.which("mam", { PATH: w.env.PATH })).toBeNull();
  const c = await create(w, "claude", "wrk");
  expect(c).toMatchObject({ at_prompt: true, waiting_at: null, onboarding: "sent", warnings: [] });
  expect(c.stderr).not.toContain("WARNING");
  // the onboarding reached the model whole, as one message, once
  expect(await waitFor(() => w!.api.turns("anthropic").length >= 1, 30_000, 100)).toBe(true);
  const onboard = w.api.turns("anthropic");
  expect(onboard).toHaveLength(1);
  expect(typedPart(onboard[0]!.lastUserText)).toStartWith("You are wrk, a claude agent");
  expect(typedPart(onboard[0]!.lastUserText)).toContain(`Reply "ready" when you have read this.`);
  // claude may run exactly mam's reporting commands without asking, by the path mam names
  expect(row(w, "wrk").start_command).toContain("--allowedTools");

  const id = await delegate(w, "wrk", "say hello");
  expect(journal(w, id).map((e) => e.event)).toEqual(["started", "completed"]);
  expect(journal(w, id).every((e) => e.source === "wrk")).toBe(true);
  const header = w.api.turns("anthropic").find((t) => t.lastUserText.includes(`Job ${id} delegated`))!;
  // the header arrived as one message and names a mam the agent's shell finds
  expect(header.lastUserText).toContain(`job event ${id} completed`);
  expect(w.api.requests.some((r) => r.reply?.shell?.includes(`job event ${id} completed`))).toBe(true);
  // no permission dialog ever showed: the events ran without a key
  expect(await w.screen("=wrk:")).not.toContain("Do you want to proceed?");

  // stop records the conversation; resume brings it back, and the next job's request carries
  // the earlier messages
  const stop = await w.mam(["stop", "wrk"]);
  expect(stop.code, stop.stdout + stop.stderr).toBe(0);
  const sid = row(w, "wrk").claude_session_id_own as string;
  expect(sid).toMatch(/^[0-9a-f-]{36}$/);
  const r = await w.mam(["resume", "wrk", "--json"]);
  expect(r.code, r.stdout + r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ from: "own", session_id: sid, at_prompt: true, waiting_at: null });
  expect(row(w, "wrk").start_command).toContain(`--resume ${sid}`);
  const id2 = await delegate(w, "wrk", "say hello again");
  const next = w.api.turns("anthropic").find((t) => t.lastUserText.includes(`Job ${id2} delegated`))!;
  expect(next.userTexts.some((u) => u.includes(`Job ${id} delegated`))).toBe(true);
  expect(next.userTexts.some((u) => typedPart(u).startsWith("You are wrk"))).toBe(true);
}, 300_000);

test("real claude in a folder it does not trust: the trust dialog is left untouched, create names it, a job is refused", async () => {
  w = await realAgentWorld({ script: jobWorker(), trustClaude: false });
  // the dialog is still there, nothing reached the model, the folder is still not trusted
  const c = await createAtDialog(w, "claude", "dlg", "trust this folder", /trust this folder/i);
  expect(row(w, "dlg")).toMatchObject({ status: "running", agent: "claude" });
  expect(w.claudeConfig().projects?.[w.sb.ws]?.hasTrustDialogAccepted).not.toBe(true);
  const st = JSON.parse((await w.mam(["status", "--json"])).stdout).sessions.find((s: any) => s.name === "dlg");
  expect(st).toMatchObject({ live: "blocked", dialog: "start" });
  // a job now would answer the dialog: refused, nothing written
  const s = await w.mam(["job", "submit", "--to", "dlg", "--prompt", "x"]);
  expect(s.code).toBe(1);
  expect(s.stderr).toContain(`ERROR: session 'dlg' waits at its "trust this folder" dialog in ${c.pane}`);
  const jobs = join(w.sb.ws, ".mam", "jobs");
  expect(existsSync(jobs) ? readdirSync(jobs) : []).toEqual([]);
  expect(w.claudeConfig().projects?.[w.sb.ws]?.hasTrustDialogAccepted).not.toBe(true);
}, 180_000);

test("real codex on tmux (custom provider, trusted folder): onboarding as one message, a job completed with no key pressed", async () => {
  w = await realAgentWorld({ script: jobWorker({ detail: "done: job finished" }) });
  const c = await create(w, "codex", "cdx");
  expect(c).toMatchObject({ at_prompt: true, onboarding: "sent", warnings: [] });
  expect(await waitFor(() => w!.api.turns("openai").length >= 1, 30_000, 100)).toBe(true);
  const onboard = w.api.turns("openai");
  expect(onboard).toHaveLength(1);
  expect(typedPart(onboard[0]!.lastUserText)).toStartWith("You are cdx, a codex agent");
  expect(typedPart(onboard[0]!.lastUserText)).toContain(`Reply "ready" when you have read this.`);
  const id = await delegate(w, "cdx", "say hello");
  expect(journal(w, id).map((e) => e.event)).toEqual(["started", "completed"]);
  // the header was its own message, not appended to the onboarding
  const header = w.api.turns("openai").find((t) => t.lastUserText.includes(`Job ${id} delegated`))!;
  expect(typedPart(header.lastUserText)).toStartWith(`[mam] Job ${id}`);
  const home = w.codexHome;
  await w.cleanup();
  w = undefined;
  expect(codexDaemons(home)).toEqual([]);
}, 300_000);

for (const c of [
  {
    what: "a git repository it does not trust: its trust dialog",
    dialog: "trust this folder",
    // codex asks about trust in a git repository
    prepare: (w: RealAgentWorld) => void Bun.spawnSync(["git", "init", "-q", w.sb.ws]),
    shows: /trust this folder/i,
    trust: false,
  },
  {
    what: "no credentials: its sign-in menu",
    dialog: "sign-in",
    // a trusted folder and no model provider: codex wants an account
    prepare: (w: RealAgentWorld) => writeFileSync(join(w.codexHome, "config.toml"), `[projects."${w.sb.ws}"]\ntrust_level = "trusted"\n`),
    shows: /sign in with chatgpt/i,
    trust: true,
  },
]) {
  test(`real codex in ${c.what} is left untouched and named`, async () => {
    w = await realAgentWorld({ script: jobWorker(), trustCodex: c.trust });
    c.prepare(w);
    const cfg = readFileSync(join(w.codexHome, "config.toml"), "utf8");
    await createAtDialog(w, "codex", "cdt", c.dialog, c.shows);
    // nothing was decided for the user: no trust decision saved (codex adds only its own [tui]
    // bookkeeping to config.toml), no sign-in
    const trusts = (t: string) => (t.match(/trust_level/g) ?? []).length;
    expect(trusts(readFileSync(join(w.codexHome, "config.toml"), "utf8"))).toBe(trusts(cfg));
    expect(existsSync(join(w.codexHome, "auth.json"))).toBe(false);
    const home = w.codexHome;
    await w.cleanup();
    w = undefined;
    expect(codexDaemons(home)).toEqual([]);
  }, 180_000);
}
