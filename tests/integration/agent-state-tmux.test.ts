// LIVE on tmux (issue 12): mam status from the screen detector and from hook reports, and the
// daemon turning a blocked agent into one permission_required per dialog. A claude look-alike
// (tests/helpers/agent-screens.ts) draws claude's screens in a real tmux on a private server.
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type RunResult, run, runMam } from "../helpers/mam.ts";
import { CLAUDE_LOOKALIKE } from "../helpers/agent-screens.ts";
import { startSubscriber, unreachableBrokerEnv } from "../helpers/daemon.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName, writeScript } from "../helpers/tmux.ts";

type Session = { name: string; live: string; reason?: string; dialog?: string; live_source?: string };

interface World {
  sb: Sandbox;
  server: string;
  env: Record<string, string>;
  mam(args: string[], extra?: Record<string, string>): Promise<RunResult>;
  keys(session: string, text: string): Promise<void>;
  live(name: string, extra?: Record<string, string>): Promise<Session>;
}

async function withWorld(fn: (w: World) => Promise<void>): Promise<void> {
  if (!TMUX_BIN) throw new Error("tmux is not installed: these tests need a real tmux (apt install tmux)");
  const sb = makeSandbox("mam-as-");
  writeScript(sb.bin, "claude", CLAUDE_LOOKALIKE);
  const server = tmuxServerName("mamas");
  const env = sb.with({ TMUX_TMPDIR: sb.root, MAM_AGENT_SETTLE_S: "0.3", MAM_MUX: "tmux" });
  const w: World = {
    sb,
    server,
    env,
    mam: (args, extra = {}) => runMam(args, { env: { ...env, ...extra }, cwd: sb.ws, timeoutMs: 60_000 }),
    async keys(session, text) {
      const r = await run([TMUX_BIN!, "-L", server, "send-keys", "-t", `=${session}:`, "-l", text], { env });
      expect(r.code).toBe(0);
      await run([TMUX_BIN!, "-L", server, "send-keys", "-t", `=${session}:`, "Enter"], { env });
    },
    async live(name, extra = {}) {
      const r = await w.mam(["status", "--json"], extra);
      if (r.code !== 0) throw new Error(`status exited ${r.code}: ${r.stderr}`);
      const s = (JSON.parse(r.stdout) as { sessions: Session[] }).sessions.find((x) => x.name === name);
      if (!s) throw new Error(`no session ${name} in ${r.stdout}`);
      return s;
    },
  };
  try {
    await fn(w);
  } finally {
    await killTmuxServer(server, env, sb.root);
    await sb.cleanup();
  }
}

async function create(w: World, name: string): Promise<void> {
  const r = await w.mam(["create", "--agent", "claude", "--session", name, "--tmux-server", w.server, "--no-onboard"]);
  if (r.code !== 0) throw new Error(`create ${name} exited ${r.code}: ${r.stdout}${r.stderr}`);
}

async function until(w: World, name: string, live: string, extra: Record<string, string> = {}): Promise<Session> {
  let last: Session | undefined;
  const ok = await waitFor(async () => (last = await w.live(name, extra)).live === live, 10_000, 100);
  if (!ok) throw new Error(`${name} never became ${live}; last: ${JSON.stringify(last)}`);
  return last!;
}

