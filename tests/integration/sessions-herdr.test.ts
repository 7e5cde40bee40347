// mam create | stop | resume | status (SPEC §5, issue 5) as users run them: the compiled binary
// against a fake herdr server and the fake agents. Each test gets its own sandbox (workspace,
// HOME) and server, so the tests run concurrently.
import { describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { claudeProjectDir } from "../../lib/agents/kinds/claude.ts";
import { agentShimDir } from "../../lib/mux/shim.ts";
import { apiSocketPath } from "../fakes/herdr/common/session.ts";
import { killBySocket } from "../helpers/herdr.ts";
import { agentLines, createdName, environOf, ok, type Row, SERVER, tree, typed, waitPaneText, withWorld, wrapperLog } from "../helpers/herdr-world.ts";
import { CLAUDE_GRANTS, MAM_CMD, run, runMam } from "../helpers/mam.ts";
import { makeSandbox, waitFor } from "../helpers/sandbox.ts";

// ---------------------------------------------------------------------------------------------
describe.concurrent("mam create on herdr", () => {
  test("the row, the label, the summary, the agent's arguments, the shim and the agent's PATH", async () => {
    await withWorld({}, async (w) => {
      const t0 = Math.floor(Date.now() / 1000);
      const r = ok(await w.create("claude", ["--role", "worker", "--session", "api-worker", "--", "--model", "opus"]));
      // the summary: watchdog line (empty: the daemon is disabled in tests), then the created line
      expect(r.stdout.trimEnd().split("\n")).toEqual(["watchdog PID: none (MAM_NO_SUBSCRIBER_DAEMON=1)", `created api-worker (claude, role worker) in pane ${w.row("api-worker").pane.id} on herdr server ${SERVER}`]);
      expect(r.stderr).toContain("not starting the subscriber daemon (MAM_NO_SUBSCRIBER_DAEMON=1)");
      const row = w.row("api-worker");
      const sid = row.claude_session_id_own as string;
      expect(sid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(row).toMatchObject({
        name: "api-worker",
        status: "running",
        role: "worker",
        agent: "claude",
        herdr_session: SERVER,
        herdr_server: SERVER,
        session_id_source: "assigned",
        last_visible_status: "running",
        start_command: `claude --session-id ${sid} ${CLAUDE_GRANTS} --model opus`,
      });
      expect(row.last_visible_note).not.toBe("auto-registered by monitor");
      expect(row.herdr_session_epoch).toBeGreaterThanOrEqual(t0);
      expect(row.herdr_session_epoch).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
      expect(row.herdr_session_created_at).toBe(new Date(row.herdr_session_epoch * 1000).toISOString().replace(/\.\d+Z$/, "Z"));
      expect(row.pane).toMatchObject({ cmd: "claude", cwd: w.ws });
      expect(row.pane.cmd_full).toContain(`--session-id ${sid} ${CLAUDE_GRANTS} --model opus`);
      expect(row.pane.pid).toBeGreaterThan(0);
      // the pane: labelled, in the workspace folder, running the agent
      const panes = await w.panes();
      expect(panes).toHaveLength(1);
      expect(panes[0]).toMatchObject({ pane_id: row.pane.id, label: "mam:api-worker (claude, worker)", cwd: w.ws, agent: "claude" });
      // the agent got the assigned id and the arguments after --, typed once
      expect(agentLines(await w.inputs(row.pane.id))).toEqual([`claude --session-id ${sid} ${CLAUDE_GRANTS} --model opus`]);
      expect(existsSync(join(claudeProjectDir(w.ws, w.env), `${sid}.jsonl`))).toBe(true);
      // the herdr shim in its folder of mam's (not the workspace's), first on the agent's PATH
      const shim = join(agentShimDir(w.ws, w.env), "herdr");
      expect(statSync(shim).mode & 0o111).not.toBe(0);
      expect(readFileSync(shim, "utf8").split("\n")[1]).toStartWith("# mam-herdr-shim:");
      const agentEnv = environOf(row.pane.pid);
      expect(agentEnv.PATH!.split(":")[0]).toBe(agentShimDir(w.ws, w.env));
      expect(agentEnv.MAM_SESSION).toBe("api-worker");
    });
  });

  test("codex: session_id_source pending-discovery, no assigned id typed", async () => {
    await withWorld({}, async (w) => {
      const r = ok(await w.create("codex", ["--role", "reviewer", "--session", "rev"]));
      expect(createdName(r)).toBe("rev");
      const row = w.row("rev");
      expect(row).toMatchObject({ status: "running", agent: "codex", role: "reviewer", session_id_source: "pending-discovery", start_command: "codex -c notice.hide_rate_limit_model_nudge=true" });
      expect(agentLines(await w.inputs(row.pane.id), "codex")).toEqual(["codex -c notice.hide_rate_limit_model_nudge=true"]);
      // create's own row never invents an id; the end-of-create reconcile may discover the real one
      if (row.codex_session_id_own !== undefined) {
        const files = tree(join(w.sb.home, ".codex", "sessions")).filter((f) => f.endsWith(".jsonl"));
        expect(files.some((f) => f.endsWith(`-${row.codex_session_id_own}.jsonl`))).toBe(true);
      }
    });
  });

  test("--json prints one document and nothing else on stdout", async () => {
    await withWorld({}, async (w) => {
      const r = ok(await w.create("claude", ["--session", "j1", "--json"]));
      const doc = JSON.parse(r.stdout);
      expect(doc).toMatchObject({ name: "j1", agent: "claude", role: "creator", mux: "herdr", server: SERVER, session_id_source: "assigned", adopted: false, job_id: null, watchdog_pid: null });
      expect(doc.pane).toBe(w.row("j1").pane.id);
      expect(doc.session_id).toBe(w.row("j1").claude_session_id_own);
    });
  });

  test("default name <slug>-<role>-<agent>; the onboarding prompt is typed once, after the agent", async () => {
    await withWorld({}, async (w) => {
      const ws = join(w.sb.root, "My_Proj", "Sub_Dir");
      mkdirSync(ws, { recursive: true });
      const r = ok(await w.create("claude", [], { onboard: true, ws }));
      const name = createdName(r);
      expect(name).toBe("my-proj-sub-dir-creator-claude");
      const r2 = ok(await w.create("claude", ["--role", "worker"], { ws }));
      expect(createdName(r2)).toBe("my-proj-sub-dir-worker-claude");
      const rows = w.rows(join(ws, ".mam", "agent-sessions.yaml"));
      const onb = rows.find((x) => x.name === name)!;
      const lines = typed(await w.inputs(onb.pane.id));
      expect(lines).toHaveLength(2);
      expect(lines[0]).toStartWith("claude --session-id ");
      expect(lines[1]).toStartWith(`You are ${name}, a claude agent with the role "creator"`);
      expect(lines[1]).toContain(ws);
      expect(lines[1]).toContain("mam job event");
      // --no-onboard: only the agent's command line
      const quiet = rows.find((x) => x.name === "my-proj-sub-dir-worker-claude")!;
      expect(typed(await w.inputs(quiet.pane.id))).toEqual([quiet.start_command]);
    });
  });

  test("a second create of a running name: exit 4 on stdout, nothing changed, nothing spawned", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("claude", ["--session", "dup"]));
      const before = readFileSync(w.reg, "utf8");
      const panesBefore = await w.panes();
      const r = await w.create("claude", ["--session", "dup"]);
      expect(r.code).toBe(4);
      expect(r.stdout.trim()).toBe("ERROR: dup already running in agent-sessions.yaml");
      expect(readFileSync(w.reg, "utf8")).toBe(before);
      expect(await w.panes()).toEqual(panesBefore);
      // another kind under the same name is the same conflict
      const r2 = await w.create("codex", ["--session", "dup"]);
      expect(r2.code).toBe(4);
      expect(readFileSync(w.reg, "utf8")).toBe(before);
    });
  });

  test("a stopped row of that name is replaced, its history kept in previous", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("claude", ["--session", "again", "--role", "worker"]));
      const first = w.row("again");
      ok(await w.mam(["stop", "again"]));
      ok(await w.create("claude", ["--session", "again", "--role", "worker"]));
      const row = w.row("again");
      expect(row.status).toBe("running");
      expect(row.claude_session_id_own).not.toBe(first.claude_session_id_own);
      expect(row.stopped_at).toBeUndefined();
      expect(row.previous).toHaveLength(1);
      expect(row.previous[0]).toMatchObject({ status: "stopped", role: "worker", stop_reason: "requested", claude_session_id_own: first.claude_session_id_own });
      expect(row.previous[0].pane.id).toBe(first.pane.id);
    });
  });

  test("herdr refuses the agent start: exit 1, no row, and the pane create made for it is closed", async () => {
    await withWorld({ wrap: true }, async (w) => {
      ok(await w.create("claude", ["--session", "first"]));
      const before = await w.panes();
      const text = readFileSync(w.reg, "utf8");
      const r = await w.mam(["create", "--agent", "claude", "--herdr-session", SERVER, "--no-onboard", "--session", "second"], { env: { ...w.env, WRAP_FAIL_AGENT_START: "1" } });
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toContain("agent_start_refused: refused by the test");
      // the split pane was made for this create: it is gone, not left as a labelled empty shell
      expect(wrapperLog(w.sb).some((l) => / pane split /.test(l))).toBe(true);
      expect(await w.panes()).toEqual(before);
      expect(readFileSync(w.reg, "utf8")).toBe(text);
    });
  });

  test("an agent that exits at once: exit 1 with its last output, no running row, the pane closed", async () => {
    await withWorld({ herdrEnv: { FAKE_AGENT_EXIT_AT_START: "1" } }, async (w) => {
      const r = await w.create("claude", ["--session", "nonet"]);
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/^ERROR: claude exited right after start in (w\d+:p\d+); last output: .*Unable to connect to Anthropic services/m);
      const pane = /in (w\d+:p\d+);/.exec(r.stderr)![1]!;
      expect(existsSync(w.reg) ? w.rows().filter((x) => x.status === "running") : []).toEqual([]);
      expect((await w.panes()).map((p) => p.pane_id)).not.toContain(pane);
    });
  });
});

