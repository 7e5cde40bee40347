// mam against herdr 0.8.0 and 0.8.2 where the two behave differently (docs/herdr-compat.md), on
// the fake playing each release (FAKE_HERDR_VERSION); and the warning about a herdr newer than
// mam knows: once a day per server, whichever mam process meets it first.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HerdrMux } from "../../lib/mux/herdr.ts";
import { AgentBlocked } from "../../lib/mux/types.ts";
import { localDay } from "../../lib/sys/once-a-day.ts";
import { startFakeHerdr } from "../helpers/herdr.ts";
import { agentLines, environOf, ok, type Row, SERVER, typed, type World, withWorld, wrapperLog } from "../helpers/herdr-world.ts";
import { waitFor } from "../helpers/sandbox.ts";

const VERSIONS = ["0.8.0", "0.8.2"] as const;

async function paneOf(w: World, id: string): Promise<Row | undefined> {
  return (await w.panes()).find((p) => p.pane_id === id);
}

/** the session's fake agent asks a question (a permission prompt); herdr sees it blocked */
async function block(w: World, pane: string): Promise<void> {
  await w.h.call("pane.send_input", { pane_id: pane, text: "FAKE_BLOCK may I?", keys: ["Enter"] });
  expect(await waitFor(async () => (await paneOf(w, pane))?.agent_status === "blocked", 10_000, 50)).toBe(true);
}

describe.concurrent("a job for an agent that waits at a question", () => {
  for (const v of VERSIONS) {
    test(`herdr ${v}: job submit fails clearly, nothing is typed, no job is left`, async () => {
      await withWorld({ herdrVersion: v }, async (w) => {
        ok(await w.create("claude", ["--session", "asks"]));
        const pane = w.row("asks").pane.id as string;
        await block(w, pane);
        const before = (await w.inputs(pane)).length;
        const r = await w.mam(["job", "submit", "--to", "asks", "--prompt", "summarise the README"]);
        expect(r.code).toBe(1);
        expect(r.stdout).toBe("");
        expect(r.stderr.trim()).toMatch(new RegExp(`^ERROR: session 'asks' waits at .+ in ${pane} \\(answer it there: herdr --session ${SERVER}, pane ${pane}\\); nothing was submitted; answer it, then submit the job again$`));
        await Bun.sleep(500); // past the Enter herdr would send 300 ms after a prompt
        expect((await w.inputs(pane)).length).toBe(before);
        const jobs = join(w.ws, ".mam", "jobs");
        expect((existsSync(jobs) ? readdirSync(jobs) : []).filter((f) => f.endsWith(".json"))).toEqual([]);
      });
    });

    test(`herdr ${v}: the driver never types into a blocked agent: AgentBlocked (${v === "0.8.0" ? "mam asks `agent get` first" : "herdr refuses `agent prompt` with agent_blocked"})`, async () => {
      await withWorld({ herdrVersion: v, wrap: true }, async (w) => {
        ok(await w.create("claude", ["--session", "drv"]));
        const pane = w.row("drv").pane.id as string;
        await block(w, pane);
        const mux = new HerdrMux(SERVER, w.env);
        const before = (await w.inputs(pane)).length;
        const calls = wrapperLog(w.sb).length;
        const e = await mux.submit(pane, "mam job event 1234abcd completed --source x", true).then(
          () => undefined,
          (x: unknown) => x,
        );
        expect(e).toBeInstanceOf(AgentBlocked);
        const why = v === "0.8.0" ? "herdr reports it blocked" : "herdr refused the text: agent_blocked";
        expect((e as AgentBlocked).render()).toBe(`ERROR: the agent in pane ${pane} waits at a dialog or question (${why}); nothing was typed into it; answer it in the pane, then try again`);
        const made = wrapperLog(w.sb).slice(calls).filter((l) => l !== "--version" && l !== "status client --json");
        expect(made).toEqual(v === "0.8.0" ? [`--session ${SERVER} agent get ${pane}`] : [`--session ${SERVER} agent prompt ${pane} mam job event 1234abcd completed --source x`]);
        await Bun.sleep(500);
        expect((await w.inputs(pane)).length).toBe(before);
        // answered: the next prompt goes through
        await w.h.call("pane.send_input", { pane_id: pane, text: "yes", keys: ["Enter"] });
        expect(await waitFor(async () => ["idle", "done"].includes((await paneOf(w, pane))?.agent_status), 10_000, 50)).toBe(true);
        await mux.submit(pane, "now then", true);
        expect(await waitFor(async () => typed(await w.inputs(pane)).includes("now then"), 5000, 50)).toBe(true);
      });
    });
  }
});

