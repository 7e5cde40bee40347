// A job queued for an agent whose state mam cannot read and that is not a shell (issue 39 item 1,
// review 2 O4): a kind without screen rules on tmux (crush here, a script standing in for it).
// Before, the daemon waited for LIVE `idle`, which such an agent never shows: the job stayed
// `queued` for ever, and `--to-role` with only such agents waited for ever, in silence. Now it
// goes once the job before it has ended and the agent's screen has been still for
// MAM_QUEUE_STILL_S; submit and `mam status` say so. (The shell kind: tests/integration/shell-jobs.)
// Real tmux, the binary's daemon (polling).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readJournal } from "../../lib/jobs/store.ts";
import { logText, startSubscriber, type Subscriber, unreachableBrokerEnv } from "../helpers/daemon.ts";
import { type RunResult, run, runMam } from "../helpers/mam.ts";
import { makeSandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "../helpers/tmux.ts";

if (!TMUX_BIN) throw new Error("tmux is not installed: these tests need a real tmux (apt install tmux); they are not skipped on purpose");

const sb = makeSandbox("mam-qun-");
const server = tmuxServerName("mamqun");
const gate = join(sb.root, "work-done");
const STILL_S = 2;
const env = sb.with({ TMUX_TMPDIR: sb.root, ...unreachableBrokerEnv, MAM_QUEUE_STILL_S: String(STILL_S), MAM_STATE_POLL_MS: "300" });
let daemon: Subscriber;

const mam = (...args: string[]) => runMam([...args, "--workspace", sb.ws], { env, cwd: sb.ws, timeoutMs: 60_000 });
function ok(r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`mam exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}
const capture = async (name: string) => (await run([TMUX_BIN!, "-L", server, "capture-pane", "-p", "-J", "-t", `=${name}:`, "-S", "-200"], { env })).stdout;
const events = (id: string) => readJournal(sb.ws, id).map((e) => e.event);

beforeAll(async () => {
  // crush has no screen rules: mam cannot tell its prompt from its work. This one echoes what it
  // gets; a text with BUSY in it keeps its screen moving (a counter) until the test's gate opens
  const crush = join(sb.bin, "crush");
  writeFileSync(
    crush,
    `#!/usr/bin/env bash
echo "crush ready"
while IFS= read -r line; do
  echo "got: $line"
  case "$line" in *BUSY*) i=0; while [ ! -e '${gate}' ]; do i=$((i + 1)); echo "working $i"; sleep 0.3; done; echo "work done" ;; esac
done
`,
  );
  chmodSync(crush, 0o755);
  daemon = startSubscriber(sb, join(sb.root, "daemon.log"), env);
  ok(await mam("create", "--agent", "crush", "--mux", "tmux", "--tmux-server", server, "--session", "cr", "--role", "builder", "--no-onboard"));
});

afterAll(async () => {
  await daemon?.kill();
  await killTmuxServer(server, env, sb.root);
  await sb.cleanup();
});

describe("a job queued for an agent without screen rules", () => {
  test("it goes once the job before it has ended and the screen has been still; not while the screen moves; submit and status say what free means", async () => {
    const first = ok(await mam("job", "submit", "--to", "cr", "--prompt", "first, BUSY for a while")).stdout.trim();
    expect(await waitFor(async () => /working \d+/.test(await capture("cr")), 20_000, 100), await capture("cr")).toBe(true);

    const byName = ok(await mam("job", "submit", "--to", "cr", "--prompt", "second job"));
    const second = byName.stdout.trim();
    expect(byName.stderr).toContain(`job ${second} waits its turn for cr`);
    expect(byName.stderr).toContain(`NOTE: mam cannot read the state of cr (no screen rules for crush): its job goes once the job before it has ended and its screen has been still for ${STILL_S} s (MAM_QUEUE_STILL_S)`);
    const byRole = ok(await mam("job", "submit", "--to-role", "builder", "--prompt", "third job"));
    const third = byRole.stdout.trim();
    expect(byRole.stderr).toContain(`job ${third} waits its turn for a free builder`);
    // status says it too, while the jobs wait (the one named for it; the role's is the pool's)
    const st = ok(await mam("status"));
    expect(st.stdout).toContain("cr: mam cannot read its state; its queued job goes once the job before it has ended and its screen has been still (MAM_QUEUE_STILL_S)");

    // the first job ends, but the agent's screen still moves: not free yet
    ok(await mam("job", "event", first, "completed", "--source", "cr", "--detail", "done"));
    await Bun.sleep((STILL_S + 3) * 1000);
    expect(events(second), logText(daemon.log)).toEqual(["queued"]);
    expect(await capture("cr")).not.toContain(`Job ${second}`);

    // the screen goes still: the second job is typed in, then (once it ended and the screen is
    // still again) the third, in the order they came
    writeFileSync(gate, "");
    expect(await waitFor(() => events(second).includes("dispatched"), 30_000, 100), logText(daemon.log)).toBe(true);
    expect(await waitFor(async () => (await capture("cr")).includes(`Job ${second}`), 15_000, 100), await capture("cr")).toBe(true);
    expect(events(third)).toEqual(["queued"]);
    ok(await mam("job", "event", second, "completed", "--source", "cr", "--detail", "done"));
    expect(await waitFor(() => events(third).includes("dispatched"), 30_000, 100), logText(daemon.log)).toBe(true);
    expect(await waitFor(async () => (await capture("cr")).includes(`Job ${third}`), 15_000, 100), await capture("cr")).toBe(true);
    expect(existsSync(gate)).toBe(true);
  }, 120_000);
});
