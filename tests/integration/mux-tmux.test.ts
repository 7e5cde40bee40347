// The tmux backend against a real tmux: a private -L server per test (socket in the sandbox),
// killed afterwards. Skipped, and counted as skipped, when tmux is not installed.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { MamError } from "../../lib/sys/errors.ts";
import { TmuxMux } from "../../lib/mux/tmux.ts";
import type { MuxPane, StartSpec } from "../../lib/mux/types.ts";
import { makeSandbox, waitFor, type Sandbox } from "../helpers/sandbox.ts";
import { ECHO_AGENT, FAILING_AGENT, killTmuxServer, TMUX_BIN, tmuxServerName, writeScript } from "../helpers/tmux.ts";

if (!TMUX_BIN) console.error("SKIPPING tests/integration/mux-tmux.test.ts: tmux is not installed (apt install tmux)");
const suite = describe.skipIf(!TMUX_BIN);

let sb: Sandbox;
let server: string;
let env: Record<string, string>;
let mux: TmuxMux;

beforeEach(() => {
  sb = makeSandbox("mam-tx-");
  server = tmuxServerName();
  env = sb.with({ TMUX_TMPDIR: sb.root });
  writeScript(sb.bin, "echo-agent", ECHO_AGENT);
  writeScript(sb.bin, "fail-agent", FAILING_AGENT);
  mux = new TmuxMux(server, env);
});
afterEach(async () => {
  await killTmuxServer(server, env, sb.root);
  await sb.cleanup();
});

function spec(session: string, argv: string[], extra: Partial<StartSpec> = {}): StartSpec {
  return { session, argv, cwd: sb.ws, env: {}, settleMs: 300, ...extra };
}

async function listed(): Promise<MuxPane[]> {
  const l = await mux.list();
  if (l.state !== "ok") throw new Error(`listing: ${l.state}: ${l.detail}`);
  return l.panes;
}

/** the server has no live pane: not running, or (while it exits) empty */
async function noPanes(): Promise<boolean> {
  const l = await mux.list();
  return l.state === "not-running" || (l.state === "ok" && l.panes.length === 0);
}

async function waitRead(paneId: string, needle: string): Promise<string> {
  let text = "";
  const ok = await waitFor(async () => (text = await mux.read(paneId, 100)).includes(needle), 5000);
  if (!ok) throw new Error(`pane ${paneId} never showed ${JSON.stringify(needle.slice(0, 80))}; it ends with:\n${text.slice(-1500)}`);
  return text;
}

