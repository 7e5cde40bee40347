// mam against herdr as real herdr 0.8.0 behaves (reference/herdr-0.8.0-audit.md, issue 13): one
// test (or more) per audit finding, named after it, on the fake herdr that models each behaviour.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HerdrMux } from "../../lib/mux/herdr.ts";
import { AgentGone } from "../../lib/mux/types.ts";
import { apiSocketPath } from "../fakes/herdr/common/session.ts";
import { killBySocket } from "../helpers/herdr.ts";
import { agentLines, environOf, ok, type Row, SERVER, typed, type World, withWorld, wrapperLog } from "../helpers/herdr-world.ts";
import { run } from "../helpers/mam.ts";
import { waitFor } from "../helpers/sandbox.ts";

/** the pane record of a pane id, from herdr's pane list */
async function paneOf(w: World, id: string): Promise<Row | undefined> {
  return (await w.panes()).find((p) => p.pane_id === id);
}

/** type a line into a pane the way a user at the keyboard does (herdr's send_input) */
async function typeLine(w: World, pane: string, text: string): Promise<void> {
  await w.h.call("pane.send_input", { pane_id: pane, text, keys: ["Enter"] });
}

/** the pane's agent leaves by its exit command; herdr keeps the pane as a bare shell */
async function exitAgent(w: World, pane: string, exitText = "/exit"): Promise<void> {
  await typeLine(w, pane, exitText);
  expect(await waitFor(async () => (await paneOf(w, pane))?.agent === undefined, 10_000, 50)).toBe(true);
  expect(await paneOf(w, pane)).toMatchObject({ agent_status: "unknown" });
}

describe.concurrent("audit #1: an agent that exits leaves its pane as a bare shell", () => {
  test("LIVE dead, job submit types nothing and fails clearly, reconcile terminates (agent exited), resume starts it again in that pane", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("claude", ["--session", "gone-a"]));
      const pane = w.row("gone-a").pane.id as string;
      await exitAgent(w, pane);

      const st = JSON.parse(ok(await w.mam(["status", "--json"])).stdout);
      expect(st.sessions.find((s: Row) => s.name === "gone-a")).toMatchObject({ status: "running", live: "dead", pane, drift: ["agent-exited"] });

      const before = (await w.inputs(pane)).length;
      const sub = await w.mam(["job", "submit", "--to", "gone-a", "--prompt", "summarise the README"]);
      expect(sub.code).toBe(1);
      expect(sub.stdout).toBe("");
      expect(sub.stderr).toContain(`ERROR: session 'gone-a' has no agent any more (its agent exited; pane ${pane} is a bare shell); nothing was submitted`);
      expect(sub.stderr).toContain("mam resume gone-a");
      expect((await w.inputs(pane)).length).toBe(before);
      const jobs = join(w.ws, ".mam", "jobs");
      expect(existsSync(jobs) ? readdirSync(jobs) : []).toEqual([]);

      ok(await w.mam(["reconcile"]));
      expect(w.row("gone-a")).toMatchObject({ status: "terminated", last_visible_status: "terminated", last_visible_note: "agent exited", termination_mode: "auto-detected" });
      // the bare shell still carries the label; it is not registered again as a session
      ok(await w.mam(["reconcile"]));
      expect(w.rows().map((r) => `${r.name}:${r.status}`)).toEqual(["gone-a:terminated"]);

      ok(await w.mam(["resume", "gone-a"]));
      expect(w.row("gone-a")).toMatchObject({ status: "running", pane: { id: pane } });
      expect(agentLines(await w.inputs(pane))).toHaveLength(2);
      expect(await waitFor(async () => (await paneOf(w, pane))?.agent === "claude", 10_000, 50)).toBe(true);
    });
  });

  test("resume of a row still marked running whose agent exited starts it again (no 'already running')", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("codex", ["--session", "gone-b"]));
      const pane = w.row("gone-b").pane.id as string;
      await exitAgent(w, pane, "/quit");
      const r = ok(await w.mam(["resume", "gone-b", "--fresh"]));
      expect(r.stdout).not.toContain("already");
      expect(w.row("gone-b")).toMatchObject({ status: "running", pane: { id: pane } });
      expect(agentLines(await w.inputs(pane), "codex")).toHaveLength(2);
    });
  });

  test("the driver never types into a bare shell: submit refuses with AgentGone (herdr kinds: agent prompt's agent_not_found; typed kinds: the foreground)", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("claude", ["--session", "gone-c"]));
      const pane = w.row("gone-c").pane.id as string;
      const mux = new HerdrMux(SERVER, w.env);
      await mux.submit(pane, "first line\nsecond line", true);
      expect(await waitFor(async () => typed(await w.inputs(pane)).includes("first line\nsecond line"), 5000, 50)).toBe(true);
      await Bun.sleep(500); // agent prompt's Enter comes 300 ms after the text
      await exitAgent(w, pane);
      const before = (await w.inputs(pane)).length;
      for (const managed of [true, false]) {
        const e = await mux.submit(pane, "mam job event 1234abcd completed --source x", managed).then(() => undefined, (x: unknown) => x);
        expect(e).toBeInstanceOf(AgentGone);
        expect((e as AgentGone).render()).toContain(`ERROR: no agent in pane ${pane} any more`);
      }
      await Bun.sleep(400); // past agent prompt's 300 ms Enter
      expect((await w.inputs(pane)).length).toBe(before);
    });
  });
});

