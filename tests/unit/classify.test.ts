// The reconcile pass as pure functions: each drift case of SPEC §6.1, and apply's re-checks.
import { describe, expect, test } from "bun:test";
import { applyActions, STOPPING_GRACE_S } from "../../lib/fleet/apply.ts";
import { classify, findPane, nameForPane, serversOf, type ServerView, TERMINATED_NOTE } from "../../lib/fleet/classify.ts";
import type { MuxPane } from "../../lib/mux/types.ts";
import type { RegistryData, Row } from "../../lib/registry/types.ts";

const WS = "/w/proj";
const NOW = 1_800_000_000;

function row(name: string, extra: Partial<Row> = {}): Row {
  return { name, status: "running", role: "worker", agent: "claude", herdr_server: "mam", herdr_session: "mam", pane: { id: `id-${name}` }, ...extra };
}
function pane(id: string, extra: Partial<MuxPane> = {}): MuxPane {
  return { id, status: "idle", cwd: WS, ...extra };
}
const data = (...rows: Row[]): RegistryData => ({ herdr_sessions: rows, tmux_sessions: [] });
const ok = (panes: MuxPane[], server = "mam"): ServerView => ({ backend: "herdr", server, listing: { state: "ok", panes } });

describe("step 1: running rows whose pane is gone", () => {
  test("listing ok, pane missing → terminate", () => {
    const c = classify({ data: data(row("a")), views: [ok([])], workspace: WS, now: NOW });
    expect(c.actions).toEqual([{ type: "terminate", section: "herdr_sessions", name: "a", server: "mam", paneId: "id-a", reason: "pane gone" }]);
    expect(c.rows[0]!.live).toBe("dead");
    expect(c.drifts.map((d) => d.kind)).toEqual(["pane-gone"]);
  });
  test("server definitely not running → its rows are gone too", () => {
    const c = classify({ data: data(row("a")), views: [{ backend: "herdr", server: "mam", listing: { state: "not-running", detail: "x" } }], workspace: WS, now: NOW });
    expect(c.actions[0]!.type).toBe("terminate");
    expect(c.drifts[0]!.kind).toBe("server-down");
  });
  test("server unreachable → nothing changes, drift server-unreachable, LIVE unreachable", () => {
    const c = classify({ data: data(row("a")), views: [{ backend: "herdr", server: "mam", listing: { state: "unreachable", detail: "garbage" } }], workspace: WS, now: NOW });
    expect(c.actions).toEqual([]);
    expect(c.drifts[0]!.kind).toBe("server-unreachable");
    expect(c.rows[0]!.live).toBe("unreachable");
  });
  test("a live pane keeps the row, LIVE from the agent status (done counts as idle)", () => {
    const c = classify({ data: data(row("a", { claude_session_id_own: "x" })), views: [ok([pane("id-a", { status: "done" })])], workspace: WS, now: NOW });
    expect(c.actions).toEqual([]);
    expect(c.rows[0]!.live).toBe("idle");
  });
});

describe("step 2: deliberate end states are untouched", () => {
  test("stopped, terminated, archived rows with dead panes", () => {
    for (const status of ["stopped", "terminated", "archived"] as const) {
      const c = classify({ data: data(row("a", { status })), views: [ok([])], workspace: WS, now: NOW });
      expect(c.actions).toEqual([]);
      expect(c.drifts).toEqual([]);
    }
  });
});

