// The fake herdr's transport and CLI contract (herdr.md §1.2–1.5, §2.1, §3.1–3.5): sessions and
// socket resolution, server_not_running, usage errors, protocol_mismatch, the one-request
// connection, invalid_request, pane environment, close cascades and their events.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { join } from "node:path";
import { isListening, openStream } from "../fakes/herdr/common/client.ts";
import { type FakeHerdrServer, herdrApiError, herdrJson, herdrSchemaErrors, installFakeAgents, installFakeHerdr, startFakeHerdr } from "../helpers/herdr.ts";
import { type RunResult, run } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";

let sb: Sandbox;
let a: FakeHerdrServer;
let b: FakeHerdrServer;
let herdr: string;

beforeAll(async () => {
  sb = makeSandbox("mam-fhc-");
  herdr = installFakeHerdr(sb.bin);
  [a, b] = await Promise.all([startFakeHerdr(sb, { session: "a" }), startFakeHerdr(sb, { session: "b" })]);
  await a.call("workspace.create", { cwd: sb.ws, label: "in-a" });
  await b.call("workspace.create", { cwd: sb.ws, label: "in-b" });
});

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await sb.cleanup();
});

function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<RunResult> {
  return run([herdr, ...args], { env: sb.with(env), cwd: sb.ws });
}

const json = herdrJson;

const apiErr = herdrApiError;

const labelOf = async (r: RunResult) => json(r).result.workspaces[0]?.label;

/** one raw connection: write what is given, collect every line until the server closes */
function rawExchange(payload: string | Buffer, end = false): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const c = createConnection(a.socket);
    let buf = "";
    c.setEncoding("utf8");
    c.on("data", (d: string) => (buf += d));
    c.on("close", () => resolve(buf.split("\n").filter(Boolean)));
    c.on("error", reject);
    c.write(payload, () => {
      if (end) c.end();
    });
  });
}

