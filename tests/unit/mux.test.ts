// Pure logic of the multiplexer backends: names, backend choice, herdr output and errors, tmux
// arguments and keys, process facts.
import { describe, expect, test } from "bun:test";
import { MamError } from "../../lib/sys/errors.ts";
import type { ExecResult } from "../../lib/mux/exec.ts";
import { lastOutput, shJoin } from "../../lib/mux/exec.ts";
import {
  callFailure,
  describeCall,
  HerdrError,
  herdrAgentName,
  parsePaneList,
  parseProcessInfo,
  parseResult,
  pickWorkspace,
  toMuxPane,
} from "../../lib/mux/herdr-proto.ts";
import { chooseBackend, chooseServer, resolveMuxTarget } from "../../lib/mux/index.ts";
import { isShellOnly, nonShellForeground, parseStat } from "../../lib/mux/procfs.ts";
import { renderShim } from "../../lib/mux/shim.ts";
import { deadPaneOutput, parsePaneLine, tmuxArg, tmuxKey, tmuxMissingTarget, tmuxNotRunning, tmuxExiting,
  tmuxSessionName } from "../../lib/mux/tmux.ts";
import { AgentPaneBusy, type MuxPane } from "../../lib/mux/types.ts";

const sha8 = (s: string) => new Bun.CryptoHasher("sha256").update(s).digest("hex").slice(0, 8);

describe("herdrAgentName (SPEC §5.2)", () => {
  test("a name that fits [a-z][a-z0-9_-]{0,31} is used as it is", () => {
    for (const n of ["api-worker-claude", "a", "x_y-z9", "a".repeat(32)]) expect(herdrAgentName(n)).toBe(n);
  });
  test("otherwise: lower-cased, . → -, m before a digit, cut to 23, then - and 8 hex of sha256(name)", () => {
    expect(herdrAgentName("Api.Worker")).toBe(`api-worker-${sha8("Api.Worker")}`);
    expect(herdrAgentName("9lives")).toBe(`m9lives-${sha8("9lives")}`);
    const long = "proj.sub-creator-claude-with-a-very-long-tail";
    expect(herdrAgentName(long)).toBe(`proj-sub-creator-claude-${sha8(long)}`);
    expect(herdrAgentName("a".repeat(33))).toBe(`${"a".repeat(23)}-${sha8("a".repeat(33))}`);
  });
  test("every valid session name gives a valid, distinct agent name", () => {
    const names = ["A", "0", "a.b", "a-b", "A.B", "x".repeat(64), "9.9", "Z_z.z-9"];
    const out = names.map((n) => herdrAgentName(n));
    for (const n of out) expect(n).toMatch(/^[a-z][a-z0-9_-]{0,31}$/);
    expect(new Set(out).size).toBe(names.length);
  });
  test("with a salt (the usual name is taken): always the derived form, hashed over name and salt", () => {
    expect(herdrAgentName("r2", "0a1b2c3d")).toBe(`r2-${sha8("r2\u00000a1b2c3d")}`);
    expect(herdrAgentName("r2", "x")).not.toBe(herdrAgentName("r2", "y"));
    for (const n of ["a", "A.B", "9x", "x".repeat(64)]) expect(herdrAgentName(n, "s")).toMatch(/^[a-z][a-z0-9_-]{0,23}-[0-9a-f]{8}$/);
  });
});