// ---------------------------------------------------------------------------------------------
describe("concurrent creates in one folder on one server", () => {
  for (const n of [3, 10]) {
    test(`${n} at once: distinct panes, ${n} rows, each agent typed once`, async () => {
      await withWorld({}, async (w) => {
        const names = Array.from({ length: n }, (_, i) => `race-${i}`);
        const results = await Promise.all(names.map((s) => w.create("claude", ["--session", s, "--role", "worker"])));
        for (const r of results) ok(r);
        const check = ok(await w.mam(["registry", "check", "--json"]));
        expect(check.code).toBe(0);
        const rows = w.rows();
        expect(rows.map((r) => r.name).sort()).toEqual([...names].sort());
        expect(rows.every((r) => r.status === "running")).toBe(true);
        const ids = rows.map((r) => r.pane.id);
        expect(new Set(ids).size).toBe(n);
        // each summary names its own row's pane
        for (const [i, r] of results.entries()) expect(r.stdout).toContain(`created ${names[i]} (claude, role worker) in pane ${w.row(names[i]!).pane.id} `);
        const panes = await w.panes();
        expect(panes).toHaveLength(n);
        for (const row of rows) {
          const p = panes.find((x) => x.pane_id === row.pane.id)!;
          expect(p.label).toBe(`mam:${row.name} (claude, worker)`);
          expect(p.cwd).toBe(w.ws);
          // exactly the one agent command line, typed once, the row's own
          expect(typed(await w.inputs(row.pane.id))).toEqual([`claude --session-id ${row.claude_session_id_own} ${CLAUDE_GRANTS}`]);
        }
        // all in one herdr workspace: one per folder and server
        expect(new Set(panes.map((p) => p.workspace_id)).size).toBe(1);
      });
      // the creates take the server's pane-claim lock one after the other: ten of them beside the
      // rest of the suite on two cores took longer than the default 60 s
    }, 180_000);
  }
});

test("two concurrent creates of one name: one wins, the other exits 4 and leaves no pane", async () => {
  await withWorld({}, async (w) => {
    const rs = await Promise.all([w.create("claude", ["--session", "twin"]), w.create("claude", ["--session", "twin"])]);
    expect(rs.map((r) => r.code).sort()).toEqual([0, 4]);
    const loser = rs.find((r) => r.code === 4)!;
    expect(loser.stdout.trim()).toBe("ERROR: twin already running in agent-sessions.yaml");
    const row = w.row("twin");
    expect((await w.panes()).map((p) => p.pane_id)).toEqual([row.pane.id]);
  });
});

