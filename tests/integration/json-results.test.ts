// --json on every command that prints a result (issue 39 item 9): a script reads the join code,
// a cancel, a reported event, the daemon's pid, what hooks install did, without scraping text.
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Lazy, MamCommand } from "../../lib/cli/command.ts";
import { rootCommand } from "../../mam.ts";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

let sb: Sandbox;
beforeEach(() => {
  sb = makeSandbox("mam-jres-");
});
afterEach(() => sb.cleanup());
const mam = (args: string[], env = sb.env) => runMam(args, { env, cwd: sb.ws });
const doc = async (args: string[], env = sb.env) => {
  const r = await mam([...args, "--json"], env);
  expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout);
};

/** the commands that print no result: servers and loops (their output is a stream or a page), the shims' one-word plumbing, and what a sandboxed pane runs (the agent's terminal) */
const NO_RESULT = new Set(["mcp", "ui", "broker", "demo", "demo-agent", "agent-report", "shell-job", "sandbox exec", "sandbox inner", "pane-lock path", "pane-lock acquire", "pane-lock wait-seconds"]);

test("every command that prints a result takes --json", async () => {
  const without: string[] = [];
  const walk = async (c: Lazy<MamCommand>, path: string[]) => {
    const cmd = typeof c === "function" ? await c() : c;
    if (cmd.run && !cmd.args?.json && !NO_RESULT.has(path.join(" "))) without.push(path.join(" "));
    for (const [name, sub] of Object.entries(cmd.subCommands ?? {})) await walk(sub, [...path, name]);
  };
  await walk(await rootCommand(), []);
  expect(without).toEqual([]);
});

test("team init, code, join, show: the join code as `code`, for a script to carry", async () => {
  const made = await doc(["team", "init", "lab", "--broker", "127.0.0.1:9"]);
  expect(made).toMatchObject({ team: "lab", broker: { host: "127.0.0.1", port: 9 } });
  expect(made.code).toMatch(/^mamteam1\./);
  const code = await doc(["team", "code"]);
  expect(code).toEqual({ team: "lab", code: made.code });
  const otherHome = join(sb.root, "home2");
  mkdirSync(otherHome);
  const other = sb.with({ HOME: otherHome, XDG_CONFIG_HOME: join(otherHome, ".config"), MAM_HOST: "second" });
  const joined = await doc(["team", "join", code.code], other);
  expect(joined).toMatchObject({ team: "lab", host: "second" });
  expect(JSON.stringify(joined)).not.toContain(code.code);
});

test("daemon ensure / stop, job cancel, job event, hooks install / uninstall, shim install: one JSON document each", async () => {
  expect(await doc(["daemon", "ensure"])).toMatchObject({ pid: null, started: false, disabled: true });
  const stop = await mam(["daemon", "stop", "--json"]);
  expect(stop.code).toBe(3);
  expect(JSON.parse(stop.stdout)).toMatchObject({ exit_code: 3 });
  const cancel = await mam(["job", "cancel", "abcdef12", "--json"]);
  expect(cancel.code).toBe(3);
  expect(JSON.parse(cancel.stdout).error).toMatch(/^no job abcdef12/);
  const ev = await mam(["job", "event", "abcdef12", "progress", "--json"]);
  expect(JSON.parse(ev.stdout).exit_code).toBe(ev.code);
  const inst = await doc(["hooks", "install", "claude"]);
  expect(inst).toMatchObject({ agent: "claude", scope: "project", path: join(sb.ws, ".claude", "settings.local.json"), changed: true });
  expect((await doc(["hooks", "install", "claude"])).changed).toBe(false);
  expect(await doc(["hooks", "uninstall", "claude"])).toMatchObject({ agent: "claude", removed: true });
  expect(await doc(["hooks", "uninstall", "claude"])).toMatchObject({ removed: false });
  const shim = await doc(["shim", "install", "--dir", join(sb.root, "shimdir")]);
  expect(shim).toEqual({ path: join(sb.root, "shimdir", "herdr") });
});