describe("backend and server choice (SPEC §3)", () => {
  const none = () => false;
  const only = (...cmds: string[]) => (c: string) => cmds.includes(c);
  test("--herdr-session → herdr; --mux; MAM_MUX; herdr on PATH; tmux on PATH; else exit 1", () => {
    expect(chooseBackend({ herdr_server: "s" }, {}, none)).toBe("herdr");
    expect(chooseBackend({ mux: "tmux" }, { MAM_MUX: "herdr" }, only("herdr"))).toBe("tmux");
    expect(chooseBackend({}, { MAM_MUX: "tmux" }, only("herdr"))).toBe("tmux");
    expect(chooseBackend({}, {}, only("herdr", "tmux"))).toBe("herdr");
    expect(chooseBackend({}, {}, only("tmux"))).toBe("tmux");
    expect(chooseBackend({}, { MAM_HERDR_BIN: "/opt/herdr" }, only("tmux"))).toBe("herdr");
    expect(chooseBackend({ tmux_server: "t" }, { MAM_MUX: "herdr" }, only("herdr"))).toBe("tmux");
    const e = (() => {
      try {
        chooseBackend({}, {}, none);
      } catch (x) {
        return x as MamError;
      }
    })()!;
    expect(e.exitCode).toBe(1);
    expect(e.render()).toBe("ERROR: neither herdr nor tmux is on PATH; install herdr (or set MAM_HERDR_BIN) or tmux, or pass --mux");
  });
  test("bad values and contradictions are usage errors", () => {
    expect(() => chooseBackend({ mux: "screen" }, {}, none)).toThrow("{{mux}} must be herdr or tmux (got 'screen')");
    expect(() => chooseBackend({}, { MAM_MUX: "zellij" }, none)).toThrow("MAM_MUX must be herdr or tmux");
    expect(() => chooseBackend({ herdr_server: "s", mux: "tmux" }, {}, none)).toThrow("contradict");
    for (const f of [() => chooseBackend({ mux: "x" }, {}, none), () => chooseServer("herdr", { herdr_server: "../x" }, {})]) {
      try {
        f();
        throw new Error("no throw");
      } catch (x) {
        expect((x as MamError).exitCode).toBe(2);
      }
    }
  });
  test("servers: herdr = --herdr-session, else the caller's own, else default; tmux = --tmux-server, else mam", () => {
    expect(chooseServer("herdr", { herdr_server: "team" }, { HERDR_SESSION: "mine" })).toBe("team");
    expect(chooseServer("herdr", { herdr_server: "default" }, { HERDR_SESSION: "mine" })).toBe("default");
    expect(chooseServer("herdr", {}, { HERDR_SESSION: "mine" })).toBe("mine");
    expect(chooseServer("herdr", {}, { HOME: "/h", HERDR_SOCKET_PATH: "/h/.config/herdr/sessions/sock-s/herdr.sock" })).toBe("sock-s");
    expect(chooseServer("herdr", {}, { HOME: "/h" })).toBe("default");
    expect(chooseServer("tmux", {}, {})).toBe("mam");
    expect(chooseServer("tmux", { tmux_server: "canary" }, {})).toBe("canary");
    expect(resolveMuxTarget({}, { HERDR_SESSION: "mine" }, () => true)).toEqual({ backend: "herdr", server: "mine" });
  });
});

const ok = (stdout: string): ExecResult => ({ code: 0, signal: null, stdout, stderr: "", timedOut: false, ms: 1 });
const fail = (code: number | null, stderr: string, extra: Partial<ExecResult> = {}): ExecResult => ({
  code,
  signal: null,
  stdout: "",
  stderr,
  timedOut: false,
  ms: 1,
  ...extra,
});

