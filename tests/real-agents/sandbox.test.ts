// Agents in their own sandbox (docs/sandbox.md, issue 37) with the real Claude Code and codex: a worker made
// with --worktree --sandbox bwrap --net model does a job against the scripted model endpoint (it
// reaches the endpoint through mam's relay, and reports through its supervisor's socket), and the
// model's own shell commands find nothing of what the test planted outside its worktree: the
// user's ~/.ssh key, another worktree's file, mam's team file and state, a loopback port other than
// the model's; a write outside its worktree never reaches the machine. Stop → resume brings the
// conversation back, still in its sandbox; a hard stop leaves nothing running. Then claude with its
// config in the home folder, and codex (its provider's endpoint given with --allow), do a job each.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { eventLine, isJobText, jobWorker, withDetail } from "../fakes/model-api/scripts.ts";
import { type ModelApi, type Reply, startModelApi, type Turn } from "../fakes/model-api/server.ts";
import { bwrapBin, bwrapWorks } from "../helpers/bwrap.ts";
import { type RealAgentHost, realAgentHost, endRealAgentHost, seedClaudeConfig } from "../helpers/real-agents.ts";
import { anchoredPids, makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { TMUX_BIN } from "../helpers/tmux.ts";
import { teamPath } from "../../lib/team/config.ts";

const NO_BROKER = { MQTT_BROKER: "127.0.0.1", MQTT_PORT: "9" };
const BWRAP = bwrapBin();

let sb: Sandbox;
let api: ModelApi;
let H: RealAgentHost;
let other: Server;
let otherPort = 0;
let probe = "";

/** the worker: its `started`, the probe, its `completed` with the probe's output */
function worker(): (t: Turn) => Reply {
  return (t) => {
    if (!isJobText(t)) return { text: "ready" };
    const started = withDetail(eventLine(t.lastUserText, "started")!, "starting");
    const completed = withDetail(eventLine(t.lastUserText, "completed")!, "probed");
    const steps = [started, probe, "echo inside > made-inside.txt && git add made-inside.txt && git commit -qm inside && echo committed", completed];
    const step = t.toolOutputs.length;
    if (step < steps.length) return { shell: steps[step] };
    return { text: "job done" };
  };
}

describe.skipIf(!TMUX_BIN)("agents in a sandbox", () => {
  beforeAll(async () => {
    if (!bwrapWorks(BWRAP)) throw new Error(`bubblewrap is needed (${BWRAP ?? "not found"}): .ci/run unpacks it into ~/.cache/mam/bwrap`);
    sb = makeSandbox("mam-sbx-");
    api = startModelApi(worker());
    H = realAgentHost(sb.root, "hs", { ...NO_BROKER, MAM_BWRAP: BWRAP! }, api);
    other = createServer((c) => c.end("other-service\n"));
    await new Promise<void>((r) => other.listen(0, "127.0.0.1", r));
    otherPort = (other.address() as { port: number }).port;
    // what the sandbox must hide (claude may run any command: that is what the sandbox is for; the
    // default permission mode, as 2.1.332's auto mode asks its server to check commands first): a key in ~/.ssh, another agent's worktree, the team file, mam's state
    mkdirSync(join(H.home, ".ssh"), { recursive: true });
    writeFileSync(join(H.home, ".ssh", "id_test"), "SSH-SECRET\n");
    mkdirSync(join(H.ws, ".mam", "worktrees", "other"), { recursive: true });
    writeFileSync(join(H.ws, ".mam", "worktrees", "other", "notes.txt"), "OTHER-WORKTREE\n");
    // git's config is read inside (the worktree's commits carry its name)
    writeFileSync(join(H.home, ".gitconfig"), "[user]\n\tname = sandboxed\n\temail = s@example.invalid\n");
    const team = teamPath(H.env);
    mkdirSync(join(team, ".."), { recursive: true });
    writeFileSync(team, '{"secret": "TEAM-SECRET"}\n');
    for (const c of [["init", "-q", "-b", "main"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init"]]) expect(Bun.spawnSync(["git", ...c], { cwd: H.ws }).exitCode).toBe(0);
    probe = [
      `cat ${join(H.home, ".ssh", "id_test")} 2>&1`,
      `cat ${join(H.ws, ".mam", "worktrees", "other", "notes.txt")} 2>&1`,
      `cat ${team} 2>&1`,
      `ls ${join(H.ws, ".mam")} 2>&1 | head -3`,
      `touch /usr/mam-sandbox-probe 2>&1`,
      `echo out > ${join(H.ws, "outside.txt")} 2>&1`,
      `(exec 3<>/dev/tcp/127.0.0.1/${otherPort} && cat <&3) 2>&1 | head -1`,
      "echo probe-end",
    ].join("; ");
  }, 60_000);

  afterAll(async () => {
    other?.close();
    await endRealAgentHost(H, api, sb);
  }, 60_000);

  test("--worktree --sandbox bwrap --net model: a job done and reported; nothing planted outside its worktree is read; stop → resume keeps the conversation", async () => {
    const c = JSON.parse(await H.ok(["create", "--agent", "claude", "--role", "worker", "--session", "w", "--mux", "tmux", "--tmux-server", H.tmux, "--no-onboard", "--worktree", "--sandbox", "bwrap", "--json", "--", "--permission-mode", "default", "--allowedTools", "Bash"]));
    expect(c).toMatchObject({ at_prompt: true });
    const sid: string = c.session_id;
    const st = JSON.parse(await H.ok(["status", "--json"])).sessions.find((s: { name: string }) => s.name === "w");
    expect(st.sandbox).toBe("bwrap, net model");
    const explained = await H.ok(["sandbox", "explain", "w"]);
    expect(explained).toContain(`${H.ws}/.mam/worktrees/w`);
    expect(explained).toContain(new URL(api.url).host);

    const id = (await H.ok(["job", "submit", "--to", "w", "--prompt", "Probe the sandbox"])).trim();
    const done = await H.mam(["job", "wait", id, "--timeout", "120"], {}, 130_000);
    expect(done.code, `${done.stdout}${done.stderr}\n${H.visible("w")}\n${H.log()}`).toBe(0);
    expect(H.journal(id).map((e) => e.event)).toEqual(["started", "completed"]);
    // its usage is read from its records as outside (they live in its own store, bound read-write)
    expect(await waitFor(async () => (JSON.parse(await H.ok(["job", "status", id, "--json"])).usage.tokens?.total ?? 0) > 0, 30_000, 250)).toBe(true);
    // what the model's shell saw: the tool output of the probe is the third turn's
    const probeTurn = api.turns("anthropic").find((t) => isJobText(t) && t.toolOutputs.length === 2)!;
    const seen = probeTurn.toolOutputs[1]!;
    expect(seen).toContain("probe-end");
    for (const secret of ["SSH-SECRET", "OTHER-WORKTREE", "TEAM-SECRET", "other-service", "agent-sessions.yaml"]) expect(seen).not.toContain(secret);
    expect(seen).toContain("Read-only file system");
    // a write outside the worktree went to the sandbox's empty layer, never to the machine
    expect(existsSync(join(H.ws, "outside.txt"))).toBe(false);
    expect(existsSync("/usr/mam-sandbox-probe")).toBe(false);
    // inside the worktree it commits (its .git is the workspace's)
    const commitTurn = api.turns("anthropic").find((t) => isJobText(t) && t.toolOutputs.length === 3)!;
    expect(commitTurn.toolOutputs[2], commitTurn.toolOutputs[2]).toContain("committed");
    expect(Bun.spawnSync(["git", "log", "--format=%an %s", "-1", "w"], { cwd: H.ws }).stdout.toString()).toBe("sandboxed inside\n");

    // stop → resume: the same conversation, in the same sandbox
    await H.ok(["stop", "w"]);
    const r = JSON.parse(await H.ok(["resume", "w", "--json"]));
    expect(r.session_id).toBe(sid);
    const reg = await Bun.file(`${H.ws}/.mam/agent-sessions.yaml`).text();
    expect(reg).toContain("sandbox exec");
    expect(reg).toContain(`--resume ${sid}`);
    expect(await waitFor(() => H.visible("w").includes("Probe the sandbox"), 60_000, 200), H.visible("w")).toBe(true);
    // a hard stop leaves nothing of it running
    await H.ok(["stop", "w", "--hard"]);
    expect(await waitFor(() => anchoredPids(join(sb.root, "hs")).every((p) => !/sandbox exec|bwrap|claude/.test(Bun.spawnSync(["ps", "-o", "args=", "-p", String(p)]).stdout.toString())), 10_000, 100)).toBe(true);
  }, 300_000);

  test("claude's config in the home folder (~/.claude.json, no CLAUDE_CONFIG_DIR), in the workspace: a job done; the file stays claude's, the conversation comes back", async () => {
    const api2 = startModelApi(jobWorker({ detail: "done" }));
    const H2 = realAgentHost(sb.root, "hh", { ...NO_BROKER, MAM_BWRAP: BWRAP! }, api2);
    try {
      delete H2.env.CLAUDE_CONFIG_DIR;
      seedClaudeConfig(H2.home, H2.ws);
      mkdirSync(join(H2.home, ".claude"), { recursive: true });
      const c = JSON.parse(await H2.ok(["create", "--agent", "claude", "--role", "worker", "--session", "v", "--mux", "tmux", "--tmux-server", H2.tmux, "--no-onboard", "--sandbox", "bwrap", "--net", "model", "--json"]));
      expect(c).toMatchObject({ at_prompt: true });
      const id = (await H2.ok(["job", "submit", "--to", "v", "--prompt", "Say hello"])).trim();
      const done = await H2.mam(["job", "wait", id, "--timeout", "120"], {}, 130_000);
      expect(done.code, `${done.stdout}${done.stderr}\n${H2.visible("v")}\n${H2.log()}`).toBe(0);
      // claude kept its records where it keeps them outside: its conversation, its settings file
      const projects = join(H2.home, ".claude", "projects");
      expect(readdirSync(projects).flatMap((d) => readdirSync(join(projects, d))).some((f) => f === `${c.session_id}.jsonl`)).toBe(true);
      // written by claude inside (a file bound on its own cannot be renamed over: claude writes it in place then)
      const cfg = JSON.parse(readFileSync(join(H2.home, ".claude.json"), "utf8"));
      expect(cfg.hasCompletedOnboarding).toBe(true);
      expect(cfg.numStartups, JSON.stringify(cfg).slice(0, 400)).toBeGreaterThan(0);
      await H2.ok(["stop", "v"]);
      const r = JSON.parse(await H2.ok(["resume", "v", "--json"]));
      expect(r.session_id).toBe(c.session_id);
      expect(await waitFor(() => H2.visible("v").includes("Say hello"), 60_000, 200), H2.visible("v")).toBe(true);
      await H2.ok(["stop", "v", "--hard"]);
    } finally {
      await H2.stop();
      await api2.stop();
    }
  }, 300_000);

  test("codex in a sandbox, --net model with its provider's endpoint allowed: a job done and reported", async () => {
    const api3 = startModelApi(jobWorker({ detail: "done" }));
    const H3 = realAgentHost(sb.root, "hc", { ...NO_BROKER, MAM_BWRAP: BWRAP! }, api3);
    try {
      // codex's provider is in its config.toml, not its environment: its endpoint is given with --allow
      const c = JSON.parse(await H3.ok(["create", "--agent", "codex", "--role", "worker", "--session", "x", "--mux", "tmux", "--tmux-server", H3.tmux, "--no-onboard", "--sandbox", "bwrap", "--allow", new URL(api3.url).host, "--json"]));
      expect(c).toMatchObject({ at_prompt: true });
      const id = (await H3.ok(["job", "submit", "--to", "x", "--prompt", "Say hello"])).trim();
      const done = await H3.mam(["job", "wait", id, "--timeout", "120"], {}, 130_000);
      expect(done.code, `${done.stdout}${done.stderr}\n${H3.visible("x")}\n${H3.log()}`).toBe(0);
      expect(H3.journal(id).map((e) => e.event)).toEqual(["started", "completed"]);
      await H3.ok(["stop", "x", "--hard"]);
    } finally {
      await H3.stop();
      await api3.stop();
    }
  }, 300_000);
});
