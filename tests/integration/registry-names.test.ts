// Rows whose names mam would refuse (issue 23 item 15, R11, attempt 35): `registry check` reports
// each (shown escaped) and says how to reach it; the registry stays readable for everything else;
// `mam stop --pane ID` stops such a row (closing its pane, though its label no longer names it),
// and `mam resume --pane ID` brings it back only under a valid `--rename`.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { run, runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "../helpers/tmux.ts";

let sb: Sandbox;
let yaml: string;
beforeEach(() => {
  sb = makeSandbox("mam-rnames-");
  yaml = join(sb.ws, ".mam", "agent-sessions.yaml");
});
afterEach(() => sb.cleanup());

const WEIRD: [string, string][] = [
  ["../../etc", "'../../etc'"],
  ["a;touch x", "'a;touch x'"],
  ["w\u00f6rker", "'w\\u{f6}rker'"],
  ["evil\u202eexe", "'evil\\u{202e}exe'"],
  ["esc\u001b]0;title\u0007", "'esc\\u{1b}]0;title\\u{7}'"],
  ["x".repeat(65), `'${"x".repeat(65)}'`],
];

describe("registry check: names mam would refuse", () => {
  test("each reported, escaped, with the way to reach it; the file stays readable", async () => {
    mkdirSync(join(sb.ws, ".mam"));
    const rows = WEIRD.map(([n], i) => `  - name: ${JSON.stringify(n)}\n    status: stopped\n    tmux_server: s\n${i === 5 ? "" : `    pane: {id: "%${i}"}\n`}`).join("");
    writeFileSync(yaml, `tmux_sessions:\n  - name: good\n    status: stopped\n${rows}`);
    const r = await runMam(["registry", "check"], { env: sb.env, cwd: sb.ws });
    expect(r.code).toBe(1);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toBe(`${yaml}: 6 problems (herdr_sessions: 0 rows, tmux_sessions: 7 rows)`);
    WEIRD.forEach(([, shown], i) => {
      const reach = i === 5 ? "it records no pane: fix the name in the file" : `reach it by its pane: mam stop --pane %${i}, mam resume --pane %${i} --rename NAME`;
      expect(lines[1 + i]).toBe(`  tmux_sessions[${1 + i}] ${shown} is a name mam would refuse (1-64 characters of [A-Za-z0-9._-], starting with a letter or digit); ${reach}`);
    });
    expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    const j = await runMam(["registry", "check", "--json"], { env: sb.env, cwd: sb.ws });
    expect((JSON.parse(j.stdout) as { ok: boolean; problems: string[] }).problems).toHaveLength(6);
    // everything else still reads it
    const st = await runMam(["status", "--json"], { env: sb.env, cwd: sb.ws });
    expect(st.code, st.stderr).toBe(0);
    expect((JSON.parse(st.stdout) as { sessions: unknown[] }).sessions).toHaveLength(7);
    // stop and resume need a name or a pane, and a pane id looks like one
    const both = await runMam(["stop", "good", "--pane", "%1"], { env: sb.env, cwd: sb.ws });
    expect(both.stderr).toBe("ERROR: give exactly one of NAME and --pane\n");
    const none = await runMam(["resume"], { env: sb.env, cwd: sb.ws });
    expect(none.stderr).toBe("ERROR: give exactly one of NAME and --pane\n");
    const bad = await runMam(["stop", "--pane", "%1;x"], { env: sb.env, cwd: sb.ws });
    expect(bad.stderr).toBe("ERROR: invalid pane id '%1;x' (as mam status shows it: %3, w1:p2)\n");
    const ghost = await runMam(["stop", "--pane", "%99"], { env: sb.env, cwd: sb.ws });
    expect(ghost.code).toBe(3);
    expect(ghost.stderr).toBe(`ERROR: no session with pane '%99' in ${yaml}; see: mam status (its PANE column)\n`);
  });
});

describe("stop and resume by pane", () => {
  const it = TMUX_BIN ? test : test.skip;
  it("a running row renamed by hand: stop --pane closes its pane; resume --pane needs --rename, then comes back under it", async () => {
    const server = tmuxServerName("mamrn");
    const env = sb.with({ TMUX_TMPDIR: sb.root, MAM_MUX: "tmux" });
    const mam = (args: string[]) => runMam(args, { env, cwd: sb.ws, timeoutMs: 60_000 });
    const sessions = async () => (await run([TMUX_BIN!, "-L", server, "list-sessions", "-F", "#{session_name}"], { env })).stdout;
    try {
      expect((await mam(["create", "--agent", "demo", "--role", "worker", "--session", "good", "--tmux-server", server, "--no-onboard"])).code).toBe(0);
      const pane = (readFileSync(yaml, "utf8").match(/id: "?(%\d+)/) ?? [])[1]!;
      writeFileSync(yaml, readFileSync(yaml, "utf8").replace("name: good", 'name: "../../etc\\u202e"'));
      expect(await sessions()).toBe("good\n");
      const st = await mam(["stop", "--pane", pane]);
      expect(st.code, st.stderr).toBe(0);
      expect(await sessions()).toBe(""); // its pane was closed, although its label says good
      const data = Bun.YAML.parse(readFileSync(yaml, "utf8")) as { tmux_sessions: { name: string; status: string }[] };
      expect(data.tmux_sessions.map((r) => [r.name, r.status])).toEqual([["../../etc\u202e", "stopped"]]);
      const refused = await mam(["resume", "--pane", pane, "--fresh"]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toBe("ERROR: session '../../etc\\u{202e}' has a name mam would refuse; give the name it comes back under: --rename\n");
      const back = await mam(["resume", "--pane", pane, "--rename", "good2", "--fresh"]);
      expect(back.code, back.stderr).toBe(0);
      expect(back.stdout).toMatch(/^resumed good2 in pane %\d+\n$/);
      expect(await sessions()).toBe("good2\n");
      const after = Bun.YAML.parse(readFileSync(yaml, "utf8")) as { tmux_sessions: { name: string; status: string; renamed_from?: string }[] };
      expect(after.tmux_sessions.map((r) => [r.name, r.status, r.renamed_from])).toEqual([["good2", "running", "../../etc\u202e"]]);
      expect((await mam(["registry", "check"])).code).toBe(0);
      expect((await mam(["stop", "good2", "--hard"])).code).toBe(0);
    } finally {
      await killTmuxServer(server, env, sb.root);
    }
  });
});
