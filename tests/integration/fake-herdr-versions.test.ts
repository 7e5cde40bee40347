// The fake herdr plays herdr 0.8.0 or 0.8.2 (FAKE_HERDR_VERSION; tests/fakes/herdr/common/release.ts):
// each difference mam relies on, against both, as herdr's source at v0.8.0 and v0.8.2 has it
// (docs/herdr-compat.md lists them with the files). One server per release, side by side.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeHerdrServer, herdrApiError, herdrJson, installFakeAgents, installFakeHerdr, startFakeHerdr } from "../helpers/herdr.ts";
import { environOf } from "../helpers/herdr-world.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";

const VERSIONS = ["0.8.0", "0.8.2"] as const;
type V = (typeof VERSIONS)[number];

const sb: Partial<Record<V, Sandbox>> = {};
const srv: Partial<Record<V, FakeHerdrServer>> = {};
/** a folder of stand-in agents that never report to herdr (herdr's own detection decides) */
const quiet: Partial<Record<V, string>> = {};
/** a HOME whose .bashrc runs a while (a new pane's busy shell): 5 s for 0.8.0, 1.5 s for 0.8.2 */
const slowHome: Partial<Record<V, string>> = {};

function script(dir: string, name: string, body: string): void {
  writeFileSync(join(dir, name), `#!/bin/bash\n${body}\n`);
  chmodSync(join(dir, name), 0o755);
}

beforeAll(async () => {
  await Promise.all(
    VERSIONS.map(async (v) => {
      const s = makeSandbox(`mam-fhv${v.replace(/\./g, "")}-`);
      installFakeHerdr(s.bin);
      installFakeAgents(s.bin);
      const q = join(s.root, "quiet");
      mkdirSync(q);
      // claude's real first-run trust dialog (tests/fixtures/screens/claude/blocked-real-start-trust.txt)
      script(q, "claude", `printf '%s\\n' "${"─".repeat(60)}" " Quick safety check: Is this a project you created or one you trust?" "" " ❯ 1. Yes, I trust this folder" "   2. No, exit" "" " Enter to confirm · Esc to cancel"\nread -r line\necho "> "\nwhile read -r line; do :; done`);
      // an agent that prints a prompt and waits
      script(q, "hermes", `echo "hermes ready"\nprintf '> '\nwhile read -r line; do :; done`);
      const home = join(s.root, "slowhome");
      mkdirSync(home);
      // 0.8.0 must still be in it when the start arrives (a loaded machine is slow to run a CLI);
      // 0.8.2's must end within its CLI's 2 s of retries
      writeFileSync(join(home, ".bashrc"), `sleep ${v === "0.8.0" ? 5 : 1.5}\nPS1='rc-done> '\n`);
      quiet[v] = q;
      slowHome[v] = home;
      sb[v] = s;
      srv[v] = await startFakeHerdr(s, { session: `v${v.replace(/\./g, "")}`, settleMs: 150, version: v });
      await srv[v]!.call("workspace.create", { cwd: s.ws }); // w1, focused
    }),
  );
});

afterAll(async () => {
  await Promise.all(VERSIONS.map(async (v) => (await srv[v]?.stop(), await sb[v]?.cleanup())));
});

/**
 * a new pane of w1, alone in a new unfocused tab: the whole 200×50 area, however many tests run
 * at once (a dialog squeezed into a narrow pane wraps, and herdr's rules read wrapped rows apart)
 */
async function newPane(v: V, env?: Record<string, string>): Promise<string> {
  const r = (await srv[v]!.call("tab.create", { workspace_id: "w1", cwd: sb[v]!.ws, env, focus: false })) as any;
  return r.root_pane.pane_id;
}

const paneOf = async (v: V, pane: string) => ((await srv[v]!.call("pane.get", { pane_id: pane })) as any).pane;
const agentOf = async (v: V, target: string) => ((await srv[v]!.call("agent.get", { target })) as any).agent;
const shellFree = (v: V, pane: string) =>
  waitFor(async () => {
    const pi = ((await srv[v]!.call("pane.process_info", { pane_id: pane })) as any).process_info;
    return (pi.foreground_processes ?? []).length === 1 && pi.foreground_processes[0].pid === pi.shell_pid;
  }, 10_000);