test("kinds herdr does not know (aider) are typed with pane run and verified; stop types their exit keys", async () => {
  await withWorld({}, async (w) => {
    const env = { ...w.env, MAM_AGENT_SETTLE_S: "0.3" };
    const r = await w.mam(["create", "--agent", "aider", "--herdr-session", SERVER, "--session", "aid", "--no-onboard"], { env });
    ok(r);
    const row = w.row("aid");
    expect(row).toMatchObject({ agent: "aider", session_id_source: "pending-discovery", start_command: "aider" });
    expect(row.herdr_agent_name).toBeUndefined();
    expect(row.pane.pid).toBeGreaterThan(0);
    expect(typed(await w.inputs(row.pane.id))).toEqual(["aider"]);
    ok(await w.mam(["stop", "aid"], { env }));
    expect(typed(await w.inputs(row.pane.id))).toEqual(["aider", "/exit"]);
    expect(await w.panes()).toEqual([]);
    expect(w.row("aid")).toMatchObject({ status: "stopped", resumable: false });
    // aider cannot resume a conversation: exit 3 unless --fresh
    const res = await w.mam(["resume", "aid"], { env });
    expect(res.code).toBe(3);
    expect(res.stderr).toContain("aider sessions cannot be resumed");
    ok(await w.mam(["resume", "aid", "--fresh"], { env }));
    expect(w.row("aid").status).toBe("running");
  });
});

