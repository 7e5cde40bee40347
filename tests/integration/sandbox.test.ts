// An agent in its own sandbox (docs/sandbox.md, issue 37), through the binary with real bwrap and
// real tmux: a demo agent in --sandbox bwrap does its job and reports through its supervisor; what
// a sandboxed process can read, write and reach, for each --net, with the supervisor itself (`mam
// sandbox exec`, what the pane runs) and a shell command in place of the agent; what mam runs
// inside and what it refuses there; the options' and the machine's errors, which change nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { readJournal } from "../../lib/jobs/store.ts";
import { bwrapBin, bwrapWorks } from "../helpers/bwrap.ts";
import { startSubscriber, type Subscriber, unreachableBrokerEnv } from "../helpers/daemon.ts";
import { MAM_CMD, type RunResult, runMam } from "../helpers/mam.ts";
import { anchoredPids, makeSandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "../helpers/tmux.ts";

const BWRAP = bwrapBin();
if (!TMUX_BIN) throw new Error("tmux is not installed: these tests need a real tmux (apt install tmux)");
if (!bwrapWorks(BWRAP)) throw new Error(`bubblewrap is needed and must work here (${BWRAP ?? "not found"}): .ci/run unpacks it into ~/.cache/mam/bwrap; they are not skipped on purpose`);

const sb = makeSandbox("mam-sbx-");
const server = tmuxServerName("mamsbx");
const env = sb.with({ TMUX_TMPDIR: sb.root, ...unreachableBrokerEnv, MAM_BWRAP: BWRAP!, MAM_MUX: "tmux", MAM_TMUX_SERVER: server });
let daemon: Subscriber;
let open: Server;
let other: Server;
let openPort = 0;
let otherPort = 0;

const mam = (args: string[], more: Record<string, string | undefined> = {}) => runMam([...args, "--workspace", sb.ws], { env: { ...env, ...more } as Record<string, string>, cwd: sb.ws, timeoutMs: 60_000 });
function ok(r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`mam exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}
/** a process's command line ("" once it is gone or a zombie) */
function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}
/** what of the sandbox's runs under the test's folder: supervisors, bwrap, the agents */
const leftovers = (re: RegExp) => anchoredPids(sb.root).map((p) => `${p} ${cmdline(p)}`).filter((l) => re.test(l));
const registry = () => (existsSync(join(sb.ws, ".mam", "agent-sessions.yaml")) ? readFileSync(join(sb.ws, ".mam", "agent-sessions.yaml"), "utf8") : "");

/** `sh -c script` as a sandboxed agent of session `session` would run, through the supervisor */
function inSandbox(script: string, net: string, allow: string[] = [], session = "probe"): Promise<RunResult> {
  return runMam(["sandbox", "exec", "--workspace", sb.ws, "--session", session, "--kind", "demo", "--net", net, ...allow.flatMap((a) => ["--allow", a]), "--bwrap", BWRAP!, "--", "sh", "-c", script], { env, cwd: sb.ws, timeoutMs: 30_000 });
}

/** a TCP connect from inside to 127.0.0.1:port: what it read, or "refused" */
const connectProbe = (port: number) => `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3' 2>/dev/null || echo refused`;

beforeAll(async () => {
  daemon = startSubscriber(sb, join(sb.root, "daemon.log"), env);
  open = createServer((c) => c.end("open-service\n"));
  other = createServer((c) => c.end("other-service\n"));
  await new Promise<void>((r) => open.listen(0, "127.0.0.1", r));
  await new Promise<void>((r) => other.listen(0, "127.0.0.1", r));
  openPort = (open.address() as { port: number }).port;
  otherPort = (other.address() as { port: number }).port;
  // what a sandbox must hide
  mkdirSync(join(sb.home, ".ssh"), { recursive: true });
  writeFileSync(join(sb.home, ".ssh", "id_test"), "SSH-SECRET\n");
  mkdirSync(join(sb.ws, ".mam", "worktrees", "other"), { recursive: true });
  writeFileSync(join(sb.ws, ".mam", "worktrees", "other", "notes.txt"), "OTHER-WORKTREE\n");
  writeFileSync(join(sb.ws, "README.txt"), "the workspace's own file\n");
});

afterAll(async () => {
  open?.close();
  other?.close();
  await daemon?.kill();
  await killTmuxServer(server, env, sb.root);
  await sb.cleanup();
});

describe("a demo agent in a sandbox", () => {
  test("does its job and reports through its supervisor; status and explain say what it sees; a hard stop leaves nothing running", async () => {
    ok(await mam(["create", "--agent", "demo", "--role", "worker", "--session", "d1", "--sandbox", "bwrap", "--net", "none"]));
    const reg = registry();
    expect(reg).toContain("sandbox exec");
    expect(reg).toContain("sandbox: {mode: bwrap, net: none}");
    const id = ok(await mam(["job", "submit", "--to", "d1", "--prompt", "hello from outside"])).stdout.trim();
    const w = await mam(["job", "wait", id, "--timeout", "30"]);
    expect(w.code, `${w.stdout}${w.stderr}`).toBe(0);
    const evs = readJournal(sb.ws, id).map((e) => [e.event, e.source]);
    expect(evs[0]).toEqual(["started", "d1"]);
    expect(evs.at(-1)).toEqual(["completed", "d1"]);
    const st = JSON.parse(ok(await mam(["status", "--json"])).stdout).sessions[0];
    expect(st.sandbox).toBe("bwrap, net none");
    expect(ok(await mam(["status"])).stdout).toContain("d1: ");
    expect(ok(await mam(["status"])).stdout).toContain(" · sandbox bwrap, net none");
    const ex = ok(await mam(["sandbox", "explain", "d1"])).stdout;
    expect(ex).toContain("d1: sandbox bwrap, --net none");
    expect(ex).toMatch(new RegExp(`${sb.ws}/\\.mam\\s+empty`));
    expect(ex).toMatch(new RegExp(`${sb.home}\\s+empty`));
    expect(ex).toContain("network: none");
    const exj = JSON.parse(ok(await mam(["sandbox", "explain", "d1", "--json"])).stdout);
    expect(exj.mounts[0]).toEqual({ type: "ro", path: "/", why: "the system, read-only" });
    ok(await mam(["stop", "d1", "--hard"]));
    const left = () => leftovers(/sandbox exec|bwrap|demo-agent/);
    expect(await waitFor(() => left().length === 0, 10_000, 100), left().join("\n")).toBe(true);
  }, 90_000);

  test("a session without a sandbox says so", async () => {
    ok(await mam(["create", "--agent", "demo", "--role", "worker", "--session", "plain", "--no-onboard"]));
    expect(ok(await mam(["sandbox", "explain", "plain"])).stdout).toBe("plain: no sandbox (it runs as you, with everything you can read and reach)\n");
    expect(JSON.parse(ok(await mam(["status", "--json"])).stdout).sessions.find((s: { name: string }) => s.name === "plain").sandbox).toBeUndefined();
    ok(await mam(["stop", "plain", "--hard"]));
    expect((await mam(["sandbox", "explain", "nobody"])).code).toBe(3);
  }, 60_000);
});

describe("what a sandboxed process reads, writes and reaches", () => {
  test("the workspace read-write but its .mam/ empty; HOME empty; the system read-only; writes outside never reach the machine", async () => {
    const r = await inSandbox(
      [
        "cat README.txt",
        `cat ${sb.home}/.ssh/id_test 2>&1 || true`,
        `cat ${sb.ws}/.mam/worktrees/other/notes.txt 2>&1 || true`,
        `ls -A ${sb.ws}/.mam | wc -l`,
        "echo made > made-inside.txt && echo wrote-workspace",
        `echo x > ${sb.home}/in-home.txt && echo wrote-home-layer`,
        "touch /usr/sandbox-probe 2>&1 || true",
        "ls /run/mam",
      ].join("; "),
      "none",
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("the workspace's own file");
    expect(r.stdout).not.toContain("SSH-SECRET");
    expect(r.stdout).not.toContain("OTHER-WORKTREE");
    expect(r.stdout).toContain("No such file or directory");
    expect(r.stdout).toMatch(/^0$/m); // .mam/ is empty inside
    expect(r.stdout).toContain("wrote-workspace");
    expect(readFileSync(join(sb.ws, "made-inside.txt"), "utf8")).toBe("made\n");
    expect(r.stdout).toContain("wrote-home-layer");
    expect(existsSync(join(sb.home, "in-home.txt"))).toBe(false);
    expect(r.stdout).toContain("Read-only file system");
    expect(r.stdout).toContain("mam.sock");
  }, 30_000);

  test("--net none reaches nothing; model only its allowed endpoints, at their own address; all everything", async () => {
    const none = await inSandbox(`${connectProbe(openPort)}; ${connectProbe(otherPort)}`, "none");
    expect(none.stdout.split("\n").filter(Boolean)).toEqual(["refused", "refused"]);
    const model = await inSandbox(`${connectProbe(openPort)}; ${connectProbe(otherPort)}`, "model", [`127.0.0.1:${openPort}`]);
    expect(model.stdout.split("\n").filter(Boolean)).toEqual(["open-service", "refused"]);
    const all = await inSandbox(`${connectProbe(openPort)}; ${connectProbe(otherPort)}`, "all");
    expect(all.stdout.split("\n").filter(Boolean)).toEqual(["open-service", "other-service"]);
  }, 60_000);

  test("the exit status is the agent's; a signal to the supervisor ends it, and nothing stays", async () => {
    expect((await inSandbox("exit 7", "none")).code).toBe(7);
    const p = Bun.spawn([...MAM_CMD, "sandbox", "exec", "--workspace", sb.ws, "--session", "probe", "--kind", "demo", "--net", "none", "--bwrap", BWRAP!, "--", "sleep", "300"], { env, cwd: sb.ws, stdout: "ignore", stderr: "ignore" });
    expect(await waitFor(() => leftovers(/^\d+ sleep 300/).length === 1, 10_000, 50)).toBe(true);
    p.kill("SIGTERM");
    expect(await p.exited).toBe(143);
    expect(await waitFor(() => leftovers(/^\d+ (sleep|\S*bwrap)/).length === 0, 5000, 50), leftovers(/./).join("\n")).toBe(true);
  }, 30_000);
});

describe("mam inside a sandbox", () => {
  test("its own job's events go through; another session's job, another workspace and other commands are refused", async () => {
    ok(await mam(["create", "--agent", "demo", "--role", "worker", "--session", "d2", "--no-onboard"]));
    const mine = ok(await mam(["job", "submit", "--to", "d2", "--prompt", "x"])).stdout.trim();
    const m = MAM_CMD.join(" ");
    const r = await inSandbox(
      [
        `${m} job status ${mine} --workspace ${sb.ws} >/dev/null; echo "status=$?"`,
        `${m} job event ${mine} progress --detail from-inside --source d2 --workspace /elsewhere; echo "elsewhere=$?"`,
        `${m} job event ${mine} progress --detail no --source d2 --token abc; echo "token=$?"`,
        `${m} registry rebuild; echo "registry=$?"`,
      ].join("; "),
      "none",
      [],
      "intruder",
    );
    expect(r.stdout).toContain("status=2");
    expect(r.stderr).toContain(`ERROR: job ${mine} is not intruder's: a sandboxed agent reports on its own jobs only`);
    expect(r.stdout).toContain("elsewhere=2");
    expect(r.stderr).toContain(`ERROR: --workspace /elsewhere: a sandboxed agent acts in its own workspace (${sb.ws}) only`);
    expect(r.stdout).toContain("token=2");
    expect(r.stderr).toContain("ERROR: --token is not taken from inside a sandbox");
    expect(r.stdout).toContain("registry=2");
    expect(r.stderr).toContain("ERROR: `mam registry rebuild` does not run inside a sandbox: the workspace's .mam/ is hidden here");
    // as its own session the event goes through, and is journalled as d2's
    const own = await inSandbox(`${m} job event ${mine} progress --detail from-inside --source d2 --workspace ${sb.ws}; echo "own=$?"`, "none", [], "d2");
    expect(own.stdout, own.stderr).toContain("own=0");
    expect(readJournal(sb.ws, mine).some((e) => e.event === "progress" && e.detail === "from-inside")).toBe(true);
    ok(await mam(["stop", "d2", "--hard"]));
  }, 60_000);

  test("an agent's hooks report its state through the supervisor, as its own session (its stdin goes along)", async () => {
    const m = MAM_CMD.join(" ");
    const r = await inSandbox(`echo '{"hook_event_name":"Stop"}' | ${m} agent-report --hook claude; echo "hook=$?"; ${m} agent-report --state idle --session other; echo "other=$?"`, "none", [], "hooky");
    expect(r.stdout, r.stderr).toContain("hook=0");
    expect(JSON.parse(readFileSync(join(sb.ws, ".mam", "agent-state", "hooky.json"), "utf8"))).toMatchObject({ session: "hooky", state: "idle" });
    expect(r.stdout).toContain("other=2");
    expect(existsSync(join(sb.ws, ".mam", "agent-state", "other.json"))).toBe(false);
  }, 30_000);
});

describe("the workspace's default", () => {
  test("set, used by a create given no --sandbox, overridden by --sandbox none, forgotten; one that does not read stops a create", async () => {
    expect(ok(await mam(["sandbox", "default"])).stdout).toContain("no sandbox default");
    ok(await mam(["sandbox", "default", "bwrap", "--net", "none"]));
    expect(JSON.parse(ok(await mam(["sandbox", "default", "--json"])).stdout)).toEqual({ workspace: sb.ws, default: { sandbox: "bwrap", net: "none" } });
    ok(await mam(["create", "--agent", "demo", "--role", "worker", "--session", "dflt", "--no-onboard"]));
    expect(registry()).toMatch(/name: dflt[\s\S]*sandbox: \{mode: bwrap, net: none\}/);
    ok(await mam(["create", "--agent", "demo", "--role", "worker", "--session", "nodflt", "--no-onboard", "--sandbox", "none"]));
    expect(JSON.parse(ok(await mam(["status", "--json"])).stdout).sessions.find((s: { name: string }) => s.name === "nodflt").sandbox).toBeUndefined();
    for (const n of ["dflt", "nodflt"]) ok(await mam(["stop", n, "--hard"]));
    const bad = await mam(["sandbox", "default", "bwrap", "--net", "none", "--allow", "a.b:1"]);
    expect(bad).toMatchObject({ code: 2 });
    expect(bad.stderr).toContain("ERROR: --allow goes with --net model");
    writeFileSync(join(sb.ws, ".mam", "sandbox.json"), '{"sandbox": "bwrap", "net": "wide"}\n');
    const before = registry();
    const r = await mam(["create", "--agent", "demo", "--role", "worker", "--session", "broken", "--no-onboard"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`ERROR: the workspace's sandbox default ${sb.ws}/.mam/sandbox.json does not read: "net" must be one of none, model, all`);
    expect(registry()).toBe(before);
    ok(await mam(["sandbox", "default", "none"]));
    expect(existsSync(join(sb.ws, ".mam", "sandbox.json"))).toBe(false);
  }, 60_000);
});

describe("bad options and a machine that cannot: an ERROR line, nothing made", () => {
  const refused = async (args: string[], code: number, text: string, more: Record<string, string | undefined> = {}) => {
    const before = registry();
    const r = await mam(["create", "--agent", "demo", "--role", "worker", "--session", "bad", ...args], more);
    expect(r.code, r.stderr).toBe(code);
    expect(r.stderr).toContain(text);
    expect(registry()).toBe(before);
  };
  test("options", async () => {
    await refused(["--net", "none"], 2, "ERROR: --net goes with --sandbox bwrap");
    await refused(["--sandbox", "podman"], 2, "--sandbox");
    await refused(["--sandbox", "bwrap", "--net", "model", "--allow", "nohost"], 2, "ERROR: --allow: 'nohost' is not HOST:PORT");
    await refused(["--sandbox", "bwrap", "--net", "all", "--allow", "a.example:443"], 2, "ERROR: --allow goes with --net model");
    await refused(["--sandbox", "bwrap", "--mux", "herdr"], 2, "ERROR: --sandbox bwrap runs on tmux only for now");
    const mcp = await mam(["create", "--agent", "claude", "--role", "worker", "--session", "bad", "--sandbox", "bwrap", "--mcp"]);
    expect(mcp.stderr).toContain("ERROR: --mcp cannot go with --sandbox bwrap: mam's MCP server needs the workspace the sandbox hides");
    const g = await mam(["create", "--agent", "gemini", "--role", "worker", "--session", "bad", "--sandbox", "bwrap"]);
    expect(g.code).toBe(2);
    expect(g.stderr).toContain("ERROR: --sandbox is not available for gemini agents yet");
    await refused([], 2, "MAM_SANDBOX: 'docker' is not one of none, bwrap", { MAM_SANDBOX: "docker" });
  }, 60_000);

  test("no bwrap, or one that cannot make a sandbox", async () => {
    await refused(["--sandbox", "bwrap"], 1, "ERROR: MAM_BWRAP=/nonexistent/bwrap is not an executable file", { MAM_BWRAP: "/nonexistent/bwrap" });
    await refused(["--sandbox", "bwrap"], 1, "ERROR: --sandbox bwrap: bwrap is not installed", { MAM_BWRAP: undefined, PATH: "/usr/bin:/bin" });
    const fake = join(sb.root, "bwrap-denied");
    writeFileSync(fake, "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n", { mode: 0o755 });
    await refused(["--sandbox", "bwrap"], 1, "ERROR: --sandbox bwrap: bwrap cannot make a sandbox on this machine: bwrap: No permissions to create new namespace", { MAM_BWRAP: fake });
  }, 60_000);
});
