// SPEC §1 conventions, through the compiled binary: version, help, usage errors, exit codes.
import { afterAll, describe, expect, test } from "bun:test";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox } from "../helpers/sandbox.ts";

const sb = makeSandbox("mam-cli-");
afterAll(() => sb.cleanup());
const mam = (...args: string[]) => runMam(args, { env: sb.env, cwd: sb.ws });

describe("version and help", () => {
  test("--version prints mam <semver> (<sha>)", async () => {
    const r = await mam("--version");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^mam \d+\.\d+\.\d+\S* \([0-9a-z-]+\)\n$/);
    expect(r.stderr).toBe("");
  });

  test("--help lists the commands, exit 0, no colour when piped", async () => {
    const r = await mam("--help");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("pane-lock");
    expect(r.stdout).not.toContain("\u001b[");
  });

  test("<command> --help never runs the command", async () => {
    const r = await mam("pane-lock", "acquire", "--help");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("--fd");
    expect(r.stdout).not.toMatch(/^(locked|timeout)$/m);
    const r2 = await mam("pane-lock", "path", "--session", "../bad", "--help");
    expect(r2.code).toBe(0);
  });

  test("mam alone prints usage on stderr, exit 2", async () => {
    const r = await mam();
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("USAGE");
  });
});

describe("usage errors exit 2 with one ERROR line", () => {
  const cases: [string, string[], RegExp][] = [
    ["unknown command", ["frobnicate"], /^ERROR: unknown command 'frobnicate'/],
    ["unknown flag", ["pane-lock", "path", "--sesion", "a"], /^ERROR: pane-lock path: unknown flag '--sesion'; did you mean --session\? see: mam pane-lock path --help\n$/],
    ["missing required flag", ["pane-lock", "acquire"], /^ERROR: .*missing required flag --fd/],
    ["repeated scalar flag", ["pane-lock", "path", "--session", "a", "--session", "b"], /^ERROR: .*--session given more than once/],
    ["stray positional", ["pane-lock", "wait-seconds", "extra"], /^ERROR: .*unexpected argument 'extra'/],
    ["missing subcommand", ["pane-lock"], /^ERROR: .*missing subcommand/],
    ["arguments after --", ["pane-lock", "wait-seconds", "--", "x"], /^ERROR: .*takes no arguments after --/],
  ];
  for (const [name, args, re] of cases) {
    test(name, async () => {
      const r = await mam(...args);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(re);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).not.toContain("    at ");
    });
  }
});