describe.concurrent("audit #2: prompts are submitted the way herdr does", () => {
  test("herdr kinds through `agent prompt`, typed kinds through `pane run`; never send-text", async () => {
    await withWorld({ wrap: true }, async (w) => {
      ok(await w.create("claude", ["--session", "pr-claude"], { onboard: true }));
      const pane = w.row("pr-claude").pane.id as string;
      ok(await w.create("demo", ["--session", "pr-demo"]));
      const demo = w.row("pr-demo").pane.id as string;
      ok(await w.mam(["job", "submit", "--to", "pr-demo", "--prompt", "write the notes"]));
      const log = wrapperLog(w.sb);
      expect(log.some((l) => l.startsWith(`--session ${SERVER} agent prompt ${pane} You are pr-claude`) || l.startsWith(`--session ${SERVER} agent prompt ${pane} `))).toBe(true);
      expect(log.some((l) => l.startsWith(`--session ${SERVER} pane run ${demo} [mam] Job `))).toBe(true);
      expect(log.filter((l) => l.includes(" send-text "))).toEqual([]);
    });
  });
});

describe.concurrent("audit #3: fresh panes and the user's shell startup files", () => {
  test("agent_pane_busy on a pane this claim created: wait for the shell, try again, same pane; labelled only once started", async () => {
    await withWorld({ wrap: true }, async (w) => {
      const r = ok(await w.mam(["create", "--agent", "claude", "--herdr-session", SERVER, "--no-onboard", "--session", "busy-a"], { env: { ...w.env, WRAP_BUSY_AGENT_START: "2" } }));
      expect(r.stderr).not.toContain("ERROR");
      const pane = w.row("busy-a").pane.id as string;
      const starts = wrapperLog(w.sb).filter((l) => l.includes(" agent start "));
      expect(starts).toHaveLength(3);
      for (const s of starts) expect(s).toContain(`--pane ${pane} `);
      const panes = await w.panes();
      expect(panes).toHaveLength(1);
      expect(panes[0]).toMatchObject({ pane_id: pane, label: "mam:busy-a (claude, creator)", agent: "claude" });
      // the label came after the first agent start, never before it
      const log = wrapperLog(w.sb);
      expect(log.findIndex((l) => l.includes(" pane rename "))).toBeGreaterThan(log.findIndex((l) => l.includes(" agent start ")));
    });
  });

  test("a shell that stays busy past MAM_HERDR_SHELL_READY_S: create fails naming the wait, the unused fresh pane is closed", async () => {
    await withWorld({ wrap: true }, async (w) => {
      const t0 = Date.now();
      const r = await w.mam(["create", "--agent", "claude", "--herdr-session", SERVER, "--no-onboard", "--session", "busy-b"], { env: { ...w.env, WRAP_BUSY_AGENT_START: "1000", MAM_HERDR_SHELL_READY_S: "2" } });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^ERROR: the shell of the new pane w\d+:p\d+ was still busy after 2 s \(its startup files were still running\); the pane is closed/);
      // the 2 s asked for, not the 30 s default: waiting the default alone takes 30 s, so any run
      // under that used the 2 s (~6 s alone: each try is a herdr CLI call; 15.6 s and 25.7 s were
      // seen with the whole suite running beside it)
      expect(Date.now() - t0).toBeLessThan(30_000);
      expect(await w.panes()).toEqual([]);
      expect(existsSync(w.reg) ? w.rows().filter((x) => x.status === "running") : []).toEqual([]);
    });
  });
});

