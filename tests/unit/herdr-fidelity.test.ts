// The pure decisions behind mam's herdr 0.8.0 fidelity (reference/herdr-0.8.0-audit.md), named
// after the audit findings.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isHerdrManaged } from "../../lib/agents/kinds/index.ts";
import { applyActions } from "../../lib/fleet/apply.ts";
import { classify, type ServerView } from "../../lib/fleet/classify.ts";
import { serverEnv } from "../../lib/mux/herdr.ts";
import { StartWatch } from "../../lib/mux/herdr-start.ts";
import { protocolOf, releaseOf, supportOf, unsupportedError, versionWarning, warningKey } from "../../lib/mux/herdr-version.ts";
import type { MuxPane } from "../../lib/mux/types.ts";
import type { Row } from "../../lib/registry/types.ts";
import { agentGone } from "../../lib/fleet/liveness.ts";
import { mayType, paneStateOf } from "../../lib/ops/session/at-prompt.ts";
import { ambientHerdrServer } from "../../lib/sys/paths.ts";
import { customHerdrSocket, isSocketServer, socketServerName } from "../../lib/mux/herdr-socket.ts";
import { chooseServer } from "../../lib/mux/index.ts";
import { claimLockName } from "../../lib/ops/session/launch.ts";

const WS = "/w/proj";
const shell = (id: string, extra: Partial<MuxPane> = {}): MuxPane => ({ id, status: "unknown", cwd: WS, label: "mam:a", ...extra });
const row = (agent: string, extra: Partial<Row> = {}): Row => ({ name: "a", status: "running", role: "worker", agent, herdr_server: "mam", herdr_session: "mam", pane: { id: "w1:p1" }, ...extra });
const view = (panes: MuxPane[]): ServerView => ({ backend: "herdr", server: "mam", listing: { state: "ok", panes } });

describe("audit #1: a pane alive with no agent in it", () => {
  test("herdr kinds: no agent and status unknown is gone; any agent or status is not", () => {
    expect(agentGone(shell("p"), "claude")).toBe(true);
    expect(agentGone(shell("p", { agent: "claude", status: "idle" }), "claude")).toBe(false);
    expect(agentGone(shell("p", { status: "working" }), "claude")).toBe(false);
    // a kind mam does not know came from herdr's detection: managed
    expect(agentGone(shell("p"), "pi")).toBe(true);
  });

  test("typed kinds: only the foreground tells (shellOnly); unknown status alone is not gone", () => {
    expect(isHerdrManaged("demo")).toBe(false);
    expect(isHerdrManaged("aider")).toBe(false);
    expect(isHerdrManaged("codex")).toBe(true);
    expect(agentGone(shell("p"), "aider")).toBe(false);
    expect(agentGone(shell("p", { shellOnly: true }), "aider")).toBe(true);
    expect(agentGone(shell("p", { shellOnly: false }), "aider")).toBe(false);
  });

  test("classify: LIVE dead, drift agent-exited, terminate with note 'agent exited'; tmux rows never", () => {
    const c = classify({ data: { herdr_sessions: [row("claude")], tmux_sessions: [] }, views: [view([shell("w1:p1")])], workspace: WS, now: 1 });
    expect(c.rows[0]!.live).toBe("dead");
    expect(c.drifts.map((d) => d.kind)).toEqual(["agent-exited"]);
    expect(c.actions).toEqual([{ type: "terminate", section: "herdr_sessions", name: "a", server: "mam", paneId: "w1:p1", reason: "agent exited" }]);
    const d = { herdr_sessions: [row("claude")], tmux_sessions: [] };
    applyActions(d, c.actions, 100);
    expect(d.herdr_sessions[0]).toMatchObject({ status: "terminated", last_visible_note: "agent exited", termination_mode: "auto-detected" });
    // the bare shell keeps its mam: label; it is not registered as a new session
    const again = classify({ data: d, views: [view([shell("w1:p1")])], workspace: WS, now: 2 });
    expect(again.actions).toEqual([]);
    const tmux = classify({
      data: { herdr_sessions: [], tmux_sessions: [{ name: "t", status: "running", role: "w", agent: "claude", tmux_server: "mam", pane: { id: "%1" } }] },
      views: [{ backend: "tmux", server: "mam", listing: { state: "ok", panes: [{ id: "%1", status: "unknown", label: "mam:t", cwd: WS }] } }],
      workspace: WS,
      now: 1,
    });
    expect(tmux.rows[0]!.live).toBe("unknown");
    expect(tmux.actions).toEqual([]);
  });
});