describe.concurrent("an agent that starts in a first-run dialog", () => {
  for (const v of VERSIONS) {
    test(`herdr ${v}: registered and left at its dialog (${v === "0.8.0" ? "herdr counts it as started" : "herdr's agent start answers agent_not_ready at once"}); once answered, jobs reach it`, async () => {
      // 0.8.2 counts a detected agent that nothing reported as idle once its 3 s startup grace is
      // over, which ends a pending start as ready: on a loaded machine the fake agent's blocked
      // report (a herdr CLI call) came later than that. A long grace leaves the report to decide.
      const herdrEnv = { FAKE_AGENT_START_BLOCKED: "1", FAKE_HERDR_STARTUP_GRACE_MS: "60000" };
      await withWorld({ herdrVersion: v, herdrEnv }, async (w) => {
        const t0 = Date.now();
        const r = await w.mam(["create", "--agent", "claude", "--herdr-session", SERVER, "--session", "dlg", "--json"]);
        expect(r.code, r.stderr).toBe(0);
        expect(Date.now() - t0).toBeLessThan(25_000); // never herdr's 30 s start timeout
        const pane = w.row("dlg").pane.id as string;
        const at = `its "trust this folder" dialog`;
        const line = `WARNING: claude waits at ${at} in ${pane}: answer it there (herdr --session ${SERVER}, pane ${pane}); the onboarding was not sent`;
        expect(r.stderr).toContain(line);
        expect(JSON.parse(r.stdout)).toMatchObject({ name: "dlg", at_prompt: false, waiting_at: at, onboarding: "not sent" });
        expect(w.row("dlg")).toMatchObject({ status: "running", agent: "claude" });
        // the agent's report (a herdr CLI call) may land after the screen showed the dialog
        expect(await waitFor(async () => (await paneOf(w, pane))?.agent_status === "blocked", 10_000, 50)).toBe(true);
        expect(await paneOf(w, pane)).toMatchObject({ label: "mam:dlg (claude, creator)", agent: "claude", agent_status: "blocked" });
        expect(typed(await w.inputs(pane))).toEqual(agentLines(await w.inputs(pane)));
        const agent = JSON.parse((await w.h.herdr(["agent", "get", "dlg"])).stdout).result.agent;
        expect(agent).toMatchObject({ name: "dlg", pane_id: pane });
        if (v === "0.8.2") expect(agent.launch_pending).toBe(true);
        // the user answers it: ready (0.8.2: herdr's start completes), and a job goes in (the
        // screen redrawn as a TUI does once its dialog is gone: the fake agent only prints lines)
        await w.h.call("pane.send_input", { pane_id: pane, text: "yes", keys: ["Enter"] });
        await w.h.write(pane, "\x1b[2J\x1b[H> ");
        expect(await waitFor(async () => JSON.parse((await w.h.herdr(["agent", "get", "dlg"])).stdout).result.agent.interactive_ready === true, 10_000, 100)).toBe(true);
        ok(await w.mam(["job", "submit", "--to", "dlg", "--prompt", "summarise the README"]));
        expect(await waitFor(async () => typed(await w.inputs(pane)).some((t) => t.includes("summarise the README")), 10_000, 50)).toBe(true);
      });
    });
  }
});

describe.concurrent("herdr 0.8.2's panes", () => {
  test("HERDR_BIN_PATH is set in every pane: the demo agent reports its state through it", async () => {
    await withWorld({ herdrVersion: "0.8.2" }, async (w) => {
      ok(await w.create("demo", ["--session", "rep"]));
      const pane = w.row("rep").pane.id as string;
      expect(await waitFor(async () => (await paneOf(w, pane))?.agent === "demo", 10_000, 50)).toBe(true);
      expect(await waitFor(async () => (await paneOf(w, pane))?.agent_status === "idle", 10_000, 50)).toBe(true);
      const info = (await w.h.call("pane.process_info", { pane_id: pane })) as Row;
      expect(environOf(info.process_info.shell_pid).HERDR_BIN_PATH).toBeString();
    });
  });
});

/** the stderr lines of the warning about a herdr mam does not know */
const newer = (stderr: string) => stderr.split("\n").filter((l) => l.startsWith("WARNING: herdr 0.9.1 (server "));