describe.concurrent("audit #3: a fresh pane's shell startup files (pty panes running the user's shell)", () => {
  for (const secs of [2, 6]) {
    test(`an rc file that runs ${secs} s: create still succeeds in that pane (${secs > 5 ? "agent_pane_busy, waited out and tried again" : "waited for before agent start"})`, async () => {
      await withWorld({}, async (w) => {
        writeFileSync(join(w.sb.home, ".bashrc"), `sleep ${secs}\nPS1='rc-done> '\n`);
        const t0 = Date.now();
        const r = await w.create("claude", ["--session", `rc${secs}`]);
        expect(r.code, r.stderr).toBe(0);
        expect(Date.now() - t0).toBeGreaterThanOrEqual(secs * 1000);
        const pane = w.row(`rc${secs}`).pane.id as string;
        const panes = await w.panes();
        expect(panes).toHaveLength(1);
        expect(panes[0]).toMatchObject({ pane_id: pane, label: `mam:rc${secs} (claude, creator)`, agent: "claude" });
        expect(agentLines(await w.inputs(pane))).toHaveLength(1);
      });
    });
  }
});

describe.concurrent("audit #4: an agent that exits at start", () => {
  test("create fails naming the exit with its last output well before herdr's own --timeout (30 s), no labelled pane left", async () => {
    await withWorld({ herdrEnv: { FAKE_AGENT_EXIT_AT_START: "1" } }, async (w) => {
      const t0 = Date.now();
      const r = await w.create("claude", ["--session", "dies"]);
      const ms = Date.now() - t0;
      // what create said, when it did not fail (seen twice under heavy load: exit 0)
      expect(r.code, `${r.stdout}${r.stderr}`).toBe(1);
      expect(r.stderr).toMatch(/^ERROR: claude exited right after start in w\d+:p\d+; last output: .*Unable to connect to Anthropic services/m);
      // about 2 s on a quiet machine (the start watch's grace is 5 s); the concurrent cases of this
      // file beside another test file on a 2-core machine (npm test runs two at a time) took up to
      // 20 s: what matters is that create does not sit out the 30 s herdr itself would wait
      expect(ms).toBeLessThan(28_000);
      expect((await w.panes()).filter((p) => typeof p.label === "string" && p.label.startsWith("mam:"))).toEqual([]);
      expect(existsSync(w.reg) ? w.rows().filter((x) => x.status === "running") : []).toEqual([]);
    });
  });
});

describe.concurrent("audit #5: HERDR_BIN_PATH is not set in 0.8.0's panes", () => {
  test("the demo agent reports its state through `herdr` on PATH", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("demo", ["--session", "rep"]));
      const pane = w.row("rep").pane.id as string;
      expect(await waitFor(async () => (await paneOf(w, pane))?.agent === "demo", 10_000, 50)).toBe(true);
      expect((await paneOf(w, pane))?.agent_status).toBe("idle");
      const info = (await w.h.call("pane.process_info", { pane_id: pane })) as Row;
      expect(environOf(info.process_info.shell_pid).HERDR_BIN_PATH).toBeUndefined();
    });
  });
});

