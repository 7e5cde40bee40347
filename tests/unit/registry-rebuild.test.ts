// registry.rebuild's use case without processes (issue 23 item 16): which herdr servers it looks
// at (those a broken file still names, the ones given, the default), which labelled panes become
// rows (valid name, an agent in it, its folder in the workspace, one per name and server), and
// what a row takes from the backup. The binary against real tmux: tests/integration/registry-rebuild.test.ts.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { registryRebuild } from "../../lib/ops/table/workspace.ts";
import { planRebuild, type Rebuilt, serversInText } from "../../lib/ops/registry-rebuild.ts";
import { toMuxPane } from "../../lib/mux/herdr-proto.ts";
import type { Backend, Listing, Mux, MuxPane } from "../../lib/mux/types.ts";
import { emptyRegistry } from "../../lib/registry/rows.ts";
import { runOp, testDeps } from "../helpers/ops.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

let sb: Sandbox;
beforeEach(() => {
  sb = makeSandbox("mam-rbu-");
});
afterEach(() => sb.cleanup());

const pane = (id: string, label: string | undefined, cwd: string, extra: Partial<MuxPane> = {}): MuxPane => ({ id, status: "idle", cwd, ...(label ? { label } : {}), ...extra });

describe("planRebuild", () => {
  test("labelled panes of this workspace with an agent become running rows; the others are left out with a reason", () => {
    const ws = "/w/ws";
    const plan = planRebuild(
      [
        {
          backend: "herdr",
          server: "work",
          panes: [
            pane("w1:p1", "mam:lead", ws, { agent: "claude", agentName: "lead", agentSessionId: "c-1" }),
            pane("w1:p2", "mam:../x", ws, { agent: "claude" }),
            pane("w1:p3", "mam:gone", ws),
            pane("w2:p1", "mam:theirs", "/w/other", { agent: "codex" }),
            pane("w1:p4", undefined, ws, { agent: "codex" }),
            pane("w3:p1", "mam:wt", `${ws}/.mam/worktrees/wt`, { agent: "codex" }),
            pane("w1:p5", "mam:lead", ws, { agent: "claude" }),
          ],
        },
        // %1: another workspace's session whose agent works in this folder (a nested workspace)
        { backend: "tmux", server: "mam", panes: [pane("%0", "mam:t1", ws, { cmd: "codex", pid: 42, owner: ws }), pane("%1", "mam:t2", `${ws}/sub`, { cmd: "codex", pid: 43, owner: `${ws}/sub` })] },
      ],
      ws,
      emptyRegistry(),
      1_800_000_000,
    );
    expect(plan.rows.map((r) => [r.section, r.row.name, r.row.agent, r.row.role, r.row.pane?.id])).toEqual([
      ["herdr_sessions", "lead", "claude", "unknown", "w1:p1"],
      ["herdr_sessions", "wt", "codex", "unknown", "w3:p1"],
      ["tmux_sessions", "t1", "codex", "unknown", "%0"],
    ]);
    expect(plan.rows[0]!.row).toMatchObject({ status: "running", herdr_server: "work", claude_session_id_own: "c-1", last_visible_note: "rebuilt from its pane by mam registry rebuild" });
    expect(plan.rows[2]!.row).toMatchObject({ tmux_server: "mam", pane: { id: "%0", pid: 42, cmd: "codex", cwd: ws } });
    expect(plan.skipped.map((s) => [s.pane, s.why])).toEqual([
      ["w1:p2", "its label names no valid session"],
      ["w1:p3", "no agent runs in it any more"],
      ["w2:p1", "it runs in /w/other, not in this workspace"],
      ["w1:p5", "another pane on this server is lead already"],
      ["%1", "it belongs to workspace /w/ws/sub"],
    ]);
  });

  test("herdr: the kind and role in the pane's label (issue 39 item 12) win over the backup's and a guess; an older label gives the backup's, else unknown", () => {
    const ws = "/w/ws";
    // as herdr lists them (toMuxPane reads the label)
    const listed = [
      { pane_id: "w1:p1", cwd: ws, label: "mam:lead (claude, lead dev)", agent: "claude", agent_status: "idle" },
      // a kind herdr does not detect by itself (typed into the pane): herdr names an agent it sees, the label says which mam started
      { pane_id: "w1:p2", cwd: ws, label: "mam:rev (qwen, reviewer)", agent: "qwen", agent_status: "idle" },
      // an older mam's label: the backup's role, else unknown; the kind herdr detects
      { pane_id: "w1:p3", cwd: ws, label: "mam:old", agent: "codex", agent_status: "idle" },
      { pane_id: "w1:p4", cwd: ws, label: "mam:older", agent: "codex", agent_status: "idle" },
      // a kind this mam does not know: herdr's detection instead
      { pane_id: "w1:p5", cwd: ws, label: "mam:new (futurekind, tester)", agent: "claude", agent_status: "idle" },
    ].map((p) => toMuxPane(p)!);
    const bak = { herdr_sessions: [{ name: "old", status: "running" as const, role: "planner", agent: "codex", herdr_server: "work", pane: { id: "w9:p9" } }], tmux_sessions: [] };
    const plan = planRebuild([{ backend: "herdr", server: "work", panes: listed }], ws, bak, 1);
    expect(plan.rows.map((r) => [r.row.name, r.row.agent, r.row.role, r.fromBackup])).toEqual([
      ["lead", "claude", "lead dev", false],
      ["rev", "qwen", "reviewer", false],
      ["old", "codex", "planner", true],
      ["older", "codex", "unknown", false],
      ["new", "claude", "tester", false],
    ]);
    expect(plan.skipped).toEqual([]);
  });

  test("the backup's row of that name and server gives role and agent; the whole row when it names the same pane", () => {
    const ws = "/w/ws";
    const bak = {
      herdr_sessions: [],
      tmux_sessions: [
        { name: "a", status: "stopped" as const, role: "lead", agent: "claude", tmux_server: "mam", pane: { id: "%9" }, claude_session_id_own: "old" },
        { name: "b", status: "running" as const, role: "reviewer", agent: "claude", tmux_server: "mam", pane: { id: "%1" }, claude_session_id_own: "s-b", stop_reason: "x" },
      ],
    };
    const plan = planRebuild([{ backend: "tmux", server: "mam", panes: [pane("%0", "mam:a", ws, { cmd: "node" }), pane("%1", "mam:b", ws, { cmd: "claude" })] }], ws, bak, 1);
    expect(plan.rows[0]!.row).toMatchObject({ name: "a", role: "lead", agent: "claude", status: "running" });
    expect(plan.rows[0]!.row.claude_session_id_own).toBeUndefined(); // another pane: maybe another conversation
    expect(plan.rows[1]!.row).toMatchObject({ name: "b", role: "reviewer", claude_session_id_own: "s-b", status: "running", pane: { id: "%1", cmd: "claude" } });
    expect(plan.rows[1]!.row.stop_reason).toBeUndefined();
  });
});