suite("tmux backend", () => {
  test("list on a server that is not running: not-running, and claimPane/ensureRunning are no-ops", async () => {
    const l = await mux.list();
    expect(l.state).toBe("not-running");
    await mux.ensureRunning(false);
    expect(await mux.claimPane()).toBeUndefined();
  });

  test("start: one session per agent in the folder, labelled, listed in one call", async () => {
    const p = await mux.start(undefined, spec("api.worker:1", ["echo-agent"], { env: { MAM_TEST_VAR: "a b;c;" } }));
    expect(p.id).toMatch(/^%\d+$/);
    expect(p.workspaceId).toBe("api_worker_1");
    expect(p.label).toBe("mam:api.worker:1");
    expect(p.pid).toBeGreaterThan(0);
    const panes = await listed();
    expect(panes).toHaveLength(1);
    const row = panes[0]!;
    expect(row).toMatchObject({ id: p.id, workspaceId: "api_worker_1", label: "mam:api.worker:1", cwd: sb.ws, status: "unknown", pid: p.pid });
    // the env reached the agent, a trailing ";" included
    await waitRead(p.id, `echo-agent ready in ${sb.ws} (MAM_TEST_VAR=a b;c;)`);
  });

  test("start: PATH from the spec reaches the agent first (tmux would give it the client's PATH)", async () => {
    // the agent lives only in a folder that is on the spec's PATH, not on the caller's
    const only = join(sb.root, "onlyhere");
    mkdirSync(only);
    writeScript(only, "hidden-agent", ECHO_AGENT);
    const p = await mux.start(undefined, spec("pathy", ["hidden-agent"], { env: { PATH: `${only}:${env.PATH}` } }));
    await waitRead(p.id, "echo-agent ready");
    const environ = readFileSync(`/proc/${p.pid}/environ`, "utf8").split("\0");
    expect(environ.find((e) => e.startsWith("PATH="))).toBe(`PATH=${only}:${env.PATH}`);
  });

  test("start: a server that was exiting when new-session reached it is retried, not an error", async () => {
    // a stop that ended the server's last session right before this start: tmux answers
    // "server exited unexpectedly" (a real race, about 1 in 40 here); the stub makes it certain once
    const stubDir = join(sb.root, "stub");
    mkdirSync(stubDir);
    const flag = join(sb.root, "failed-once");
    writeScript(stubDir, "tmux", `if [[ " $* " == *" new-session "* && ! -e '${flag}' ]]; then : > '${flag}'; echo "server exited unexpectedly" >&2; exit 1; fi\nexec '${TMUX_BIN}' "$@"`);
    const stubbed = new TmuxMux(server, { ...env, PATH: `${stubDir}:${env.PATH}` });
    const p = await stubbed.start(undefined, spec("retry", ["echo-agent"]));
    expect(existsSync(flag)).toBe(true);
    expect((await listed()).map((x) => x.id)).toEqual([p.id]);
    await waitRead(p.id, "echo-agent ready");
  });

  test("label sets the exact mam name, read back as mam:<name>", async () => {
    const p = await mux.start(undefined, spec("lbl", ["echo-agent"]));
    await mux.label(p.id, "mam:other.name");
    expect((await listed())[0]!.label).toBe("mam:other.name");
    await expect(mux.label(p.id, "nolabel")).rejects.toThrow(/mam:<name>/);
  });

  test("sendText types a line (short, with a trailing ';', long, multi-line) and read captures it", async () => {
    const p = await mux.start(undefined, spec("io", ["echo-agent"]));
    await waitRead(p.id, "echo-agent ready");
    await mux.sendText(p.id, "hello world", true);
    await waitRead(p.id, "got: hello world");
    await mux.sendText(p.id, "-x ends with;", true);
    await waitRead(p.id, "got: -x ends with;");
    await mux.sendText(p.id, "typed ", false);
    await mux.sendText(p.id, "later", true);
    await waitRead(p.id, "got: typed later");
    // > 8000 bytes goes through a tmux buffer (paste); each line stays under the tty's line limit
    const long = Array.from({ length: 100 }, (_, i) => `line-${String(i).padStart(3, "0")} ${"y".repeat(80)}`).join("\n");
    await mux.sendText(p.id, long, true);
    const text = await waitRead(p.id, `got: line-099 ${"y".repeat(80)}`);
    expect(text).toContain(`got: line-098 ${"y".repeat(80)}`);
    expect(await mux.read(p.id, 1000)).toContain(`got: line-000 ${"y".repeat(80)}`);
    await mux.sendText(p.id, "one\ntwo", true);
    await waitRead(p.id, "got: two");
    expect(await mux.read(p.id, 100)).toContain("got: one");
    // read returns at most the lines asked for
    expect((await mux.read(p.id, 2)).trimEnd().split("\n")).toHaveLength(2);
  });

  test("processInfo: the agent is the pane's foreground process", async () => {
    const p = await mux.start(undefined, spec("proc", ["echo-agent", "--flag"]));
    const info = await mux.processInfo(p.id);
    expect(info.foreground.length).toBeGreaterThan(0);
    const fg = info.foreground[0]!;
    expect(fg.pid).toBe(p.pid!);
    expect(fg.argv.some((a) => a.endsWith("/echo-agent"))).toBe(true);
    expect(fg.argv).toContain("--flag");
    expect(fg.cwd).toBe(sb.ws);
  });

  test("sendKeys: ctrl+c ends the agent and its session goes away", async () => {
    const p = await mux.start(undefined, spec("keys", ["echo-agent"]));
    await waitRead(p.id, "echo-agent ready");
    await mux.sendKeys(p.id, ["ctrl+c"]);
    expect(await waitFor(noPanes, 5000)).toBe(true);
  });

  test("an agent that exits at once: the error names it, the pane and the last output; its session is gone", async () => {
    await mux.start(undefined, spec("keep", ["echo-agent"]));
    let err: unknown;
    try {
      await mux.start(undefined, spec("dies", ["fail-agent"]));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MamError);
    const e = err as MamError;
    expect(e.exitCode).toBe(1);
    expect(e.render()).toMatch(/^ERROR: fail-agent exited right after start in %\d+; last output: starting up \| Unable to connect to Anthropic services$/);
    const panes = await listed();
    expect(panes.map((p) => p.workspaceId)).toEqual(["keep"]);
  });

  test("a command that does not exist fails the same way, with the shell's complaint", async () => {
    const err = await mux.start(undefined, spec("nocmd", ["no-such-agent-xyz"], { agent: "claude" })).catch((e) => e);
    expect(err).toBeInstanceOf(MamError);
    expect((err as MamError).message).toMatch(/^claude exited right after start in %\d+; last output: .*no-such-agent-xyz.*not found/);
    expect(await noPanes()).toBe(true); // the only session is gone, so is the server
  });

  test("a live session of the same name is a conflict (exit 4); close is idempotent and ends the session", async () => {
    const p = await mux.start(undefined, spec("twice", ["echo-agent"]));
    const err = await mux.start(undefined, spec("twice", ["echo-agent"])).catch((e) => e);
    expect(err).toBeInstanceOf(MamError);
    expect((err as MamError).exitCode).toBe(4);
    await mux.close(p.id);
    expect(await noPanes()).toBe(true);
    await mux.close(p.id); // already gone: fine
    // the name is free again
    const q = await mux.start(undefined, spec("twice", ["echo-agent"]));
    expect((await listed()).map((x) => x.id)).toEqual([q.id]);
  });

  test("a caller inside another tmux (TMUX set) still reaches the private server", async () => {
    const inside = new TmuxMux(server, { ...env, TMUX: "/nonexistent/socket,1,0", TMUX_PANE: "%99" });
    const p = await inside.start(undefined, spec("nested", ["echo-agent"]));
    expect((await listed()).map((x) => x.id)).toEqual([p.id]);
  });

  test("a server tmux refuses to talk to is unreachable, not not-running", async () => {
    // tmux refuses a socket folder others may write to: nothing says the server is down
    const dir = join(sb.root, `tmux-${process.getuid!()}`);
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o777);
    const l = await mux.list();
    expect(l.state).toBe("unreachable");
    expect(l.state === "unreachable" && l.detail).toContain("unsafe permissions");
  });

  test("tmux missing from PATH is a clear error", async () => {
    const bare = new TmuxMux(server, { ...env, PATH: sb.bin });
    const err = await bare.start(undefined, spec("x", ["echo-agent"])).catch((e) => e);
    expect(err).toBeInstanceOf(MamError);
    expect((err as MamError).render()).toBe("ERROR: tmux not found on PATH; install tmux (3.0 or newer) or use --mux herdr");
    const l = await bare.list();
    expect(l.state).toBe("unreachable");
  });
});