describe("herdr output and errors", () => {
  const args = ["pane", "split", "w1:p1", "--direction", "right"];
  test("describeCall names the command", () => {
    expect(describeCall(args)).toBe("herdr pane split");
    expect(describeCall(["agent", "start", "x"])).toBe("herdr agent start");
  });
  test("success: no failure; the result member is read, unknown fields ignored", () => {
    expect(callFailure(ok("{}"), args, "s", 1000)).toBeUndefined();
    const r = parseResult('{"id":"cli:pane:split","result":{"type":"pane_info","pane":{"pane_id":"w1:p2"},"future":1},"x":2}\n', args);
    expect(r.type).toBe("pane_info");
  });
  test("server_not_running → the exact message of SPEC §3", () => {
    const stderr = '{"id":"cli:pane:list","error":{"code":"server_not_running","message":"no herdr server is running at /x"}}\n';
    const e = callFailure(fail(1, stderr), ["pane", "list"], "mam", 1000) as HerdrError;
    expect(e).toBeInstanceOf(HerdrError);
    expect(e.code).toBe("server_not_running");
    expect(e.exitCode).toBe(1);
    expect(e.render()).toBe("ERROR: herdr server 'mam' is not running; start it with: herdr --session mam server");
  });
  test("agent_pane_busy → AgentPaneBusy (a MamError); other codes keep herdr's code and message", () => {
    const busy = callFailure(fail(1, '{"id":"x","error":{"code":"agent_pane_busy","message":"busy"}}'), ["agent", "start"], "s", 1000, "w1:p3");
    expect(busy).toBeInstanceOf(AgentPaneBusy);
    expect(busy).toBeInstanceOf(MamError);
    expect((busy as AgentPaneBusy).paneId).toBe("w1:p3");
    const e = callFailure(fail(1, 'noise\n{"id":"x","error":{"code":"pane_not_found","message":"pane w1:p9 not found"}}\n'), ["pane", "close", "w1:p9"], "s", 1000) as HerdrError;
    expect(e.code).toBe("pane_not_found");
    expect(e.message).toBe("herdr pane close failed on herdr server 's': pane_not_found: pane w1:p9 not found");
  });
  test("exit 2 is a usage mismatch (a bug); a timeout and a raw exit 1 are named", () => {
    const u = callFailure(fail(2, "unknown option: --bogus\n"), args, "s", 1000) as HerdrError;
    expect(u.code).toBe("mam_usage_mismatch");
    expect(u.message).toContain("herdr pane split rejected its arguments (exit 2: \"unknown option: --bogus\")");
    expect(u.message).toContain("usage mismatch");
    const t = callFailure(fail(null, "", { timedOut: true }), args, "s", 2500) as HerdrError;
    expect(t.code).toBe("mam_timeout");
    expect(t.message).toBe("herdr pane split did not answer within 2.5 s (herdr server 's')");
    const x = callFailure(fail(1, "Error: invalid --source\n"), ["pane", "read"], "s", 1000) as HerdrError;
    expect(x.code).toBe("mam_exit");
    expect(x.message).toBe("herdr pane read failed on herdr server 's' (exit 1): \"Error: invalid --source\"");
  });
  test("output that is not herdr's JSON names the command and shows the first bytes", () => {
    for (const junk of ["Segmentation fault", "", '{"id":"x"}', "[1,2]"]) {
      try {
        parseResult(junk, ["pane", "list"]);
        throw new Error("no throw");
      } catch (e) {
        expect(e).toBeInstanceOf(HerdrError);
        expect((e as HerdrError).code).toBe("mam_not_json");
        expect((e as Error).message).toStartWith("herdr pane list printed something that is not herdr's JSON: ");
      }
    }
    expect(() => parseResult("Segmentation fault", ["pane", "list"])).toThrow('"Segmentation fault"');
  });
  test("PaneInfo → MuxPane: optional fields absent when missing, unknown fields ignored, bad status → unknown", () => {
    expect(toMuxPane({ pane_id: "w1:p1", terminal_id: "t", workspace_id: "w1", tab_id: "w1:t1", focused: false, agent_status: "unknown", revision: 0 })).toEqual({
      id: "w1:p1",
      workspaceId: "w1",
      tabId: "w1:t1",
      status: "unknown",
    });
    expect(
      toMuxPane({ pane_id: "w1:p2", cwd: "/w", label: "mam:x", agent: "claude", agent_status: "done", agent_session: { value: "abc", source: "herdr:claude" }, new_field: {} }),
    ).toEqual({ id: "w1:p2", cwd: "/w", label: "mam:x", agent: "claude", status: "done", agentSessionId: "abc" });
    // the label mam writes now carries the kind and role it started the pane with (label.ts); an older mam's names only the session
    expect(toMuxPane({ pane_id: "w1:p4", label: "mam:x (codex, lead dev)", agent_status: "unknown" })).toEqual({ id: "w1:p4", label: "mam:x (codex, lead dev)", kind: "codex", role: "lead dev", status: "unknown" });
    expect(toMuxPane({ pane_id: "w1:p5", label: "notes (todo, later)", agent_status: "unknown" })).toEqual({ id: "w1:p5", label: "notes (todo, later)", status: "unknown" });
    expect(toMuxPane({ pane_id: "w1:p3", agent_status: "sleeping" })!.status).toBe("unknown");
    expect(toMuxPane({ name: "x" })).toBeUndefined();
    expect(parsePaneList({ type: "pane_list", panes: [{ pane_id: "w1:p1" }, { bogus: 1 }, 7] }, ["pane", "list"]).map((p) => p.id)).toEqual(["w1:p1"]);
    expect(() => parsePaneList({ type: "pane_info" }, ["pane", "list"])).toThrow(HerdrError);
  });
  test("process-info → ProcessInfo", () => {
    const info = parseProcessInfo({
      type: "pane_process_info",
      process_info: {
        pane_id: "w1:p1",
        shell_pid: 10,
        foreground_process_group_id: 12,
        foreground_processes: [{ pid: 12, name: "claude", argv0: "claude", argv: ["claude", "--x"], cmdline: "claude --x", cwd: "/w" }, { name: "nopid" }],
      },
    });
    expect(info).toEqual({ shellPid: 10, foreground: [{ pid: 12, name: "claude", argv: ["claude", "--x"], cwd: "/w" }] });
    expect(isShellOnly(info)).toBe(false);
    expect(isShellOnly(parseProcessInfo({ process_info: { shell_pid: 10, foreground_processes: [{ pid: 10, name: "zsh" }] } }))).toBe(true);
    expect(isShellOnly(parseProcessInfo({ process_info: { foreground_processes: [] } }))).toBe(true);
    expect(isShellOnly({ foreground: [{ pid: 3, name: "-bash", argv: [] }] })).toBe(true);
    expect(nonShellForeground({ foreground: [{ pid: 3, name: "bash", argv: [] }, { pid: 4, name: "aider", argv: [] }] }).map((p) => p.pid)).toEqual([4]);
  });
  test("pickWorkspace: the folder's workspace, deterministically", () => {
    const p = (id: string, ws: string, cwd?: string): MuxPane => ({ id, workspaceId: ws, status: "unknown", ...(cwd ? { cwd } : {}) });
    expect(pickWorkspace([p("w1:p1", "w1", "/a")], "/b")).toBeUndefined();
    expect(pickWorkspace([p("w1:p1", "w1", "/b"), p("w2:p1", "w2", "/b")], "/b")).toBe("w1");
    // a workspace entirely in the folder beats one that merely has a pane there
    expect(pickWorkspace([p("w1:p1", "w1", "/a"), p("w1:p2", "w1", "/b"), p("w3:p1", "w3", "/b")], "/b")).toBe("w3");
    expect(pickWorkspace([p("w1:p1", "w1", "/b"), p("w2:p1", "w2", "/b"), p("w2:p2", "w2", "/b")], "/b")).toBe("w2");
  });
});