/** a fake agent started with herdr's CLI and ready */
async function readyAgent(v: V, name: string, env?: Record<string, string>): Promise<string> {
  const pane = await newPane(v, env);
  expect(await shellFree(v, pane)).toBe(true);
  herdrJson(await srv[v]!.herdr(["agent", "start", name, "--kind", "claude", "--pane", pane, "--timeout", "10000"]));
  return pane;
}

describe.concurrent("the release the fake plays", () => {
  test("version, protocol (19 → 20, src/protocol/wire.rs); a CLI of the other release gets protocol_mismatch", async () => {
    for (const v of VERSIONS) {
      const h = srv[v]!;
      expect((await h.herdr(["--version"])).stdout).toBe(`herdr ${v}\n`);
      expect(await h.call("ping", {})).toMatchObject({ type: "pong", version: v, protocol: v === "0.8.0" ? 19 : 20 });
      const other = v === "0.8.0" ? "0.8.2" : "0.8.0";
      const e = herdrApiError(await h.herdr(["pane", "list"], { env: { FAKE_HERDR_VERSION: other } }), "protocol_mismatch");
      expect(e.error.message).toContain(v === "0.8.0" ? "client protocol 20 is newer than server protocol 19" : "client protocol 19 is older than server protocol 20");
    }
  });

  test("HERDR_BIN_PATH: in no 0.8.0 pane, in every 0.8.2 pane (the running herdr; src/integration/env.rs)", async () => {
    for (const v of VERSIONS) {
      const pane = await newPane(v);
      const info = ((await srv[v]!.call("pane.process_info", { pane_id: pane })) as any).process_info;
      const bin = environOf(info.shell_pid).HERDR_BIN_PATH;
      if (v === "0.8.0") expect(bin).toBeUndefined();
      else expect(existsSync(bin!) && (statSync(bin!).mode & 0o111) !== 0).toBe(true);
      await srv[v]!.call("pane.close", { pane_id: pane });
    }
  });

  test("qwen is an agent kind from 0.8.2 on (alias qwen-code; src/detect/mod.rs)", async () => {
    for (const v of VERSIONS) {
      const pane = await newPane(v);
      expect(await shellFree(v, pane)).toBe(true);
      const r = await srv[v]!.request("agent.start", { name: `qw${v.replace(/\./g, "")}`, kind: "qwen-code", pane_id: pane, timeout_ms: 3500 });
      if (v === "0.8.0") {
        expect((r.error as any).code).toBe("unsupported_agent_kind");
        expect((r.error as any).message).not.toContain("qwen,");
      } else expect((r.result as any).argv).toEqual(["qwen"]);
      await srv[v]!.call("pane.close", { pane_id: pane });
    }
  });
});

describe.concurrent("agent prompt to a blocked agent (src/app/api/agents.rs, 9351b058)", () => {
  for (const v of VERSIONS) {
    test(`${v}: ${v === "0.8.0" ? "typed into the blocked agent (text, Enter)" : "agent_blocked, nothing sent"}`, async () => {
      const h = srv[v]!;
      const pane = await readyAgent(v, "blk");
      herdrJson(await h.herdr(["agent", "prompt", "blk", "please FAKE_BLOCK now"]));
      expect(await waitFor(async () => (await paneOf(v, pane)).agent_status === "blocked", 5000)).toBe(true);
      await Bun.sleep(400); // the prompt's Enter
      const before = (await h.inputs(pane)).length;
      const r = await h.herdr(["agent", "prompt", "blk", "an unrelated prompt"]);
      await Bun.sleep(500); // past the 300 ms Enter a sent prompt would bring
      const after = await h.inputs(pane);
      if (v === "0.8.0") {
        herdrJson(r);
        expect(after.slice(before).map((i) => i.text ?? i.keys?.join(","))).toEqual([expect.stringContaining("an unrelated prompt"), "Enter"]);
      } else {
        const e = herdrApiError(r, "agent_blocked");
        expect(e).toEqual({ id: "cli:agent:prompt", error: { code: "agent_blocked", message: "agent blk is blocked and requires interactive input" } });
        expect(after.length).toBe(before);
        // by pane id too, and a working agent's prompt is not refused
        herdrApiError(await h.herdr(["agent", "prompt", pane, "again"]), "agent_blocked");
        await h.call("pane.send_input", { pane_id: pane, text: "yes", keys: ["Enter"] });
        // idle again; `done` in an unfocused tab (a finished turn not seen yet)
        expect(await waitFor(async () => ["idle", "done"].includes((await paneOf(v, pane)).agent_status), 5000)).toBe(true);
        herdrJson(await h.herdr(["agent", "prompt", "blk", "now it goes"]));
      }
      await h.call("pane.close", { pane_id: pane });
    });
  }
});