describe("step 3: unregistered live agent panes of this workspace", () => {
  test("a mam-labelled pane without a row is registered by the monitor", () => {
    const c = classify({ data: data(), views: [ok([pane("w1:p2", { label: "mam:proj-creator-claude", agent: "claude", agentSessionId: "s1" })])], workspace: WS, now: NOW });
    expect(c.actions).toHaveLength(1);
    const a = c.actions[0]!;
    if (a.type !== "register") throw new Error("expected register");
    expect(a.row).toMatchObject({
      name: "proj-creator-claude",
      status: "running",
      role: "creator",
      herdr_server: "mam",
      herdr_session: "mam",
      herdr_session_epoch: NOW,
      last_visible_note: "auto-registered by monitor",
      claude_session_id_own: "s1",
      pane: { id: "w1:p2", cwd: WS },
    });
    expect(a.row.session_id_source).toBeUndefined();
  });
  test("the kind and role mam started the pane with (tmux options, herdr's label) are the row's; an older label: the detected agent and a guess", () => {
    const c = classify({
      data: data(),
      views: [
        ok([
          pane("w1:p2", { label: "mam:killed (claude, lead)", kind: "claude", role: "lead", agent: "claude" }),
          pane("w1:p3", { label: "mam:typed (aider, helper)", kind: "aider", role: "helper", status: "working" }),
          pane("w1:p4", { label: "mam:old", agent: "codex" }),
          pane("w1:p5", { label: "mam:odd (futurekind, x)", kind: "futurekind", role: "x", agent: "claude" }),
        ]),
      ],
      workspace: WS,
      now: NOW,
    });
    expect(c.actions.map((a) => (a.type === "register" ? [a.row.name, a.row.agent, a.row.role] : a.type))).toEqual([
      ["killed", "claude", "lead"],
      ["typed", "aider", "helper"],
      ["old", "codex", "unknown"],
      ["odd", "claude", "x"],
    ]);
  });
  test("herdr agent name, or just a detected agent, also count; plain shells and other folders do not", () => {
    const c = classify({
      data: data(),
      views: [ok([pane("w1:p1"), pane("w1:p2", { agentName: "rev-1", agent: "codex" }), pane("w1:p3", { agent: "claude" }), pane("w2:p1", { agent: "claude", cwd: "/elsewhere" })])],
      workspace: WS,
      now: NOW,
    });
    expect(c.actions.map((a) => (a.type === "register" ? a.row.name : a.type))).toEqual(["rev-1", "claude-w1-p3"]);
  });
  test("a pane a row already holds (even a stopped or archived row) is not registered", () => {
    const c = classify({ data: data(row("a", { status: "archived", pane: { id: "w1:p2" } })), views: [ok([pane("w1:p2", { agent: "claude" })])], workspace: WS, now: NOW });
    expect(c.actions).toEqual([]);
  });
  test("nameForPane only yields valid names", () => {
    expect(nameForPane(pane("w1:p2", { label: "mam:../x" }))).toBeUndefined();
  });
});

describe("step 4: conversation ids", () => {
  test("from herdr's agent_session report first", () => {
    const c = classify({ data: data(row("a")), views: [ok([pane("id-a", { agentSessionId: "S" })])], workspace: WS, now: NOW, discover: () => "D" });
    expect(c.actions).toEqual([{ type: "fill-session-id", section: "herdr_sessions", name: "a", server: "mam", field: "claude_session_id_own", value: "S", source: "herdr" }]);
  });
  test("else from the workspace's conversation store, never an id another row owns", () => {
    let excluded: Set<string> | undefined;
    const c = classify({
      data: data(row("a"), row("b", { claude_session_id_own: "B" })),
      views: [ok([pane("id-a"), pane("id-b")])],
      workspace: WS,
      now: NOW,
      discover: (_k, _since, ex) => {
        excluded = ex;
        return "D";
      },
    });
    expect(excluded!.has("B")).toBe(true);
    expect(c.actions).toContainEqual({ type: "fill-session-id", section: "herdr_sessions", name: "a", server: "mam", field: "claude_session_id_own", value: "D", source: "store" });
  });
});

describe("step 5: pane facts", () => {
  test("pid / cmd changes and a pane found by label get recorded", () => {
    const c = classify({
      data: data(row("a", { claude_session_id_own: "x", pane: { pid: 1, cmd: "claude" } })),
      views: [ok([pane("w1:p9", { label: "mam:a", pid: 2, cmd: "claude" })])],
      workspace: WS,
      now: NOW,
    });
    expect(c.actions).toEqual([{ type: "update-pane", section: "herdr_sessions", name: "a", server: "mam", pane: { id: "w1:p9", pid: 2 } }]);
  });
});

describe("findPane", () => {
  test("a recorded id whose pane now carries another session's label is not ours", () => {
    expect(findPane(row("a", { pane: { id: "p1" } }), [pane("p1", { label: "mam:b" })])).toBeUndefined();
    expect(findPane(row("a", { pane: { id: "p1" } }), [pane("p1", { label: "mam:a" })])?.id).toBe("p1");
    expect(findPane(row("a", { pane: {} , herdr_agent_name: "m-a" }), [pane("p7", { agentName: "m-a" })])?.id).toBe("p7");
  });
  test("serversOf lists each server once", () => {
    expect(serversOf({ herdr_sessions: [row("a"), row("b"), row("c", { herdr_server: "x" })], tmux_sessions: [{ name: "t", status: "running" }] })).toEqual([
      { backend: "herdr", server: "mam" },
      { backend: "herdr", server: "x" },
      { backend: "tmux", server: "mam" },
    ]);
  });
});

