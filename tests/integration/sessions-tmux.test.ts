// mam create | status | stop | resume on a real tmux (issue 5): the end-to-end lifecycle with a
// fake claude, and a 3-way create race on one tmux server. Each test has its own private server
// (`tmux -L <unique>`, socket in the sandbox through TMUX_TMPDIR), killed afterwards. tmux is
// required here and in CI: without it these tests fail, they do not skip.
import { describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { claudeProjectDir } from "../../lib/agents/kinds/claude.ts";
import { installFakeAgents } from "../helpers/herdr.ts";
import { AGENT_MAM, CLAUDE_GRANTS, type RunResult, run, runMam } from "../helpers/mam.ts";
import { anchoredPids, makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "../helpers/tmux.ts";

type Row = Record<string, any>;

function needTmux(): string {
  if (!TMUX_BIN) throw new Error("tmux is not installed: these tests need a real tmux (apt install tmux); they are not skipped on purpose");
  return TMUX_BIN;
}

interface World {
  sb: Sandbox;
  server: string;
  env: Record<string, string>;
  mam(args: string[]): Promise<RunResult>;
  tmux(args: string[]): Promise<RunResult>;
  rows(): Row[];
  row(name: string): Row;
  capture(pane: string): Promise<string>;
}

async function withTmux(extraEnv: Record<string, string | undefined>, fn: (w: World) => Promise<void>): Promise<void> {
  const tmuxBin = needTmux();
  const sb = makeSandbox("mam-st-");
  installFakeAgents(sb.bin, ["claude"]);
  const server = tmuxServerName("mamst");
  // herdr must not be chosen by accident: the backend is given explicitly anyway
  const env = sb.with({ TMUX_TMPDIR: sb.root, ...extraEnv });
  for (const [k, v] of Object.entries(extraEnv)) if (v === undefined) delete env[k];
  const reg = join(sb.ws, ".mam", "agent-sessions.yaml");
  const w: World = {
    sb,
    server,
    env,
    mam: (args) => runMam(args, { env, cwd: sb.ws, timeoutMs: 120_000 }),
    tmux: (args) => run([tmuxBin, "-L", server, ...args], { env, timeoutMs: 20_000 }),
    rows: () => {
      const d = Bun.YAML.parse(readFileSync(reg, "utf8")) as { herdr_sessions?: Row[]; tmux_sessions?: Row[] };
      expect(d.herdr_sessions ?? []).toEqual([]);
      return d.tmux_sessions ?? [];
    },
    row: (name) => {
      const r = w.rows().filter((x) => x.name === name);
      if (r.length !== 1) throw new Error(`expected one row named ${name}, found ${r.length}: ${readFileSync(reg, "utf8")}`);
      return r[0]!;
    },
    capture: async (pane) => (await w.tmux(["capture-pane", "-p", "-J", "-t", pane, "-S", "-200"])).stdout,
  };
  try {
    await fn(w);
  } finally {
    await killTmuxServer(server, env, sb.root);
    await sb.cleanup();
  }
}

function ok(r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`mam exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

async function waitCapture(w: World, pane: string, needle: string): Promise<string> {
  let text = "";
  const found = await waitFor(async () => (text = await w.capture(pane)).includes(needle), 10_000, 100);
  if (!found) throw new Error(`tmux pane ${pane} never showed ${JSON.stringify(needle)}; it shows:\n${text}`);
  return text;
}

async function sessions(w: World): Promise<string[]> {
  const r = await w.tmux(["list-sessions", "-F", "#{session_name}"]);
  return r.code === 0 ? r.stdout.split("\n").filter(Boolean).sort() : [];
}

describe.concurrent("sessions on tmux", () => {
  test("tmux is installed", () => {
    expect(TMUX_BIN, "tmux is not installed: the tmux session tests need it (apt install tmux)").toBeTruthy();
  });

  test("create → status live → stop → status stopped with its conversation → resume that conversation → stop --hard", async () => {
    await withTmux({}, async (w) => {
      const create = ok(await w.mam(["create", "--agent", "claude", "--mux", "tmux", "--tmux-server", w.server, "--role", "worker", "--session", "e2e.worker", "--no-onboard"]));
      const row = w.row("e2e.worker");
      const id = row.claude_session_id_own as string;
      expect(create.stdout.trimEnd().split("\n")).toEqual(["watchdog PID: none (MAM_NO_SUBSCRIBER_DAEMON=1)", `created e2e.worker (claude, role worker) in pane ${row.pane.id} on tmux server ${w.server}`]);
      expect(row).toMatchObject({ status: "running", role: "worker", agent: "claude", tmux_server: w.server, session_id_source: "assigned", start_command: `claude --session-id ${id} ${CLAUDE_GRANTS}` });
      expect(row.pane.id).toMatch(/^%\d+$/);
      expect(row.pane.cwd).toBe(w.sb.ws);
      expect(row.tmux_session_epoch).toBeGreaterThan(0);
      // its own tmux session (tmux turns "." into "_"), the exact name kept in @mam_name
      expect(await sessions(w)).toEqual(["e2e_worker"]);
      expect((await w.tmux(["show-options", "-v", "-t", "=e2e_worker:", "@mam_name"])).stdout.trim()).toBe("e2e.worker");
      await waitCapture(w, row.pane.id, `session ${id}`);
      expect(existsSync(join(claudeProjectDir(w.sb.ws, w.env), `${id}.jsonl`))).toBe(true);
      // the agent's PATH is mam's (no shim folder on tmux, never a folder of the workspace)
      const environ = readFileSync(`/proc/${row.pane.pid}/environ`, "utf8").split("\0");
      expect(environ.find((e) => e.startsWith("PATH="))!.slice(5)).toBe(w.env.PATH);

      // status: live (tmux knows no agent state: a live pane is "unknown", never dead/unreachable)
      let doc = JSON.parse(ok(await w.mam(["status", "--json"])).stdout);
      const unmetered = { known: false, why: "not metered yet: the workspace's daemon counts usage", tokens: null, usd: null, models: {} };
      expect(doc.sessions).toEqual([
        { name: "e2e.worker", agent: "claude", role: "worker", status: "running", live: "unknown", mux: "tmux", server: w.server, pane: row.pane.id, job: null, drift: [], usage: { job: null, today: unmetered, total: unmetered }, why: { kind: "unknown", text: "state unknown" } },
      ]);
      const table = ok(await w.mam(["status"])).stdout;
      expect(table).toContain(`tmux:${w.server}`);

      // stop: the agent gets /exit, the session goes, the row keeps the conversation
      const stop = ok(await w.mam(["stop", "e2e.worker"]));
      expect(stop.stdout.trim()).toBe(`e2e.worker stopped (conversation ${id})`);
      expect(await sessions(w)).toEqual([]);
      expect(w.row("e2e.worker")).toMatchObject({ status: "stopped", resumable: true, stop_reason: "requested", claude_session_id_own: id });
      doc = JSON.parse(ok(await w.mam(["status", "--json"])).stdout);
      expect(doc.sessions[0]).toMatchObject({ name: "e2e.worker", status: "stopped", live: "dead" });

      // resume: the same conversation, in a new session
      const res = ok(await w.mam(["resume", "e2e.worker"]));
      const back = w.row("e2e.worker");
      expect(res.stdout.trim()).toBe(`resumed e2e.worker in pane ${back.pane.id} (conversation ${id})`);
      expect(back).toMatchObject({ status: "running", claude_session_id_own: id, start_command: `claude --resume ${id} ${CLAUDE_GRANTS}` });
      expect(back.stopped_at).toBeUndefined();
      expect(back.resumable).toBeUndefined();
      expect(await waitCapture(w, back.pane.id, `resumed ${id}`)).toContain(`resumed ${id}`);
      doc = JSON.parse(ok(await w.mam(["status", "--json"])).stdout);
      expect(doc.sessions[0]).toMatchObject({ status: "running", live: "unknown", pane: back.pane.id });
      // already running: nothing to do
      expect(ok(await w.mam(["resume", "e2e.worker"])).stdout.trim()).toBe(`e2e.worker is already running (pane ${back.pane.id})`);

      // stop --hard: killed at once, terminated
      ok(await w.mam(["stop", "e2e.worker", "--hard"]));
      expect(await sessions(w)).toEqual([]);
      expect(w.row("e2e.worker")).toMatchObject({ status: "terminated", termination_mode: "hard" });
      // the conversation file got the resume line (the fake appends one per resume)
      expect(readFileSync(join(claudeProjectDir(w.sb.ws, w.env), `${id}.jsonl`), "utf8").split("\n").filter(Boolean)).toHaveLength(2);
    });
  });

  test("claude starts with mam's three grants as its own arguments; --no-grant leaves them out and resume keeps that", async () => {
    await withTmux({ MAM_AGENT_SETTLE_S: "0.5" }, async (w) => {
      const create = (n: string, extra: string[] = []) =>
        w.mam(["create", "--agent", "claude", "--mux", "tmux", "--tmux-server", w.server, "--role", "worker", "--session", n, "--no-onboard", ...extra]);
      /** the argv the fake claude of conversation `id` runs with */
      const argvOf = async (id: string) => {
        let argv: string[] = [];
        const found = await waitFor(() => {
          for (const pid of anchoredPids(w.sb.root)) {
            try {
              const a = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
              if (a.some((x) => x.endsWith("/claude")) && a.includes(id)) {
                argv = a.filter(Boolean);
                return true;
              }
            } catch {}
          }
          return false;
        }, 10_000);
        if (!found) throw new Error(`no claude process of conversation ${id}`);
        return argv.slice(argv.findIndex((x) => x.endsWith("/claude")) + 1);
      };
      const rules = [`Bash(${AGENT_MAM} job event:*)`, `Bash(${AGENT_MAM} job status:*)`, `Bash(${AGENT_MAM} status:*)`];

      // default: the three rules, each one argument, before the user's own arguments
      ok(await create("granted", ["--", "--model", "opus"]));
      const g = w.row("granted");
      const gid = g.claude_session_id_own as string;
      expect(g.start_command).toBe(`claude --session-id ${gid} ${CLAUDE_GRANTS} --model opus`);
      expect(g.grants).toBeUndefined();
      expect(await argvOf(gid)).toEqual(["--session-id", gid, ...rules.map((r) => `--allowedTools=${r}`), "--model", "opus"]);

      // --no-grant: none, and the row says so
      ok(await create("asks", ["--no-grant", "--", "--model", "opus"]));
      const a = w.row("asks");
      const aid = a.claude_session_id_own as string;
      expect(a.start_command).toBe(`claude --session-id ${aid} --model opus`);
      expect(a.grants).toBe(false);
      expect((await argvOf(aid)).join(" ")).not.toContain("--allowedTools");

      // resume keeps each choice
      for (const n of ["granted", "asks"]) ok(await w.mam(["stop", n]));
      for (const n of ["granted", "asks"]) ok(await w.mam(["resume", n]));
      expect(w.row("granted").start_command).toBe(`claude --resume ${gid} ${CLAUDE_GRANTS}`);
      expect(w.row("asks")).toMatchObject({ status: "running", grants: false, start_command: `claude --resume ${aid}` });
      expect((await argvOf(aid)).join(" ")).not.toContain("--allowedTools");
      for (const n of ["granted", "asks"]) ok(await w.mam(["stop", n, "--hard"]));
    });
  });

  test("stop --soft leaves the tmux session; --soft again says so; a later stop (graceful, then --hard on another) closes it", async () => {
    await withTmux({ MAM_AGENT_SETTLE_S: "0.5" }, async (w) => {
      const create = (n: string) => w.mam(["create", "--agent", "claude", "--mux", "tmux", "--tmux-server", w.server, "--role", "worker", "--session", n, "--no-onboard"]);
      ok(await create("soft-a"));
      ok(await create("soft-b"));
      const a = w.row("soft-a");
      for (const n of ["soft-a", "soft-b"]) ok(await w.mam(["stop", n, "--soft"]));
      expect(await sessions(w)).toEqual(["soft-a", "soft-b"]);
      expect(w.row("soft-a")).toMatchObject({ status: "archived" });
      expect(ok(await w.mam(["stop", "soft-a", "--soft"])).stdout.trim()).toBe(
        `soft-a is already archived; its pane ${a.pane.id} still runs (close it: mam stop soft-a --hard, or mam stop soft-a to let the agent exit first)`,
      );
      expect(await sessions(w)).toEqual(["soft-a", "soft-b"]);
      // graceful: the agent gets /exit, the session goes, the row is stopped with its conversation
      expect(ok(await w.mam(["stop", "soft-a"])).stdout.trim()).toBe(`soft-a stopped (conversation ${a.claude_session_id_own})`);
      expect(await sessions(w)).toEqual(["soft-b"]);
      expect(w.row("soft-a")).toMatchObject({ status: "stopped", resumable: true });
      // --hard: closed at once
      ok(await w.mam(["stop", "soft-b", "--hard"]));
      expect(await sessions(w)).toEqual([]);
      expect(w.row("soft-b")).toMatchObject({ status: "terminated", termination_mode: "hard" });
    });
  });

  test("an unverified kind: create says so once (a verified one says nothing); stop --hard ends an agent that ignores its pane's hangup", async () => {
    await withTmux({}, async (w) => {
      // a crush that ignores SIGHUP, as gemini does, with a child of its own
      const crush = join(w.sb.bin, "crush");
      writeFileSync(crush, `#!/usr/bin/env bash\ntrap '' HUP\nsleep 300 &\necho "crush ready"\nwhile :; do sleep 1; done\n`);
      chmodSync(crush, 0o755);
      const c = ok(await w.mam(["create", "--agent", "crush", "--mux", "tmux", "--tmux-server", w.server, "--session", "cr", "--no-onboard"]));
      const notes = c.stderr.split("\n").filter((l) => l.startsWith("NOTE: mam has not verified"));
      expect(notes).toEqual(["NOTE: mam has not verified the crush kind: its start and resume arguments, dialogs and screen rules come from crush's docs; see the kinds table in docs/sessions.md"]);
      const verified = ok(await w.mam(["create", "--agent", "claude", "--mux", "tmux", "--tmux-server", w.server, "--session", "cl", "--no-onboard"]));
      expect(verified.stderr).not.toContain("has not verified");
      const pid = w.row("cr").pane.pid as number;
      const alive = () => anchoredPids(w.sb.root).filter((p) => readFileSync(`/proc/${p}/cmdline`, "utf8").includes("sleep") || p === pid);
      expect(await waitFor(() => alive().length >= 2, 5000, 100)).toBe(true);
      ok(await w.mam(["stop", "cr", "--hard"]));
      expect(await waitFor(() => alive().length === 0, 8000, 100)).toBe(true);
      expect(w.row("cr")).toMatchObject({ status: "terminated", termination_mode: "hard" });
      ok(await w.mam(["stop", "cl", "--hard"]));
    });
  });

  test("a stop in progress owns the row's end state: the daemon's reconcile pass, seeing the pane gone first, leaves the row to the stop (stopped, resumable)", async () => {
    await withTmux({}, async (w) => {
      // an agent that ignores its exit text and its pane's hangup and TERM for a while (as
      // opencode and gemini can, on a loaded machine): the stop spends seconds between the pane
      // going and its own write, while the daemon looks every second
      const crush = join(w.sb.bin, "crush");
      writeFileSync(crush, `#!/usr/bin/env bash\ntrap '' HUP TERM\necho "crush ready"\nwhile :; do sleep 0.2; done\n`);
      chmodSync(crush, 0o755);
      ok(await w.mam(["create", "--agent", "crush", "--mux", "tmux", "--tmux-server", w.server, "--session", "cr", "--no-onboard"]));
      const { startSubscriber, unreachableBrokerEnv } = await import("../helpers/daemon.ts");
      const d = startSubscriber(w.sb, join(w.sb.root, "daemon.log"), { ...w.env, ...unreachableBrokerEnv, RECONCILE_POLL_INTERVAL: "1" });
      try {
        expect(await waitFor(async () => JSON.parse((await w.mam(["daemon", "status", "--json"])).stdout || "{}").pid > 0, 10_000, 50)).toBe(true);
        const stopped = ok(await w.mam(["stop", "cr"]));
        expect(stopped.stdout).toContain("cr stopped");
        const row = w.row("cr");
        expect(row).toMatchObject({ status: "stopped", last_visible_status: "stopped" });
        expect(row.termination_mode).toBeUndefined();
        expect(row.stopping_epoch).toBeUndefined();
        // the daemon saw the pane go while the stop still ran, and left the row alone
        const log = readFileSync(d.log, "utf8");
        expect(log).not.toContain("cr: running → terminated");
      } finally {
        await d.kill();
      }
    });
  });

  test("gemini resumed: a NOTE says its session cleanup will delete the conversation, until the user's settings turn the cleanup off", async () => {
    await withTmux({ MAM_PROMPT_WAIT_S: "1" }, async (w) => {
      installFakeAgents(w.sb.bin, ["gemini"]);
      // no system settings of this machine's in the way
      const env = { GEMINI_CLI_SYSTEM_SETTINGS_PATH: join(w.sb.root, "etc", "settings.json") };
      const mam = (args: string[]) => runMam(args, { env: { ...w.env, ...env }, cwd: w.sb.ws, timeoutMs: 120_000 });
      const notes = (r: RunResult) => r.stderr.split("\n").filter((l) => l.includes("session cleanup"));
      const c = ok(await mam(["create", "--agent", "gemini", "--mux", "tmux", "--tmux-server", w.server, "--session", "gem", "--no-onboard"]));
      expect(notes(c)).toEqual([]);
      const id = w.row("gem").gemini_session_id_own as string;
      ok(await mam(["stop", "gem"]));
      const settings = join(w.env.HOME!, ".gemini", "settings.json");
      const r1 = ok(await mam(["resume", "gem"]));
      expect(r1.stdout).toContain(`(conversation ${id})`);
      expect(notes(r1)).toEqual([
        `NOTE: gemini deletes a resumed conversation when another gemini conversation starts in ${w.sb.ws} (its session cleanup): to keep it, set "general": {"sessionRetention": {"enabled": false}} in ${settings}`,
      ]);
      ok(await mam(["stop", "gem"]));
      writeFileSync(settings, `{\n  // keep resumed conversations\n  "general": {"sessionRetention": {"enabled": false}}\n}\n`);
      const r2 = ok(await mam(["resume", "gem"]));
      expect(r2.stdout).toContain(`(conversation ${id})`);
      expect(notes(r2)).toEqual([]);
      ok(await mam(["stop", "gem", "--hard"]));
    });
  });

  test("3 concurrent creates on one tmux server: 3 sessions, 3 rows", async () => {
    await withTmux({ MAM_AGENT_SETTLE_S: "0.5" }, async (w) => {
      const names = ["race-a", "race-b", "race-c"];
      const results = await Promise.all(
        names.map((n) => w.mam(["create", "--agent", "claude", "--mux", "tmux", "--tmux-server", w.server, "--role", "worker", "--session", n, "--no-onboard"])),
      );
      for (const r of results) ok(r);
      expect(await sessions(w)).toEqual(names);
      const rows = w.rows();
      expect(rows.map((r) => r.name).sort()).toEqual(names);
      expect(rows.every((r) => r.status === "running" && r.tmux_server === w.server)).toBe(true);
      expect(new Set(rows.map((r) => r.pane.id)).size).toBe(3);
      expect(new Set(rows.map((r) => r.claude_session_id_own)).size).toBe(3);
      ok(await w.mam(["registry", "check"]));
      // each session runs its own row's agent
      for (const r of rows) await waitCapture(w, r.pane.id, `session ${r.claude_session_id_own}`);
      const doc = JSON.parse(ok(await w.mam(["status", "--json"])).stdout);
      expect(doc.sessions.map((s: Row) => s.live)).toEqual(["unknown", "unknown", "unknown"]);
    });
  });

  test("no locale (LANG and LC_* unset, as under cron or env -i): create, the agent's screen read, stop", async () => {
    // tmux in the C locale prints a format's tab and a screen's non-ASCII as `_`: mam runs it with -u
    await withTmux({ LANG: undefined, LC_ALL: undefined, LC_CTYPE: undefined, MAM_AGENT_SETTLE_S: "0.5" }, async (w) => {
      expect(w.env.LANG).toBeUndefined();
      ok(await w.mam(["create", "--agent", "demo", "--mux", "tmux", "--tmux-server", w.server, "--role", "worker", "--session", "nolocale", "--no-onboard"]));
      expect(w.row("nolocale").pane.id).toMatch(/^%\d+$/);
      expect(await waitFor(async () => JSON.parse(ok(await w.mam(["status", "--json"])).stdout).sessions[0].live === "idle", 10_000, 200)).toBe(true);
      ok(await w.mam(["stop", "nolocale"]));
    });
  });
});