describe("sessions and socket resolution", () => {
  test("--session > HERDR_SOCKET_PATH > HERDR_SESSION > default, --session anywhere before --", async () => {
    expect(await labelOf(await cli(["--session", "a", "workspace", "list"]))).toBe("in-a");
    expect(await labelOf(await cli(["workspace", "list", "--session=b"]))).toBe("in-b");
    expect(await labelOf(await cli(["workspace", "list"], { HERDR_SESSION: "a" }))).toBe("in-a");
    expect(await labelOf(await cli(["workspace", "list"], { HERDR_SESSION: "a", HERDR_SOCKET_PATH: b.socket }))).toBe("in-b");
    expect(await labelOf(await cli(["workspace", "list", "--session", "a"], { HERDR_SESSION: "b", HERDR_SOCKET_PATH: b.socket }))).toBe("in-a");
  });

  test("an empty or invalid HERDR_SESSION is a usage error (exit 2), unless something else decides", async () => {
    for (const bad of ["", "no/slash", "."]) {
      const r = await cli(["workspace", "list"], { HERDR_SESSION: bad });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.length).toBeGreaterThan(0);
    }
    expect(await labelOf(await cli(["workspace", "list"], { HERDR_SESSION: "", HERDR_SOCKET_PATH: a.socket }))).toBe("in-a");
  });

  test("no server: server_not_running on stderr with herdr's message, exit 1", async () => {
    const r = await cli(["--session", "nope", "workspace", "create"]);
    const v = apiErr(r, "server_not_running");
    expect(v.id).toBe("cli:workspace:create");
    const sock = join(sb.home, ".config", "herdr", "sessions", "nope", "herdr.sock");
    expect(v.error.message).toBe(`no herdr server is running at ${sock}; run \`herdr session attach nope\` to start or attach it`);
    const d = apiErr(await cli(["pane", "list"]), "server_not_running");
    expect(d.error.message).toBe(`no herdr server is running at ${join(sb.home, ".config", "herdr", "herdr.sock")}; run \`herdr\` to start or attach it`);
    // silent commands fail loudly too
    apiErr(await cli(["--session", "nope", "pane", "run", "w1:p1", "ls"]), "server_not_running");
  });

  test("socket mode 0600; a second server on a live socket refuses; a stale socket is replaced", async () => {
    expect(statSync(a.socket).mode & 0o777).toBe(0o600);
    const r = await run([herdr, "--session", "a", "server"], { env: sb.env, cwd: sb.ws, timeoutMs: 10_000 });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("already running");
    const c = await startFakeHerdr(sb, { session: "stale" });
    await c.stop();
    writeFileSync(join(sb.root, "marker"), "");
    // leave a dead socket file behind, as a crash would
    const net = await import("node:net");
    const srv = net.createServer();
    await new Promise<void>((res) => srv.listen(c.socket, () => res()));
    srv.close();
    const d = await startFakeHerdr(sb, { session: "stale" });
    expect(await isListening(d.socket)).toBe(true);
    await d.stop();
  });

  test("session list --json and session stop --json", async () => {
    const c = await startFakeHerdr(sb, { session: "c" });
    await c.call("workspace.create", { cwd: sb.ws });
    const shell = (await c.call("pane.process_info", { pane_id: "w1:p1" })).process_info as any;
    const list = JSON.parse((await cli(["session", "list", "--json"])).stdout);
    const by = Object.fromEntries(list.sessions.map((s: any) => [s.name, s]));
    expect(list.sessions[0]).toMatchObject({ name: "default", default: true, running: false });
    expect(by.a).toMatchObject({ default: false, running: true, socket_path: a.socket, session_dir: join(sb.home, ".config", "herdr", "sessions", "a") });
    expect(by.c.running).toBe(true);
    const stop = await cli(["session", "stop", "c", "--json"]);
    expect(stop.code).toBe(0);
    expect(JSON.parse(stop.stdout)).toMatchObject({ stopped: true, session: { name: "c", running: false } });
    expect(await waitFor(() => !existsPid(shell.shell_pid), 5000)).toBe(true);
    await c.stop();
    const again = await cli(["session", "stop", "c", "--json"]);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr).error.code).toBe("session_stop_failed");
  });

  test("protocol_mismatch when the server speaks another protocol", async () => {
    const p = await startFakeHerdr(sb, { session: "p20", protocol: 20 });
    try {
      const v = apiErr(await cli(["--session", "p20", "workspace", "list"]), "protocol_mismatch");
      expect(v.error.message).toBe("client protocol 19 is older than server protocol 20; upgrade the Herdr client before using this command");
      expect(json(await cli(["--session", "p20", "workspace", "list"], { FAKE_HERDR_PROTOCOL: "20" })).result.type).toBe("workspace_list");
      // herdr status as src/cli/status.rs prints it: the client's protocol, the server's ping, compatible
      // (the CLI's own output, not an API line: no schema to check it against)
      const statusJson = async (args: string[], env: Record<string, string> = {}) => {
        const r = await cli(args, env);
        expect(r.code, r.stderr).toBe(0);
        return JSON.parse(r.stdout);
      };
      expect(await statusJson(["--session", "p20", "status", "--json"])).toMatchObject({
        client: { version: "0.8.0", protocol: 19 },
        server: { status: "running", version: "0.8.0", protocol: 20, compatible: false, restart_needed: false },
      });
      expect(await statusJson(["--session", "p20", "status", "server", "--json"], { FAKE_HERDR_PROTOCOL: "20" })).toMatchObject({ running: true, protocol: 20, compatible: true });
      expect(await statusJson(["--session", "nobody", "status", "server", "--json"])).toMatchObject({ status: "not_running", running: false, protocol: null });
      expect(await statusJson(["status", "client", "--json"], { FAKE_HERDR_VERSION: "0.8.2" })).toMatchObject({ version: "0.8.2", channel: "stable", protocol: 20 });
    } finally {
      await p.stop();
    }
  });
});

function existsPid(pid: number): boolean {
  try {
    return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return false;
  }
}