test("status on tmux: idle, working and blocked from the screen (reason in --json and the table); hooks win while fresh", async () => {
  await withWorld(async (w) => {
    await create(w, "wrk");
    expect(await until(w, "wrk", "idle")).toMatchObject({ live: "idle", live_source: "screen" });
    await w.keys("wrk", "work on it");
    expect(await until(w, "wrk", "working")).toMatchObject({ live_source: "screen" });
    await w.keys("wrk", "ask touch x");
    const b = await until(w, "wrk", "blocked");
    expect(b).toMatchObject({ reason: "Bash command: touch x — Do you want to proceed?", dialog: "permission", live_source: "screen" });
    const table = await w.mam(["status"]);
    expect(table.stdout).toContain("wrk is blocked: Bash command: touch x — Do you want to proceed?");

    // the screen detector off: nothing else knows → unknown
    const off = { MAM_SCREEN_DETECT: "0" };
    expect((await w.live("wrk", off)).live).toBe("unknown");
    // a hook report (what `mam hooks install claude` makes claude send) is used, and wins over the screen while fresh
    const hook = (input: object) => run([...(process.env.MAM_BIN ? [process.env.MAM_BIN] : [process.execPath, join(import.meta.dir, "..", "..", "mam.ts")]), "agent-report", "--hook", "claude"], {
      env: { ...w.env, MAM_SESSION: "wrk", MAM_WORKSPACE: w.sb.ws },
      cwd: w.sb.ws,
      stdin: JSON.stringify(input),
    });
    const sid = "5b0d4a36-0f5e-4c0e-9d6a-1f2e3d4c5b6a";
    expect((await hook({ hook_event_name: "SessionStart", session_id: sid, source: "startup", cwd: w.sb.ws })).code).toBe(0);
    expect(await w.live("wrk", off)).toMatchObject({ live: "idle", live_source: "hook" });
    expect((await hook({ hook_event_name: "UserPromptSubmit", session_id: sid, prompt: "go" })).code).toBe(0);
    expect(await w.live("wrk")).toMatchObject({ live: "working", live_source: "hook" });
    await hook({ hook_event_name: "PreToolUse", session_id: sid, tool_name: "Bash", tool_input: { command: "rm -rf build" } });
    await hook({ hook_event_name: "Notification", session_id: sid, message: "Claude needs your permission to use Bash", notification_type: "permission_prompt" });
    expect(await w.live("wrk", off)).toMatchObject({ live: "blocked", live_source: "hook", reason: "Claude needs your permission to use Bash (Bash: rm -rf build)" });
    // stale (MAM_HOOK_STALE_S): the screen decides again
    expect(await w.live("wrk", { MAM_HOOK_STALE_S: "0.001" })).toMatchObject({ live: "blocked", live_source: "screen", reason: "Bash command: touch x — Do you want to proceed?" });
    // the conversation id of SessionStart is in the row, saying where it came from
    const reg = Bun.YAML.parse(readFileSync(join(w.sb.ws, ".mam", "agent-sessions.yaml"), "utf8")) as { tmux_sessions: Record<string, unknown>[] };
    expect(reg.tmux_sessions[0]).toMatchObject({ name: "wrk", claude_session_id_own: sid, session_id_source: "hook" });
    // a hook that makes no sense to mam never fails the agent
    const bad = await run([...(process.env.MAM_BIN ? [process.env.MAM_BIN] : [process.execPath, join(import.meta.dir, "..", "..", "mam.ts")]), "agent-report", "--hook", "claude"], {
      env: { ...w.env, MAM_SESSION: "wrk" },
      cwd: w.sb.ws,
      stdin: "not json",
    });
    expect(bad.code).toBe(0);
    expect(bad.stderr).toContain("not JSON");
  });
}, 90_000);

test("the daemon: one permission_required per dialog (the question as detail), told to the delegator; a dead agent → error", async () => {
  await withWorld(async (w) => {
    await create(w, "lead");
    await create(w, "wrk");
    await until(w, "wrk", "idle");
    const sub = await w.mam(["job", "submit", "--to", "wrk", "--from", "lead", "--prompt", "make x"]);
    expect(sub.code).toBe(0);
    const id = sub.stdout.trim();
    expect((await w.mam(["job", "event", id, "started", "--detail", "go"])).code).toBe(0);
    const log = join(w.sb.root, "daemon.log");
    const d = startSubscriber(w.sb, log, { ...w.env, ...unreachableBrokerEnv, RECONCILE_POLL_INTERVAL: "30", MAM_STATE_POLL_MS: "200" });
    const journal = () => readFileSync(join(w.sb.ws, ".mam", "jobs", `${id}.events.ndjson`), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { event: string; detail: string; source: string });
    const perms = () => journal().filter((e) => e.event === "permission_required");
    try {
      await w.keys("wrk", "ask touch x");
      expect(await waitFor(() => perms().length >= 1, 10_000, 100)).toBe(true);
      await Bun.sleep(1500); // several polls of the same dialog
      expect(perms().map((e) => `${e.source}: ${e.detail}`)).toEqual(["monitor: wrk: Bash command: touch x — Do you want to proceed?"]);
      // the delegator's pane got one line about it
      const cap = async () => (await run([TMUX_BIN!, "-L", w.server, "capture-pane", "-p", "-J", "-t", "=lead:", "-S", "-50"], { env: w.env })).stdout;
      expect(await waitFor(async () => (await cap()).includes(`[mam] job ${id} permission_required: wrk: Bash command: touch x`), 10_000, 100)).toBe(true);
      // the user approves; the next dialog is a new one
      await w.keys("wrk", "1");
      await until(w, "wrk", "idle");
      await w.keys("wrk", "ask rm y");
      expect(await waitFor(() => perms().length >= 2, 10_000, 100)).toBe(true);
      expect(perms()[1]!.detail).toBe("wrk: Bash command: rm y — Do you want to proceed?");
      // the agent dies while its job runs → error (agent exited)
      await run([TMUX_BIN!, "-L", w.server, "kill-session", "-t", "=wrk"], { env: w.env });
      expect(await waitFor(() => journal().some((e) => e.event === "error" && e.detail === "agent exited"), 10_000, 100)).toBe(true);
      expect(perms().length).toBe(2);
    } finally {
      await d.kill();
    }
  });
}, 120_000);