describe("audit #4: the start watch", () => {
  test("the agent seen in the foreground, then the bare shell for the confirm time → gone", () => {
    const w = new StartWatch(2000, 250, 1500);
    expect(w.feed(100, "shell")).toBe(false); // before it was typed
    expect(w.feed(300, "agent")).toBe(false);
    expect(w.appeared).toBe(true);
    expect(w.feed(450, "shell")).toBe(false);
    expect(w.feed(600, "shell")).toBe(false);
    expect(w.feed(700, "shell")).toBe(true);
  });
  test("back in the foreground resets; never seen nor typed → gone only after the grace time", () => {
    const w = new StartWatch(2000, 250, 1500);
    expect(w.feed(300, "agent")).toBe(false);
    expect(w.feed(400, "shell")).toBe(false);
    expect(w.feed(500, "agent")).toBe(false);
    expect(w.feed(700, "shell")).toBe(false);
    const never = new StartWatch(2000, 250, 1500);
    for (const t of [150, 600, 1200, 1900, 2100, 3000, 3500]) expect(never.feed(t, "shell")).toBe(false);
    expect(never.feed(3600, "shell")).toBe(true);
  });
  test("typed (the screen changed) but never recognised: gone after the longer confirm time, well before the grace time", () => {
    const w = new StartWatch(5000, 250, 1500);
    expect(w.feed(150, "shell")).toBe(false);
    expect(w.feed(300, "shell", true)).toBe(false);
    expect(w.feed(1000, "shell")).toBe(false);
    expect(w.feed(1800, "shell")).toBe(true);
  });
  test("a fresh pane's startup files (other processes, builtins between them) are not the agent exiting", () => {
    const w = new StartWatch(5000, 250, 1500);
    expect(w.feed(150, "other", true)).toBe(false); // pyenv init from .bashrc, our command echoed
    expect(w.feed(300, "shell")).toBe(false); // builtins between two startup commands
    expect(w.feed(450, "other")).toBe(false);
    expect(w.feed(1200, "agent")).toBe(false); // the rc is done: our agent runs
    expect(w.feed(1400, "agent")).toBe(false);
    expect(w.appeared).toBe(true);
  });
});

describe("audit #6: onboarding readiness", () => {
  test("idle/done at the prompt; working waits; blocked or a dialog is never typed into", () => {
    expect(paneStateOf("idle", undefined)).toEqual({ at: "prompt" });
    expect(paneStateOf("done", undefined)).toEqual({ at: "prompt" });
    expect(paneStateOf("unknown", undefined)).toEqual({ at: "unknown" });
    expect(paneStateOf("working", undefined)).toEqual({ at: "working" });
    expect(paneStateOf("blocked", undefined)).toEqual({ at: "dialog", dialog: "question", reason: "herdr reports it blocked" });
    // herdr 0.8.0 sees claude's trust dialog as idle: the screen detector's verdict wins
    const trust = paneStateOf("idle", { state: "blocked", dialog: "start", reason: "trust this folder?", name: "trust this folder" });
    expect(trust).toEqual({ at: "dialog", dialog: "start", name: "trust this folder", reason: "trust this folder?" });
    expect(mayType(trust, true, true)).toBe(false);
    expect(mayType({ at: "prompt" }, true, true)).toBe(true);
  });
});