describe("tmux arguments, keys and listings", () => {
  test("session names: . and : become _", () => {
    expect(tmuxSessionName("api.worker:1")).toBe("api_worker_1");
    expect(tmuxSessionName("plain-name")).toBe("plain-name");
  });
  test("a trailing ; is escaped so tmux does not end the command there", () => {
    expect(tmuxArg("ls;")).toBe("ls\\;");
    expect(tmuxArg(";")).toBe("\\;");
    expect(tmuxArg("a;b")).toBe("a;b");
  });
  test("herdr key names map to tmux names", () => {
    expect(["Enter", "esc", "TAB", "shift+tab", "backspace", "up", "pageDown", "f5", "ctrl+c", "C-c", "alt+x", "ctrl+enter", "space", "q", ";"].map(tmuxKey)).toEqual([
      "Enter",
      "Escape",
      "Tab",
      "BTab",
      "BSpace",
      "Up",
      "NPage",
      "F5",
      "C-c",
      "C-c",
      "M-x",
      "C-Enter",
      "Space",
      "q",
      "\\;",
    ]);
    expect(() => tmuxKey("hyper+q")).toThrow("unknown key 'hyper+q'");
  });
  test("stderr classification: not running vs a missing target vs anything else", () => {
    expect(tmuxNotRunning("no server running on /tmp/tmux-0/mam")).toBe(true);
    expect(tmuxNotRunning("error connecting to /tmp/tmux-0/mam (No such file or directory)")).toBe(true);
    expect(tmuxNotRunning("error connecting to /tmp/tmux-0/mam (Permission denied)")).toBe(false);
    expect(tmuxNotRunning("directory /tmp/tmux-0 has unsafe permissions")).toBe(false);
    // a server exiting after its last session ended (a client that reaches it meanwhile)
    expect(tmuxNotRunning("server exited unexpectedly")).toBe(false); // not definite: list() asks again
    expect(tmuxExiting("server exited unexpectedly")).toBe(true);
    expect(tmuxNotRunning("lost server")).toBe(false);
    expect(tmuxExiting("lost server")).toBe(true);
    expect(tmuxMissingTarget("can't find pane: %7")).toBe(true);
    // kill-session -t %0 reaching a server whose last session just ended (a graceful stop's race)
    expect(tmuxMissingTarget("no current target")).toBe(true);
  });
  test("deadPaneOutput: the agent's last output, else how the pane ended (output lost to the pty race)", () => {
    const dead = (s: string) => `Pane is dead (${s}, Mon Nov 30 06:44:46 2026)`;
    expect(deadPaneOutput(`starting up\nUnable to connect\n\n${dead("status 1")}\n`, "claude")).toBe("starting up | Unable to connect");
    expect(deadPaneOutput(`sh: 1: exec: nope: not found\n${dead("status 127")}`, "nope")).toBe("sh: 1: exec: nope: not found");
    expect(deadPaneOutput(dead("status 127"), "nope")).toBe("(none; exit status 127: nope: command not found)");
    expect(deadPaneOutput(`sh: 1: exec:\n${dead("status 127")}`, "nope")).toBe("sh: 1: exec: (exit status 127: nope: command not found)");
    expect(deadPaneOutput(dead("status 1"), "claude")).toBe("(none; exit status 1)");
    expect(deadPaneOutput(dead("signal 9"), "claude")).toBe("(none; exit signal 9)");
    expect(deadPaneOutput("", "claude")).toBe("(no output)");
  });
  test("list-panes lines: live panes with label, owning workspace, kind and role, process facts, dead panes dropped, tabs in cwd kept", () => {
    expect(parsePaneLine("%3\t4242\t0\tapi_worker\tapi.worker\tclaude\t/w\tclaude\tlead dev\t/w/a\tb")).toEqual({
      id: "%3",
      workspaceId: "api_worker",
      label: "mam:api.worker",
      owner: "/w",
      agent: "claude",
      role: "lead dev",
      status: "unknown",
      pid: 4242,
      cmd: "claude",
      cwd: "/w/a\tb",
    });
    expect(parsePaneLine("%4\t1\t0\tother\t\tbash\t\t\t\t/x")).toEqual({ id: "%4", workspaceId: "other", status: "unknown", pid: 1, cmd: "bash", cwd: "/x" });
    expect(parsePaneLine("%5\t1\t1\tdead\tdead\tsh\t\t\t\t")).toBeUndefined();
    // the formats before @mam_workspace (seven fields) and before @mam_agent/@mam_role (eight) are not taken for a pane
    expect(parsePaneLine("%6\t1\t0\tx\tx\tbash\t/x")).toBeUndefined();
    expect(parsePaneLine("%6\t1\t0\tx\tx\tbash\t/w\t/x")).toBeUndefined();
    expect(parsePaneLine("")).toBeUndefined();
  });
});