// mam gates on herdr's socket protocol (herdr-version.ts): 0.9.x's is not 19 or 20 (protocols 22
// and 23 have been seen in tools built on herdr), so the fake plays it with protocol 22
describe.concurrent("a herdr that speaks a protocol mam does not know", () => {
  test("one warning a day per server, naming the protocols and versions known to work; kept in the state dir", async () => {
    await withWorld({ herdrVersion: "0.9.1", herdrProtocol: 22 }, async (w) => {
      const first = ok(await w.create("claude", ["--session", "n1"]));
      expect(newer(first.stderr)).toEqual([
        `WARNING: herdr 0.9.1 (server '${SERVER}') speaks socket protocol 22, which mam does not know: ` +
          "mam speaks protocol 19 (herdr 0.8.0) and 20 (herdr 0.8.1 and 0.8.2); " +
          "untested with protocol 22: agent start (when an agent counts as ready, start dialogs), agent prompt (refusals), " +
          "the pane list and process-info fields and the error codes mam reads; if a herdr call fails, report it with `herdr --version` " +
          "(this warning comes once a day per server)",
      ]);
      // the next commands of the day say nothing
      expect(newer(ok(await w.create("claude", ["--session", "n2"])).stderr)).toEqual([]);
      ok(await w.mam(["stop", "n2"]));
      expect(newer(ok(await w.mam(["resume", "n2"])).stderr)).toEqual([]);
      const file = join(w.sb.home, ".local", "state", "mam", "once-a-day.json");
      expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ [`herdr-protocol ${SERVER} 22`]: localDay(new Date()) });
      // another server is warned about on its own
      const other = await startFakeHerdr(w.sb, { session: "mam2" });
      try {
        const r = ok(await w.mam(["create", "--agent", "claude", "--herdr-session", "mam2", "--no-onboard", "--session", "n3"]));
        expect(newer(r.stderr)).toHaveLength(1);
        expect(newer(r.stderr)[0]).toStartWith("WARNING: herdr 0.9.1 (server 'mam2') speaks socket protocol 22");
      } finally {
        await other.stop();
      }
      // the next day it comes again (the day before is what the file remembers)
      writeFileSync(file, JSON.stringify({ [`herdr-protocol ${SERVER} 22`]: "2000-01-01" }));
      expect(newer(ok(await w.create("claude", ["--session", "n4"])).stderr)).toHaveLength(1);
    });
  });

  test("mam processes meeting it at the same moment: one of them says it", async () => {
    await withWorld({ herdrVersion: "0.9.1", herdrProtocol: 22 }, async (w) => {
      const runs = await Promise.all(["c1", "c2", "c3", "c4"].map((n) => w.create("claude", ["--session", n])));
      for (const r of runs) ok(r);
      expect(runs.flatMap((r) => newer(r.stderr))).toHaveLength(1);
    });
  });

  test("by protocol, not by version string: 0.9.1 speaking protocol 20 is 0.8.2 to mam (no warning); 0.8.2 speaking 23 is warned about", async () => {
    await withWorld({ herdrVersion: "0.9.1", herdrProtocol: 20 }, async (w) => {
      const r = ok(await w.create("claude", ["--session", "p20"]));
      expect(r.stderr).not.toContain("WARNING: herdr");
    });
    await withWorld({ herdrVersion: "0.8.2", herdrProtocol: 23 }, async (w) => {
      const r = ok(await w.create("claude", ["--session", "p23"]));
      expect(r.stderr.split("\n").filter((l) => l.startsWith("WARNING: herdr"))).toEqual([
        expect.stringContaining(`WARNING: herdr 0.8.2 (server '${SERVER}') speaks socket protocol 23, which mam does not know: mam speaks protocol 19 (herdr 0.8.0) and 20 (herdr 0.8.1 and 0.8.2)`),
      ]);
    });
  });

  test("a herdr whose protocol is older than 19 is refused before anything changes", async () => {
    await withWorld({ herdrVersion: "0.8.2", herdrProtocol: 17 }, async (w) => {
      const r = await w.mam(["create", "--agent", "claude", "--herdr-session", SERVER, "--session", "old"]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toMatch(
        /^ERROR: herdr 0\.8\.2 \(socket protocol 17\) \(.+\/herdr\) is too old: mam supports herdr 0\.8\.x \(0\.8\.0 or newer\): socket protocol 19 \(herdr 0\.8\.0\) and 20 \(herdr 0\.8\.1 and 0\.8\.2\); upgrade herdr \(herdr update\), or use --mux tmux$/,
      );
      expect(existsSync(join(w.ws, ".mam", "agent-sessions.yaml")) ? readFileSync(join(w.ws, ".mam", "agent-sessions.yaml"), "utf8") : "").not.toMatch(/name: old\b/);
    });
  });
});