describe("CLI usage errors exit 2 with plain text", () => {
  test.each([
    [["pane", "split", "--direction", "right", "w1:p1"]],
    [["workspace", "create", "--cwd=/tmp"]],
    [["pane", "get"]],
    [["pane", "get", "w1:p1", "extra"]],
    [["pane", "list", "--bogus"]],
    [["pane", "split", "w1:p1"]],
    [["pane", "split", "w1:p1", "--direction", "left"]],
    [["agent", "prompt", "rev-1"]],
    [["agent", "prompt", "rev-1", "hi", "--timeout", "100"]],
    [["agent", "wait", "rev-1", "--until", "ready"]],
    [["agent", "start", "x", "--pane", "w1:p1"]],
    [["frobnicate"]],
    [[]],
  ])("herdr %p", async (args) => {
    const r = await cli(["--session", "a", ...args]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().length).toBeGreaterThan(0);
    expect(r.stderr.startsWith("{")).toBe(false);
  });

  test("a bad --source is a raw error, exit 1", async () => {
    const r = await cli(["--session", "a", "pane", "read", "w1:p1", "--source", "screen"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("Error: invalid read source: screen\n");
    // so is a bad number of lines in 0.8.0 (parse_u32_flag(..)?; HEAD: exit 2)
    const n = await cli(["--session", "a", "pane", "read", "w1:p1", "--lines", "many"]);
    expect({ code: n.code, stdout: n.stdout, stderr: n.stderr }).toEqual({ code: 1, stdout: "", stderr: "Error: invalid value for --lines: many\n" });
  });
});

describe("the socket protocol", () => {
  test("bad JSON, unknown method, missing or invalid params: invalid_request with id \"\"", async () => {
    const cases = [
      "{nope\n",
      `${JSON.stringify({ id: "x", method: "pane.frob", params: {} })}\n`,
      `${JSON.stringify({ id: "x", method: "pane.list" })}\n`,
      `${JSON.stringify({ id: "x", method: "pane.read", params: { pane_id: "w1:p1" } })}\n`,
      `${JSON.stringify({ id: "x", method: "agent.start", params: { name: "a", kind: "claude", pane_id: "w1:p1", timeout_ms: "soon" } })}\n`,
    ];
    for (const c of cases) {
      const lines = await rawExchange(c);
      expect(lines).toHaveLength(1);
      const v = JSON.parse(lines[0]!);
      expect(herdrSchemaErrors(v)).toBe("");
      expect(v).toMatchObject({ id: "", error: { code: "invalid_request" } });
      expect(v.error.message).toStartWith("invalid request: ");
    }
  });

  test("one request per connection: later lines are ignored", async () => {
    const two = `${JSON.stringify({ id: "1", method: "workspace.list", params: {} })}\n${JSON.stringify({ id: "2", method: "workspace.create", params: {} })}\n`;
    const lines = await rawExchange(two);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!).id).toBe("1");
    expect((await a.call("workspace.list")).workspaces).toHaveLength(1);
  });

  test("a line without newline is taken at EOF; an id is echoed; unknown params fields are ignored", async () => {
    const lines = await rawExchange(JSON.stringify({ id: "req-7", method: "ping", params: { extra: 1 } }), true);
    expect(JSON.parse(lines[0]!)).toMatchObject({ id: "req-7", result: { type: "pong", protocol: 19 } });
  });

  test("a line over 1 MiB is refused", async () => {
    const big = `${JSON.stringify({ id: "x", method: "pane.send_text", params: { pane_id: "w1:p1", text: "y".repeat(1024 * 1024 + 10) } })}\n`;
    const lines = await rawExchange(big);
    expect(JSON.parse(lines[0]!)).toMatchObject({ id: "", error: { code: "invalid_request" } });
  });

  test("the schema self-check: a line that fails the schema is recorded and stop() fails", async () => {
    const c = await startFakeHerdr(sb, { session: "selfcheck" });
    const r = await c.request("fake.respond", { result: { type: "pane_info", pane: { pane_id: "w1:p1" } } });
    expect(r.result).toEqual({ type: "pane_info", pane: { pane_id: "w1:p1" } });
    const v = await c.violations();
    expect(v).toHaveLength(1);
    expect(v[0]).toContain("missing required property 'terminal_id'");
    await expect(c.stop()).rejects.toThrow("fail herdr's schema");
  });

  test("fake.* controls exist only in the fake; errors use herdr's codes", async () => {
    expect((await a.request("pane.get", { pane_id: "w9:p9" })).error).toEqual({ code: "pane_not_found", message: "pane w9:p9 not found" });
    expect(((await a.request("pane.send_keys", { pane_id: "w1:p1", keys: ["Enter", "bogus"] })).error as any).code).toBe("invalid_key");
    expect(((await a.request("workspace.create", { cwd: sb.ws, env: { "A=B": "x" } })).error as any).code).toBe("invalid_env");
    expect(((await a.request("tab.get", { tab_id: "w1:t9" })).error as any).code).toBe("tab_not_found");
  });
});