describe("audit #7: the environment of a server mam starts", () => {
  test("no MAM_*, no herdr pane variables, no .mam/bin on PATH", () => {
    const env = serverEnv({
      PATH: "/ws/.mam/bin:/usr/bin:/other/.mam/bin/:/bin",
      MAM_SESSION: "lead",
      MAM_WORKSPACE: "/ws",
      HERDR_SOCKET_PATH: "/s",
      HERDR_PANE_ID: "w1:p1",
      TMUX: "x",
      HOME: "/h",
      LANG: "C",
    });
    expect(env).toEqual({ PATH: "/usr/bin:/bin", HOME: "/h", LANG: "C" });
  });

  test("no mam secrets, no folder of mam's shims on PATH; the agents' own keys and the password file's path stay", () => {
    const env = serverEnv({
      PATH: "/h/.local/state/mam/shims/0123456789abcdef:/usr/bin",
      HOME: "/h",
      MQTT_PASSWORD: "pw",
      MAM_JOB_TOKEN: "tok",
      MAM_BROKER_PASSWORD: "bpw",
      MQTT_PASSWORD_FILE: "/h/pw",
      MQTT_USERNAME: "team",
      ANTHROPIC_API_KEY: "sk-ant",
    });
    expect(env).toEqual({ PATH: "/usr/bin", HOME: "/h", MQTT_PASSWORD_FILE: "/h/pw", MQTT_USERNAME: "team", ANTHROPIC_API_KEY: "sk-ant" });
  });
});

describe("audit #8: the ambient server by herdr's precedence", () => {
  const home = { HOME: "/h" };
  test("HERDR_SOCKET_PATH wins over HERDR_SESSION; its folder names the server; others are the default", () => {
    expect(ambientHerdrServer({ ...home, HERDR_SESSION: "b", HERDR_SOCKET_PATH: "/h/.config/herdr/sessions/a/herdr.sock" })).toBe("a");
    expect(ambientHerdrServer({ ...home, HERDR_SESSION: "b", HERDR_SOCKET_PATH: "/h/.config/herdr/herdr.sock" })).toBe("default");
    expect(ambientHerdrServer({ ...home, HERDR_SESSION: "b", HERDR_SOCKET_PATH: "/elsewhere/herdr.sock" })).toBe("default");
    expect(ambientHerdrServer({ ...home, HERDR_SESSION: "b" })).toBe("b");
    expect(ambientHerdrServer({ ...home, HERDR_SESSION: "b", HERDR_SOCKET_PATH: "" })).toBe("b");
    expect(ambientHerdrServer(home)).toBe("default");
  });

  test("#8c a custom socket is its own server sock-<hash>, locked as default.lock (SPEC §4.1's rule for other sockets)", () => {
    const home = mkdtempSync(join(tmpdir(), "mam-sock-"));
    const env = { HOME: "/h", HOME_DIR: home, HERDR_SOCKET_PATH: "/elsewhere/herdr.sock" };
    expect(customHerdrSocket(env)).toBe("/elsewhere/herdr.sock");
    expect(customHerdrSocket({ HOME: "/h", HERDR_SOCKET_PATH: "/h/.config/herdr/sessions/a/herdr.sock" })).toBeUndefined();
    expect(customHerdrSocket({ HOME: "/h", HERDR_SOCKET_PATH: "/h/.config/herdr/herdr.sock" })).toBeUndefined();
    const name = socketServerName("/elsewhere/herdr.sock");
    expect(name).toMatch(/^sock-[0-9a-f]{8}$/);
    expect(isSocketServer(name)).toBe(true);
    expect(chooseServer("herdr", {}, env)).toBe(name);
    expect(chooseServer("herdr", { herdr_server: "team" }, env)).toBe("team");
    expect(claimLockName("herdr", name)).toBe("default");
    expect(claimLockName("herdr", "team")).toBe("team");
    // remembered for callers without the variable (reconcile, the daemon)
    expect(JSON.parse(readFileSync(join(home, ".local", "state", "mam", "herdr-sockets.json"), "utf8"))).toEqual({ [name]: "/elsewhere/herdr.sock" });
    rmSync(home, { recursive: true, force: true });
  });
});