describe.concurrent("agent start of an agent that comes up in a start dialog", () => {
  for (const v of VERSIONS) {
    test(`${v}, the agent reports blocked: ${v === "0.8.0" ? "ready (idle or blocked counts)" : "agent_not_ready at once, the name kept; ready once answered"}`, async () => {
      const h = srv[v]!;
      const pane = await newPane(v, { FAKE_AGENT_START_BLOCKED: "1" });
      expect(await shellFree(v, pane)).toBe(true);
      const t0 = Date.now();
      const r = await h.herdr(["agent", "start", "dlg", "--kind", "claude", "--pane", pane, "--timeout", "30000"]);
      expect(Date.now() - t0).toBeLessThan(20_000); // not the --timeout
      if (v === "0.8.0") {
        // ready as soon as it is idle or blocked after the settle (its blocked report may come
        // after herdr saw it idle: either way it counts as started)
        const a = herdrJson(r).result.agent;
        expect(a).toMatchObject({ name: "dlg", interactive_ready: true });
        expect(["blocked", "idle"]).toContain(a.agent_status);
      } else {
        const e = herdrApiError(r, "agent_not_ready");
        expect(e).toEqual({ id: "cli:agent:start", error: { code: "agent_not_ready", message: "agent dlg is blocked during startup and is not ready for prompts" } });
        // still there, named, still pending
        const a = await agentOf(v, "dlg");
        expect(a).toMatchObject({ name: "dlg", pane_id: pane, agent: "claude", agent_status: "blocked", launch_pending: true });
        expect("interactive_ready" in a).toBe(false);
        herdrApiError(await h.herdr(["agent", "prompt", "dlg", "hello"]), "agent_blocked");
        // agent send-keys reaches a pending agent (the user answers the dialog)
        herdrJson(await h.herdr(["agent", "send-keys", "dlg", "y", "Enter"]));
        expect(await waitFor(async () => (await agentOf(v, "dlg")).interactive_ready === true, 5000)).toBe(true);
        const b = await agentOf(v, "dlg");
        expect(b.name).toBe("dlg");
        expect(["idle", "done"]).toContain(b.agent_status);
        expect("launch_pending" in b).toBe(false);
      }
      await h.call("pane.close", { pane_id: pane });
    });

    test(`${v}, claude's real trust dialog and no report (herdr's claude rules decide): ${v === "0.8.0" ? "idle, ready" : "unknown, then blocked: agent_not_ready"}`, async () => {
      const h = srv[v]!;
      const pane = await newPane(v, { PATH: `${quiet[v]}:${sb[v]!.env.PATH}` });
      expect(await shellFree(v, pane)).toBe(true);
      const r = await h.herdr(["agent", "start", "trust", "--kind", "claude", "--pane", pane, "--timeout", "15000"]);
      if (v === "0.8.0") expect(herdrJson(r).result.agent).toMatchObject({ name: "trust", agent_status: "idle", interactive_ready: true });
      else {
        herdrApiError(r, "agent_not_ready");
        expect(await paneOf(v, pane)).toMatchObject({ agent: "claude", agent_status: "blocked" });
      }
      await h.call("pane.close", { pane_id: pane });
    });
  }
});