describe.concurrent("audit #6: no onboarding into a blocked agent or a dialog", () => {
  const trust = `its "trust this folder" dialog`;
  const cases: { what: string; knob: string; env: Record<string, string>; at: string; settle?: string }[] = [
    { what: "herdr says blocked, the screen detector sees the start dialog", knob: "1", env: {}, at: trust },
    { what: "herdr says idle (0.8.0's rules miss the trust dialog), the screen detector sees it", knob: "idle", env: {}, at: trust },
    // only herdr's status speaks: the fake agent's report (a herdr CLI call, slow on a loaded
    // machine) must land before the start returns, so herdr's start settles for 4 s
    { what: "herdr says blocked, no screen detection (MAM_SCREEN_DETECT=0)", knob: "1", env: { MAM_SCREEN_DETECT: "0" }, at: "a question (herdr reports it blocked)", settle: "4000" },
  ];
  for (const c of cases) {
    test(`an agent that starts in a first-run dialog, ${c.what}: registered, nothing typed, a WARNING naming the dialog`, async () => {
      await withWorld({ herdrEnv: { FAKE_AGENT_START_BLOCKED: c.knob, ...(c.settle ? { FAKE_HERDR_SETTLE_MS: c.settle } : {}) } }, async (w) => {
        const r = await w.mam(["create", "--agent", "claude", "--herdr-session", SERVER, "--session", "dlg", "--json"], { env: { ...w.env, ...c.env } });
        expect(r.code).toBe(0);
        const pane = w.row("dlg").pane.id as string;
        const line = `WARNING: claude waits at ${c.at} in ${pane}: answer it there (herdr --session ${SERVER}, pane ${pane}); the onboarding was not sent`;
        expect(r.stderr).toContain(line);
        expect(JSON.parse(r.stdout)).toMatchObject({ name: "dlg", at_prompt: false, waiting_at: c.at, onboarding: "not sent", warnings: [line] });
        expect(w.row("dlg")).toMatchObject({ status: "running" });
        expect(typed(await w.inputs(pane))).toEqual(agentLines(await w.inputs(pane)));
      });
    });
  }
});

describe.concurrent("audit #7: a server mam starts gets none of mam's own environment", () => {
  test("no MAM_* variables, none of mam's secrets, no .mam/bin on PATH", async () => {
    await withWorld({}, async (w) => {
      const srv = `env7-${process.pid}`;
      const socket = apiSocketPath(w.env, srv);
      const agentish = { ...w.env, FAKE_HERDR_SETTLE_MS: "150", MAM_SESSION: "lead", MAM_WORKSPACE: w.ws, MAM_TEST_MARK: "x", MQTT_PASSWORD: "pw", PATH: `${join(w.ws, ".mam", "bin")}:${w.env.PATH}` };
      try {
        ok(await w.mam(["create", "--agent", "claude", "--herdr-session", srv, "--start-server", "--no-onboard", "--session", "env7"], { env: agentish }));
        const pid = readdirSync("/proc")
          .filter((d) => /^\d+$/.test(d))
          .map(Number)
          .find((p) => {
            try {
              return readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0").join(" ").includes(`--session ${srv} server`) && environOf(p).HOME === w.env.HOME;
            } catch {
              return false;
            }
          });
        expect(pid).toBeGreaterThan(0);
        const env = environOf(pid!);
        expect(Object.keys(env).filter((k) => k.startsWith("MAM_"))).toEqual([]);
        expect(env.MQTT_PASSWORD).toBeUndefined();
        expect(env.PATH!.split(":")).not.toContain(join(w.ws, ".mam", "bin"));
        expect(env.PATH!.split(":")).toContain(w.sb.bin);
      } finally {
        await run([w.h.bin, "--session", srv, "server", "stop"], { env: w.env, timeoutMs: 10_000 }).catch(() => undefined);
        await waitFor(() => !existsSync(socket), 5000);
        killBySocket(socket);
      }
    });
  });
});

describe.concurrent("audit #9: only key names herdr 0.8.0 accepts", () => {
  test("the driver's keys reach herdr; home/end/pageup are refused as 0.8.0 refuses them", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("claude", ["--session", "keys"]));
      const pane = w.row("keys").pane.id as string;
      const mux = new HerdrMux(SERVER, w.env);
      await mux.sendKeys(pane, ["esc", "ctrl+c", "shift+tab", "Enter"]);
      for (const k of ["home", "end", "pageup", "delete"]) {
        const e = await mux.sendKeys(pane, [k]).then(() => undefined, (x: Error) => x);
        expect(e?.message).toContain("invalid_key");
      }
    });
  });
});