describe("panes", () => {
  test("the pane environment: HERDR_* of the pane and server, caller env, herdr's variables win", async () => {
    const out = join(sb.root, "env.txt");
    const ws = (await a.call("workspace.create", { cwd: sb.ws, env: { MAM_TASK: "t42", HERDR_PANE_ID: "spoofed" } })) as any;
    const pane = ws.root_pane.pane_id;
    await a.call("pane.send_input", { pane_id: pane, text: `env > '${out}'`, keys: ["Enter"] });
    expect(await waitFor(() => readFileSync(out, { flag: "a+" }).toString().includes("HERDR_PANE_ID"), 5000)).toBe(true);
    const env = Object.fromEntries(
      readFileSync(out, "utf8")
        .split("\n")
        .filter((l) => l.includes("="))
        .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
    );
    expect(env).toMatchObject({
      HERDR_ENV: "1",
      HERDR_SOCKET_PATH: a.socket,
      HERDR_WORKSPACE_ID: ws.workspace.workspace_id,
      HERDR_TAB_ID: ws.tab.tab_id,
      HERDR_PANE_ID: pane,
      HERDR_SESSION: "a",
      MAM_TASK: "t42",
      TERM: "xterm-256color",
      COLORTERM: "truecolor",
    });
    expect(env.BASH_ENV).toBeUndefined();
    // 0.8.0 gives HERDR_BIN_PATH only to plugin panes and custom commands (audit #5)
    expect(env.HERDR_BIN_PATH).toBeUndefined();
    expect(env.PWD).toBe(sb.ws);
    await a.call("workspace.close", { workspace_id: ws.workspace.workspace_id });
  });

  test("pane current: the caller's pane from HERDR_PANE_ID, else the focused pane", async () => {
    const ws = (await a.call("workspace.create", { cwd: sb.ws })) as any;
    const pane = ws.root_pane.pane_id;
    expect(json(await cli(["--session", "a", "pane", "current"], { HERDR_PANE_ID: pane })).result.pane.pane_id).toBe(pane);
    expect(json(await cli(["--session", "a", "pane", "current", "--pane", pane])).result.pane.pane_id).toBe(pane);
    expect(json(await cli(["--session", "a", "pane", "current"])).result.pane.pane_id).toBe("w1:p1");
    await a.call("workspace.close", { workspace_id: ws.workspace.workspace_id });
  });

  test("wait-output: an immediate match, a later match, a timeout, a bad regex", async () => {
    const ws = (await a.call("workspace.create", { cwd: sb.ws })) as any;
    const pane = ws.root_pane.pane_id;
    await a.call("pane.send_input", { pane_id: pane, text: "echo ready-1", keys: ["Enter"] });
    const first = json(await cli(["--session", "a", "pane", "wait-output", pane, "--match", "ready-1", "--timeout", "5000"]));
    expect(first.result).toMatchObject({ type: "output_matched", pane_id: pane, revision: 0 });
    expect(first.result.read.source).toBe("recent_unwrapped");
    const later = cli(["--session", "a", "pane", "wait-output", pane, "--regex", "^done-[0-9]+$", "--timeout", "10000"]);
    await a.call("pane.send_input", { pane_id: pane, text: "sleep 0.3; echo done-$((6*7))", keys: ["Enter"] });
    expect(json(await later).result.matched_line).toBe("done-42");
    const t = apiErr(await cli(["--session", "a", "pane", "wait-output", pane, "--match", "never-there", "--timeout", "300"]), "timeout");
    expect(t.id).toBe("cli:pane:wait-output");
    apiErr(await cli(["--session", "a", "pane", "wait-output", pane, "--regex", "(", "--timeout", "300"]), "invalid_regex");
    await a.call("workspace.close", { workspace_id: ws.workspace.workspace_id });
  });

  test("ctrl+c interrupts the foreground job and the pane is a free shell again", async () => {
    const ws = (await a.call("workspace.create", { cwd: sb.ws })) as any;
    const pane = ws.root_pane.pane_id;
    await a.call("pane.send_input", { pane_id: pane, text: "sleep 60", keys: ["Enter"] });
    // foreground_processes is omitted for a moment while the terminal's foreground group has no
    // live member (the job just died, the shell has not taken the terminal back), as in herdr
    const fg = async () => (((await a.call("pane.process_info", { pane_id: pane })) as any).process_info.foreground_processes ?? []).map((p: any) => p.name);
    expect(await waitFor(async () => (await fg()).includes("sleep"), 5000)).toBe(true);
    const busy = await a.request("agent.start", { name: "x1", kind: "claude", pane_id: pane });
    expect((busy.error as any).code).toBe("agent_pane_busy");
    expect((await cli(["--session", "a", "pane", "send-keys", pane, "ctrl+c"])).code).toBe(0);
    expect(await waitFor(async () => (await fg()).join() === "bash", 5000)).toBe(true);
    await a.call("workspace.close", { workspace_id: ws.workspace.workspace_id });
  });
});