// ---------------------------------------------------------------------------------------------
describe.concurrent("mam stop", () => {
  test("graceful: exit keys typed, pane closed, row stopped and resumable with its conversation", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("claude", ["--session", "g1"]));
      const before = w.row("g1");
      const t0 = Math.floor(Date.now() / 1000);
      const r = ok(await w.mam(["stop", "g1"]));
      expect(r.stdout.trim()).toBe(`g1 stopped (conversation ${before.claude_session_id_own})`);
      const ins = await w.inputs(before.pane.id);
      const exitAt = ins.findIndex((i) => i.kind === "text" && i.text === "/exit");
      expect(exitAt).toBeGreaterThan(0);
      expect(ins[exitAt + 1]).toMatchObject({ kind: "keys", keys: ["Enter"] });
      expect((await w.panes()).map((p) => p.pane_id)).not.toContain(before.pane.id);
      const row = w.row("g1");
      expect(row).toMatchObject({ status: "stopped", resumable: true, stop_reason: "requested", claude_session_id_own: before.claude_session_id_own, last_visible_status: "stopped" });
      expect(row.stopped_at_epoch).toBeGreaterThanOrEqual(t0);
      expect(row.stopped_at).toBe(new Date(row.stopped_at_epoch * 1000).toISOString().replace(/\.\d+Z$/, "Z"));
      // the agent left by itself: its conversation file says nothing was lost
      expect(existsSync(join(claudeProjectDir(w.ws, w.env), `${before.claude_session_id_own}.jsonl`))).toBe(true);
      // stopping it again: exit 0, nothing changes
      const text = readFileSync(w.reg, "utf8");
      const again = ok(await w.mam(["stop", "g1"]));
      expect(again.stdout.trim()).toBe("g1 is already stopped");
      expect(readFileSync(w.reg, "utf8")).toBe(text);
    });
  });

  test("--reason, --json; a conversation id discovered for a row that had none is recorded", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("codex", ["--session", "cx"]));
      const id = w.row("cx").codex_session_id_own;
      const r = ok(await w.mam(["stop", "cx", "--reason", "done for today", "--json"]));
      const doc = JSON.parse(r.stdout);
      const files = tree(join(w.sb.home, ".codex", "sessions")).filter((f) => f.endsWith(".jsonl"));
      expect(files).toHaveLength(1);
      const real = /-([0-9a-f-]{36})\.jsonl$/.exec(files[0]!)![1];
      if (id !== undefined) expect(id).toBe(real);
      expect(doc).toMatchObject({ name: "cx", status: "stopped", already: false, session_id: real });
      expect(w.row("cx")).toMatchObject({ status: "stopped", stop_reason: "done for today", codex_session_id_own: real, resumable: true });
      const ins = await w.inputs(doc.pane);
      expect(typed(ins)).toContain("/quit");
      // codex resumes with `codex -c notice.hide_rate_limit_model_nudge=true resume <id>` (its rate-limit nudge off)
      ok(await w.mam(["resume", "cx"]));
      const back = w.row("cx");
      expect(back).toMatchObject({ status: "running", codex_session_id_own: real, start_command: `codex -c notice.hide_rate_limit_model_nudge=true resume ${real}` });
      expect(agentLines(await w.inputs(back.pane.id), "codex")).toEqual([`codex -c notice.hide_rate_limit_model_nudge=true resume ${real}`]);
      await waitPaneText(w, back.pane.id, `resumed ${real}`);
    });
  });

  test("--hard: no exit keys, pane closed, terminated (hard)", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("claude", ["--session", "h1"]));
      const before = w.row("h1");
      ok(await w.mam(["stop", "h1", "--hard"]));
      expect(typed(await w.inputs(before.pane.id))).not.toContain("/exit");
      expect((await w.panes()).map((p) => p.pane_id)).not.toContain(before.pane.id);
      const row = w.row("h1");
      expect(row).toMatchObject({ status: "terminated", termination_mode: "hard", last_visible_status: "terminated" });
      expect(row.terminated_at_epoch).toBeGreaterThan(0);
      expect(row.stopped_at).toBeUndefined();
    });
  });

  test("--soft: the pane and its agent keep running, the row is archived", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("claude", ["--session", "s1"]));
      const before = w.row("s1");
      ok(await w.mam(["stop", "s1", "--soft"]));
      expect(typed(await w.inputs(before.pane.id))).not.toContain("/exit");
      const p = (await w.panes()).find((x) => x.pane_id === before.pane.id);
      expect(p).toMatchObject({ agent: "claude", label: "mam:s1 (claude, creator)" });
      expect(() => process.kill(before.pane.pid, 0)).not.toThrow();
      const row = w.row("s1");
      expect(row.status).toBe("archived");
      expect(row.archived_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    });
  });

  test("after --soft: --soft again leaves the pane and says so; --hard then closes it (terminated)", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("claude", ["--session", "sh"]));
      const pane = w.row("sh").pane.id;
      ok(await w.mam(["stop", "sh", "--soft"]));
      const text = readFileSync(w.reg, "utf8");
      const again = ok(await w.mam(["stop", "sh", "--soft"]));
      expect(again.stdout.trim()).toBe(`sh is already archived; its pane ${pane} still runs (close it: mam stop sh --hard, or mam stop sh to let the agent exit first)`);
      expect(readFileSync(w.reg, "utf8")).toBe(text);
      expect((await w.panes()).map((p) => p.pane_id)).toContain(pane);
      ok(await w.mam(["stop", "sh", "--hard"]));
      expect((await w.panes()).map((p) => p.pane_id)).not.toContain(pane);
      expect(typed(await w.inputs(pane))).not.toContain("/exit");
      expect(w.row("sh")).toMatchObject({ status: "terminated", termination_mode: "hard", last_visible_status: "terminated" });
      // and again: nothing left to close
      expect(ok(await w.mam(["stop", "sh", "--hard"])).stdout.trim()).toBe("sh is already terminated");
    });
  });

  test("after --soft: a graceful stop types the exit keys, closes the pane, row stopped and resumable", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("claude", ["--session", "sg"]));
      const before = w.row("sg");
      ok(await w.mam(["stop", "sg", "--soft", "--json"]));
      const r = ok(await w.mam(["stop", "sg"]));
      expect(r.stdout.trim()).toBe(`sg stopped (conversation ${before.claude_session_id_own})`);
      expect(typed(await w.inputs(before.pane.id))).toContain("/exit");
      expect((await w.panes()).map((p) => p.pane_id)).not.toContain(before.pane.id);
      expect(w.row("sg")).toMatchObject({ status: "stopped", resumable: true, claude_session_id_own: before.claude_session_id_own });
    });
  });

  test("after --soft: a pane that is no longer ours is never closed (relabelled, or its id held by a running row)", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("claude", ["--session", "sa"]));
      ok(await w.create("claude", ["--session", "sb"]));
      const a = w.row("sa").pane.id;
      ok(await w.mam(["stop", "sa", "--soft"]));
      // someone else took the archived pane: another session's label
      await w.h.call("pane.rename", { pane_id: a, label: "mam:someone-else" });
      const text = readFileSync(w.reg, "utf8");
      expect(ok(await w.mam(["stop", "sa", "--hard"])).stdout.trim()).toBe("sa is already archived");
      expect(readFileSync(w.reg, "utf8")).toBe(text);
      // an unlabelled pane under the archived row's id, held by a running row
      await w.h.call("pane.rename", { pane_id: a, label: "" });
      const b = w.row("sb").pane.id;
      await w.h.call("pane.rename", { pane_id: b, label: "" });
      writeFileSync(w.reg, readFileSync(w.reg, "utf8").replace(`id: ${b}`, `id: ${a}`).replace(`id: "${b}"`, `id: "${a}"`));
      expect(w.row("sb").pane.id).toBe(a);
      expect(ok(await w.mam(["stop", "sa", "--hard"])).stdout.trim()).toBe("sa is already archived");
      expect((await w.panes()).map((p) => p.pane_id)).toContain(a);
      expect(typed(await w.inputs(a))).not.toContain("/exit");
    });
  });

  test("--purge-conversation: needs --yes (exit 2, nothing changed); with it deletes only this row's file in this workspace", async () => {
    await withWorld({}, async (w) => {
      const ws2 = join(w.sb.root, "ws2");
      mkdirSync(ws2);
      ok(await w.create("claude", ["--session", "p1"]));
      ok(await w.create("claude", ["--session", "p1"], { ws: ws2 }));
      const row = w.row("p1");
      const id = row.claude_session_id_own as string;
      const mine = join(claudeProjectDir(w.ws, w.env), `${id}.jsonl`);
      const otherWs = w.rows(join(ws2, ".mam", "agent-sessions.yaml"))[0]!;
      // one herdr server, two workspaces, one session name: the second agent gets a derived herdr name
      expect(row.herdr_agent_name).toBeUndefined();
      expect(otherWs.herdr_agent_name).toMatch(/^p1-[0-9a-f]{8}$/);
      const theirs = join(claudeProjectDir(ws2, w.env), `${otherWs.claude_session_id_own}.jsonl`);
      // the same id in the other workspace's store, and another conversation of this workspace
      const sameIdElsewhere = join(claudeProjectDir(ws2, w.env), `${id}.jsonl`);
      copyFileSync(mine, sameIdElsewhere);
      const sibling = join(claudeProjectDir(w.ws, w.env), "11111111-2222-4333-8444-555555555555.jsonl");
      writeFileSync(sibling, `{"sessionId":"11111111-2222-4333-8444-555555555555","cwd":"${w.ws}"}\n`);

      const text = readFileSync(w.reg, "utf8");
      for (const args of [["--hard", "--purge-conversation"], ["--purge-conversation", "--yes"]]) {
        const r = await w.mam(["stop", "p1", ...args]);
        expect(r.code, args.join(" ")).toBe(2);
        expect(r.stdout).toBe("");
        expect(r.stderr).toStartWith("ERROR: ");
      }
      expect(readFileSync(w.reg, "utf8")).toBe(text);
      expect(existsSync(mine)).toBe(true);
      expect((await w.panes()).map((p) => p.pane_id)).toContain(row.pane.id);

      const r = ok(await w.mam(["stop", "p1", "--hard", "--purge-conversation", "--yes"]));
      expect(r.stdout).toContain("purged 1 file(s)");
      expect(existsSync(mine)).toBe(false);
      for (const f of [theirs, sameIdElsewhere, sibling]) expect(existsSync(f), f).toBe(true);
      const after = w.row("p1");
      expect(after.status).toBe("terminated");
      expect(after.claude_session_id_own).toBeUndefined();
      // the other workspace's session was not touched
      expect(w.rows(join(ws2, ".mam", "agent-sessions.yaml"))[0]!.status).toBe("running");
    });
  });

  test("unknown name → exit 3; bad names → exit 2; nothing written", async () => {
    await withWorld({}, async (w) => {
      const r = await w.mam(["stop", "nobody"]);
      expect(r.code).toBe(3);
      expect(r.stderr).toContain("ERROR: no session named 'nobody'");
      for (const bad of ["../x", "a/b", "x".repeat(65), "a;b"]) {
        const b = await w.mam(["stop", bad]);
        expect(b.code, bad).toBe(2);
      }
      expect(existsSync(join(w.ws, ".mam"))).toBe(false);
    });
  });

  test("a server that answers garbage: exit 1, row unchanged (--soft still archives); a server that is down: stopped", async () => {
    await withWorld({ wrap: true }, async (w) => {
      mkdirSync(join(w.ws, ".mam"));
      const row = (name: string, server: string) =>
        `  - {name: ${name}, status: running, role: worker, agent: claude, herdr_session: ${server}, herdr_server: ${server}, herdr_session_epoch: 1, pane: {id: "w1:p1", cwd: ${w.ws}}}\n`;
      const text = `herdr_sessions:\n${row("gb", "garb")}${row("dn", "down")}`;
      writeFileSync(w.reg, text);
      for (const mode of [[], ["--hard"]]) {
        const r = await w.mam(["stop", "gb", ...mode]);
        expect(r.code, r.stdout + r.stderr).toBe(1);
        expect(r.stdout).toBe("");
        expect(r.stderr).toStartWith("ERROR: cannot stop gb: herdr pane list printed something that is not herdr's JSON");
        expect(readFileSync(w.reg, "utf8")).toBe(text);
      }
      ok(await w.mam(["stop", "gb", "--soft"]));
      expect(w.row("gb").status).toBe("archived");
      // not running: its panes are gone with it
      ok(await w.mam(["stop", "dn"]));
      expect(w.row("dn").status).toBe("stopped");
    });
  });

  test("mam never closes or types into a pane that is not its own", async () => {
    await withWorld({}, async (w) => {
      // a user's agent in this folder, with no mam label, and a pane labelled for another session
      const user = ((await w.h.call("workspace.create", { cwd: w.ws, focus: false })) as Row).root_pane.pane_id as string;
      await w.h.call("agent.start", { name: "userclaude", kind: "claude", pane_id: user, timeout_ms: 20_000 });
      const other = ((await w.h.call("pane.split", { target_pane_id: user, direction: "right", cwd: w.ws, focus: false })) as Row).pane.pane_id as string;
      await w.h.call("pane.rename", { pane_id: other, label: "mam:someone-else" });
      mkdirSync(join(w.ws, ".mam"), { recursive: true });
      const row = (name: string, pane: string) =>
        `  - {name: ${name}, status: running, role: worker, agent: claude, herdr_session: ${SERVER}, herdr_server: ${SERVER}, herdr_session_epoch: 1, pane: {id: "${pane}", cwd: ${w.ws}}}\n`;
      // ghost: its pane is gone; squatter: the registry names a pane that now carries another session's label
      writeFileSync(w.reg, `herdr_sessions:\n${row("ghost", "w9:p9")}${row("squatter", other)}`);
      for (const args of [["ghost"], ["ghost", "--hard"], ["squatter"], ["squatter", "--hard"]]) {
        // put the rows back to running between the attempts
        const r = await w.mam(["stop", ...args]);
        expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
        writeFileSync(w.reg, `herdr_sessions:\n${row("ghost", "w9:p9")}${row("squatter", other)}`);
      }
      const panes = await w.panes();
      expect(panes.map((p) => p.pane_id).sort()).toEqual([user, other].sort());
      expect(typed(await w.inputs(user))).not.toContain("/exit");
      expect(typed(await w.inputs(other))).toEqual([]);
      expect(panes.find((p) => p.pane_id === user)!.agent).toBe("claude");
    });
  });
});

