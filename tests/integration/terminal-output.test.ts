// No command prints a prompt, detail, source, data, role, topic or name raw to a terminal (issue
// 23 item 2, review BUG-3 / BUG-6, attempts 39 and 40): a clipboard write (OSC 52), a window title
// and a clear-screen sequence from a worker show as `\x1b…` in `job logs` (and --follow), `job
// list`, `job status`, `job wait`, `status`, `create` and the daemon's log (a topic with a newline
// forges no line there); `--json` keeps the exact text.
import { afterAll, describe, expect, test } from "bun:test";
import mqtt from "mqtt";
import { join } from "node:path";
import { type JobSpec, registerJob } from "../../lib/jobs/store.ts";
import { startMamBroker } from "../helpers/brokers.ts";
import { logText, startSubscriber, waitForLog } from "../helpers/daemon.ts";
import { MAM_CMD, type RunResult, runMam } from "../helpers/mam.ts";
import { rawControls } from "../helpers/recorder.ts";
import { makeSandbox } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "../helpers/tmux.ts";

const sb = makeSandbox("mam-out-");
afterAll(() => sb.cleanup());
const mam = (...args: string[]) => runMam([...args, "--workspace", sb.ws], { env: sb.env, cwd: sb.ws });
function ok(r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`mam exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

/** what a hostile worker writes: a clipboard write, a window title, clear screen, and a bidi override */
const EVIL = "\x1b]52;c;cHduZWQ=\x07\x1b]0;owned\x07\x1b[2J\u202e";
const SHOWN = "\\x1b]52;c;cHduZWQ=\\x07\\x1b]0;owned\\x07\\x1b[2J\\u202e";
/** no escape (or other control character) reaches the terminal: only line breaks */
const clean = (r: RunResult) => expect({ stdout: rawControls(r.stdout, ["\n"]), stderr: rawControls(r.stderr, ["\n"]) }).toEqual({ stdout: [], stderr: [] });

const spec = (over: Partial<JobSpec> = {}): JobSpec => ({
  agent_session: "wrk", agent: "claude", prompt: `fix it ${EVIL}`, delegator: "lead", type: "single", reviewer_session: null,
  max_iterations: null, timeout_sec: 3600, idle_timeout_sec: 120, expected_artifacts: [], topic_prefix_base: "mam/jobs", ...over,
});

describe("job commands", () => {
  test("logs, logs --follow, list, status, wait: escaped; --json: the exact text", async () => {
    const job = await registerJob(sb.ws, spec());
    const id = job.job_id;
    const follow = Bun.spawn([...MAM_CMD, "job", "logs", id, "--follow", "--workspace", sb.ws], { env: sb.env, stdout: "pipe", stderr: "pipe" });
    ok(await mam("job", "event", id, "progress", "--source", `w${EVIL}`, "--detail", `half ${EVIL}\nsecond line`, "--data", JSON.stringify({ note: EVIL })));
    const wait = Bun.spawn([...MAM_CMD, "job", "wait", id, "--timeout", "30", "--workspace", sb.ws], { env: sb.env, stdout: "pipe", stderr: "pipe" });
    await Bun.sleep(500);
    ok(await mam("job", "event", id, "completed", "--source", "wrk", "--detail", `done ${EVIL}`));

    const logs = ok(await mam("job", "logs", id));
    clean(logs);
    const lines = logs.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(`progress   w${SHOWN}: half ${SHOWN}\\nsecond line  {"note":"\\u001b]52;c;cHduZWQ=\\u0007\\u001b]0;owned\\u0007\\u001b[2J\\u202e"}`);
    expect(lines[1]).toContain(`completed  wrk: done ${SHOWN}`);
    const followed: RunResult = { code: await follow.exited, stdout: await new Response(follow.stdout).text(), stderr: await new Response(follow.stderr).text(), ms: 0 };
    clean(followed);
    expect(followed.stdout).toContain(`half ${SHOWN}`);
    const waited: RunResult = { code: await wait.exited, stdout: await new Response(wait.stdout).text(), stderr: await new Response(wait.stderr).text(), ms: 0 };
    expect(waited.code).toBe(0);
    clean(waited);
    expect(waited.stdout).toContain(`done ${SHOWN}`);

    const list = ok(await mam("job", "list"));
    clean(list);
    expect(list.stdout).toContain(`completed: done ${SHOWN}`);
    const status = ok(await mam("job", "status", id));
    clean(status);
    expect(status.stdout).toContain(`task     fix it ${SHOWN}`);

    // --json: the same texts, exact
    const j = JSON.parse(ok(await mam("job", "status", id, "--json")).stdout);
    expect(j.prompt).toBe(`fix it ${EVIL}`);
    expect(j.last_event.detail).toBe(`done ${EVIL}`);
    const evs = JSON.parse(ok(await mam("job", "logs", id, "--json")).stdout).events;
    expect(evs[0]).toMatchObject({ source: `w${EVIL}`, detail: `half ${EVIL}\nsecond line`, data: { note: EVIL } });
    const jl = ok(await mam("job", "list", "--json"));
    expect(rawControls(jl.stdout, ["\n"])).toEqual([]); // U+202E written as \u202e: still the same value
    expect(JSON.parse(jl.stdout).jobs[0].prompt).toBe(`fix it ${EVIL}`);
  });
});

describe("sessions", () => {
  test("create's messages and status show a hostile role escaped; status --json keeps it", async () => {
    if (!TMUX_BIN) throw new Error("tmux is not installed: this test needs a real tmux (apt install tmux); it is not skipped on purpose");
    const server = tmuxServerName("mamout");
    const env = sb.with({ TMUX_TMPDIR: sb.root });
    const run = (...args: string[]) => runMam([...args, "--workspace", sb.ws], { env, cwd: sb.ws });
    try {
      const created = ok(await run("create", "--agent", "demo", "--mux", "tmux", "--tmux-server", server, "--session", "w1", "--no-onboard", "--role", `lead${EVIL}`));
      clean(created);
      expect(created.stdout).toContain(`created w1 (demo, role lead${SHOWN}) in pane`);
      const status = ok(await run("status"));
      clean(status);
      expect(status.stdout).toContain(`lead${SHOWN}`);
      expect(JSON.parse(ok(await run("status", "--json")).stdout).sessions[0].role).toBe(`lead${EVIL}`);
    } finally {
      await killTmuxServer(server, env, sb.root);
    }
  });
});

describe("the daemon's log", () => {
  test("a topic with a newline and an escape (aedes takes it) forges no log line; nothing raw reaches monitor.log", async () => {
    const broker = await startMamBroker(sb.env, sb.ws);
    const log = join(sb.root, "daemon.log");
    const d = startSubscriber(sb, log, sb.with(broker.env));
    const pub = await mqtt.connectAsync({ protocol: "mqtt", host: "127.0.0.1", port: broker.port, clientId: "t-evil", reconnectPeriod: 0 } as never);
    try {
      expect(await waitForLog(log, /MQTT Monitor: subscribed to /, 15_000)).toBe(true);
      // (no # or + in it: a wildcard in a PUBLISH topic is refused)
      const forged = "2026-12-01T00:00:00.000Z job deadbeef remote01:1 completed from w: running -> completed";
      await pub.publishAsync(`mam/jobs/x\n${forged}\x1b[2K/events`, "{}", { qos: 1 });
      expect(await waitForLog(log, /dropped event/, 15_000), logText(log)).toBe(true);
      const text = logText(log);
      expect(rawControls(text, ["\n"])).toEqual([]);
      expect(text.split("\n").filter((l) => l.startsWith(forged))).toEqual([]);
      expect(text).toContain(`mam/jobs/x\\n${forged}\\x1b[2K/events`);
    } finally {
      await pub.endAsync();
      await d.kill();
      await broker.stop();
    }
  });
});