describe.concurrent("a newly detected agent (src/pane.rs: AgentProcessDetected, 7ae4b056)", () => {
  for (const v of VERSIONS) {
    test(`${v}: ${v === "0.8.0" ? "idle at once" : "unknown through the startup grace, then idle"}`, async () => {
      const h = srv[v]!;
      const pane = await newPane(v, { PATH: `${quiet[v]}:${sb[v]!.env.PATH}` });
      expect(await shellFree(v, pane)).toBe(true);
      await h.call("pane.send_input", { pane_id: pane, text: "hermes", keys: ["Enter"] });
      const seen: string[] = [];
      const t0 = Date.now();
      expect(
        await waitFor(async () => {
          const p = await paneOf(v, pane);
          if (p.agent === "hermes" && seen.at(-1) !== p.agent_status) seen.push(p.agent_status);
          return p.agent_status === "idle";
        }, 10_000, 20),
      ).toBe(true);
      // (a fresh agent going idle is not a finished turn: never `done`)
      if (v === "0.8.0") expect(seen).toEqual(["idle"]);
      else {
        expect(seen).toEqual(["unknown", "idle"]);
        expect(Date.now() - t0).toBeGreaterThanOrEqual(2900); // herdr's 3 s startup grace
      }
      await h.call("pane.close", { pane_id: pane });
    });
  }
});

// one at a time: the start must reach herdr while the new pane's .bashrc still runs
describe("agent start into a pane whose shell is still starting (src/cli/agent.rs, 37644cab)", () => {
  for (const v of VERSIONS) {
    test(`${v}: ${v === "0.8.0" ? "agent_pane_busy" : "retried until the shell is free (at most 2 s); a pane held by an agent is busy at once"}`, async () => {
      const h = srv[v]!;
      const t0 = Date.now();
      const pane = await newPane(v, { HOME: slowHome[v]! });
      const name = `early-${Math.random().toString(16).slice(2, 10)}`; // a retried test starts afresh
      const r = await h.herdr(["agent", "start", name, "--kind", "claude", "--pane", pane]);
      if (v === "0.8.0") herdrApiError(r, "agent_pane_busy");
      else {
        expect(herdrJson(r).result.agent).toMatchObject({ name, pane_id: pane, interactive_ready: true });
        expect(Date.now() - t0).toBeGreaterThanOrEqual(1400); // it waited for the .bashrc
        // a pane held by an agent is not a starting shell: busy, and nothing typed
        herdrApiError(await h.herdr(["agent", "start", "second", "--kind", "codex", "--pane", pane]), "agent_pane_busy");
        expect((await h.inputs(pane)).filter((i) => i.kind === "text")).toHaveLength(1);
      }
      await h.call("pane.close", { pane_id: pane });
    });
  }
});

describe.concurrent("the CLI's parsers", () => {
  test("pane read: --flag=value and options before the id from 0.8.2 (ecddecec); a bad value is exit 1 `Error:` in 0.8.0, exit 2 in 0.8.2", async () => {
    for (const v of VERSIONS) {
      const h = srv[v]!;
      const a = await h.herdr(["pane", "read", "w1:p1", "--lines=5"]);
      const b = await h.herdr(["pane", "read", "--source", "visible", "w1:p1"]);
      const bad = await h.herdr(["pane", "read", "w1:p1", "--lines", "x"]);
      if (v === "0.8.0") {
        expect([a.code, a.stderr]).toEqual([2, "unknown option: --lines=5\n"]);
        expect(b.code).toBe(2);
        expect([bad.code, bad.stderr]).toEqual([1, "Error: invalid value for --lines: x\n"]);
      } else {
        expect([a.code, b.code]).toEqual([0, 0]);
        expect([bad.code, bad.stderr]).toEqual([2, "invalid value for --lines: x\n"]);
        expect((await h.herdr(["pane", "read", "w1:p1", "w1:p1"])).stderr).toBe("unexpected argument: w1:p1\n");
      }
    }
  });

  test("pane process-info --current: the focused pane in 0.8.0, the caller's HERDR_PANE_ID in 0.8.2 (d8838082)", async () => {
    for (const v of VERSIONS) {
      const h = srv[v]!;
      const pane = await newPane(v);
      const r = herdrJson(await h.herdr(["pane", "process-info", "--current"], { env: { HERDR_PANE_ID: pane } }));
      expect(r.result.process_info.pane_id).toBe(v === "0.8.0" ? "w1:p1" : pane);
      await h.call("pane.close", { pane_id: pane });
    }
  });
});