describe("tabs and focus", () => {
  test("tab create/list/close; a split by workspace uses its focused pane; focus moves with --focus", async () => {
    const w = (await a.call("workspace.create", { cwd: sb.ws })) as any;
    const wid = w.workspace.workspace_id;
    const t = json(await cli(["--session", "a", "tab", "create", "--workspace", wid, "--cwd", sb.ws, "--label", "second"]));
    expect(t.result.tab).toMatchObject({ tab_id: `${wid}:t2`, number: 2, label: "second", focused: false, pane_count: 1 });
    expect(t.result.root_pane.pane_id).toBe(`${wid}:p2`);
    const tabs = json(await cli(["--session", "a", "tab", "list", "--workspace", wid])).result.tabs;
    expect(tabs.map((x: any) => [x.tab_id, x.label])).toEqual([
      [`${wid}:t1`, "1"],
      [`${wid}:t2`, "second"],
    ]);
    // no target: the focused pane of that workspace (its active tab t1 → p1)
    const split = (await a.call("pane.split", { workspace_id: wid, direction: "right" })) as any;
    expect(split.pane).toMatchObject({ pane_id: `${wid}:p3`, tab_id: `${wid}:t1` });
    const focused = json(await cli(["--session", "a", "pane", "split", `${wid}:p2`, "--direction", "down", "--no-focus", "--focus"])).result.pane;
    expect(focused).toMatchObject({ pane_id: `${wid}:p4`, tab_id: `${wid}:t2`, focused: true });
    const ws = json(await cli(["--session", "a", "workspace", "get", wid])).result.workspace;
    expect(ws).toMatchObject({ focused: true, active_tab_id: `${wid}:t2`, tab_count: 2, pane_count: 4 });
    expect(json(await cli(["--session", "a", "tab", "close", `${wid}:t2`])).result).toEqual({ type: "ok" });
    expect(json(await cli(["--session", "a", "workspace", "get", wid])).result.workspace).toMatchObject({ active_tab_id: `${wid}:t1`, tab_count: 1, pane_count: 2 });
    apiErr(await cli(["--session", "a", "pane", "get", `${wid}:p4`]), "pane_not_found");
    json(await cli(["--session", "a", "workspace", "focus", "w1"]));
    expect(json(await cli(["--session", "a", "workspace", "rename", wid, "renamed", "ws"])).result.workspace.label).toBe("renamed ws");
    expect(json(await cli(["--session", "a", "workspace", "close", wid])).result.type).toBe("ok");
  });
});

describe("long-lived requests", () => {
  const waitReq = (pane: string) => ({ id: "w", method: "pane.wait_for_output", params: { pane_id: pane, source: "recent", match: { type: "substring", value: "never-printed-xyz" } } });

  test("a client that disconnects cancels its wait", async () => {
    const waiting = async () => (await a.state()).waiting as number;
    const before = await waiting();
    const s = await openStream(a.socket, waitReq("w1:p1"));
    expect(await waitFor(async () => (await waiting()) === before + 1, 3000)).toBe(true);
    s.close();
    expect(await waitFor(async () => (await waiting()) === before, 3000)).toBe(true);
  });

  test("server.stop closes pending waits and subscriptions without a response", async () => {
    const c = await startFakeHerdr(sb, { session: "waits" });
    await c.call("workspace.create", { cwd: sb.ws });
    const w = await openStream(c.socket, waitReq("w1:p1"));
    const sub = await c.subscribe([{ type: "pane.closed" }]);
    expect((await sub.next(3000))?.result).toEqual({ type: "subscription_started" });
    await c.stop();
    expect(await w.next(3000)).toBeUndefined();
    expect(await sub.next(3000)).toBeUndefined();
  });
});

