// The adoption rule as a pure function (SPEC §5.2, seeds A1/A2); the binary tests live in
// tests/integration/create-adoption.test.ts.
import { describe, expect, test } from "bun:test";
import { adoptPane, decide, MONITOR_NOTE, placeRow } from "../../lib/fleet/adopt.ts";
import type { RegistryData, Row } from "../../lib/registry/types.ts";
import { defaultSessionName, guessRole, workspaceSlug } from "../../lib/fleet/naming.ts";

const T0 = 1_800_000_000;
const target = { section: "herdr_sessions" as const, server: "t50-srv" };

function seed(extra: Partial<Row> = {}): RegistryData {
  const row: Row = {
    name: "n",
    status: "running",
    role: "creator",
    herdr_session_epoch: T0 + 60,
    herdr_session: "t50-srv",
    herdr_server: "t50-srv",
    last_visible_note: MONITOR_NOTE,
    ...extra,
  };
  return { herdr_sessions: [row], tmux_sessions: [] };
}

describe("decide", () => {
  test("A1: a monitor row registered after create began, same server, no job → adopt", () => {
    expect(decide(seed(), "n", T0, target).kind).toBe("adopt");
    expect(decide(seed({ herdr_session_epoch: T0 }), "n", T0, target).kind).toBe("adopt");
  });
  test("A2 real: a row without the monitor's note → conflict", () => {
    expect(decide(seed({ last_visible_note: undefined }), "n", T0, target).kind).toBe("conflict");
    expect(decide(seed({ last_visible_note: "something else" }), "n", T0, target).kind).toBe("conflict");
  });
  test("A2 old-adoption: registered before create began → conflict", () => {
    expect(decide(seed({ herdr_session_epoch: T0 - 3600 }), "n", T0, target).kind).toBe("conflict");
    expect(decide(seed({ herdr_session_epoch: T0 - 1 }), "n", T0, target).kind).toBe("conflict");
  });
  test("A2 adoption-with-job → conflict", () => {
    expect(decide(seed({ delegate_job_id: "deadbeef" }), "n", T0, target).kind).toBe("conflict");
  });
  test("A2 other-server → conflict; herdr_server wins over herdr_session", () => {
    expect(decide(seed({ herdr_server: "different-server", herdr_session: "different-server" }), "n", T0, target).kind).toBe("conflict");
    expect(decide(seed({ herdr_server: "different-server" }), "n", T0, target).kind).toBe("conflict");
    expect(decide(seed({ herdr_server: undefined }), "n", T0, target).kind).toBe("adopt");
  });
  test("a tmux monitor row is not create's herdr pane", () => {
    const d: RegistryData = { herdr_sessions: [], tmux_sessions: [seed().herdr_sessions[0]!] };
    expect(decide(d, "n", T0, target).kind).toBe("conflict");
  });
  test("stopped / terminated / archived rows do not block; other names do not matter", () => {
    for (const status of ["stopped", "terminated", "archived"] as const) expect(decide(seed({ status }), "n", T0, target).kind).toBe("free");
    expect(decide(seed({ last_visible_note: undefined }), "other", T0, target).kind).toBe("free");
  });
});

describe("placeRow", () => {
  test("replaces stopped rows and keeps their history in previous", () => {
    const d = seed({ status: "stopped", role: "old", claude_session_id_own: "abc", stopped_at: "x" });
    d.herdr_sessions.unshift({ name: "before", status: "running" });
    d.herdr_sessions.push({ name: "after", status: "running" });
    const fresh: Row = { name: "n", status: "running", role: "new" };
    const r = placeRow(d, "herdr_sessions", fresh);
    expect(r).toEqual({ adopted: false, replaced: 1 });
    expect(d.herdr_sessions.map((x) => x.name)).toEqual(["before", "n", "after"]);
    expect(fresh.previous).toEqual([{ status: "stopped", role: "old", stopped_at: "x", claude_session_id_own: "abc" }]);
  });
  test("adoption leaves exactly one row of the name", () => {
    const d = seed();
    const fresh: Row = { name: "n", status: "running", role: "Creator", session_id_source: "assigned" };
    expect(placeRow(d, "herdr_sessions", fresh).adopted).toBe(true);
    expect(d.herdr_sessions).toEqual([fresh]);
  });
});