// ---------------------------------------------------------------------------------------------
describe.concurrent("mam resume", () => {
  test("own id: `claude --resume <id>` typed, row running in the new pane, stop keys removed", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("claude", ["--session", "r1", "--role", "worker"]));
      const id = w.row("r1").claude_session_id_own;
      ok(await w.mam(["stop", "r1", "--reason", "lunch"]));
      const r = ok(await w.mam(["resume", "r1"]));
      const row = w.row("r1");
      expect(r.stdout.trim()).toBe(`resumed r1 in pane ${row.pane.id} (conversation ${id})`);
      expect(row).toMatchObject({ status: "running", role: "worker", claude_session_id_own: id, last_visible_status: "running", start_command: `claude --resume ${id} ${CLAUDE_GRANTS}` });
      for (const k of ["stopped_at", "stopped_at_epoch", "stop_reason", "resumable", "terminated_at", "terminated_at_epoch", "termination_mode", "archived_at"]) {
        expect(row[k], k).toBeUndefined();
      }
      expect(agentLines(await w.inputs(row.pane.id))).toEqual([`claude --resume ${id} ${CLAUDE_GRANTS}`]);
      await waitPaneText(w, row.pane.id, `resumed ${id}`);
      expect((await w.panes()).find((p) => p.pane_id === row.pane.id)).toMatchObject({ label: "mam:r1 (claude, worker)", agent: "claude" });
      // already running with a live pane: exit 0, nothing typed, nothing changed
      const text = readFileSync(w.reg, "utf8");
      const again = ok(await w.mam(["resume", "r1"]));
      expect(again.stdout.trim()).toBe(`r1 is already running (pane ${row.pane.id})`);
      expect(readFileSync(w.reg, "utf8")).toBe(text);
      expect(await w.panes()).toHaveLength(1);
    });
  });

  test("after --hard and --soft too; the archived pane is not reused", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("claude", ["--session", "r2"]));
      ok(await w.mam(["stop", "r2", "--hard"]));
      ok(await w.mam(["resume", "r2"]));
      expect(w.row("r2")).toMatchObject({ status: "running" });
      expect(w.row("r2").termination_mode).toBeUndefined();
      const soft = w.row("r2").pane.id;
      ok(await w.mam(["stop", "r2", "--soft"]));
      // the archived row's pane still runs its agent: resume takes another pane
      const r = ok(await w.mam(["resume", "r2"]));
      const row = w.row("r2");
      expect(row.pane.id).not.toBe(soft);
      expect(row.archived_at).toBeUndefined();
      expect(r.stdout).toContain(`conversation ${row.claude_session_id_own}`);
      // herdr agent names are unique per server and the archived agent still holds "r2": the
      // resumed one runs under a derived name, which the row records
      expect(row.herdr_agent_name).toMatch(/^r2-[0-9a-f]{8}$/);
      const agents = ((await w.h.call("agent.list", {})) as Row).agents as Row[];
      expect(agents.map((a) => [a.name, a.pane_id]).sort()).toEqual([["r2", soft], [row.herdr_agent_name, row.pane.id]].sort());
      // and it is the one mam stops
      ok(await w.mam(["stop", "r2", "--hard"]));
      expect((await w.panes()).map((p) => p.pane_id)).toEqual([soft]);
    });
  });

  test("own file gone → this workspace's newest, never another workspace's; none → exit 3; --fresh starts fresh", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("claude", ["--session", "r3"]));
      const id = w.row("r3").claude_session_id_own as string;
      ok(await w.mam(["stop", "r3"]));
      const dir = claudeProjectDir(w.ws, w.env);
      rmSync(join(dir, `${id}.jsonl`));
      const conv = (d: string, cid: string, cwd: string, age: number) => {
        mkdirSync(d, { recursive: true });
        const f = join(d, `${cid}.jsonl`);
        writeFileSync(f, `{"type":"user","sessionId":"${cid}","cwd":"${cwd}"}\n`);
        const t = Date.now() / 1000 - age;
        utimesSync(f, t, t);
      };
      const older = "aaaaaaaa-0000-4000-8000-000000000001";
      const newer = "aaaaaaaa-0000-4000-8000-000000000002";
      const foreign = "bbbbbbbb-0000-4000-8000-000000000003";
      const ws2 = join(w.sb.root, "ws2");
      conv(dir, older, w.ws, 300);
      conv(dir, newer, w.ws, 200);
      conv(claudeProjectDir(ws2, w.env), foreign, ws2, 0); // the newest of all, but another workspace's
      const r = ok(await w.mam(["resume", "r3", "--json"]));
      expect(JSON.parse(r.stdout)).toMatchObject({ name: "r3", already: false, session_id: newer, from: "newest" });
      expect(w.row("r3").claude_session_id_own).toBe(newer);
      expect(agentLines(await w.inputs(w.row("r3").pane.id))).toEqual([`claude --resume ${newer} ${CLAUDE_GRANTS}`]);

      // none of this workspace's conversations left → exit 3, nothing spawned or written
      ok(await w.mam(["stop", "r3", "--hard"]));
      rmSync(dir, { recursive: true });
      const text = readFileSync(w.reg, "utf8");
      const panes = (await w.panes()).length;
      const miss = await w.mam(["resume", "r3"]);
      expect(miss.code).toBe(3);
      expect(miss.stderr).toContain("no claude conversation of session 'r3' found in this workspace");
      expect(miss.stderr).toContain("--fresh");
      expect(readFileSync(w.reg, "utf8")).toBe(text);
      expect((await w.panes()).length).toBe(panes);

      const f = ok(await w.mam(["resume", "r3", "--fresh"]));
      const row = w.row("r3");
      expect(row.status).toBe("running");
      expect(row.claude_session_id_own).not.toBe(foreign);
      expect(f.stdout).toContain(`fresh conversation ${row.claude_session_id_own}`);
      expect(agentLines(await w.inputs(row.pane.id))).toEqual([`claude --session-id ${row.claude_session_id_own} ${CLAUDE_GRANTS}`]);
    });
  });

  test("a running row whose pane died is resumed; unknown name → exit 3", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("claude", ["--session", "crash"]));
      const before = w.row("crash");
      await w.h.exitPane(before.pane.id);
      await waitFor(async () => !(await w.panes()).some((p) => p.pane_id === before.pane.id), 5000);
      const r = ok(await w.mam(["resume", "crash"]));
      expect(r.stdout).toContain(`(conversation ${before.claude_session_id_own})`);
      const row = w.row("crash");
      expect(row.status).toBe("running");
      expect(row.pane.id).not.toBe(before.pane.id);
      expect(agentLines(await w.inputs(row.pane.id))).toEqual([`claude --resume ${before.claude_session_id_own} ${CLAUDE_GRANTS}`]);

      const nf = await w.mam(["resume", "nobody"]);
      expect(nf.code).toBe(3);
      expect(nf.stderr).toContain("no session named 'nobody'");
    });
  });
});

