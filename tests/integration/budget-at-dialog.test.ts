// A job that goes over its budget while its agent sits at a permission dialog (issue 39 item 5,
// newcomer F5): the "[mam] Job … is stopped" notice used to be dropped (nothing can be typed into
// a dialog), so after the user answered the dialog the agent was never told. Now the daemon puts
// it aside and types it once the agent is back at its prompt, once. Real tmux; a claude
// look-alike (tests/helpers/agent-screens.ts) that draws claude's Bash dialog and writes claude's
// transcript (a user line for each mam text, an answer with its usage before it asks), which the
// binary's daemon meters as it meters the real claude's.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readJournal } from "../../lib/jobs/store.ts";
import { logText, startSubscriber, type Subscriber, unreachableBrokerEnv, waitForLog } from "../helpers/daemon.ts";
import { type RunResult, run, runMam } from "../helpers/mam.ts";
import { makeSandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName, writeScript } from "../helpers/tmux.ts";

if (!TMUX_BIN) throw new Error("tmux is not installed: these tests need a real tmux (apt install tmux); they are not skipped on purpose");

const sb = makeSandbox("mam-bud-");
const server = tmuxServerName("mambud");
const typedLog = join(sb.root, "typed.log");
const env = sb.with({ TMUX_TMPDIR: sb.root, ...unreachableBrokerEnv, MAM_STATE_POLL_MS: "300", MAM_AGENT_SETTLE_S: "0.3", LOOKALIKE_TYPED: typedLog });
let daemon: Subscriber;

// claude's look-alike (as CLAUDE_LOOKALIKE) that also keeps claude's transcript: every line it
// gets goes to LOOKALIKE_TYPED; a line starting "[mam] " is written as a user message; `ask CMD`
// writes one answer of 1000 input / 50 output tokens, then draws the Bash dialog for CMD
const LOOKALIKE = `#!/usr/bin/env bash
stty -echo 2>/dev/null
sid=""
while [ $# -gt 0 ]; do [ "$1" = --session-id ] && sid="$2"; shift; done
dir="\${CLAUDE_CONFIG_DIR:-$HOME/.claude}/projects/$(pwd -P | sed 's/[^A-Za-z0-9]/-/g')"
mkdir -p "$dir"
transcript="$dir/$sid.jsonl"
n=0
js() { local s=\${1//\\\\/\\\\\\\\}; s=\${s//\\"/\\\\\\"}; printf '"%s"' "$s"; }
ts() { js "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)"; }
R=$(printf '─%.0s' $(seq 1 60))
draw() { printf '\\033[H\\033[2J\\033]0;%s\\007' "$1"; shift; printf '%s\\n' "$@"; }
idle() { draw "✳ Claude Code" "● \${1:-ready}" "" "$R" "❯ " "$R" "  ? for shortcuts"; }
ask() {
  n=$((n + 1))
  printf '{"type":"assistant","message":{"id":"msg_look_%s_%s","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":1000,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":50}},"timestamp":%s,"sessionId":%s}\\n' "$$" "$n" "$(ts)" "$(js "$sid")" >>"$transcript"
  draw "✳ Claude Code" "● Bash($1)" "  ⎿  Waiting…" "" "$R" " Bash command" "" "   $1" "   Run it" "" " Do you want to proceed?" " ❯ 1. Yes" \\
    "   2. Yes, and don't ask again for $1 commands in $PWD" "   3. No" "" " Esc to cancel · Tab to amend · ctrl+e to explain"
  while IFS= read -rsn1 k; do
    case "$k" in
      1) idle "Bash($1) ran"; return ;;
      3 | $'\\e') idle "Interrupted · What should Claude do instead?"; return ;;
    esac
  done
}
idle
while IFS= read -r line; do
  printf '%s\\n' "$line" >>"$LOOKALIKE_TYPED"
  case "$line" in
    "[mam] "*) printf '{"type":"user","message":{"role":"user","content":%s},"timestamp":%s,"sessionId":%s}\\n' "$(js "$line")" "$(ts)" "$(js "$sid")" >>"$transcript"; idle "$line" ;;
    "ask "*) ask "\${line#ask }" ;;
    /exit) exit 0 ;;
    *) idle "$line" ;;
  esac
done
`;

const mam = (...args: string[]) => runMam([...args, "--workspace", sb.ws], { env, cwd: sb.ws, timeoutMs: 60_000 });
function ok(r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`mam exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}
const tmux = (...args: string[]) => run([TMUX_BIN!, "-L", server, ...args], { env });
const screen = async () => (await tmux("capture-pane", "-p", "-J", "-t", "=wrk:")).stdout;
const typedLines = () => (existsSync(typedLog) ? readFileSync(typedLog, "utf8").split("\n") : []);

beforeAll(async () => {
  writeScript(sb.bin, "claude", LOOKALIKE);
  daemon = startSubscriber(sb, join(sb.root, "daemon.log"), env);
  ok(await mam("create", "--agent", "claude", "--mux", "tmux", "--tmux-server", server, "--session", "wrk", "--no-onboard"));
});

afterAll(async () => {
  await daemon?.kill();
  await killTmuxServer(server, env, sb.root);
  await sb.cleanup();
});

describe("a job over its budget while its agent sits at a dialog", () => {
  test("the stop notice waits for the dialog to be answered, then is typed once", async () => {
    const id = ok(await mam("job", "submit", "--to", "wrk", "--prompt", "clean the build", "--max-tokens", "500")).stdout.trim();
    expect(await waitFor(() => typedLines().some((l) => l.startsWith(`[mam] Job ${id} delegated to you`)), 20_000, 100), logText(daemon.log)).toBe(true);
    // the rest of the header in (the look-alike shows its last line), then the agent answers and asks
    await Bun.sleep(1500);
    expect((await tmux("send-keys", "-t", "=wrk:", "-l", "ask rm -rf build")).code).toBe(0);
    await tmux("send-keys", "-t", "=wrk:", "Enter");
    expect(await waitFor(async () => (await screen()).includes("Do you want to proceed?"), 10_000, 100)).toBe(true);

    // 1050 tokens of 500: the job ends; the agent, at its dialog, is not typed into
    expect(await waitFor(() => readJournal(sb.ws, id).some((e) => e.event === "budget_exceeded"), 30_000, 200), logText(daemon.log)).toBe(true);
    expect(await waitForLog(daemon.log, new RegExp(`job ${id} went over its budget[^\\n]*; wrk waits at [^\\n]*: told once it is back at its prompt`), 15_000), logText(daemon.log)).toBe(true);
    await Bun.sleep(1500);
    const notice = (l: string) => l.startsWith(`[mam] Job ${id} is stopped:`);
    expect(typedLines().filter(notice)).toEqual([]);
    expect(await screen()).toContain("Do you want to proceed?");

    // the user answers the dialog in its pane: the agent is back at its prompt and is told, once
    expect((await tmux("send-keys", "-t", "=wrk:", "3")).code).toBe(0);
    expect(await waitFor(() => typedLines().some(notice), 20_000, 200), logText(daemon.log)).toBe(true);
    await Bun.sleep(3000);
    expect(typedLines().filter(notice)).toHaveLength(1);
    expect(typedLines().find(notice)).toContain("went over its budget");
  }, 120_000);
});
