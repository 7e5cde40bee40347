// Usage of a claude whose records are not where the daemon would look (issue 39 #3): the user's
// daemon runs from a shell without CLAUDE_CONFIG_DIR, and `mam create` starts the real claude with
// CLAUDE_CONFIG_DIR at a fresh config folder (onboarding done, the key approved, the folder
// trusted). The meter must find that claude's conversation by the agent's own environment, and
// count its three answers; before, it looked under ~/.claude and showed the job's usage as 0 / not
// metered.
import { afterEach, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { jobWorker } from "../fakes/model-api/scripts.ts";
import { runMam } from "../helpers/mam.ts";
import { type RealAgentWorld, realAgentWorld } from "../helpers/real-agents.ts";
import { waitFor } from "../helpers/sandbox.ts";

let w: RealAgentWorld | undefined;
afterEach(async () => {
  if (w) await w.mam(["daemon", "stop"]);
  await w?.cleanup();
  w = undefined;
});

test("real claude with CLAUDE_CONFIG_DIR set for the agent only: the job's three answers are counted (not a known 0), from the daemon of another shell", async () => {
  const inner = jobWorker({ detail: "done" });
  w = await realAgentWorld({
    script: (t) => ({ ...inner(t), usage: { input: 1013, output: 37, cache_write: 0, cache_read: 0 } }),
    env: { MAM_NO_SUBSCRIBER_DAEMON: "0", RECONCILE_POLL_INTERVAL: "1" },
  });
  // the daemon: started from a shell that has no CLAUDE_CONFIG_DIR
  const { CLAUDE_CONFIG_DIR: _agentsOnly, ...shell } = w.env;
  const d = await runMam(["daemon", "ensure"], { env: shell, cwd: w.sb.ws, timeoutMs: 30_000 });
  expect(d.code, d.stderr).toBe(0);
  const c = await w.mam(["create", "--agent", "claude", "--mux", "tmux", "--tmux-server", w.server, "--session", "wrk"]);
  expect(c.code, c.stdout + c.stderr).toBe(0);
  const s = await w.mam(["job", "submit", "--to", "wrk", "--prompt", "say hello"]);
  expect(s.code, s.stderr).toBe(0);
  const id = s.stdout.trim();
  const wait = await w.mam(["job", "wait", id, "--timeout", "120"], 150_000);
  expect(wait.code, wait.stdout + wait.stderr).toBe(0);
  // claude's transcript, in the agent's config folder: three answers of 1013 / 37 for the job
  const dir = join(w.claudeConfigDir, "projects");
  const file = readdirSync(dir).flatMap((p) => readdirSync(join(dir, p)).filter((f) => f.endsWith(".jsonl")).map((f) => join(dir, p, f)))[0]!;
  const jobAnswers = () => {
    const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const from = lines.findIndex((o) => o.type === "user" && JSON.stringify(o.message?.content ?? "").includes(`[mam] Job ${id}`));
    return new Set(lines.slice(from).filter((o) => o.type === "assistant" && o.message?.usage?.input_tokens === 1013).map((o) => o.message.id)).size;
  };
  expect(await waitFor(() => jobAnswers() === 3, 30_000, 250)).toBe(true);
  let v: any;
  const ok = await waitFor(async () => (v = JSON.parse((await w!.mam(["job", "status", id, "--json"])).stdout).usage).tokens?.total === 3 * 1050, 30_000, 500);
  expect({ ok, usage: v }).toMatchObject({ ok: true, usage: { known: true, tokens: { input: 3039, output: 111, cache_write: 0, cache_read: 0, total: 3150 } } });
}, 300_000);