// ---------------------------------------------------------------------------------------------
describe.concurrent("mam status", () => {
  test("table and --json: LIVE idle / dead / unreachable, one listing call per server, read-only", async () => {
    await withWorld({ wrap: true }, async (w) => {
      for (const s of ["st-a", "st-b", "st-c"]) ok(await w.create("claude", ["--session", s, "--role", "worker"]));
      ok(await w.mam(["stop", "st-c"]));
      const b = w.row("st-b");
      await w.h.exitPane(b.pane.id);
      await waitFor(async () => !(await w.panes()).some((p) => p.pane_id === b.pane.id), 5000);
      // rows on a server that answers garbage and on one that is not running
      const extra = (name: string, server: string) =>
        `  - {name: ${name}, status: running, role: worker, agent: claude, herdr_session: ${server}, herdr_server: ${server}, herdr_session_epoch: 1, pane: {id: "w1:p1", cwd: ${w.ws}}}\n`;
      const text = readFileSync(w.reg, "utf8").replace("tmux_sessions:", `${extra("st-garb", "garb")}${extra("st-garb2", "garb")}${extra("st-down", "down")}tmux_sessions:`);
      writeFileSync(w.reg, text);
      const mtime = statSync(w.reg).mtimeMs;
      const files = [...tree(w.ws), ...tree(w.sb.home)];
      const logBefore = wrapperLog(w.sb).length;

      const j = ok(await w.mam(["status", "--json"]));
      const calls = wrapperLog(w.sb).slice(logBefore);
      const doc = JSON.parse(j.stdout);
      expect(Object.keys(doc).sort()).toEqual(["needs", "registry", "sessions", "workspace"]);
      expect(doc.workspace).toBe(w.ws);
      expect(doc.registry).toBe(w.reg);
      for (const s of doc.sessions) expect(Object.keys(s).sort()).toEqual(["agent", "drift", "job", "live", "mux", "name", "pane", "role", "server", "status", "usage", "why"]);
      const by = Object.fromEntries(doc.sessions.map((s: Row) => [s.name, s]));
      expect(doc.sessions.map((s: Row) => s.name)).toEqual(["st-a", "st-b", "st-c", "st-garb", "st-garb2", "st-down"]);
      // no daemon has counted its usage: unknown, never 0 (docs/cost.md)
      const unmetered = { known: false, why: "not metered yet: the workspace's daemon counts usage", tokens: null, usd: null, models: {} };
      expect(by["st-a"]).toEqual({ name: "st-a", agent: "claude", role: "worker", status: "running", live: "idle", mux: "herdr", server: SERVER, pane: w.row("st-a").pane.id, job: null, drift: [], usage: { job: null, today: unmetered, total: unmetered }, why: { kind: "idle", text: "at its prompt, no job" } });
      expect(by["st-b"]).toMatchObject({ status: "running", live: "dead", drift: ["pane-gone"], why: { kind: "dead" } });
      expect(by["st-c"]).toMatchObject({ status: "stopped", live: "dead", drift: [], why: { kind: "stopped" } });
      expect(by["st-garb"]).toMatchObject({ status: "running", live: "unreachable", server: "garb", drift: ["server-unreachable"], why: { kind: "unreachable" } });
      expect(by["st-down"]).toMatchObject({ status: "running", live: "dead", server: "down", drift: ["server-down"] });
      // one listing call per server, nothing else
      const lists = calls.filter((c) => / pane list$/.test(c)).sort();
      expect(lists).toEqual(["--session down pane list", "--session garb pane list", `--session ${SERVER} pane list`]);
      expect(calls).toHaveLength(3);

      // the table: same facts, the columns of SPEC §5.5
      const t = ok(await w.mam(["status"]));
      const lines = t.stdout.trimEnd().split("\n");
      expect(lines[0]!.split(/\s+/)).toEqual(["NAME", "AGENT", "ROLE", "STATUS", "LIVE", "PANE", "SERVER", "JOB", "COST", "DRIFT"]);
      const cells = Object.fromEntries(lines.slice(1).map((l) => [l.split(/\s+/)[0], l.split(/\s+/)]));
      expect(cells["st-a"]).toEqual(["st-a", "claude", "worker", "running", "idle", w.row("st-a").pane.id, SERVER, "-", "?", "-"]);
      expect(cells["st-b"]!.slice(3, 5)).toEqual(["running", "dead"]);
      expect(cells["st-b"]![9]).toBe("pane-gone");
      expect(cells["st-garb"]!.slice(4)).toEqual(["unreachable", "w1:p1", "garb", "-", "?", "server-unreachable"]);
      // the alias, same document
      const ls = ok(await w.mam(["ls", "--json"]));
      expect(JSON.parse(ls.stdout).sessions.map((s: Row) => [s.name, s.live])).toEqual(doc.sessions.map((s: Row) => [s.name, s.live]));

      // read-only: the registry untouched (st-b's running row stays running), no file created
      expect(statSync(w.reg).mtimeMs).toBe(mtime);
      expect(readFileSync(w.reg, "utf8")).toBe(text);
      expect([...tree(w.ws), ...tree(w.sb.home)]).toEqual(files);
    });
  });

  test("a fresh workspace: an empty listing, no file or folder created", async () => {
    const sb = makeSandbox("mam-sh-");
    try {
      const before = [...tree(sb.ws), ...tree(sb.home)];
      const r = ok(await runMam(["status"], { env: sb.env, cwd: sb.ws }));
      expect(r.stdout.trim()).toBe(`no agent sessions in ${join(sb.ws, ".mam", "agent-sessions.yaml")}`);
      const j = ok(await runMam(["status", "--json", "--workspace", sb.ws], { env: sb.env, cwd: sb.root }));
      expect(JSON.parse(j.stdout)).toEqual({ workspace: sb.ws, registry: join(sb.ws, ".mam", "agent-sessions.yaml"), sessions: [], needs: [] });
      expect([...tree(sb.ws), ...tree(sb.home)]).toEqual(before);
    } finally {
      await sb.cleanup();
    }
  });

  test("the JOB column shows the session's job", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("claude", ["--session", "jb"]));
      const sub = ok(await w.mam(["job", "submit", "--to", "jb", "--prompt", "say hi"]));
      const id = sub.stdout.trim();
      expect(id).toMatch(/^[0-9a-f]{8}$/);
      const doc = JSON.parse(ok(await w.mam(["status", "--json"])).stdout);
      expect(doc.sessions[0].job).toEqual({ id, status: "pending" });
      expect(ok(await w.mam(["status"])).stdout).toContain(`${id}:pending`);
    });
  });

  test("--watch redraws until SIGINT, then exits 130", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("claude", ["--session", "wt"]));
      const p = Bun.spawn([...MAM_CMD, "status", "--watch", "1"], { env: w.env, cwd: w.ws, stdout: "pipe", stderr: "pipe" });
      let outText = "";
      const reader = (async () => {
        const dec = new TextDecoder();
        for await (const chunk of p.stdout) outText += dec.decode(chunk, { stream: true });
      })();
      const frames = () => outText.split("mam status — ").length - 1;
      const got = await waitFor(() => frames() >= 3, 10_000, 50);
      p.kill("SIGINT");
      const code = await p.exited;
      await reader;
      expect(got, outText).toBe(true);
      expect(code).toBe(130);
      expect(frames()).toBeGreaterThanOrEqual(3);
      expect(outText.split("\n").filter((l) => l.startsWith("wt ")).length).toBe(frames());
      const stamps = [...outText.matchAll(/every 1 s, Ctrl-C to stop/g)];
      expect(stamps.length).toBe(frames());
    });
  });
});