describe("fake.restart", () => {
  test("keeps ids, labels and cwd; fresh shells with new terminal ids; names and waits gone; the workspace counter quirk", async () => {
    installFakeAgents(sb.bin, ["claude"]);
    const c = await startFakeHerdr(sb, { session: "restart" });
    const w1 = (await c.call("workspace.create", { cwd: sb.ws })) as any;
    const p1 = w1.root_pane.pane_id;
    await c.call("pane.rename", { pane_id: p1, label: "mam:keep" });
    await c.call("workspace.create", { cwd: sb.home });
    const w3 = (await c.call("workspace.create", { cwd: sb.root })) as any;
    await c.call("workspace.close", { workspace_id: w3.workspace.workspace_id });
    json(await cli(["--session", "restart", "agent", "start", "keeper", "--kind", "claude", "--pane", p1]));
    const before = ((await c.call("pane.get", { pane_id: p1 })) as any).pane;
    const shellBefore = ((await c.call("pane.process_info", { pane_id: p1 })) as any).process_info.shell_pid;
    const w = await openStream(c.socket, { id: "w", method: "pane.wait_for_output", params: { pane_id: p1, source: "recent", match: { type: "substring", value: "never-xyz" } } });
    await c.restart();
    expect(await w.next(3000)).toBeUndefined();
    const after = ((await c.call("pane.get", { pane_id: p1 })) as any).pane;
    expect(after).toMatchObject({ pane_id: p1, label: "mam:keep", cwd: sb.ws, agent_status: "unknown" });
    expect(after.terminal_id).not.toBe(before.terminal_id);
    expect("agent" in after).toBe(false);
    expect(((await c.request("agent.get", { target: "keeper" })).error as any).code).toBe("agent_not_found");
    const pi = ((await c.call("pane.process_info", { pane_id: p1 })) as any).process_info;
    expect(pi.shell_pid).not.toBe(shellBefore);
    expect(pi.foreground_processes.map((p: any) => p.name)).toEqual(["bash"]);
    // the highest workspace (w3) was closed before the restart: its id is issued again
    expect(((await c.call("workspace.create", { cwd: sb.ws })) as any).workspace.workspace_id).toBe("w3");
    // the input log runs on across the restart
    expect((await c.inputs(p1)).filter((i) => i.text === "claude")).toHaveLength(1);
    await c.stop();
  });
});