test("serversInText: the server names a broken file still shows", () => {
  expect(serversInText('herdr_sessions:\n  - {name: a, herdr_server: "work"\n  - herdr_session: old\n\u0000tmux_server: team\n  tmux_server: ../x\n')).toEqual([
    { backend: "herdr", server: "work" },
    { backend: "herdr", server: "old" },
    { backend: "tmux", server: "team" },
  ]);
});

describe("the op", () => {
  test("looks at the herdr servers the broken file names and the ones given; --yes keeps the broken file and writes the rows", async () => {
    const yaml = join(sb.ws, ".mam", "agent-sessions.yaml");
    mkdirSync(join(sb.ws, ".mam"));
    writeFileSync(yaml, "herdr_sessions:\n  - {name: lead, herdr_server: work, status: running\n");
    const asked: string[] = [];
    const listings: Record<string, Listing> = {
      "herdr:work": { state: "ok", panes: [pane("w1:p1", "mam:lead", sb.ws, { agent: "claude" })] },
      "herdr:extra": { state: "ok", panes: [pane("w1:p1", "mam:rev", sb.ws, { agent: "codex" })] },
    };
    const muxFor = (backend: Backend, server: string) => {
      asked.push(`${backend}:${server}`);
      return { backend, server, list: async () => listings[`${backend}:${server}`] ?? { state: "not-running", detail: "no server" } } as unknown as Mux;
    };
    const env = { PATH: "/nonexistent", MAM_HERDR_BIN: "/nonexistent/herdr", TMUX_TMPDIR: sb.root, MAM_NO_SUBSCRIBER_DAEMON: "1" };
    const deps = testDeps(sb.ws, { muxFor }, env);
    const dry = await runOp<Rebuilt>(registryRebuild, deps, { herdr_servers: ["extra"] });
    expect(asked.sort()).toEqual(["herdr:default", "herdr:extra", "herdr:work"]);
    expect(dry.dry_run).toBe(true);
    expect(dry.registered.map((r) => [r.name, r.server, r.agent])).toEqual([
      ["lead", "work", "claude"],
      ["rev", "extra", "codex"],
    ]);
    expect(readFileSync(yaml, "utf8")).toContain("{name: lead");
    const done = await runOp<Rebuilt>(registryRebuild, deps, { yes: true, herdr_servers: ["extra"] });
    expect(done.previous.state).toBe("broken");
    expect(readdirSync(join(sb.ws, ".mam")).filter((f) => f.startsWith("agent-sessions.yaml.broken-"))).toHaveLength(1);
    expect(deps.registry.read().herdr_sessions.map((r) => [r.name, r.herdr_server, r.status])).toEqual([
      ["lead", "work", "running"],
      ["rev", "extra", "running"],
    ]);
  });
});
