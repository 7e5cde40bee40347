// What mam types into agents' panes carries no control character raw (issue 23 item 1, review
// BUG-2 / R9, attempts 25 and 38): the job header (a hostile prompt), the delegator's end line (a
// hostile detail relayed by the daemon), loop review and feedback texts, the onboarding (a hostile
// role). Real tmux panes whose agent records exactly the bytes it receives (tests/helpers/
// recorder.ts): Ctrl-C, Ctrl-D, Ctrl-U, ESC sequences, the end of a paste, C1, U+2028 and bidi
// controls arrive shown as `\x03`, `\x1b`, `\u202e`, and the delegator's process lives on. So do the
// invisible characters an LLM reads and a user cannot see (review O3): `\u200b`, `\u{e0041}`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startSubscriber, type Subscriber, unreachableBrokerEnv } from "../helpers/daemon.ts";
import { type RunResult, run, runMam } from "../helpers/mam.ts";
import { HOSTILE, INVISIBLE, INVISIBLE_SHOWN, rawControls, RECORDER, recorded } from "../helpers/recorder.ts";
import { makeSandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName, writeScript } from "../helpers/tmux.ts";

if (!TMUX_BIN) throw new Error("tmux is not installed: these tests need a real tmux (apt install tmux); they are not skipped on purpose");

const sb = makeSandbox("mam-typ-");
const server = tmuxServerName("mamtyp");
// the recorder stands in for an agent kind mam types into (aider); no screen to read
const env = sb.with({ TMUX_TMPDIR: sb.root, MAM_SCREEN_DETECT: "0", ...unreachableBrokerEnv });
let daemon: Subscriber;

const mam = (...args: string[]) => runMam([...args, "--workspace", sb.ws], { env, cwd: sb.ws, timeoutMs: 60_000 });
function ok(r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`mam exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}
const create = async (name: string, ...extra: string[]) => ok(await mam("create", "--agent", "aider", "--mux", "tmux", "--tmux-server", server, "--session", name, ...extra));
const paneAlive = async (name: string) => (await run([TMUX_BIN!, "-L", server, "has-session", "-t", `=${name}`], { env })).code === 0;

/** wait until the session's recorder holds a text from `start` to `end` and the Enter after it; that text */
async function waitRecorded(session: string, start: string, end: string): Promise<string> {
  let text = "";
  const found = await waitFor(() => {
    text = recorded(sb.ws, session);
    const at = text.lastIndexOf(start);
    return at >= 0 && text.indexOf(`${end}\r`, at) >= 0;
  }, 20_000, 100);
  if (!found) throw new Error(`${session} never got ${JSON.stringify(start)}…${JSON.stringify(end)}; it got ${JSON.stringify(text)}\ndaemon log:\n${await Bun.file(daemon.log).text()}`);
  const at = text.lastIndexOf(start);
  return text.slice(at, text.indexOf(`${end}\r`, at) + end.length + 1);
}

beforeAll(() => {
  writeScript(sb.bin, "aider", RECORDER);
  daemon = startSubscriber(sb, join(sb.root, "daemon.log"), env);
});

afterAll(async () => {
  await daemon?.kill();
  await killTmuxServer(server, env, sb.root);
  await sb.cleanup();
});

describe("what mam types into a pane", () => {
  test("job header, the delegator's end line and the onboarding: every control character arrives visible, none raw; the delegator lives on", async () => {
    // the onboarding names the role: a title sequence in it
    await create("lead", "--role", "lead\x1b]0;owned\x07");
    await create("wk", "--role", "worker", "--no-onboard");
    // one line: up to its Enter
    const onboarding = await waitRecorded("lead", "You are lead", "");
    expect(onboarding).toContain('with the role "lead\\x1b]0;owned\\x07"');
    expect(rawControls(onboarding, ["\r"])).toEqual([]);

    const id = ok(await mam("job", "submit", "--to", "wk", "--from", "lead", "--prompt", `do this: ${HOSTILE} ${INVISIBLE} (end)`)).stdout.trim();
    const header = await waitRecorded("wk", "[mam] Job", "once at the end.");
    expect(header).toContain(`Task: do this: \\x03 \\x04 \\x15 \\x1a \\x1b]52;c;cHduZWQ=\\x07 \\x1b]0;pwned\\x07 \\x1b[2J \\x1b[201~ \\x9b31m \\x85 \\x7f \\u2028 \\u202e ${INVISIBLE_SHOWN} (end)`);
    expect(rawControls(header, ["\r"])).toEqual([]);

    // the worker (here, or on another machine) ends the job with a hostile detail; the daemon tells the lead
    ok(await mam("job", "event", id, "completed", "--source", "wk", "--detail", `done ${HOSTILE} ${INVISIBLE} bye; touch pwned`));
    const told = await waitRecorded("lead", `[mam] job ${id} completed:`, "touch pwned");
    // one line: the end line's whitespace (U+2028 and U+FEFF too) is single spaces; U+200B and the tags shown
    expect(told).toBe(`[mam] job ${id} completed: done \\x03 \\x04 \\x15 \\x1a \\x1b]52;c;cHduZWQ=\\x07 \\x1b]0;pwned\\x07 \\x1b[2J \\x1b[201~ \\x9b31m \\x85 \\x7f \\u202e ${INVISIBLE_SHOWN.replace("\\ufeff ", "")} bye; touch pwned\r`);
    expect(told).toContain("a\\u200bb");
    expect(told).toContain("\\u{e0041}\\u{e0042}");
    expect(rawControls(recorded(sb.ws, "lead"), ["\r"])).toEqual([]);
    // Ctrl-C did not reach the lead: its agent runs
    await Bun.sleep(300);
    expect(await paneAlive("lead")).toBe(true);
    expect(ok(await mam("job", "status", id, "--json")).stdout).toContain('"status": "completed"');
  }, 90_000);

  test("a loop's review request and feedback carry the worker's and the reviewer's details visible, none raw", async () => {
    await create("wk2", "--role", "worker", "--no-onboard");
    await create("rv", "--role", "reviewer", "--no-onboard");
    const id = ok(await mam("job", "submit", "--to", "wk2", "--type", "loop", "--reviewer", "rv", "--prompt", "write it")).stdout.trim();
    await waitRecorded("wk2", "[mam] Job", "once at the end.");

    ok(await mam("job", "event", id, "completed", "--source", "wk2", "--detail", `written\n${HOSTILE}`));
    const review = await waitRecorded("rv", "[mam] Review", 'short status"');
    expect(review).toContain(`wk2 reports completed: written\r\\x03 \\x04 \\x15 \\x1a \\x1b]52;c;cHduZWQ=\\x07`);
    expect(rawControls(review, ["\r"])).toEqual([]);

    ok(await mam("job", "event", id, "completed", "--source", "rv", "--detail", `change it ${HOSTILE}`));
    const feedback = await waitRecorded("wk2", "asks for changes", 'what went wrong"');
    expect(feedback).toContain(`asks for changes: change it \\x03 \\x04 \\x15 \\x1a \\x1b]52;c;cHduZWQ=\\x07`);
    expect(rawControls(feedback, ["\r"])).toEqual([]);
    expect(await paneAlive("wk2")).toBe(true);
    expect(await paneAlive("rv")).toBe(true);
  }, 90_000);
});
