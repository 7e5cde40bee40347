// The fake herdr against herdr.md's contract: the common mam flow through the CLI (workspace,
// pane split/run/read/process-info/rename/close, agent start/get/list/prompt, report-agent).
// Every JSON line the fake prints is checked against the vendored herdr API schema.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type FakeHerdrServer, herdrApiError, herdrSchemaErrors, installFakeAgents, installFakeHerdr, startFakeHerdr } from "../helpers/herdr.ts";
import type { RunResult } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";

let sb: Sandbox;
let h: FakeHerdrServer;

beforeAll(async () => {
  sb = makeSandbox("mam-fh-");
  installFakeHerdr(sb.bin);
  installFakeAgents(sb.bin);
  h = await startFakeHerdr(sb, { session: "core" });
});

afterAll(async () => {
  await h?.stop();
  await sb.cleanup();
});

/** parse stdout (success) as one JSON line, check it against the schema */
function ok(r: RunResult): any {
  if (r.code !== 0) throw new Error(`exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  expect(r.stderr).toBe("");
  const lines = r.stdout.split("\n").filter(Boolean);
  expect(lines.length).toBe(1);
  const v = JSON.parse(lines[0]!);
  expect(herdrSchemaErrors(v)).toBe("");
  return v;
}

/** an API error: nothing on stdout, one JSON line on stderr, exit 1 */
const apiErr = herdrApiError;

describe("fake herdr: workspaces and panes", () => {
  test("workspace create gives w1 + t1 + p1, focused as the first workspace, cwd verbatim, optionals omitted", async () => {
    const v = ok(await h.herdr(["workspace", "create", "--cwd", sb.ws, "--no-focus"]));
    expect(v.id).toBe("cli:workspace:create");
    expect(v.result.type).toBe("workspace_created");
    expect(v.result.workspace).toMatchObject({ workspace_id: "w1", number: 1, focused: true, pane_count: 1, tab_count: 1, active_tab_id: "w1:t1", agent_status: "unknown" });
    expect(v.result.tab).toMatchObject({ tab_id: "w1:t1", workspace_id: "w1", number: 1, label: "1", pane_count: 1 });
    const p = v.result.root_pane;
    expect(p).toMatchObject({ pane_id: "w1:p1", workspace_id: "w1", tab_id: "w1:t1", cwd: sb.ws, agent_status: "unknown", revision: 0 });
    expect(p.terminal_id).toMatch(/^term_[0-9a-f]+$/);
    for (const k of ["label", "agent", "agent_session", "title", "foreground_cwd"]) expect(k in p).toBe(false);
  });

  test("a second workspace is not focused; its label defaults to the folder name", async () => {
    const v = ok(await h.herdr(["workspace", "create", "--cwd", sb.home]));
    expect(v.result.workspace).toMatchObject({ workspace_id: "w2", number: 2, focused: false, label: "home" });
    const list = ok(await h.herdr(["workspace", "list"]));
    expect(list.result.workspaces.map((w: any) => w.workspace_id)).toEqual(["w1", "w2"]);
  });

  test("split, rename, close: ids are never reused, the label shows up", async () => {
    const s1 = ok(await h.herdr(["pane", "split", "w1:p1", "--direction", "right", "--cwd", sb.ws, "--no-focus"]));
    expect(s1.result.pane).toMatchObject({ pane_id: "w1:p2", focused: false, cwd: sb.ws });
    const r = ok(await h.herdr(["pane", "rename", "w1:p2", "mam:worker", "one"]));
    expect(r.result.pane.label).toBe("mam:worker one");
    // herdr keeps a label less its leading and trailing blanks, those inside it as given
    const padded = ok(await h.herdr(["pane", "rename", "w1:p2", "  mam:w (claude,  lead dev ) "]));
    expect(padded.result.pane.label).toBe("mam:w (claude,  lead dev )");
    ok(await h.herdr(["pane", "close", "w1:p2"]));
    const s2 = ok(await h.herdr(["pane", "split", "w1:p1", "--direction", "down"]));
    expect(s2.result.pane.pane_id).toBe("w1:p3");
    const cleared = ok(await h.herdr(["pane", "rename", "w1:p3", "--clear"]));
    expect("label" in cleared.result.pane).toBe(false);
    const list = ok(await h.herdr(["pane", "list", "--workspace", "w1"]));
    expect(list.result.panes.map((p: any) => p.pane_id)).toEqual(["w1:p1", "w1:p3"]);
    ok(await h.herdr(["pane", "close", "w1:p3"]));
    // 0.8.0: the pane may also be --pane ID, --current (HERDR_PANE_ID), or none (the focused pane)
    expect(ok(await h.herdr(["pane", "split", "--pane", "w1:p1", "--direction", "down"])).result.pane.pane_id).toBe("w1:p4");
    expect(ok(await h.herdr(["pane", "split", "--current", "--direction", "down"], { env: { ...sb.env, HERDR_PANE_ID: "w1:p4" } })).result.pane.pane_id).toBe("w1:p5");
    const focused = ok(await h.herdr(["pane", "list"])).result.panes.find((p: any) => p.focused).pane_id;
    const none = ok(await h.herdr(["pane", "split", "--direction", "right"])).result.pane;
    expect(none.pane_id).toBe(`${focused.split(":")[0]}:p${focused.startsWith("w1:") ? 6 : 2}`);
    for (const id of ["w1:p4", "w1:p5", none.pane_id]) ok(await h.herdr(["pane", "close", id]));
  });

  test("closing the last pane closes the workspace; workspace numbers only grow", async () => {
    ok(await h.herdr(["pane", "close", "w2:p1"]));
    apiErr(await h.herdr(["workspace", "get", "w2"]), "workspace_not_found");
    const v = ok(await h.herdr(["workspace", "create", "--cwd", sb.root]));
    expect(v.result.workspace.workspace_id).toBe("w3");
    expect(v.result.workspace.number).toBe(2);
    ok(await h.herdr(["workspace", "close", "w3"]));
  });

  test("pane run types into a real shell; read returns its output; send-text alone does not run", async () => {
    expect(await h.herdr(["pane", "run", "w1:p1", "echo", "hi-$((40+2))"])).toMatchObject({ code: 0, stdout: "", stderr: "" });
    const seen = await waitFor(async () => (await h.herdr(["pane", "read", "w1:p1"])).stdout.includes("\nhi-42"), 5000);
    expect(seen).toBe(true);
    // herdr counts --lines in rendered rows of scrollback + screen, blank screen rows included:
    // a few lines of output on a 50-row pane need --lines ≥ 50
    const text = await h.herdr(["pane", "read", "w1:p1", "--source", "recent-unwrapped", "--lines", "60"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/[$#] echo hi-\$\(\(40\+2\)\)\nhi-42\n/);
    expect((await h.herdr(["pane", "read", "w1:p1", "--source", "recent-unwrapped", "--lines", "5"])).stdout).toBe("");
    expect(await h.herdr(["pane", "send-text", "w1:p1", "echo", "typed"])).toMatchObject({ code: 0, stdout: "" });
    await Bun.sleep(200);
    expect((await h.herdr(["pane", "read", "w1:p1"])).stdout).not.toContain("\ntyped");
    expect(await h.herdr(["pane", "send-keys", "w1:p1", "Enter"])).toMatchObject({ code: 0, stdout: "" });
    expect(await waitFor(async () => (await h.herdr(["pane", "read", "w1:p1"])).stdout.includes("\ntyped"), 5000)).toBe(true);
    const inputs = await h.inputs("w1:p1");
    expect(inputs.map((i) => i.text ?? i.keys)).toEqual(["echo hi-$((40+2))", ["Enter"], "echo typed", ["Enter"]]);
  });

  test("process-info shows the shell of a free pane", async () => {
    const v = ok(await h.herdr(["pane", "process-info", "--pane", "w1:p1"]));
    const pi = v.result.process_info;
    expect(pi.pane_id).toBe("w1:p1");
    expect(pi.shell_pid).toBeGreaterThan(0);
    expect(pi.foreground_processes).toHaveLength(1);
    expect(pi.foreground_processes[0]).toMatchObject({ pid: pi.shell_pid, name: "bash", cwd: sb.ws });
    // 0.8.0's --current sends no pane id: the server's focused pane, whatever HERDR_PANE_ID says
    const cur = ok(await h.herdr(["pane", "process-info", "--current"], { env: { ...sb.env, HERDR_PANE_ID: "w9:p9" } }));
    expect(cur.result.process_info.pane_id).toBe("w1:p1");
  });
});

describe("fake herdr: agents", () => {
  let pane: string;

  beforeAll(async () => {
    const v = ok(await h.herdr(["pane", "split", "w1:p1", "--direction", "right", "--cwd", sb.ws]));
    pane = v.result.pane.pane_id;
  });

  test("agent start types the command once, waits for readiness, and prints agent_started", async () => {
    const uuid = "3f0c2d1e-1111-4222-8333-944445555666";
    const v = ok(await h.herdr(["agent", "start", "rev-1", "--kind", "claude", "--pane", pane, "--", "--session-id", uuid]));
    expect(v.id).toBe("cli:agent:start");
    expect(v.result.argv).toEqual(["claude", "--session-id", uuid]);
    expect(v.result.agent).toMatchObject({ name: "rev-1", agent: "claude", agent_status: "idle", pane_id: pane, interactive_ready: true });
    expect("launch_pending" in v.result.agent).toBe(false);
    const typed = (await h.inputs(pane)).filter((i) => i.text?.includes("claude"));
    expect(typed.map((i) => i.text)).toEqual([`claude --session-id ${uuid}`]);
    const pi = ok(await h.herdr(["pane", "process-info", "--pane", pane])).result.process_info;
    expect(pi.foreground_processes[0].name).toBe("claude");
    expect(pi.foreground_processes[0].argv).toContain(uuid);
    const pv = ok(await h.herdr(["pane", "get", pane])).result.pane;
    expect(pv).toMatchObject({ agent: "claude", agent_status: "idle" });
    // the conversation file the fake claude writes
    const store = `${sb.home}/.claude/projects/${sb.ws.replace(/[^A-Za-z0-9]/g, "-")}/${uuid}.jsonl`;
    expect(JSON.parse((await Bun.file(store).text()).split("\n")[0]!)).toMatchObject({ sessionId: uuid, cwd: sb.ws });
  });

  test("agent list and get show the named agent", async () => {
    const list = ok(await h.herdr(["agent", "list"]));
    expect(list.result.agents.map((a: any) => a.name)).toEqual(["rev-1"]);
    const byPane = ok(await h.herdr(["agent", "get", pane]));
    expect(byPane.result.agent.name).toBe("rev-1");
    apiErr(await h.herdr(["agent", "get", "nobody"]), "agent_not_found");
  });

  test("agent prompt --wait returns after the turn; the agent saw the text", async () => {
    const v = ok(await h.herdr(["agent", "prompt", "rev-1", "review the diff", "--wait", "--timeout", "20000"]));
    expect(v.result.type).toBe("agent_prompted");
    expect(["idle", "done"]).toContain(v.result.agent.agent_status);
    expect(v.result.agent.state_change_seq).toBeGreaterThanOrEqual(3);
    const text = await h.herdr(["agent", "read", "rev-1"]);
    expect(text.stdout).toContain("got: review the diff");
  });

  test("a second start into the busy pane is agent_pane_busy; a taken name is agent_name_taken", async () => {
    apiErr(await h.herdr(["agent", "start", "rev-2", "--kind", "claude", "--pane", pane]), "agent_pane_busy");
    apiErr(await h.herdr(["agent", "start", "rev-1", "--kind", "codex", "--pane", "w1:p1"]), "agent_name_taken");
  });

  test("the agent exits: the name is gone and the pane is a free shell again", async () => {
    expect((await h.herdr(["pane", "run", pane, "/exit"])).code).toBe(0);
    expect(await waitFor(async () => !("agent" in ok(await h.herdr(["pane", "get", pane])).result.pane), 5000)).toBe(true);
    const pv = ok(await h.herdr(["pane", "get", pane])).result.pane;
    expect(pv.agent_status).toBe("unknown");
    expect(ok(await h.herdr(["agent", "list"])).result.agents).toEqual([]);
    const again = ok(await h.herdr(["agent", "start", "rev-1", "--kind", "codex", "--pane", pane]));
    expect(again.result.agent).toMatchObject({ name: "rev-1", agent: "codex", interactive_ready: true });
    expect((await h.herdr(["pane", "run", pane, "/quit"])).code).toBe(0);
    expect(await waitFor(async () => ok(await h.herdr(["agent", "list"])).result.agents.length === 0, 5000)).toBe(true);
  });

  test("report-agent from a custom source is the state authority; the CLI prints nothing", async () => {
    const r = await h.herdr(["pane", "report-agent", "w1:p1", "--source", "custom:test", "--agent", "pi", "--state", "working", "--seq", "5"]);
    expect(r).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(ok(await h.herdr(["pane", "get", "w1:p1"])).result.pane).toMatchObject({ agent: "pi", agent_status: "working" });
    // a stale seq is ignored
    await h.herdr(["pane", "report-agent", "w1:p1", "--source", "custom:test", "--agent", "pi", "--state", "blocked", "--seq", "4"]);
    expect(ok(await h.herdr(["pane", "get", "w1:p1"])).result.pane.agent_status).toBe("working");
    await h.herdr(["pane", "report-agent", "w1:p1", "--source", "custom:test", "--agent", "pi", "--state", "blocked", "--seq", "6"]);
    expect(ok(await h.herdr(["pane", "get", "w1:p1"])).result.pane.agent_status).toBe("blocked");
    expect(await h.herdr(["pane", "release-agent", "w1:p1", "--source", "custom:test", "--agent", "pi"])).toMatchObject({ code: 0, stdout: "" });
    const pv = ok(await h.herdr(["pane", "get", "w1:p1"])).result.pane;
    expect(pv.agent_status).toBe("unknown");
    expect("agent" in pv).toBe(false);
  });
});
