// One malformed file in `.mam/schedules/` fails alone (security review 2, B4: Q6). Before, the
// daemon's whole watch step threw every second on it (`watch failed: …malformed`), so an agent at a
// dialog was never reported (no `permission_required`), nor were queued jobs dispatched or budgets
// kept. Now the file is skipped and said once, and the dialog is journalled as ever. Real tmux, the
// claude look-alike that draws claude's Bash dialog, the binary's daemon.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLAUDE_LOOKALIKE } from "../helpers/agent-screens.ts";
import { logText, startSubscriber, type Subscriber, unreachableBrokerEnv } from "../helpers/daemon.ts";
import { type RunResult, run, runMam } from "../helpers/mam.ts";
import { makeSandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName, writeScript } from "../helpers/tmux.ts";

if (!TMUX_BIN) throw new Error("tmux is not installed: these tests need a real tmux (apt install tmux); they are not skipped on purpose");

const sb = makeSandbox("mam-badsch-");
writeScript(sb.bin, "claude", CLAUDE_LOOKALIKE);
const server = tmuxServerName("mambsc");
const env = sb.with({ TMUX_TMPDIR: sb.root, MAM_AGENT_SETTLE_S: "0.3", MAM_MUX: "tmux", ...unreachableBrokerEnv, RECONCILE_POLL_INTERVAL: "30", MAM_STATE_POLL_MS: "200" });
let daemon: Subscriber | undefined;
const mam = (...args: string[]) => runMam([...args, "--workspace", sb.ws], { env, cwd: sb.ws, timeoutMs: 60_000 });
function ok(r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`mam exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}
const tmux = (args: string[]) => run([TMUX_BIN!, "-L", server, ...args], { env });

beforeAll(async () => {
  ok(await mam("create", "--agent", "claude", "--session", "wrk", "--tmux-server", server, "--no-onboard"));
});
afterAll(async () => {
  await daemon?.kill();
  await killTmuxServer(server, env, sb.root);
  await sb.cleanup();
});

test("a malformed schedule file is skipped and said once; the agent's dialog is still reported", async () => {
  const id = ok(await mam("job", "submit", "--to", "wrk", "--prompt", "make x")).stdout.trim();
  ok(await mam("job", "event", id, "started", "--detail", "go"));
  mkdirSync(join(sb.ws, ".mam", "schedules"), { recursive: true });
  writeFileSync(join(sb.ws, ".mam", "schedules", "s6666666.json"), "{");
  daemon = startSubscriber(sb, join(sb.root, "daemon.log"), env);
  await tmux(["send-keys", "-t", "=wrk:", "-l", "ask rm -rf build"]);
  await tmux(["send-keys", "-t", "=wrk:", "Enter"]);
  const journal = () => {
    const f = join(sb.ws, ".mam", "jobs", `${id}.events.ndjson`);
    return existsSync(f) ? readFileSync(f, "utf8") : "";
  };
  expect(await waitFor(() => journal().includes('"event":"permission_required"'), 20_000, 100), logText(daemon.log)).toBe(true);
  // the dialog took several watch steps (200 ms apart) to be journalled: the bad file was said once
  const lines = () => logText(daemon!.log).split("\n").filter((l) => l.includes("s6666666.json"));
  expect(lines()).toHaveLength(1);
  expect(lines()[0]).toContain("skipped, the other schedules run: schedule file");
  expect(lines()[0]).toContain("is malformed");
  expect(lines()[0]).toContain("fix or remove it");
  expect(logText(daemon.log)).not.toContain("watch failed");
}, 90_000);
