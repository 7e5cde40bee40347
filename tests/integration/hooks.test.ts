// mam hooks install|uninstall|status and mam agent-report, as users (and the agents' hooks) run them.
import { afterEach, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

let sb: Sandbox | undefined;
afterEach(async () => {
  await sb?.cleanup();
  sb = undefined;
});

test("install keeps the user's settings and hooks, twice = once; status; uninstall removes only mam's; --global; bad input changes nothing", async () => {
  sb = makeSandbox("mam-hk-");
  const s = sb;
  const mam = (args: string[], env = s.env) => runMam(args, { env, cwd: s.ws });
  const file = join(s.ws, ".claude", "settings.local.json");
  mkdirSync(join(s.ws, ".claude"));
  const mine = { permissions: { allow: ["Bash(ls:*)"] }, hooks: { Stop: [{ hooks: [{ type: "command", command: "notify-send done" }] }] } };
  writeFileSync(file, JSON.stringify(mine));
  expect((await mam(["hooks", "status", "claude"])).code).toBe(3);
  const a = await mam(["hooks", "install", "claude"]);
  expect(a.code).toBe(0);
  expect(a.stdout).toContain(`installed: claude hooks`);
  const once = readFileSync(file, "utf8");
  expect((await mam(["hooks", "install", "claude"])).stdout).toContain("already installed");
  expect(readFileSync(file, "utf8")).toBe(once);
  const doc = JSON.parse(once);
  expect(doc.permissions).toEqual(mine.permissions);
  expect(doc.hooks.Stop[0]).toEqual(mine.hooks.Stop[0]);
  const st = await mam(["hooks", "status", "claude", "--json"]);
  expect(st.code).toBe(0);
  expect(JSON.parse(st.stdout)).toMatchObject({ agent: "claude", scope: "project", path: file, state: "installed", missing: [] });
  expect((await mam(["hooks", "uninstall", "claude"])).stdout).toContain("removed");
  expect(JSON.parse(readFileSync(file, "utf8"))).toEqual(mine);
  // --global: the user's claude config dir
  const cfg = join(s.root, "claude-cfg");
  const g = await mam(["hooks", "install", "claude", "--global"], { ...s.env, CLAUDE_CONFIG_DIR: cfg });
  expect(g.code).toBe(0);
  expect(Object.keys(JSON.parse(readFileSync(join(cfg, "settings.json"), "utf8")).hooks)).toContain("SessionStart");
  // bad input: unknown agent, a settings file that is not JSON
  const u = await mam(["hooks", "install", "aider"]);
  expect(u.code).toBe(2);
  expect(u.stderr).toContain("ERROR: no hooks for agent 'aider'");
  writeFileSync(file, "{ not json");
  const b = await mam(["hooks", "install", "claude"]);
  expect(b.code).toBe(1);
  expect(b.stderr).toMatch(/^ERROR: .*settings\.local\.json is not valid JSON/);
  expect(readFileSync(file, "utf8")).toBe("{ not json");
});

test("agent-report: a direct report; a hook call outside a mam session records nothing and never fails", async () => {
  sb = makeSandbox("mam-ar-");
  const s = sb;
  const r = await runMam(["agent-report", "--state", "blocked", "--reason", "needs the key", "--session", "w1"], { env: s.env, cwd: s.ws });
  expect(r.code).toBe(0);
  expect(r.stdout).toContain("recorded w1: blocked (needs the key)");
  expect(JSON.parse(readFileSync(join(s.ws, ".mam", "agent-state", "w1.json"), "utf8"))).toMatchObject({ session: "w1", state: "blocked", reason: "needs the key" });
  const h = await runMam(["agent-report", "--hook", "claude"], { env: s.env, cwd: s.root, stdin: JSON.stringify({ hook_event_name: "Stop" }) });
  expect(h).toMatchObject({ code: 0, stdout: "" });
  expect(existsSync(join(s.root, ".mam"))).toBe(false);
  const bad = await runMam(["agent-report", "--state", "busy", "--session", "w1"], { env: s.env, cwd: s.ws });
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain("--state must be working, blocked or idle");
  expect((await runMam(["agent-report", "--state", "idle", "--session", "../x"], { env: s.env, cwd: s.ws })).code).toBe(2);
});