describe("herdr versions mam supports", () => {
  test("0.8.x supported, older refused with a fix, newer warned", () => {
    expect(supportOf("herdr 0.8.0\n")).toEqual({ kind: "supported", version: "0.8.0" });
    expect(supportOf("herdr 0.8.2-preview.abc")).toEqual({ kind: "supported", version: "0.8.2-preview.abc" });
    expect(supportOf("herdr 0.7.5")).toEqual({ kind: "old", version: "0.7.5" });
    expect(supportOf("herdr 0.9.0").kind).toBe("newer");
    expect(supportOf("herdr 1.0.0").kind).toBe("newer");
    expect(supportOf("Segmentation fault").kind).toBe("unknown");
    expect(unsupportedError(supportOf("herdr 0.7.5"), "/bin/herdr")!.render()).toBe(
      "ERROR: herdr 0.7.5 (/bin/herdr) is too old: mam supports herdr 0.8.x (0.8.0 or newer); upgrade herdr (herdr update), or use --mux tmux",
    );
    expect(unsupportedError(supportOf("herdr 0.8.0"), "/bin/herdr")).toBeUndefined();
    expect(versionWarning(supportOf("herdr 0.9.1"), "mam")).toBe(
      "WARNING: herdr 0.9.1 (server 'mam') is newer than mam knows: mam was checked against herdr 0.8.0 and 0.8.2; " +
        "untested with 0.9.1: agent start (when an agent counts as ready, start dialogs), agent prompt (refusals), " +
        "the pane list and process-info fields and the error codes mam reads; if a herdr call fails, report it with `herdr --version` " +
        "(this warning comes once a day per server)",
    );
    expect(versionWarning(supportOf("herdr 0.8.0"), "mam")).toBeUndefined();
    expect(versionWarning(supportOf("herdr 0.8.2"), "mam")).toBeUndefined();
    expect(versionWarning(supportOf("garbage"), "mam")).toBeUndefined();
  });

  test("by protocol, not by version string: 19 and 20 supported, below refused, any other warned", () => {
    // herdr status client --json (src/cli/status.rs ClientStatusJson)
    const p = protocolOf('{"version":"0.8.2","channel":"stable","protocol":20,"binary":"/usr/bin/herdr","session":null}\n');
    expect(p).toBe(20);
    expect(protocolOf("")).toBeUndefined();
    expect(protocolOf("not json")).toBeUndefined();
    expect(protocolOf('{"protocol":"20"}')).toBeUndefined();
    expect(supportOf("herdr 0.8.2", 20)).toEqual({ kind: "supported", version: "0.8.2", protocol: 20 });
    expect(supportOf("herdr 0.9.1", 20)).toEqual({ kind: "supported", version: "0.9.1", protocol: 20 });
    expect(supportOf("herdr 0.9.3", 22)).toEqual({ kind: "newer", version: "0.9.3", protocol: 22 });
    expect(supportOf("herdr 0.8.0", 23).kind).toBe("newer");
    expect(supportOf("herdr 0.8.2", 17).kind).toBe("old");
    expect(supportOf("a wrapper", 19)).toEqual({ kind: "supported", version: "a wrapper", protocol: 19 });
    expect(supportOf("herdr 0.9.1", undefined).kind).toBe("newer"); // no protocol readable: the version decides
    expect(versionWarning(supportOf("herdr 0.9.1", 20), "mam")).toBeUndefined();
    expect(versionWarning(supportOf("herdr 0.10.0-preview.3", 23), "mam")).toBe(
      "WARNING: herdr 0.10.0-preview.3 (server 'mam') speaks socket protocol 23, which mam does not know: mam speaks protocol 19 (herdr 0.8.0) and 20 (herdr 0.8.1 and 0.8.2); " +
        "untested with protocol 23: agent start (when an agent counts as ready, start dialogs), agent prompt (refusals), " +
        "the pane list and process-info fields and the error codes mam reads; if a herdr call fails, report it with `herdr --version` " +
        "(this warning comes once a day per server)",
    );
    expect(unsupportedError(supportOf("herdr 0.7.5", 17), "/bin/herdr")!.render()).toBe(
      "ERROR: herdr 0.7.5 (socket protocol 17) (/bin/herdr) is too old: mam supports herdr 0.8.x (0.8.0 or newer): socket protocol 19 (herdr 0.8.0) and 20 (herdr 0.8.1 and 0.8.2); upgrade herdr (herdr update), or use --mux tmux",
    );
    expect(warningKey(supportOf("herdr 0.9.3", 22), "mam")).toBe("herdr-protocol mam 22");
    expect(warningKey(supportOf("herdr 0.9.3"), "mam")).toBe("herdr-newer mam 0.9.3");
    // the behaviour follows the protocol: 19 → 0.8.0's, 20 and up → 0.8.2's
    expect(releaseOf(supportOf("herdr 0.8.2", 19))).toBe("0.8.0");
    expect(releaseOf(supportOf("herdr 0.8.0", 20))).toBe("0.8.2");
    expect(releaseOf(supportOf("herdr 0.9.3", 22))).toBe("0.8.2");
  });

  test("which herdr behaviour mam follows: 0.8.2's from 0.8.1 on (newer too), else 0.8.0's", () => {
    const r = (v: string) => releaseOf(supportOf(v));
    expect(r("herdr 0.8.0")).toBe("0.8.0");
    expect(r("herdr 0.8.0-preview.7")).toBe("0.8.0");
    expect(r("herdr 0.8.1")).toBe("0.8.2");
    expect(r("herdr 0.8.2")).toBe("0.8.2");
    expect(r("herdr 0.8.2-preview.abc")).toBe("0.8.2");
    expect(r("herdr 0.9.1")).toBe("0.8.2");
    // a version mam cannot read, or a refused one: 0.8.0's (mam does its own checks)
    expect(r("Segmentation fault")).toBe("0.8.0");
    expect(r("herdr 0.7.5")).toBe("0.8.0");
  });
});

