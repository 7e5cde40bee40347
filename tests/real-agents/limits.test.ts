// Usage limits (issue 34; docs/unattended.md) with the real Claude Code and Codex CLIs: the
// scripted endpoint answers 429 in each CLI's real shape (shared/reference/real-limits.md) in the
// middle of a job (after its `started`), and the workspace's daemon sees it from the agent's own
// records: `mam status --json` shows the agent's limit with the reset the endpoint sent, the job
// journals `limited` once. Then the endpoint answers again and the user does what a user does (the
// CLI's own limit dialog dismissed, `continue` typed): the job completes, `unlimited` once.
// Offline; no broker (the journals are the channel).
import { afterEach, expect, test } from "bun:test";
import { resumingWorker } from "../fakes/model-api/scripts.ts";
import { type ModelApi, type Refusal, startModelApi } from "../fakes/model-api/server.ts";
import { type RealAgentHost, realAgentHost, claudeFooter } from "../helpers/real-agents.ts";
import { anchoredPids, makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { TMUX_BIN } from "../helpers/tmux.ts";

const NO_BROKER = { MQTT_BROKER: "127.0.0.1", MQTT_PORT: "9" };

let sb: Sandbox | undefined;
let api: ModelApi | undefined;
let H: RealAgentHost | undefined;

afterEach(async () => {
  await H?.stop();
  await api?.stop();
  if (sb) {
    const root = sb.root;
    await waitFor(() => anchoredPids(root).length === 0, 10_000, 100);
    await sb.cleanup();
  }
  sb = api = H = undefined;
}, 60_000);

const iso = (epochS: number) => new Date(epochS * 1000).toISOString().replace(/\.000Z$/, "Z");
/** a job's events, its turn in the queue left out (it is queued first when the agent was still answering the onboarding) */
const events = (h: RealAgentHost, id: string) => h.journal(id).map((e) => e.event).filter((e) => e !== "queued" && e !== "dispatched");
const count = (h: RealAgentHost, id: string, ev: string) => events(h, id).filter((e) => e === ev).length;
const sessionOf = async (h: RealAgentHost, name: string) => JSON.parse(await h.ok(["status", "--json"])).sessions.find((s: { name: string }) => s.name === name);

/**
 * a world with one real agent `name` whose endpoint refuses with `refusal` from the job's second
 * step on (its `started` ran); the job's id once the daemon saw the limit, and the session's status
 */
async function limitedMidJob(agent: "claude" | "codex", name: string, refusal: Refusal, subscriber = false): Promise<{ h: RealAgentHost; job: string; limit: any }> {
  sb = makeSandbox("mam-rl-");
  const world = sb;
  let hit = false;
  const a = (api = startModelApi(
    resumingWorker({
      // after the continue it looks around first, as a model does (an agent's report closes the
      // limit on its job too: lib/ops/job/event.ts)
      onResume: "echo picking up",
      onStep: (step) => {
        if (step === 1 && !hit) {
          hit = true;
          a.refuse(refusal);
        }
      },
    }),
  ));
  const h = (H = realAgentHost(world.root, "hl", NO_BROKER, a, { subscriber }));
  // codex takes its time to show its prompt on a busy machine (more than create's 30 s was seen)
  const r = await h.mam(["create", "--agent", agent, "--role", "worker", "--session", name, "--mux", "tmux", "--tmux-server", h.tmux, "--json"], { MAM_PROMPT_WAIT_S: "90" }, 120_000);
  expect(r.code, r.stdout + r.stderr).toBe(0);
  expect(JSON.parse(r.stdout)).toMatchObject({ at_prompt: true, onboarding: "sent", warnings: [] });
  expect(await waitFor(() => a.turns().length >= 1, 60_000, 100)).toBe(true);
  const job = JSON.parse(await h.ok(["job", "submit", "--to", name, "--prompt", "Do the task in two steps", "--json"])).job_id as string;
  let s: any;
  const seen = await waitFor(async () => (s = await sessionOf(h, name))?.limit !== undefined, 60_000, 250);
  if (!seen) throw new Error(`${name} never limited: ${JSON.stringify(s)}\n${h.visible(name)}\n${h.log()}`);
  expect(hit).toBe(true);
  expect(await waitFor(() => count(h, job, "limited") === 1, 15_000, 100), `${events(h, job)}\n${h.log()}`).toBe(true);
  return { h, job, limit: s.limit };
}

/** the endpoint answers again, and the user types `continue` at the agent's prompt, as the CLIs want (a bare Enter sends nothing) */
async function recoverAndContinue(h: RealAgentHost, name: string, ready: (screen: string) => boolean): Promise<void> {
  api!.refuse(undefined);
  expect(await waitFor(() => ready(h.visible(name)), 30_000, 200), h.visible(name)).toBe(true);
  const before = api!.turns().length;
  const keys = (...k: string[]) => Bun.spawnSync([TMUX_BIN!, "-L", h.tmux, "send-keys", "-t", `=${name}:`, ...k], { env: h.env });
  keys("-l", "continue");
  // Enter again while the endpoint has seen no new turn (codex can drop an Enter right after typed text)
  for (let i = 0; i < 4 && api!.turns().length === before; i++) {
    await Bun.sleep(400);
    keys("Enter");
    await waitFor(() => api!.turns().length > before, 3000, 100);
  }
  expect(api!.turns().length, h.visible(name)).toBeGreaterThan(before);
}

const claudeAtPrompt = (s: string) => /^❯\s*$/m.test(s) && claudeFooter(s) && !s.includes("What do you want to do?");
const codexAtPrompt = (s: string) => /^› /m.test(s) && !s.includes("Approaching rate limits") && !s.includes("esc to interrupt");

test.skipIf(!TMUX_BIN)("real claude, a subscriber at its 5-hour limit: limited until the unified reset, the limit's options left alone; continue typed after: completed, unlimited once", async () => {
  // a reset on a whole minute: claude 2.1.197 prints it to the minute ("resets 9:07am (UTC)")
  const reset = Math.floor(Date.now() / 60_000) * 60 + 2 * 3600;
  const { h, job, limit } = await limitedMidJob("claude", "cl", { shape: "subscription", resetsAt: reset, claim: "five_hour" }, true);
  expect(limit).toEqual({ since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), resets_at: iso(reset), reason: expect.stringMatching(/^You've hit your (session|5-hour) limit · resets \d{1,2}(:\d\d)?[ap]m \(UTC\)$/), source: "records" });
  // claude 2.1.197 asks what to do (its /rate-limit-options): a dialog, and mam says so and types
  // nothing into it; 2.1.332 says it continues by itself at the reset (Esc cancels that)
  const options = () => h.visible("cl").includes("Stop and wait for limit to reset");
  const auto = () => /Continuing automatically at \d{1,2}(:\d\d)?[ap]m · Esc to cancel/.test(h.visible("cl"));
  expect(await waitFor(() => options() || auto(), 20_000, 200), h.visible("cl")).toBe(true);
  if (options()) expect((await sessionOf(h, "cl")).live).toBe("blocked");
  else expect(h.visible("cl")).toMatch(/^❯\s*$/m); // nothing typed into its prompt
  expect(JSON.parse(await h.ok(["job", "status", job, "--json"])).status).not.toBe("completed");
  // one request refused (2.1.197 retries no subscription 429), the side request beside it too
  expect(api!.requests.filter((r) => r.status === 429 && r.turn?.main)).toHaveLength(1);

  // the user: Esc on the options or the automatic continue (their own hints), then `continue` once the endpoint answers again
  Bun.spawnSync([TMUX_BIN!, "-L", h.tmux, "send-keys", "-t", "=cl:", "Escape"], { env: h.env });
  await recoverAndContinue(h, "cl", claudeAtPrompt);
  const waited = await h.mam(["job", "wait", job, "--timeout", "60"], {}, 70_000);
  expect(waited.code, `${waited.stdout}${waited.stderr}\n${h.visible("cl")}\n${h.log()}`).toBe(0);
  expect(await waitFor(async () => (await sessionOf(h, "cl")).limit === undefined, 15_000, 250)).toBe(true);
  expect(events(h, job)).toEqual(["started", "limited", "unlimited", "completed"]);
  const lim = h.journal(job).find((e) => e.event === "limited") as any;
  expect(lim.data).toMatchObject({ session: "cl", resets_at: iso(reset), source: "records" });
}, 120_000);

test.skipIf(!TMUX_BIN)("real codex at its usage limit: limited until its rollout's reset, to the second; continue typed after: completed, unlimited once", async () => {
  // any second: codex writes the header's reset (x-codex-primary-reset-at) into its rollout as it is;
  // its message names the day too when the reset is on another one ("try again at Dec 3rd, 2026 12:56 AM.")
  const reset = Math.floor(Date.now() / 1000) + 2 * 3600 + 17;
  const { h, job, limit } = await limitedMidJob("codex", "cx", { shape: "codex-usage", resetsAt: reset });
  expect(limit).toEqual({ since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), resets_at: iso(reset), reason: expect.stringMatching(/^You.ve hit your usage limit\. .*try again at (?:[A-Z][a-z]{2} \d{1,2}(?:st|nd|rd|th), \d{4} )?\d{1,2}:\d\d [AP]M\.$/), source: "records", used_percent: 100 });
  expect(api!.requests.filter((r) => r.status === 429 && r.turn?.main)).toHaveLength(1);
  // codex offers another model the first time usage runs high: a dialog, left alone
  if (h.visible("cx").includes("Approaching rate limits")) {
    expect(await waitFor(async () => (await sessionOf(h, "cx")).live === "blocked", 10_000, 250)).toBe(true);
    Bun.spawnSync([TMUX_BIN!, "-L", h.tmux, "send-keys", "-t", "=cx:", "Escape"], { env: h.env });
  }
  await recoverAndContinue(h, "cx", codexAtPrompt);
  const waited = await h.mam(["job", "wait", job, "--timeout", "60"], {}, 70_000);
  expect(waited.code, `${waited.stdout}${waited.stderr}\n${h.visible("cx")}\n${h.log()}`).toBe(0);
  expect(await waitFor(async () => (await sessionOf(h, "cx")).limit === undefined, 15_000, 250)).toBe(true);
  expect(events(h, job)).toEqual(["started", "limited", "unlimited", "completed"]);
}, 120_000);

test.skipIf(!TMUX_BIN)("real claude with an API key, 429 with retry-after 3600: one request, limited with its reset unknown (never guessed)", async () => {
  const { h, job, limit } = await limitedMidJob("claude", "ck", { shape: "api-key", retryAfter: 3600 });
  expect(limit).toEqual({
    since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    resets_at: null,
    reason: "API Error: Request rejected (429) · This request would exceed your account's rate limit. Please try again later.",
    source: "records",
  });
  expect(api!.requests.filter((r) => r.status === 429 && r.turn?.main)).toHaveLength(1);
  expect(h.visible("ck")).toContain("API Error: Request rejected (429)");
  expect((await h.ok(["status"]))).toMatch(/ck is limited \(reset unknown\)/);
  expect(events(h, job)).toEqual(["started", "limited"]);
}, 120_000);

/**
 * a job to `from` (a real claude or codex) with --failover naming the other kind: its vendor's
 * endpoint refuses it after the job's `started` (`refusal` on `fromApi` only); the job moves to
 * the other agent, which completes it
 */
async function failsOver(from: { agent: "claude" | "codex"; name: string; api: "anthropic" | "openai" }, to: { agent: "claude" | "codex"; name: string; api: "anthropic" | "openai" }, refusal: Refusal): Promise<void> {
  sb = makeSandbox("mam-fo-");
  const world = sb;
  let hit = false;
  const a = (api = startModelApi(
    resumingWorker({
      onStep: (step) => {
        // the first agent's account reaches its limit after the job's `started`; the other's answers on
        if (step === 1 && !hit) {
          hit = true;
          a.refuse(refusal, from.api);
        }
      },
    }),
  ));
  const h = (H = realAgentHost(world.root, "hf", NO_BROKER, a, { subscriber: true }));
  for (const [agent, name, role] of [[from.agent, from.name, "worker"], [to.agent, to.name, "backup"]] as const) {
    const r = await h.mam(["create", "--agent", agent, "--role", role, "--session", name, "--mux", "tmux", "--tmux-server", h.tmux, "--json"], { MAM_PROMPT_WAIT_S: "90" }, 120_000);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ at_prompt: true, onboarding: "sent" });
  }
  expect(await waitFor(() => a.turns(from.api).length >= 1 && a.turns(to.api).length >= 1, 60_000, 100)).toBe(true);
  const toBefore = a.turns(to.api).length;
  const job = JSON.parse(await h.ok(["job", "submit", "--to", from.name, "--failover", to.agent, "--prompt", "Do the task in two steps", "--json"])).job_id as string;
  const waited = await h.mam(["job", "wait", job, "--timeout", "150"], {}, 170_000);
  expect(waited.code, `${waited.stdout}${waited.stderr}\n${events(h, job)}\n${h.visible(from.name)}\n${h.visible(to.name)}\n${h.log()}`).toBe(0);
  expect(hit).toBe(true);
  for (const ev of ["limited", "failover", "completed"]) expect(count(h, job, ev), `${ev}: ${events(h, job)}`).toBe(1);
  const ev = events(h, job);
  expect(ev.indexOf("limited")).toBeLessThan(ev.indexOf("failover"));
  expect(ev.indexOf("failover")).toBeLessThan(ev.indexOf("completed"));
  const fo = h.journal(job).find((e) => e.event === "failover") as any;
  expect(fo.data).toMatchObject({ from: from.name, to: to.name });
  expect(h.journal(job).find((e) => e.event === "completed")!.source).toBe(to.name);
  expect(JSON.parse(await h.ok(["job", "status", job, "--json"]))).toMatchObject({ status: "completed", agent_session: to.name, agent: to.agent });
  // the other agent got the job with why it came and what the first had reported: one turn carries it
  const got = a.turns(to.api).slice(toBefore).filter((t) => t.userTexts.some((u) => u.includes(`[mam] Job ${job} comes to you (${to.name}) from ${from.name}, which reached a usage limit`) && u.includes(`${from.name} (started): starting the job`)));
  expect(got.length, JSON.stringify(a.turns(to.api).slice(toBefore).map((t) => t.lastUserText.slice(0, 200)))).toBeGreaterThan(0);
  // the first agent's own limit screen was left alone: one refused main request, nothing typed after it
  expect(a.requests.filter((r) => r.status === 429 && r.turn?.main && r.api === from.api)).toHaveLength(1);
  expect(h.log()).toContain(`limits: ${from.name} is limited until`);
}

test.skipIf(!TMUX_BIN)("real claude at its 5-hour limit with --failover codex: the job moves to the real codex, which completes it; limited, failover, completed once each, nothing typed into claude's limit dialog", async () => {
  await failsOver({ agent: "claude", name: "cl", api: "anthropic" }, { agent: "codex", name: "cx", api: "openai" }, { shape: "subscription", resetsAt: Math.floor(Date.now() / 60_000) * 60 + 2 * 3600, claim: "five_hour" });
}, 240_000);

test.skipIf(!TMUX_BIN)("real codex at its usage limit with --failover claude: the job moves to the real claude, which completes it; limited, failover, completed once each", async () => {
  await failsOver({ agent: "codex", name: "cx", api: "openai" }, { agent: "claude", name: "cl", api: "anthropic" }, { shape: "codex-usage", resetsAt: Math.floor(Date.now() / 1000) + 2 * 3600 + 17 });
}, 240_000);
