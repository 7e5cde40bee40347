// --json on failure (issue 23 item 17): every failure of a command given --json is exactly one
// JSON document on stdout ({error, hint, exit_code}; no hint when there is no fix) and the ERROR line on stderr, for every
// command that takes --json; without --json, create's conflict line stays on stdout (the seed).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Lazy, MamCommand } from "../../lib/cli/command.ts";
import { rootCommand } from "../../mam.ts";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "../helpers/tmux.ts";

let sb: Sandbox;
beforeEach(() => {
  sb = makeSandbox("mam-clij-");
});
afterEach(() => sb.cleanup());
const mam = (args: string[], env = sb.env) => runMam(args, { env, cwd: sb.ws });

describe("--json: one JSON document on stdout, also on failure", () => {
  const it = TMUX_BIN ? test : test.skip;

  it("a name conflict: the document on stdout, the ERROR line on stderr; without --json the line stays on stdout", async () => {
    const server = tmuxServerName("mamclij");
    const env = sb.with({ TMUX_TMPDIR: sb.root });
    const create = (extra: string[]) => mam(["create", "--agent", "demo", "--role", "worker", "--session", "good", "--mux", "tmux", "--tmux-server", server, "--no-onboard", ...extra], env);
    try {
      expect((await create([])).code).toBe(0);
      const j = await create(["--json"]);
      expect(j.code).toBe(4);
      expect(JSON.parse(j.stdout)).toEqual({ error: "good already running in agent-sessions.yaml", exit_code: 4 }); // no `hint: null`
      expect(j.stderr).toBe("ERROR: good already running in agent-sessions.yaml\n");
      const t = await create([]);
      expect(t.code).toBe(4);
      expect(t.stdout).toBe("ERROR: good already running in agent-sessions.yaml\n"); // the seed's contract
      expect(t.stderr).toBe("");
    } finally {
      await killTmuxServer(server, env, sb.root);
    }
  });

  test("errors at run time: not found, a broken registry, a plumbing command", async () => {
    const doc = async (args: string[], code: number, error: RegExp) => {
      const r = await mam(args);
      expect(r.code, args.join(" ")).toBe(code);
      const d = JSON.parse(r.stdout) as { error: string; hint: string | null; exit_code: number };
      expect(Object.keys(d)).toEqual(d.hint === undefined ? ["error", "exit_code"] : ["error", "hint", "exit_code"]);
      expect(d.error).toMatch(error);
      expect(d.exit_code).toBe(code);
      expect(r.stderr).toBe(`ERROR: ${d.error}${d.hint ? `; ${d.hint}` : ""}\n`);
    };
    await doc(["job", "status", "abcdef12", "--json"], 3, /^no job abcdef12 in /);
    await doc(["registry", "restore", "--json"], 3, /^no backup to restore: /);
    await doc(["mcp", "install", "nosuch", "--json"], 2, /^mam mcp install: unknown agent 'nosuch'$/);
    await doc(["stauts", "--json"], 2, /^unknown command 'stauts'$/);
    mkdirSync(join(sb.ws, ".mam"));
    writeFileSync(join(sb.ws, ".mam", "agent-sessions.yaml"), "garbage: [unclosed\n");
    await doc(["status", "--json"], 1, /agent-sessions\.yaml is not valid YAML/);
    await doc(["stop", "w1", "--json"], 1, /agent-sessions\.yaml is not valid YAML/);
    // `--json` as the value of another flag is that value, not a request for JSON
    const v = await mam(["job", "event", "abcdef12", "progress", "--detail", "--json"]);
    expect(v.stdout).toBe("");
    expect(v.stderr).toMatch(/^ERROR: no job abcdef12 in /);
  });

  test("every command that takes --json: a usage error too is a JSON document", async () => {
    const withJson: string[][] = [];
    const walk = async (c: Lazy<MamCommand>, path: string[]) => {
      const cmd = typeof c === "function" ? await c() : c;
      if (cmd.args?.json && cmd.run) withJson.push(path);
      for (const [name, sub] of Object.entries(cmd.subCommands ?? {})) await walk(sub, [...path, name]);
    };
    await walk(await rootCommand(), []);
    expect(withJson.length).toBeGreaterThan(15);
    for (const path of withJson) {
      const r = await mam([...path, "--json", "--zzz"]);
      expect(r.code, path.join(" ")).toBe(2);
      expect(JSON.parse(r.stdout), path.join(" ")).toEqual({ error: `${path.join(" ")}: unknown flag '--zzz'`, hint: `see: mam ${path.join(" ")} --help`, exit_code: 2 });
      expect(r.stderr).toBe(`ERROR: ${path.join(" ")}: unknown flag '--zzz'; see: mam ${path.join(" ")} --help\n`);
    }
  });
});