describe("small helpers", () => {
  test("lastOutput: the last non-blank lines, ANSI and tmux's dead-pane notice dropped", () => {
    expect(lastOutput("a\n\nb\n\u001b[31mc\u001b[0m\n\n")).toBe("a | b | c");
    expect(lastOutput("1\n2\n3\n4\n5\n6\n7", 3)).toBe("5 | 6 | 7");
    expect(lastOutput("boom\nPane is dead (status 1, Mon)\n")).toBe("boom");
    expect(lastOutput("  \n")).toBe("(no output)");
    expect(lastOutput("x".repeat(1000)).length).toBeLessThanOrEqual(401);
    // the echo of the typed command and the shell prompt that came back are not output
    expect(lastOutput("$ claude --x\nUnable to connect\n$ ", 5, "claude --x")).toBe("Unable to connect");
    expect(lastOutput("me@box:~/ws$ aider\nboom\nme@box:~/ws$ \n", 5, "aider")).toBe("boom");
  });
  test("shJoin quotes only what needs it", () => {
    expect(shJoin(["claude", "--session-id", "3f0c-1", "it's a b", ""])).toBe(`claude --session-id 3f0c-1 'it'\\''s a b' ''`);
  });
  test("parseStat copes with spaces and parentheses in comm", () => {
    expect(parseStat("123 (my (odd) proc) S 1 120 120 34816 130 4194560 …")).toEqual({ pid: 123, comm: "my (odd) proc", pgrp: 120, tpgid: 130 });
  });
  test("renderShim writes the mam command as a quoted bash array, $ and ' included", () => {
    const text = renderShim(["/opt/m a$m/mam", "it's"]);
    expect(text).toContain(`MAM_SHIM_MAM=('/opt/m a$m/mam' 'it'\\''s')`);
    expect(text.split("\n")[1]).toStartWith("# mam-herdr-shim:");
  });
});