// ---------------------------------------------------------------------------------------------
describe.concurrent("bad input (SPEC §9): a clear error, nothing changed, nothing spawned", () => {
  test("unknown kind, bad names, a workspace that does not exist, bad flags", async () => {
    await withWorld({}, async (w) => {
      const cases: [string[], number, RegExp][] = [
        [["--agent", "nope"], 2, /^ERROR: unknown agent kind 'nope'; use one of: claude, codex/],
        [["--agent", "claude", "--session", "../x"], 2, /^ERROR: .*session name/],
        [["--agent", "claude", "--session", "a/b"], 2, /^ERROR: .*session name/],
        [["--agent", "claude", "--session", "x".repeat(65)], 2, /^ERROR: .*session name/],
        [["--agent", "claude", "--session", "a;b"], 2, /^ERROR: .*session name/],
        [["--agent", "claude", "--session", ".."], 2, /^ERROR: .*session name/],
        [["--agent", "claude", "--herdr-session", "../srv"], 2, /^ERROR: .*herdr server name/],
        [["--agent", "claude", "--herdr-session", "a;b"], 2, /^ERROR: .*herdr server name/],
        [["--agent", "claude", "--workspace", join(w.sb.root, "nope")], 2, /^ERROR: .*nope/],
        [["--agent", "claude", "--role", ""], 2, /^ERROR: .*role/],
        [["--agent", "claude", "--mux", "screen"], 2, /^ERROR: --mux must be herdr or tmux/],
        [["--agent", "claude", "--frobnicate"], 2, /^ERROR: .*frobnicate/],
      ];
      await Promise.all(
        cases.map(async ([args, code, re]) => {
          const r = await w.mam(["create", ...(args.includes("--herdr-session") ? [] : ["--herdr-session", SERVER]), ...args]);
          expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(code);
          expect(r.stdout).toBe("");
          expect(r.stderr.trim().split("\n")).toHaveLength(1);
          expect(r.stderr).toMatch(re);
        }),
      );
      for (const cmd of ["resume", "stop"]) {
        const r = await w.mam([cmd, "x", "--workspace", join(w.sb.root, "nope")]);
        expect(r.code).toBe(2);
      }
      expect(await w.panes()).toEqual([]);
      expect(existsSync(join(w.ws, ".mam"))).toBe(false);
    });
  });

  test("a registry that is not YAML: every command exits 1 naming it, nothing written or spawned", async () => {
    await withWorld({}, async (w) => {
      mkdirSync(join(w.ws, ".mam"));
      const garbage = "herdr_sessions:\n  - {name: x, status: running\n  - ]]\n";
      writeFileSync(w.reg, garbage);
      const mtime = statSync(w.reg).mtimeMs;
      for (const args of [["create", "--agent", "claude", "--herdr-session", SERVER, "--no-onboard"], ["status"], ["status", "--json"], ["stop", "x"], ["resume", "x"]]) {
        const r = await w.mam(args);
        expect(r.code, args.join(" ")).toBe(1);
        // with --json the error is the one document on stdout (issue 23 item 17)
        if (args.includes("--json")) expect(JSON.parse(r.stdout)).toMatchObject({ exit_code: 1 });
        else expect(r.stdout).toBe("");
        expect(r.stderr).toMatch(new RegExp(`^ERROR: ${w.reg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is not valid YAML \\(line \\d+: .+\\); fix it, or rebuild it from the panes the agents run in: mam registry rebuild`));
      }
      expect(readFileSync(w.reg, "utf8")).toBe(garbage);
      expect(statSync(w.reg).mtimeMs).toBe(mtime);
      expect(existsSync(`${w.reg}.bak`)).toBe(false);
      // YAML that fails validation (two running rows of one name on one server): the same
      const invalid = `herdr_sessions:\n  - {name: x, status: running, role: w, herdr_server: ${SERVER}}\n  - {name: x, status: running, role: w, herdr_server: ${SERVER}}\n`;
      writeFileSync(w.reg, invalid);
      for (const args of [["create", "--agent", "claude", "--herdr-session", SERVER, "--no-onboard", "--session", "y"], ["status"], ["stop", "x"], ["resume", "x"]]) {
        const r = await w.mam(args);
        expect(r.code, args.join(" ")).toBe(1);
        expect(r.stdout).toBe("");
        expect(r.stderr).toContain("'x' is running twice on herdr server");
      }
      expect(readFileSync(w.reg, "utf8")).toBe(invalid);
      expect(await w.panes()).toEqual([]);
    });
  });

  test("herdr printing garbage: exit 1 naming herdr, nothing written", async () => {
    const sb = makeSandbox("mam-sh-");
    try {
      writeFileSync(join(sb.bin, "herdr"), "#!/bin/bash\necho 'Segmentation fault (core dumped) {not json'\nexit 0\n", { mode: 0o755 });
      for (const args of [["create", "--agent", "claude", "--herdr-session", SERVER], ["create", "--agent", "claude"]]) {
        const r = await runMam(args, { env: sb.env, cwd: sb.ws });
        expect(r.code, r.stderr).toBe(1);
        expect(r.stdout).toBe("");
        expect(r.stderr).toStartWith("ERROR: herdr pane list printed something that is not herdr's JSON");
      }
      expect(tree(sb.ws)).toEqual([]);
    } finally {
      await sb.cleanup();
    }
  });

  test("herdr server not running: the exact error; --start-server starts one, headless and detached", async () => {
    await withWorld({}, async (w) => {
      const srv = `auto-${process.pid}`;
      const r = await w.mam(["create", "--agent", "claude", "--herdr-session", srv, "--no-onboard"]);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr.trim()).toBe(`ERROR: herdr server '${srv}' is not running; start it with: herdr --session ${srv} server`);
      expect(existsSync(w.reg)).toBe(false);
      const socket = apiSocketPath(w.env, srv);
      try {
        // the fake's settle delay is read by the server, which gets mam's environment
        const env = { ...w.env, FAKE_HERDR_SETTLE_MS: "150" };
        const s = await w.mam(["create", "--agent", "claude", "--herdr-session", srv, "--no-onboard", "--start-server", "--session", "started"], { env });
        ok(s);
        expect(s.stdout).toContain(`created started (claude, role creator) in pane `);
        expect(w.row("started")).toMatchObject({ status: "running", herdr_server: srv });
        // the server outlives mam, in its own session (setsid), with no terminal
        const pid = readdirSync("/proc")
          .filter((p) => /^\d+$/.test(p))
          .map(Number)
          .find((p) => {
            try {
              const argv = readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0");
              return argv.includes("server") && argv.includes(srv) && !argv.includes("stop");
            } catch {
              return false;
            }
          });
        expect(pid).toBeGreaterThan(0);
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        expect(Number(f[3])).toBe(pid!); // session id (field 6) = its own pid
        expect(Number(f[4])).toBe(0); // no controlling terminal
        const st = await run([w.h.bin, "--session", srv, "pane", "list"], { env: w.env });
        expect(JSON.parse(st.stdout).result.panes).toHaveLength(1);
      } finally {
        await run([w.h.bin, "--session", srv, "server", "stop"], { env: w.env, timeoutMs: 20_000 });
        await waitFor(() => !existsSync(socket), 5000);
        killBySocket(socket);
      }
    });
  });
});