describe.concurrent("herdr versions", () => {
  test("a herdr older than 0.8.0 is refused before anything happens; a newer one that speaks a known protocol works without a warning (herdr-versions.test.ts)", async () => {
    await withWorld({}, async (w) => {
      const old = await w.mam(["create", "--agent", "claude", "--herdr-session", SERVER, "--no-onboard", "--session", "v1"], { env: { ...w.env, FAKE_HERDR_VERSION: "0.7.5" } });
      expect(old.code).toBe(1);
      expect(old.stdout).toBe("");
      expect(old.stderr).toMatch(/^ERROR: herdr 0\.7\.5 \(socket protocol 18\) \(\S+\) is too old: mam supports herdr 0\.8\.x \(0\.8\.0 or newer\): socket protocol 19 \(herdr 0\.8\.0\) and 20 \(herdr 0\.8\.1 and 0\.8\.2\); upgrade herdr \(herdr update\), or use --mux tmux$/m);
      expect(await w.panes()).toEqual([]);
      expect(existsSync(w.reg)).toBe(false);
    });
    // (the CLI and the server of one release: a 0.9.1 client speaks protocol 20, which mam speaks:
    // it gates on the protocol, not the version string, so no warning; herdr-versions.test.ts)
    await withWorld({ herdrVersion: "0.9.1" }, async (w) => {
      const r = ok(await w.mam(["create", "--agent", "claude", "--herdr-session", SERVER, "--no-onboard", "--session", "v2"]));
      expect(r.stderr.split("\n").filter((l) => l.startsWith("WARNING: herdr"))).toEqual([]);
      // the answer is kept per binary: the next call does not ask herdr again
      const cache = JSON.parse(readFileSync(join(w.sb.home, ".local", "state", "mam", "herdr-version.json"), "utf8"));
      expect(cache).toEqual([{ bin: expect.stringMatching(/herdr$/), size: expect.any(Number), mtimeMs: expect.any(Number), output: "herdr 0.9.1\n", status: expect.stringContaining('"protocol":20') }]);
    });
  });
});

describe.concurrent("audit #8c: a server reachable only by a custom socket path", () => {
  test("create in its pane (ambient), status and stop from anywhere: HERDR_SOCKET_PATH, never --session", async () => {
    await withWorld({ wrap: true }, async (w) => {
      const sock = join(w.sb.root, "custom", "herdr.sock");
      const env = { ...w.env, HERDR_SOCKET_PATH: sock, FAKE_HERDR_SETTLE_MS: "150" };
      const srv = Bun.spawn([join(w.sb.root, "fakebin", "herdr"), "server"], { env, cwd: w.ws, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
      try {
        expect(await waitFor(() => existsSync(sock), 10_000, 50)).toBe(true);
        // mam run from a pane of that server: the ambient target is it
        const r = ok(await w.mam(["create", "--agent", "claude", "--mux", "herdr", "--no-onboard", "--session", "cs"], { env }));
        const row = w.row("cs");
        expect(row.herdr_server).toMatch(/^sock-[0-9a-f]{8}$/);
        expect(r.stdout).toContain(`on herdr server ${row.herdr_server}`);
        const onCustom = JSON.parse((await run([join(w.sb.root, "fakebin", "herdr"), "pane", "list"], { env, timeoutMs: 10_000 })).stdout).result.panes;
        expect(onCustom).toEqual([expect.objectContaining({ pane_id: row.pane.id, label: "mam:cs (claude, creator)", agent: "claude" })]);
        expect(await w.panes()).toEqual([]); // nothing on the world's named server
        // from anywhere (no HERDR_SOCKET_PATH): the server is found again by its name
        const st = JSON.parse(ok(await w.mam(["status", "--json"])).stdout);
        expect(st.sessions).toEqual([expect.objectContaining({ name: "cs", server: row.herdr_server, live: "idle" })]);
        ok(await w.mam(["stop", "cs"]));
        expect(w.row("cs").status).toBe("stopped");
        const calls = wrapperLog(w.sb).filter((l) => !l.startsWith("--session mam ") && l !== "server");
        expect(calls.filter((l) => /(^| )--session( |=)/.test(l.split(" -- ")[0]!))).toEqual([]);
        expect(calls.some((l) => l.startsWith("agent start cs "))).toBe(true);
      } finally {
        srv.kill();
        await srv.exited;
        killBySocket(sock);
      }
    });
  });
});
