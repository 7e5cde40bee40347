// mam registry check | restore through the compiled binary: output, --json shape, exit codes,
// AGENT_SESSIONS_YAML, read-only behaviour, and restore's refusals.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

let sb: Sandbox;
let yaml: string;
beforeEach(() => {
  sb = makeSandbox("mam-reg-");
  yaml = join(sb.ws, ".mam", "agent-sessions.yaml");
});
afterEach(() => sb.cleanup());

const mam = (args: string[], env = sb.env) => runMam(args, { env, cwd: sb.ws });
function put(p: string, text: string): void {
  mkdirSync(join(p, ".."), { recursive: true });
  writeFileSync(p, text);
}

const GOOD = "herdr_sessions:\n  - name: a\n    status: running\n    role: worker\n  - name: b\n    status: stopped\ntmux_sessions:\n  - name: t\n    status: running\n";
const OLD = "herdr_sessions:\n  - name: a\n    status: stopped\n    role: worker\n  - name: c\n    status: archived\n";

describe("mam registry check", () => {
  test("a good registry: ok, counts, exit 0", async () => {
    put(yaml, GOOD);
    const r = await mam(["registry", "check"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${yaml}: ok (herdr_sessions: 2 rows, tmux_sessions: 1 row)\nbackup ${yaml}.bak: missing\n`);
    expect(r.stderr).toBe("");
  });

  test("--json: {path, ok, rows, problems} (+ exists, backup)", async () => {
    put(yaml, GOOD);
    put(`${yaml}.bak`, OLD);
    const r = await mam(["registry", "check", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      path: yaml,
      exists: true,
      ok: true,
      rows: { herdr_sessions: 2, tmux_sessions: 1 },
      problems: [],
      backup: { path: `${yaml}.bak`, exists: true, ok: true },
    });
  });

  test("problems: each listed, exit 1; --json too", async () => {
    put(yaml, "herdr_sessions:\n- name: a\n  status: runing\n- name: b\n  status: running\n  role: ''\n- [x]\n");
    const r = await mam(["registry", "check"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(
      [
        `${yaml}: 3 problems (herdr_sessions: 3 rows, tmux_sessions: 0 rows)`,
        "  herdr_sessions[0] 'a' bad status 'runing'",
        "  herdr_sessions[1] 'b' role must be a non-empty string",
        "  herdr_sessions[2] is not a mapping",
        `backup ${yaml}.bak: missing`,
        "",
      ].join("\n"),
    );
    const j = await mam(["registry", "check", "--json"]);
    expect(j.code).toBe(1);
    const doc = JSON.parse(j.stdout);
    expect(doc.ok).toBe(false);
    expect(doc.problems).toHaveLength(3);
  });

  test("a file that does not parse: the ERROR line, exit 1, nothing on stdout (with --json: the error as JSON)", async () => {
    put(yaml, "herdr_sessions:\n- name: a\n  name: b\n");
    for (const extra of [[], ["--json"]]) {
      const r = await mam(["registry", "check", ...extra]);
      expect(r.code).toBe(1);
      const error = `${yaml} is not valid YAML (line 3: map keys must be unique)`;
      const hint = "fix it, or rebuild it from the panes the agents run in: mam registry rebuild";
      expect(r.stdout).toBe(extra.length ? `${JSON.stringify({ error, hint, exit_code: 1 }, null, 2)}\n` : "");
      expect(r.stderr).toBe(`ERROR: ${error}; ${hint}\n`);
    }
  });

  test("read-only: no registry, no .mam/, nothing created; exit 0", async () => {
    const r = await mam(["registry", "check", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ path: yaml, exists: false, ok: true, rows: { herdr_sessions: 0, tmux_sessions: 0 } });
    expect(readdirSync(sb.ws)).toEqual([]);
  });

  test("AGENT_SESSIONS_YAML and --workspace", async () => {
    const other = join(sb.root, "else", "reg.yaml");
    put(other, GOOD);
    const r = await mam(["registry", "check", "--json"], sb.with({ AGENT_SESSIONS_YAML: other }));
    expect(JSON.parse(r.stdout).path).toBe(other);
    const w = join(sb.root, "w2");
    put(join(w, ".mam", "agent-sessions.yaml"), OLD);
    const r2 = await runMam(["registry", "check", "--json", "--workspace", w], { env: sb.env, cwd: sb.root });
    expect(JSON.parse(r2.stdout)).toMatchObject({ path: join(w, ".mam", "agent-sessions.yaml"), rows: { herdr_sessions: 2 } });
    const r3 = await mam(["registry", "check", "--workspace", join(sb.root, "nope")]);
    expect(r3.code).toBe(2);
  });
});

describe("mam registry restore", () => {
  test("without --yes: shows the difference and changes nothing (exit 0)", async () => {
    put(yaml, GOOD);
    put(`${yaml}.bak`, OLD);
    const r = await mam(["registry", "restore"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        `current ${yaml}: herdr_sessions: 2 rows, tmux_sessions: 1 row`,
        `backup  ${yaml}.bak: herdr_sessions: 2 rows, tmux_sessions: 0 rows`,
        "  - herdr default/b (stopped)  only in the current file: dropped",
        "  - tmux mam/t (running)  only in the current file: dropped",
        "  + herdr default/c (archived)  only in the backup: comes back",
        "  ~ herdr default/a (stopped)  differs in: status",
        "  0 rows the same",
        "dry run: nothing changed; run again with --yes to restore (the current file becomes the new .bak)",
        "",
      ].join("\n"),
    );
    expect(readFileSync(yaml, "utf8")).toBe(GOOD);
    expect(readFileSync(`${yaml}.bak`, "utf8")).toBe(OLD);
  });

  test("--yes: the backup comes back, the current file becomes the .bak; --json shape", async () => {
    put(yaml, GOOD);
    put(`${yaml}.bak`, OLD);
    chmodSync(yaml, 0o640);
    const r = await mam(["registry", "restore", "--yes", "--json"]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      path: yaml,
      backup: `${yaml}.bak`,
      restored: true,
      dry_run: false,
      current: { exists: true, ok: true, rows: { herdr_sessions: 2, tmux_sessions: 1 } },
      from_backup: { rows: { herdr_sessions: 2, tmux_sessions: 0 } },
      diff: {
        only_current: [
          { section: "herdr_sessions", name: "b", server: "default", status: "stopped" },
          { section: "tmux_sessions", name: "t", server: "mam", status: "running" },
        ],
        only_backup: [{ section: "herdr_sessions", name: "c", server: "default", status: "archived" }],
        changed: [{ section: "herdr_sessions", name: "a", server: "default", status: "stopped", fields: ["status"] }],
        unchanged: 0,
      },
    });
    expect(readFileSync(yaml, "utf8")).toBe(OLD);
    expect(readFileSync(`${yaml}.bak`, "utf8")).toBe(GOOD);
    expect(statSync(yaml).mode & 0o777).toBe(0o640); // the mode of the file it replaced
  });

  test("--yes rescues a current file that does not parse", async () => {
    put(yaml, "herdr_sessions: [\n");
    put(`${yaml}.bak`, OLD);
    const dry = await mam(["registry", "restore"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`current ${yaml}: is not valid YAML (line 2: `);
    const r = await mam(["registry", "restore", "--yes"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split("\n").at(-1)).toBe(`restored ${yaml} from ${yaml}.bak; the replaced version is now ${yaml}.bak`);
    expect(readFileSync(yaml, "utf8")).toBe(OLD);
    expect(readFileSync(`${yaml}.bak`, "utf8")).toBe("herdr_sessions: [\n");
    expect((await mam(["registry", "check"])).code).toBe(0);
  });

  test("refuses a .bak that does not parse or fails validation: exit 1, both files untouched", async () => {
    for (const [bakText, msg] of [
      ["herdr_sessions:\n\t- name: a\n", `ERROR: cannot restore: ${yaml}.bak is not valid YAML (line 2: tabs are not allowed as indentation); ${yaml} left as it is; mam registry rebuild re-registers the running agents from their panes\n`],
      ["herdr_sessions:\n- name: a\n  status: runing\n", `ERROR: cannot restore: ${yaml}.bak: herdr_sessions[0] 'a' bad status 'runing'; ${yaml} left as it is; mam registry rebuild re-registers the running agents from their panes\n`],
    ] as const) {
      put(yaml, GOOD);
      put(`${yaml}.bak`, bakText);
      for (const extra of [[], ["--yes"]]) {
        const r = await mam(["registry", "restore", ...extra]);
        expect(r.code).toBe(1);
        expect(r.stdout).toBe("");
        expect(r.stderr).toBe(msg);
        expect(readFileSync(yaml, "utf8")).toBe(GOOD);
        expect(readFileSync(`${yaml}.bak`, "utf8")).toBe(bakText);
      }
    }
  });

  test("no .bak: exit 3 (not found), nothing created", async () => {
    const r = await mam(["registry", "restore", "--yes"]);
    expect(r.code).toBe(3);
    expect(r.stderr).toBe(`ERROR: no backup to restore: ${yaml}.bak does not exist; ${yaml} left as it is; mam registry rebuild re-registers the running agents from their panes\n`);
    expect(existsSync(join(sb.ws, ".mam"))).toBe(false);
  });

  test("identical files: nothing to do", async () => {
    put(yaml, GOOD);
    put(`${yaml}.bak`, GOOD);
    const r = await mam(["registry", "restore", "--yes"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${yaml} is already the same as ${yaml}.bak; nothing to do\n`);
  });

  test("--help never runs it and shows the examples", async () => {
    put(yaml, GOOD);
    put(`${yaml}.bak`, OLD);
    const r = await mam(["registry", "restore", "--yes", "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("EXAMPLES");
    expect(readFileSync(yaml, "utf8")).toBe(GOOD);
  });
});
