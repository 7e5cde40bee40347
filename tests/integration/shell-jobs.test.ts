// A job to a `shell` session (issue 23 item 3, review R10, newcomer report #1): the prompt is the
// command. mam types only `mam shell-job <id>` into the shell, which reports started, runs the
// command, and ends the job from its exit status with its last output lines as the detail; nothing
// else is run (a job header typed into bash ran all four report lines, so `job wait` said success).
// No prose is ever typed into a shell: no onboarding, no loop, no end line to a shell delegator
// (a `;` in a relayed detail would run). Real tmux, real bash panes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type JobSpec, readJournal, registerJob } from "../../lib/jobs/store.ts";
import { startSubscriber, type Subscriber, unreachableBrokerEnv, waitForLog } from "../helpers/daemon.ts";
import { MAM_CMD, type RunResult, run, runMam } from "../helpers/mam.ts";
import { makeSandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "../helpers/tmux.ts";

if (!TMUX_BIN) throw new Error("tmux is not installed: these tests need a real tmux (apt install tmux); they are not skipped on purpose");

const sb = makeSandbox("mam-shj-");
const server = tmuxServerName("mamshj");
const env = sb.with({ TMUX_TMPDIR: sb.root, ...unreachableBrokerEnv });
let daemon: Subscriber;
let created: RunResult;

const mam = (...args: string[]) => runMam([...args, "--workspace", sb.ws], { env, cwd: sb.ws, timeoutMs: 60_000 });
function ok(r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`mam exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}
const capture = async (name: string) => (await run([TMUX_BIN!, "-L", server, "capture-pane", "-p", "-J", "-t", `=${name}:`, "-S", "-200"], { env })).stdout;
const events = (id: string) => readJournal(sb.ws, id).map((e) => ({ event: e.event, source: e.source, detail: e.detail, data: e.data }));
const submit = async (to: string, prompt: string) => ok(await mam("job", "submit", "--to", to, "--prompt", prompt)).stdout.trim();

beforeAll(async () => {
  daemon = startSubscriber(sb, join(sb.root, "daemon.log"), env);
  // the onboarding is asked for (the default)
  created = ok(await mam("create", "--agent", "shell", "--mux", "tmux", "--tmux-server", server, "--session", "sh1", "--role", "worker"));
  ok(await mam("create", "--agent", "shell", "--mux", "tmux", "--tmux-server", server, "--session", "lead", "--role", "lead", "--no-onboard"));
});

afterAll(async () => {
  await daemon?.kill();
  await killTmuxServer(server, env, sb.root);
  await sb.cleanup();
});

describe("a job to a shell session", () => {
  test("no onboarding is typed into a new shell session", async () => {
    expect(created.stderr).toContain("mam: no onboarding for a shell session (it would run the text); a job to it is a command that mam runs");
    await Bun.sleep(1000);
    const screen = await capture("sh1");
    expect(screen).not.toContain("You are sh1");
    expect(screen).not.toContain("command not found");
  });

  test("a command that succeeds: started, then completed with its last lines; job wait exits 0; nothing else ran", async () => {
    const id = await submit("sh1", "echo hello from the shell job; printf 'second line\\n'");
    const w = await mam("job", "wait", id, "--timeout", "30");
    expect(w.code).toBe(0);
    expect(w.stdout).toContain(`${id} completed: hello from the shell job second line`);
    expect(events(id)).toEqual([
      { event: "started", source: "sh1", detail: "running echo hello from the shell job; printf 'second line\\n'", data: expect.any(Object) },
      { event: "completed", source: "sh1", detail: "hello from the shell job\nsecond line", data: expect.objectContaining({ exit_code: 0 }) },
    ]);
    // the shell got one line: the runner, not the prompt nor a header
    const screen = await capture("sh1");
    expect(screen).toContain(`shell-job ${id} --workspace ${sb.ws}`);
    expect(screen).toContain("hello from the shell job");
    expect(screen).not.toContain("Task:");
    expect(screen).not.toContain("command not found");
    // the line again (from the shell's history) runs nothing
    const again = await run([...MAM_CMD, "shell-job", id, "--workspace", sb.ws], { env, cwd: sb.ws });
    expect(again.code).toBe(4);
    expect(again.stderr).toContain(`ERROR: job ${id} has already ended (completed); nothing was run`);
    expect(events(id)).toHaveLength(2);
  }, 60_000);

  test("a command that fails ends the job in error, its output as the detail; job wait says so", async () => {
    const id = await submit("sh1", "echo 'it broke' >&2; exit 7");
    const w = await mam("job", "wait", id, "--timeout", "30");
    expect(w.code).not.toBe(0);
    expect(w.stdout).toContain(`${id} error: exit 7: it broke`);
    expect(events(id).map((e) => [e.event, e.detail, e.data.exit_code ?? null])).toEqual([
      ["started", "running echo 'it broke' >&2; exit 7", null],
      ["error", "exit 7: it broke", 7],
    ]);
  }, 60_000);

  test("mam job cancel stops a running command; nothing is typed into the shell", async () => {
    const id = await submit("sh1", "echo working; sleep 120; echo never");
    expect(await waitFor(() => readJournal(sb.ws, id).some((e) => e.event === "started"), 15_000)).toBe(true);
    const c = ok(await mam("job", "cancel", id));
    expect(c.stderr).toContain("NOTE: nothing was typed into sh1 (a shell session runs what is typed)");
    expect(await waitFor(async () => (await capture("sh1")).includes(`job ${id} was cancelled meanwhile; the command was stopped`), 15_000, 200)).toBe(true);
    expect(events(id).map((e) => e.event)).toEqual(["started", "cancelled"]);
    expect(await capture("sh1")).not.toContain("was cancelled: stop working on it");
  }, 60_000);

  test("a job queued for a shell (by name, and for its role) goes once the job before it ends; submit says what free means for it", async () => {
    // a shell's LIVE is unknown (mam cannot read its state): before, a queued job waited for idle for ever
    // the first job runs until the test lets it end, so the others wait whatever the machine's load
    const gate = join(sb.root, "let-first-end");
    const first = await submit("sh1", `while [ ! -e '${gate}' ]; do sleep 0.1; done; echo first done`);
    const byName = ok(await mam("job", "submit", "--to", "sh1", "--prompt", "echo second done"));
    const second = byName.stdout.trim();
    expect(byName.stderr).toContain(`job ${second} waits its turn for sh1`);
    expect(byName.stderr).toContain("NOTE: mam cannot read whether the shell session sh1 is at work: its job goes once the job before it has ended");
    // and status says it too, while the job waits
    const st = ok(await mam("status"));
    expect(st.stdout).toContain("sh1: mam cannot read whether the shell is at work; its queued job goes once the job before it has ended");
    const byRole = ok(await mam("job", "submit", "--to-role", "worker", "--prompt", "echo third done"));
    const third = byRole.stdout.trim();
    expect(byRole.stderr).toContain(`job ${third} waits its turn for a free worker`);
    writeFileSync(gate, "");
    const w = await mam("job", "wait", first, second, third, "--timeout", "40");
    expect(w.code, `${w.stdout}${w.stderr}\n${daemon.log}`).toBe(0);
    expect(w.stdout).toContain(`${second} completed: second done`);
    expect(w.stdout).toContain(`${third} completed: third done`);
    for (const id of [second, third]) expect(events(id).map((e) => e.event)).toEqual(["queued", "dispatched", "started", "completed"]);
  }, 90_000);

  test("a loop job cannot involve a shell (its review and feedback are text); nothing is submitted", async () => {
    const dir = join(sb.ws, ".mam", "jobs");
    const jobs = () => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".json")).length : 0);
    const before = jobs();
    const r = await mam("job", "submit", "--to", "sh1", "--type", "loop", "--reviewer", "lead", "--prompt", "make");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("ERROR: session 'sh1' is a shell session: a loop job's review and feedback are text, which a shell would run; nothing was submitted");
    expect(jobs()).toBe(before);
  });

  test("a shell delegator is not told the end of its job: a `;` in the worker's detail runs nothing", async () => {
    const spec: JobSpec = {
      agent_session: "far-worker", agent: "claude", prompt: "x", delegator: "lead", type: "single", reviewer_session: null,
      max_iterations: null, timeout_sec: 3600, idle_timeout_sec: 120, expected_artifacts: [], topic_prefix_base: "mam/jobs",
    };
    const job = await registerJob(sb.ws, spec);
    ok(await mam("job", "event", job.job_id, "completed", "--source", "far-worker", "--detail", "done; touch pwned"));
    expect(await waitForLog(daemon.log, new RegExp(`job ${job.job_id}: completed; delegator lead is a shell session, not told`), 15_000)).toBe(true);
    await Bun.sleep(500);
    expect(existsSync(join(sb.ws, "pwned"))).toBe(false);
    expect(await capture("lead")).not.toContain("[mam] job");
  }, 30_000);
});