describe("api", () => {
  test("api snapshot: the whole session, schema-valid, with layouts and the focus path", async () => {
    const v = json(await cli(["--session", "a", "api", "snapshot"]));
    const snap = v.result.snapshot;
    expect(snap).toMatchObject({ version: "0.8.0", protocol: 19, focused_workspace_id: "w1", focused_tab_id: "w1:t1", focused_pane_id: "w1:p1" });
    expect(snap.workspaces.map((w: any) => w.workspace_id)).toEqual(["w1"]);
    expect(snap.layouts[0]).toMatchObject({ workspace_id: "w1", tab_id: "w1:t1", zoomed: false, focused_pane_id: "w1:p1" });
    expect(snap.layouts[0].panes.map((p: any) => p.pane_id)).toEqual(snap.panes.filter((p: any) => p.tab_id === "w1:t1").map((p: any) => p.pane_id));
  });

  test("api schema --json prints the vendored schema", async () => {
    const r = await cli(["api", "schema", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(readFileSync(join(import.meta.dir, "..", "fakes", "herdr", "herdr-api.schema.json"), "utf8")));
  });
});

describe("close cascades and their events", () => {
  test("workspace.close → only workspace_closed; tab.close → tab_closed (+ workspace_closed); pane exit → pane_exited, pane_closed, workspace_closed", async () => {
    const w = (await b.call("workspace.create", { cwd: sb.ws })) as any;
    const wid = w.workspace.workspace_id;
    await b.call("pane.split", { target_pane_id: w.root_pane.pane_id, direction: "right" });
    const t2 = (await b.call("tab.create", { workspace_id: wid, cwd: sb.ws })) as any;
    const w3 = (await b.call("workspace.create", { cwd: sb.ws })) as any;
    const w4 = (await b.call("workspace.create", { cwd: sb.ws })) as any;
    const sub = await b.subscribe([{ type: "pane.closed" }, { type: "pane.exited" }, { type: "tab.closed" }, { type: "workspace.closed" }, { type: "pane.created" }]);
    const ack = await sub.next(5000);
    expect(ack).toMatchObject({ result: { type: "subscription_started" } });
    expect(herdrSchemaErrors(ack)).toBe("");
    await b.call("tab.close", { tab_id: t2.tab.tab_id });
    await b.call("workspace.close", { workspace_id: wid });
    await b.call("tab.close", { tab_id: w3.tab.tab_id });
    await b.call("pane.send_input", { pane_id: w4.root_pane.pane_id, text: "exit", keys: ["Enter"] });
    const events: any[] = [];
    const deadline = Date.now() + 15_000;
    const created = () => events.filter((e) => e.event === "pane_created").length;
    // one event per entry per 100 ms poll: the replayed pane_created events (6) drain slowly
    while (Date.now() < deadline && !(created() >= 6 && events.some((e) => e.event === "workspace_closed" && e.data.workspace_id === w4.workspace.workspace_id))) {
      const e = await sub.next(15_000);
      if (!e) break;
      expect(herdrSchemaErrors(e)).toBe("");
      events.push(e);
    }
    sub.close();
    const closes = events.filter((e) => e.event !== "pane_created").map((e) => `${e.event}:${e.data.pane_id ?? e.data.tab_id ?? e.data.workspace_id}`);
    const w4p = w4.root_pane.pane_id;
    // each entry drains its own queue, so compare per kind
    expect(closes.filter((c) => c.startsWith("tab_closed"))).toEqual([`tab_closed:${t2.tab.tab_id}`, `tab_closed:${w3.tab.tab_id}`]);
    expect(closes.filter((c) => c.startsWith("workspace_closed"))).toEqual([`workspace_closed:${wid}`, `workspace_closed:${w3.workspace.workspace_id}`, `workspace_closed:${w4.workspace.workspace_id}`]);
    // no pane_closed for the panes of closed tabs and workspaces: only the exited shell's pane
    expect(closes.filter((c) => c.startsWith("pane_")).sort()).toEqual([`pane_closed:${w4p}`, `pane_exited:${w4p}`]);
    // lifecycle subscriptions replay the ring: the pane_created events happened before subscribing
    expect(created()).toBe(6);
    const ws = (await b.call("workspace.list")).workspaces as any[];
    expect(ws.map((x) => x.workspace_id)).toEqual(["w1"]);
  });

  test("a subscription probe error comes instead of the acknowledgement", async () => {
    const s1 = await b.subscribe([{ type: "pane.agent_status_changed", pane_id: "w9:p9" }]);
    const e1 = await s1.next(5000);
    expect(e1).toMatchObject({ error: { code: "pane_not_found" } });
    expect(await s1.next(5000)).toBeUndefined();
    const s2 = await b.subscribe([{ type: "pane.output_matched", pane_id: "w1:p1", source: "recent", match: { type: "regex", value: "(" } }]);
    expect(await s2.next(5000)).toMatchObject({ error: { code: "invalid_regex" } });
  });

  test("pane.output_matched fires once per appearance", async () => {
    const sub = await b.subscribe([{ type: "pane.output_matched", pane_id: "w1:p1", source: "recent", match: { type: "substring", value: "MARK-77" } }]);
    expect((await sub.next(5000))?.result).toEqual({ type: "subscription_started" });
    await b.write("w1:p1", "x MARK-77 y\n");
    const e = await sub.next(5000);
    expect(herdrSchemaErrors(e)).toBe("");
    expect(e).toMatchObject({ event: "pane.output_matched", data: { pane_id: "w1:p1", read: { source: "recent_unwrapped" } } });
    expect((e as any).data.matched_line).toEndWith("x MARK-77 y");
    await expect(sub.next(400)).rejects.toThrow("no event");
    sub.close();
  });
});