describe("applyActions re-checks against fresh data", () => {
  test("terminate sets the fields; a row re-created in another pane is left alone", () => {
    const d = data(row("a"));
    const done = applyActions(d, [{ type: "terminate", section: "herdr_sessions", name: "a", server: "mam", paneId: "id-a", reason: "pane gone" }], NOW);
    expect(done).toHaveLength(1);
    expect(d.herdr_sessions[0]).toMatchObject({ status: "terminated", last_visible_status: "terminated", last_visible_note: TERMINATED_NOTE, terminated_at_epoch: NOW });
    const d2 = data(row("a", { pane: { id: "new" } }));
    expect(applyActions(d2, [{ type: "terminate", section: "herdr_sessions", name: "a", server: "mam", paneId: "id-a", reason: "x" }], NOW)).toEqual([]);
    expect(d2.herdr_sessions[0]!.status).toBe("running");
  });
  test("a row whose stop is closing its pane is the stop's to end (stopping_epoch); a stop dead for over two minutes is not", () => {
    const term = [{ type: "terminate" as const, section: "herdr_sessions" as const, name: "a", server: "mam", paneId: "id-a", reason: "pane gone" }];
    const d = data(row("a", { stopping_epoch: NOW - 5 }));
    expect(applyActions(d, term, NOW)).toEqual([]);
    expect(d.herdr_sessions[0]!.status).toBe("running");
    const stale = data(row("a", { stopping_epoch: NOW - STOPPING_GRACE_S }));
    expect(applyActions(stale, term, NOW)).toHaveLength(1);
    expect(stale.herdr_sessions[0]!.status).toBe("terminated");
  });
  test("register is skipped when create wrote its row meanwhile", () => {
    const d = data(row("n", { pane: { id: "w1:p2" } }));
    expect(applyActions(d, [{ type: "register", section: "herdr_sessions", server: "mam", row: row("n", { pane: { id: "w1:p2" } }) }], NOW)).toEqual([]);
    expect(d.herdr_sessions).toHaveLength(1);
  });
  test("fill-session-id does not overwrite an id", () => {
    const d = data(row("a", { claude_session_id_own: "mine" }));
    expect(applyActions(d, [{ type: "fill-session-id", section: "herdr_sessions", name: "a", server: "mam", field: "claude_session_id_own", value: "x", source: "store" }], NOW)).toEqual([]);
  });
});

describe("tmux rows match their session by label only", () => {
  test("a recorded pane id that now belongs to an unlabelled pane is not the row's", () => {
    const r = row("t", { pane: { id: "%0" } });
    expect(findPane(r, [pane("%0")], "tmux_sessions")).toBeUndefined();
    expect(findPane(r, [pane("%0"), pane("%3", { label: "mam:t" })], "tmux_sessions")?.id).toBe("%3");
  });
});

describe("step 4: the conversation id the agent's hook reported", () => {
  test("replaces an assigned id (source hook); nothing to do once the row says so; another row's id is left alone", () => {
    const reported = () => "H";
    const c = classify({ data: data(row("a", { claude_session_id_own: "A", session_id_source: "assigned" })), views: [ok([pane("id-a")])], workspace: WS, now: NOW, reported });
    expect(c.actions).toEqual([{ type: "fill-session-id", section: "herdr_sessions", name: "a", server: "mam", field: "claude_session_id_own", value: "H", source: "hook" }]);
    const d = data(row("a", { claude_session_id_own: "A", session_id_source: "assigned" }));
    expect(applyActions(d, c.actions, NOW).length).toBe(1);
    expect(d.herdr_sessions[0]).toMatchObject({ claude_session_id_own: "H", session_id_source: "hook" });
    const again = classify({ data: d, views: [ok([pane("id-a")])], workspace: WS, now: NOW, reported });
    expect(again.actions).toEqual([]);
    const taken = classify({ data: data(row("a", { claude_session_id_own: "A" }), row("b", { claude_session_id_own: "H" })), views: [ok([pane("id-a"), pane("id-b")])], workspace: WS, now: NOW, reported: (r) => (r.name === "a" ? "H" : undefined) });
    expect(taken.actions).toEqual([]);
  });
});
