// The demo agent's synthetic usage (issue 39 item 13): it calls no model, but writes made-up token
// counts, labelled as such (model mam-demo-synthetic), that the daemon's meter reads as it reads a
// real agent's transcript, so that a new user can try COST, job budgets and daily caps without an
// account. Real tmux, the daemon polling (no broker).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startSubscriber, type Subscriber, unreachableBrokerEnv } from "../helpers/daemon.ts";
import { type RunResult, runMam } from "../helpers/mam.ts";
import { makeSandbox } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "../helpers/tmux.ts";

if (!TMUX_BIN) throw new Error("tmux is not installed: these tests need a real tmux (apt install tmux); they are not skipped on purpose");

const sb = makeSandbox("mam-dus-");
const server = tmuxServerName("mamdus");
const env = sb.with({ TMUX_TMPDIR: sb.root, ...unreachableBrokerEnv, MAM_STATE_POLL_MS: "300" });
let daemon: Subscriber;

const mam = (...args: string[]) => runMam([...args, "--workspace", sb.ws], { env, cwd: sb.ws, timeoutMs: 60_000 });
function ok(r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`mam exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

beforeAll(async () => {
  daemon = startSubscriber(sb, join(sb.root, "daemon.log"), env);
  ok(await mam("create", "--agent", "demo", "--mux", "tmux", "--tmux-server", server, "--session", "dw", "--role", "worker", "--no-onboard"));
});

afterAll(async () => {
  await daemon?.kill();
  await killTmuxServer(server, env, sb.root);
  await sb.cleanup();
});

describe("the demo agent's synthetic usage", () => {
  test("a job's cost is known, in made-up tokens of model mam-demo-synthetic, and status shows it", async () => {
    const id = ok(await mam("job", "submit", "--to", "dw", "--prompt", "say hello")).stdout.trim();
    expect(ok(await mam("job", "wait", id, "--timeout", "60")).stdout).toContain("completed: done: say hello");
    const usage = async () => JSON.parse(ok(await mam("job", "status", id, "--json")).stdout).usage;
    let u = await usage();
    // the meter counts the three answers as it reads them: wait for all three (each ≥ 120 in)
    for (const end = Date.now() + 15_000; !(u.known && u.tokens?.input >= 360 && u.tokens?.output >= 36) && Date.now() < end; u = await usage()) await Bun.sleep(200);
    expect(u).toMatchObject({ known: true });
    expect(Object.keys(u.models)).toEqual(["mam-demo-synthetic"]);
    // three answers (started, progress, completed), each at least 120 in and 12 out
    expect(u.tokens.input).toBeGreaterThanOrEqual(360);
    expect(u.tokens.output).toBeGreaterThanOrEqual(36);
    expect(Number(u.usd)).toBeGreaterThan(0);
    // the agent's own file says synthetic on every line
    const lines = readFileSync(join(sb.ws, ".mam", "demo-usage", "dw.ndjson"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.every((l) => l.synthetic === true)).toBe(true);
    const st = JSON.parse(ok(await mam("status", "--json")).stdout).sessions.find((s: { name: string }) => s.name === "dw");
    expect(st.usage.job).toMatchObject({ known: true });
  });

  test("a job budget holds on it: a job over --max-tokens ends budget_exceeded, and job wait exits 6", async () => {
    const id = ok(await mam("job", "submit", "--to", "dw", "--prompt", "a long one", "--max-tokens", "100")).stdout.trim();
    const w = await mam("job", "wait", id, "--timeout", "60");
    expect(w.code, w.stdout + w.stderr).toBe(6);
    expect(JSON.parse(ok(await mam("job", "status", id, "--json")).stdout).status).toBe("budget_exceeded");
  });
});