describe("naming", () => {
  test("the original's <slug>-creator-<agent>", () => {
    expect(workspaceSlug("/x/landing_page/refer_landing_page")).toBe("landing-page-refer-landing-page");
    expect(defaultSessionName("/x/landing_page/refer_landing_page", "creator", "claude")).toBe("landing-page-refer-landing-page-creator-claude");
    expect(defaultSessionName("/Work/API", "worker", "codex")).toBe("work-api-worker-codex");
  });
  test("long workspaces still give a valid name", () => {
    const n = defaultSessionName(`/a/${"x".repeat(100)}`, "creator", "claude");
    expect(n.length).toBeLessThanOrEqual(64);
    expect(n.endsWith("-creator-claude")).toBe(true);
  });
  test("role guess", () => {
    expect(guessRole("ws-creator-claude")).toBe("creator");
    expect(guessRole("w1-p2-claude")).toBe("unknown");
  });
});

describe("adoptPane: the daemon's registration of create's own pane under another name (issue 23 item 20)", () => {
  const ghost = (extra: Partial<Row> = {}): Row => ({
    name: "claude-w1-p2",
    status: "running",
    role: "unknown",
    herdr_session_epoch: T0 + 1,
    herdr_server: "t50-srv",
    pane: { id: "w1:p2" },
    last_visible_note: MONITOR_NOTE,
    ...extra,
  });
  const data = (...rows: Row[]): RegistryData => ({ herdr_sessions: rows, tmux_sessions: [] });
  const adopt = (d: RegistryData) => adoptPane(d, "herdr_sessions", "t50-srv", "w1:p2", T0, "mine");

  test("running, or already ended by a pass that saw our label: taken back", () => {
    for (const g of [ghost(), ghost({ status: "terminated", termination_mode: "auto-detected", last_visible_note: "terminated (auto-detected)" })]) {
      const d = data(g, { name: "other", status: "running", role: "w", pane: { id: "w1:p1" }, herdr_server: "t50-srv" });
      expect(adopt(d)).toEqual(["claude-w1-p2"]);
      expect(d.herdr_sessions.map((r) => r.name)).toEqual(["other"]);
    }
  });
  test("a failed start (create, resume, a restart) forgets the daemon's registration of the pane it tried: no session nobody made, no death reported", async () => {
    const { forgetTriedPane } = await import("../../lib/ops/session/launch.ts");
    const d = data(ghost(), { name: "other", status: "running", role: "w", pane: { id: "w1:p1" }, herdr_server: "t50-srv" });
    let writes = 0;
    const registry = { mutate: async (fn: (x: RegistryData) => unknown) => (writes++, { result: fn(d), changed: true }) } as never;
    await forgetTriedPane({ registry }, "herdr_sessions", "t50-srv", undefined, T0, "mine");
    expect(writes).toBe(0); // no pane was tried: nothing to look at
    await forgetTriedPane({ registry }, "herdr_sessions", "t50-srv", "w1:p2", T0, "mine");
    expect(d.herdr_sessions.map((r) => r.name)).toEqual(["other"]);
  });
  test("never: another pane, another server, before create began, a job, a create's row, a stop, the name we write", () => {
    const keep: Row[] = [
      ghost({ pane: { id: "w1:p3" } }),
      ghost({ herdr_server: "other-srv" }),
      ghost({ herdr_session_epoch: T0 - 1 }),
      ghost({ delegate_job_id: "deadbeef" }),
      ghost({ session_id_source: "assigned", last_visible_note: "created by mam create" }),
      ghost({ status: "stopped", last_visible_note: "stopped: requested" }),
      ghost({ status: "terminated", termination_mode: "hard" }),
      ghost({ name: "mine" }),
      ghost({ last_visible_note: "resumed x" }),
    ];
    for (const g of keep) {
      const d = data(g);
      expect(adopt(d), JSON.stringify(g)).toEqual([]);
      expect(d.herdr_sessions).toHaveLength(1);
    }
  });
});

