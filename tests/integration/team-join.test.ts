// `mam team join` takes the join code (the team's secret) from stdin (`-`) or a file
// (`--code-file`), so that it is in neither ps nor the shell's history (security review T1); as an
// argument it still works, with a NOTE. No broker is needed: joining only stores the team.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

let sb: Sandbox;
let code = "";
let n = 0;

beforeAll(async () => {
  sb = makeSandbox("mam-team-join-");
  const env = sb.with({ MAM_NO_SUBSCRIBER_DAEMON: "1" });
  const init = await runMam(["team", "init", "lab"], { env, cwd: sb.ws, timeoutMs: 30_000 });
  expect(init.code, init.stderr).toBe(0);
  code = /mam team join (mamteam1\.\S+)/.exec(init.stdout)![1]!;
});
afterAll(() => sb?.cleanup());

/** mam on another "machine": a HOME of its own */
function machine() {
  const home = join(sb.root, `m${++n}`);
  mkdirSync(home, { recursive: true });
  const env = sb.with({ HOME: home, XDG_CONFIG_HOME: join(home, ".config"), MAM_NO_SUBSCRIBER_DAEMON: "1" });
  const teamFile = join(home, ".local", "state", "mam", "team.json");
  return { run: (args: string[], stdin?: string) => runMam(args, { env, cwd: sb.ws, stdin, timeoutMs: 30_000 }), secret: () => (existsSync(teamFile) ? (JSON.parse(readFileSync(teamFile, "utf8")) as { secret: string }).secret : undefined) };
}

const secretOf = (c: string) => (JSON.parse(Buffer.from(c.slice("mamteam1.".length), "base64url").toString()) as { secret: string }).secret;

describe("mam team join: the code out of argv", () => {
  test("- reads it from stdin (a pasted line, with blank lines around it)", async () => {
    const m = machine();
    const r = await m.run(["team", "join", "-"], `\n  ${code}  \n\n`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("is in team lab");
    expect(r.stderr).not.toContain("NOTE: the join code");
    expect(m.secret()).toBe(secretOf(code));
  });

  test("--code-file reads it from a file", async () => {
    const m = machine();
    const f = join(sb.root, "lab.code");
    writeFileSync(f, `${code}\n`, { mode: 0o600 });
    const r = await m.run(["team", "join", "--code-file", f]);
    expect(r.code, r.stderr).toBe(0);
    expect(m.secret()).toBe(secretOf(code));
    rmSync(f);
  });

  test("as an argument it still works, with a NOTE naming the better ways", async () => {
    const m = machine();
    const r = await m.run(["team", "join", code]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("NOTE: the join code (the team's secret) was an argument");
    expect(r.stderr).toContain("mam team join - (stdin) or --code-file FILE");
    expect(m.secret()).toBe(secretOf(code));
  });

  test("empty stdin, no code at all, and two codes are clear usage errors", async () => {
    const m = machine();
    const empty = await m.run(["team", "join", "-"], "\n");
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("ERROR: stdin gave no join code");
    const none = await m.run(["team", "join"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("ERROR: give the join code: mam team join - reads it from stdin");
    const two = await m.run(["team", "join", code, "--code-file", "x"]);
    expect(two.code).toBe(2);
    expect(two.stderr).toContain("ERROR: give the join code once");
    expect(m.secret()).toBeUndefined();
  });
});
