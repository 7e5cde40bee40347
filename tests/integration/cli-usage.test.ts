// What a mistake on the command line gets (issue 23 item 19): mam's own one-line error with a
// "did you mean" for an unknown command or flag (exit 2, never the parser's text), and a create
// of an agent kind that is not installed refused before anything starts.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "../helpers/tmux.ts";

let sb: Sandbox;
beforeEach(() => {
  sb = makeSandbox("mam-cliu-");
});
afterEach(() => sb.cleanup());
const mam = (args: string[], env = sb.env) => runMam(args, { env, cwd: sb.ws });

/** one usage error: exit 2, this exact line on stderr, nothing on stdout, nothing made */
async function refused(args: string[], line: string): Promise<void> {
  const r = await mam(args);
  expect(r.stderr, args.join(" ")).toBe(`${line}\n`);
  expect(r.stdout).toBe("");
  expect(r.code).toBe(2);
  expect(existsSync(join(sb.ws, ".mam"))).toBe(false);
}

describe("unknown commands and flags: mam's own line, with a did-you-mean", () => {
  test("commands", async () => {
    await refused(["stauts"], "ERROR: unknown command 'stauts'; did you mean status? see: mam --help");
    await refused(["resum", "w1"], "ERROR: unknown command 'resum'; did you mean resume? see: mam --help");
    await refused(["job", "stauts", "abcdef12"], "ERROR: unknown command 'job stauts'; did you mean job status? see: mam job --help");
    await refused(["registry", "chek"], "ERROR: unknown command 'registry chek'; did you mean registry check? see: mam registry --help");
    // `mam help [COMMAND…]` is the help (newcomer F13), `-v` the version
    const help = await mam(["help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toBe((await mam(["--help"])).stdout);
    expect((await mam(["help", "job", "submit"])).stdout).toBe((await mam(["job", "submit", "--help"])).stdout);
    expect((await mam(["help", "deploy"])).stderr).toBe("ERROR: unknown command 'deploy'; see: mam --help\n");
    expect((await mam(["-v"])).stdout).toBe((await mam(["--version"])).stdout);
    await refused(["frobnicate"], "ERROR: unknown command 'frobnicate'; see: mam --help");
    await refused(["--verison"], "ERROR: mam: unknown flag or argument '--verison'; did you mean --version? see: mam --help");
  });

  test("the help of a command that does not exist is an unknown command, not mam's help (issue 39 item 7)", async () => {
    await refused(["deploy", "--help"], "ERROR: unknown command 'deploy'; see: mam --help");
    await refused(["stauts", "-h"], "ERROR: unknown command 'stauts'; did you mean status? see: mam --help");
    await refused(["job", "sbumit", "--help"], "ERROR: unknown command 'job sbumit'; did you mean job submit? see: mam job --help");
    const ok = await mam(["job", "submit", "--help"]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain("--brief-file");
  });

  test("errors that name their fix (issue 39 item 7)", async () => {
    await refused(["job", "submit", "--to", "w1"], 'ERROR: give exactly one of --prompt and --brief-file; the job\'s text: --prompt "Fix the failing test", or a file that holds it: --brief-file brief.md');
    await refused(["job", "submit", "--prompt", "x"], "ERROR: give exactly one of --to and --to-role; the agent by name: --to NAME (as mam status lists it), or the first free one of a role: --to-role ROLE");
    const at = await mam(["job", "submit", "--to", "w1", "--prompt", "x", "--at", "25:00"]);
    expect(at.code).toBe(2);
    expect(at.stderr).toBe("ERROR: '25:00' is not a time of day; give it as HH:MM or HH:MM:SS from 00:00 to 23:59:59, e.g. 18:30 (or +5m, 2026-12-24 09:00)\n");
  });

  test("flags: unknown ones, a value missing, a value where none goes", async () => {
    await refused(["create", "--agnet", "demo"], "ERROR: create: unknown flag '--agnet'; did you mean --agent? see: mam create --help");
    await refused(["stop", "w1", "--hrad"], "ERROR: stop: unknown flag '--hrad'; did you mean --hard? see: mam stop --help");
    await refused(["status", "--jsn"], "ERROR: status: unknown flag '--jsn'; did you mean --json? see: mam status --help");
    await refused(["pane-lock", "path", "--sesion", "a"], "ERROR: pane-lock path: unknown flag '--sesion'; did you mean --session? see: mam pane-lock path --help");
    await refused(["job", "submit", "--zzz"], "ERROR: job submit: unknown flag '--zzz'; see: mam job submit --help");
    await refused(["create", "-x"], "ERROR: create: unknown flag '-x'; see: mam create --help");
    await refused(["create", "--agent"], "ERROR: create: --agent needs a value; see: mam create --help");
    await refused(["status", "--json=yes"], "ERROR: status: --json takes no value (got '--json=yes'); see: mam status --help");
    // a flag's value may look like a flag (getopt style): no error for it
    const r = await mam(["job", "event", "abcdef12", "progress", "--detail", "--agnet"]);
    expect(r.stderr).toMatch(/^ERROR: no job abcdef12 in /);
  });
});

describe("create with an agent kind that is not installed", () => {
  const it = TMUX_BIN ? test : test.skip;
  it("tmux: refused before anything is spawned, naming the fix", async () => {
    const server = tmuxServerName("mamclie");
    // a PATH with tmux and the basics, without claude, codex, aider, …
    const env = sb.with({ TMUX_TMPDIR: sb.root, PATH: `${sb.bin}:/usr/bin:/bin` });
    try {
      for (const kind of ["claude", "codex", "aider"]) {
        const r = await mam(["create", "--agent", kind, "--role", "worker", "--session", "w1", "--mux", "tmux", "--tmux-server", server], env);
        expect(r.code).toBe(1);
        expect(r.stdout).toBe("");
        expect(r.stderr).toBe(
          `ERROR: agent kind '${kind}' runs '${kind}', which is not on the agent's PATH; nothing was started; install it (or put its folder on PATH), or choose another --agent (--agent demo tries mam without an AI agent)\n`,
        );
      }
      // no tmux server was started, no registry written, no worktree made
      const sockets = existsSync(join(sb.root, `tmux-${process.getuid!()}`)) ? readdirSync(join(sb.root, `tmux-${process.getuid!()}`)) : [];
      expect(sockets).toEqual([]);
      expect(existsSync(join(sb.ws, ".mam", "agent-sessions.yaml"))).toBe(false);
      // the demo kind (mam itself) is always there
      const ok = await mam(["create", "--agent", "demo", "--role", "worker", "--session", "d1", "--mux", "tmux", "--tmux-server", server, "--no-onboard"], env);
      expect(ok.code, ok.stderr).toBe(0);
    } finally {
      await killTmuxServer(server, env, sb.root);
    }
  });
});