test("TmuxMux.screens: one call for every pane's screen and title; a pane that is gone is left out", async () => {
  await withWorld(async (w) => {
    await create(w, "s1");
    await create(w, "s2");
    const { TmuxMux } = await import("../../lib/mux/tmux.ts");
    const mux = new TmuxMux(w.server, w.env);
    const listing = await mux.list();
    if (listing.state !== "ok") throw new Error(JSON.stringify(listing));
    const ids = listing.panes.map((p) => p.id).sort();
    expect(ids.length).toBe(2);
    await waitFor(async () => [...(await mux.screens(ids)).values()].every((s) => s.text.includes("? for shortcuts")), 10_000, 100);
    const got = await mux.screens([...ids, "%999"]);
    expect([...got.keys()].sort()).toEqual(ids);
    for (const s of got.values()) expect(s).toMatchObject({ title: "✳ Claude Code" });
    expect((await mux.screen(ids[0]!)).text).toContain("❯");
    await expect(mux.screen("%999")).rejects.toThrow(/not found|can't find/);
  });
}, 60_000);

test("a LIVE pass is one tmux call per server (listing and screens together); a pane gone since costs calls, not answers", async () => {
  await withWorld(async (w) => {
    await create(w, "s1");
    await create(w, "s2");
    await until(w, "s1", "idle");
    await until(w, "s2", "idle");
    // a tmux first on PATH that logs each call's command (mam runs tmux -u -L SERVER COMMAND …)
    const log = join(w.sb.root, "tmux-calls.log");
    const dir = join(w.sb.root, "counting");
    mkdirSync(dir);
    writeScript(dir, "tmux", `#!/bin/sh\necho "$4" >>'${log}'\nexec '${TMUX_BIN}' "$@"\n`);
    const counting = { ...w.env, PATH: `${dir}:${w.env.PATH}` };
    const calls = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : []);
    const st = await w.mam(["status", "--json"], counting);
    expect((JSON.parse(st.stdout) as { sessions: Session[] }).sessions.map((s) => `${s.name} ${s.live} ${s.live_source}`).sort()).toEqual(["s1 idle screen", "s2 idle screen"]);
    expect(calls()).toEqual(["list-panes"]);

    const { TmuxMux } = await import("../../lib/mux/tmux.ts");
    const mux = new TmuxMux(w.server, counting);
    const listing = await mux.list();
    if (listing.state !== "ok") throw new Error(JSON.stringify(listing));
    const ids = listing.panes.map((p) => p.id).sort();
    writeFileSync(log, "");
    const both = await mux.listWithScreens(ids);
    expect(calls()).toEqual(["list-panes"]);
    expect(both.listing.state === "ok" && both.listing.panes.map((p) => p.id).sort()).toEqual(ids);
    expect([...both.screens.keys()].sort()).toEqual(ids);
    for (const s of both.screens.values()) expect(s).toMatchObject({ title: "✳ Claude Code" });
    expect(both.screens.get(ids[0]!)!.text).toContain("? for shortcuts");
    // a pane in the list that is gone stops tmux's chain: the listing, then the screens of the listed panes
    writeFileSync(log, "");
    const gone = await mux.listWithScreens([...ids, "%999"]);
    expect(gone.listing.state === "ok" && gone.listing.panes.map((p) => p.id).sort()).toEqual(ids);
    expect([...gone.screens.keys()].sort()).toEqual(ids);
    expect(calls()).toEqual(["list-panes", "list-panes", "display-message"]);
  });
}, 60_000);