describe("audit #4: an agent that herdr counted ready and that exited in the same moment", () => {
  /** ops whose `agent start` answers ready at once; the pane's foreground as `fg()` says at each look */
  const ops = (fg: () => { pid: number; name: string; argv: string[] }[]) => {
    const looks: number[] = [];
    const o = {
      looks,
      json: async () => ({ id: "cli:agent:start", result: { type: "agent_started", agent: { name: "dies" } } }),
      call: async () => "",
      processInfo: async () => (looks.push(Date.now()), { shellPid: 10, foreground: [{ pid: 10, name: "bash", argv: ["bash"] }, ...fg()] }),
      read: async () => "",
      visible: async () => "",
      close: async () => {},
      label: async () => {},
      pane: async () => undefined,
    };
    return o;
  };
  const start = { args: ["agent", "start", "dies"], callMs: 5000, paneId: "w1:p1", label: "mam:dies", exe: "claude" };

  test("the bare shell back right after the answer, and a moment later: exited, not started", async () => {
    const { runManagedStart } = await import("../../lib/mux/herdr-start.ts");
    const o = ops(() => []);
    expect((await runManagedStart(o, start)).kind).toBe("exited");
    expect(o.looks.length).toBe(2);
  });

  test("the agent in the foreground: started, after one look", async () => {
    const { runManagedStart } = await import("../../lib/mux/herdr-start.ts");
    const o = ops(() => [{ pid: 11, name: "claude", argv: ["claude"] }]);
    expect((await runManagedStart(o, start)).kind).toBe("ok");
    expect(o.looks.length).toBe(1);
  });

  test("the bare shell for one look only (the agent's process was being replaced): started", async () => {
    const { runManagedStart } = await import("../../lib/mux/herdr-start.ts");
    let n = 0;
    const o = ops(() => (n++ === 0 ? [] : [{ pid: 12, name: "claude", argv: ["claude"] }]));
    expect((await runManagedStart(o, start)).kind).toBe("ok");
  });
});
