// mutateRegistry: what a write keeps (comments, key order, quoting, other rows byte for byte),
// what it refuses (validation, role changes, broken files), and its durability rules (.bak,
// no rewrite without a change, modes, stale temp files, lock timeout).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HEADER, mutateRegistry } from "../../lib/registry/mutate.ts";
import * as mutate from "../../lib/registry/mutate.ts";
import { readRegistry } from "../../lib/registry/load.ts";
import type { RegistryData, Row } from "../../lib/registry/types.ts";
import { MamError } from "../../lib/sys/errors.ts";
import { lockFile } from "../../lib/sys/lock-file.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

let sb: Sandbox;
let yaml: string;
beforeEach(() => {
  sb = makeSandbox("mam-rw-");
  yaml = join(sb.ws, ".mam", "agent-sessions.yaml");
});
afterEach(() => sb.cleanup());

function put(text: string): void {
  mkdirSync(join(sb.ws, ".mam"), { recursive: true, mode: 0o700 });
  writeFileSync(yaml, text);
}
const file = () => readFileSync(yaml, "utf8");
const bak = () => readFileSync(`${yaml}.bak`, "utf8");
const strategy = () => mutate.lastWriteStrategy;

async function refused(fn: (d: RegistryData, tx: mutate.RegistryTx) => void): Promise<MamError> {
  try {
    await mutateRegistry(yaml, fn);
  } catch (e) {
    if (e instanceof MamError) return e;
    throw e;
  }
  throw new Error("the mutation was not refused");
}

const COMMENTED = `# my team
herdr_sessions:   # the herdr rows
  # row a: the api worker
  - name: a   # inline a
    status: running
    # about role
    role: worker
    pane: {id: "w1:p2", index: 1}
    note: 'single'
  # row b
  - name: b
    status: stopped # st
    stopped_at: "2026-10-11T00:00:00Z"
    stop_reason: requested
tmux_sessions:
- {"name": "t", "status": "running", "tmux_server": "mam"}
# end comment
`;

describe("a new registry", () => {
  test("folder 0700, file 0600, header comment, both sections, rows as block maps", async () => {
    const r = await mutateRegistry(yaml, (d) => {
      d.herdr_sessions.push({ name: "api-worker-claude", status: "running", role: "worker", herdr_server: "mam", herdr_session_epoch: 1791590400, herdr_session_created_at: "2026-10-11T00:00:00Z", pane: { id: "w1:p2", index: 1, pid: 4242, cmd_full: "claude --session-id 3f0c" } });
      return "ok";
    });
    expect(r).toEqual({ result: "ok", changed: true });
    expect(statSync(join(sb.ws, ".mam")).mode & 0o777).toBe(0o700);
    expect(statSync(yaml).mode & 0o777).toBe(0o600);
    expect(file()).toBe(
      [
        ...HEADER,
        "herdr_sessions:",
        "  - name: api-worker-claude",
        "    status: running",
        "    role: worker",
        "    herdr_server: mam",
        "    herdr_session_epoch: 1791590400",
        '    herdr_session_created_at: "2026-10-11T00:00:00Z"',
        '    pane: {id: "w1:p2", index: 1, pid: 4242, cmd_full: claude --session-id 3f0c}',
        "tmux_sessions: []",
        "",
      ].join("\n"),
    );
    expect(existsSync(`${yaml}.bak`)).toBe(false);
    expect(readdirSync(join(sb.ws, ".mam")).sort()).toEqual([".gitignore", "agent-sessions.lock", "agent-sessions.yaml"]);
  });

  test("a mutation that adds nothing to a missing file creates no registry file", async () => {
    const r = await mutateRegistry(yaml, () => 1);
    expect(r.changed).toBe(false);
    expect(existsSync(yaml)).toBe(false);
  });
});

describe("edits keep the rest of the file", () => {
  test("comments, key order and quoting survive edits of other rows and keys", async () => {
    put(COMMENTED);
    await mutateRegistry(yaml, (d) => {
      d.herdr_sessions[1]!.status = "running";
      delete d.herdr_sessions[1]!.stopped_at;
      delete d.herdr_sessions[1]!.stop_reason;
      d.herdr_sessions[0]!.pane!.pid = 42;
      d.herdr_sessions[0]!.note = "still single";
      d.herdr_sessions.push({ name: "c", status: "archived", role: "helper" });
    });
    expect(strategy()).toBe("splice");
    expect(file()).toBe(`# my team
herdr_sessions:   # the herdr rows
  # row a: the api worker
  - name: a   # inline a
    status: running
    # about role
    role: worker
    pane: {id: "w1:p2", index: 1, pid: 42}
    note: 'still single'
  # row b
  - name: b
    status: running # st
  - name: c
    status: archived
    role: helper
tmux_sessions:
- {"name": "t", "status": "running", "tmux_server": "mam"}
# end comment
`);
    expect(bak()).toBe(COMMENTED);
  });

  test("deleting a key takes its own comment along, nothing else", async () => {
    put(COMMENTED);
    await mutateRegistry(yaml, (d, tx) => {
      tx.allowRoleChange("a"); // removing a role is a role change too
      delete d.herdr_sessions[0]!.role;
    });
    expect(file()).toBe(COMMENTED.replace("    # about role\n    role: worker\n", ""));
  });

  test("deleting a row takes its comments along; the next row keeps its own", async () => {
    put(COMMENTED);
    await mutateRegistry(yaml, (d) => {
      d.herdr_sessions.splice(0, 1);
    });
    expect(file()).toBe(`# my team
herdr_sessions:   # the herdr rows
  # row b
  - name: b
    status: stopped # st
    stopped_at: "2026-10-11T00:00:00Z"
    stop_reason: requested
tmux_sessions:
- {"name": "t", "status": "running", "tmux_server": "mam"}
# end comment
`);
  });

  test("reordering rows moves each row with its comments; emptying a section leaves []", async () => {
    put(COMMENTED);
    await mutateRegistry(yaml, (d) => {
      d.herdr_sessions.reverse();
      d.tmux_sessions = [];
    });
    expect(file()).toBe(`# my team
herdr_sessions:   # the herdr rows
  # row b
  - name: b
    status: stopped # st
    stopped_at: "2026-10-11T00:00:00Z"
    stop_reason: requested
  # row a: the api worker
  - name: a   # inline a
    status: running
    # about role
    role: worker
    pane: {id: "w1:p2", index: 1}
    note: 'single'
tmux_sessions: []
# end comment
`);
  });

  test("a row replaced by a new object of the same name keeps its place, comments and key order", async () => {
    put(COMMENTED);
    await mutateRegistry(yaml, (d) => {
      const old = d.herdr_sessions[1]!;
      d.herdr_sessions[1] = { stop_reason: old.stop_reason, name: "b", status: "running", role: "reviewer", stopped_at: old.stopped_at } as Row;
    });
    expect(file()).toBe(COMMENTED.replace("    status: stopped # st\n", "    status: running # st\n").replace("    stop_reason: requested\n", "    stop_reason: requested\n    role: reviewer\n"));
  });

  test("a value that changes type, and strings that need quotes, are written safely", async () => {
    put(COMMENTED);
    await mutateRegistry(yaml, (d) => {
      d.herdr_sessions[1]!.stop_reason = 7 as never;
      d.herdr_sessions[0]!.pane = { id: "w1:p3", index: 2 };
      d.herdr_sessions[0]!.last_visible_note = "a: b # c";
      d.herdr_sessions[0]!.yes = "yes";
    });
    const text = file();
    expect(text).toContain("    stop_reason: 7\n");
    expect(text).toContain('    pane: {id: "w1:p3", index: 2}\n');
    expect(text).toContain('    last_visible_note: "a: b # c"\n    "yes": "yes"\n');
    const d = readRegistry(yaml);
    expect(d.herdr_sessions[0]!.last_visible_note).toBe("a: b # c");
    expect(d.herdr_sessions[0]!.yes).toBe("yes");
  });

  test("the original's JSON rows: other rows stay byte for byte; an edited one stays one JSON line, keys in order", async () => {
    const r1 = { name: "one", status: "running", role: "creator", herdr_session: "t50-srv", herdr_server: "t50-srv", pane: { index: 0, pid: 9999 } };
    const r2 = { ...r1, name: "two" };
    const l1 = `- ${JSON.stringify(r1).replace(/,"/g, ', "').replace(/":/g, '": ')}`;
    const l2 = `- ${JSON.stringify(r2).replace(/,"/g, ', "').replace(/":/g, '": ')}`;
    put(`herdr_sessions:\n${l1}\n${l2}\n`);
    await mutateRegistry(yaml, (d) => {
      d.herdr_sessions[1]!.status = "stopped";
      d.herdr_sessions[1]!.pane!.pid = 1;
      d.herdr_sessions[1]!.stop_reason = "requested";
    });
    expect(strategy()).toBe("splice");
    expect(file()).toBe(
      `herdr_sessions:\n${l1}\n- {"name": "two", "status": "stopped", "role": "creator", "herdr_session": "t50-srv", "herdr_server": "t50-srv", "pane": {"index": 0, "pid": 1}, "stop_reason": "requested"}\n`,
    );
    // new rows in such a file come as block maps at the file's indentation
    await mutateRegistry(yaml, (d) => {
      d.herdr_sessions.push({ name: "three", status: "running" });
    });
    expect(file().endsWith(`"stop_reason": "requested"}\n- name: three\n  status: running\n`)).toBe(true);
  });

  test("a PyYAML-written registry (tmux era, rows at column 0, block panes, globals) round-trips an edit of one row", async () => {
    const text = [
      "tmux_sessions:",
      "- name: api-creator-claude",
      "  status: running",
      "  role: creator",
      "  tmux_server: multi-agent-api",
      "  pane:",
      "    index: 0",
      "    pid: 100",
      "    cmd: claude",
      "    mcp_attachments:",
      "    - fs",
      "    - git",
      "  start_command: claude --dangerously-skip-permissions --session-id 3f0c1b2a-aaaa-bbbb-cccc-dddddddddddd",
      "    --verbose",
      "- name: api-reviewer-codex",
      "  status: stopped",
      "  role: reviewer",
      "  tmux_server: multi-agent-api",
      "agent_identities:",
      "  claude:",
      "    project_cwd: /w",
      "",
    ].join("\n");
    put(text);
    await mutateRegistry(yaml, (d) => {
      d.tmux_sessions[0]!.pane!.pid = 200;
      d.tmux_sessions[1]!.status = "archived";
    });
    expect(strategy()).toBe("splice");
    expect(file()).toBe(text.replace("    pid: 100", "    pid: 200").replace("  status: stopped", "  status: archived"));
    expect(readRegistry(yaml).tmux_sessions[0]!.start_command).toBe("claude --dangerously-skip-permissions --session-id 3f0c1b2a-aaaa-bbbb-cccc-dddddddddddd --verbose");
  });

  test("sections: [] and null fill with block rows; a missing section appears only when it gets rows", async () => {
    put("herdr_sessions: []   # none yet\n");
    await mutateRegistry(yaml, (d) => {
      d.herdr_sessions.push({ name: "a", status: "running" });
    });
    expect(file()).toBe("herdr_sessions:   # none yet\n  - name: a\n    status: running\n");
    await mutateRegistry(yaml, (d) => {
      d.tmux_sessions.push({ name: "t", status: "running", tmux_server: "iso" });
    });
    expect(file()).toBe("herdr_sessions:   # none yet\n  - name: a\n    status: running\ntmux_sessions:\n  - name: t\n    status: running\n    tmux_server: iso\n");
    put("herdr_sessions:\ntmux_sessions:\n");
    await mutateRegistry(yaml, (d) => {
      d.tmux_sessions.push({ name: "t", status: "stopped" });
    });
    expect(file()).toBe("herdr_sessions:\ntmux_sessions:\n  - name: t\n    status: stopped\n");
  });

  test("unknown top-level keys and fields are kept and can be changed", async () => {
    put("agent_identities:\n  claude: {session_id: a}\nherdr_sessions:\n  - name: a\n    status: running\n    custom: [1, 2]\n");
    await mutateRegistry(yaml, (d) => {
      (d.agent_identities as Record<string, unknown>).codex = { session_id: "b" };
      d.herdr_sessions[0]!.custom = [1, 2, 3];
    });
    expect(file()).toBe("agent_identities:\n  claude: {session_id: a}\n  codex: {session_id: b}\nherdr_sessions:\n  - name: a\n    status: running\n    custom: [1, 2, 3]\n");
  });

  test("deleting the key a row starts with goes through the yaml Document too", async () => {
    put("herdr_sessions:\n  # row a\n  - agent: claude\n    name: a\n    status: running\n  - name: b\n    status: stopped\n");
    await mutateRegistry(yaml, (d) => {
      delete d.herdr_sessions[0]!.agent;
    });
    expect(strategy()).toBe("document");
    expect(file()).toBe("herdr_sessions:\n  # row a\n  - name: a\n    status: running\n  - name: b\n    status: stopped\n");
  });

  test("a file the outline cannot describe (anchors) is edited through the yaml Document, comments kept", async () => {
    put("# team\ndefaults: &d {cmd: claude}\nherdr_sessions:\n  # row a\n  - name: a\n    status: running\n    pane: *d\n  - name: b # bee\n    status: stopped\n");
    await mutateRegistry(yaml, (d) => {
      d.herdr_sessions[1]!.status = "running";
    });
    expect(strategy()).toBe("document");
    const text = file();
    expect(text).toContain("# team\n");
    expect(text).toContain("# row a\n");
    expect(text).toContain("- name: b # bee\n");
    expect(text).toContain("pane: *d\n");
    expect(readRegistry(yaml).herdr_sessions[1]!.status).toBe("running");
  });
});

describe("no change, no write", () => {
  test("a mutation that changes nothing (or sets the same values) leaves inode, mtime and .bak alone", async () => {
    put(COMMENTED);
    const past = new Date(Date.now() - 3600_000);
    utimesSync(yaml, past, past);
    const st = statSync(yaml);
    const r1 = await mutateRegistry(yaml, (d) => d.herdr_sessions.length);
    const r2 = await mutateRegistry(yaml, (d) => {
      d.herdr_sessions[0]!.status = "running";
      d.herdr_sessions[1] = { ...d.herdr_sessions[1]! };
      d.herdr_sessions[0]!.role = d.herdr_sessions[0]!.role;
    });
    expect(r1).toEqual({ result: 2, changed: false });
    expect(r2.changed).toBe(false);
    const st2 = statSync(yaml);
    expect(st2.ino).toBe(st.ino);
    expect(st2.mtimeMs).toBe(st.mtimeMs);
    expect(existsSync(`${yaml}.bak`)).toBe(false);
  });
});

describe("refusals leave the file byte for byte", () => {
  const before = () => put(COMMENTED);
  const cases: [string, (d: RegistryData) => void, string][] = [
    ["a row that is a list", (d) => d.herdr_sessions.push(["x"] as never), "herdr_sessions[2] is not a mapping"],
    ["missing name", (d) => d.herdr_sessions.push({ status: "running" } as never), "herdr_sessions[2] missing name"],
    ["missing status", (d) => d.herdr_sessions.push({ name: "n" } as never), "herdr_sessions[2] 'n' missing status"],
    ["bad status", (d) => (d.herdr_sessions[1]!.status = "runing" as never), "herdr_sessions[1] 'b' bad status 'runing'"],
    ["empty role", (d) => d.herdr_sessions.push({ name: "n", status: "running", role: "" }), "herdr_sessions[2] 'n' role must be a non-empty string"],
    ["pane not a mapping", (d) => (d.herdr_sessions[0]!.pane = "w1:p2" as never), "herdr_sessions[0] 'a' pane is not a mapping"],
    ["a role change", (d) => (d.herdr_sessions[0]!.role = "reviewer"), "role of session 'a' cannot be modified from 'worker' to 'reviewer'"],
    ["two running rows of one name on one server", (d) => d.herdr_sessions.push({ name: "a", status: "running", role: "worker" }), "herdr_sessions[2] 'a' is running twice on herdr server 'default' (also herdr_sessions[0])"],
    ["a section that is not a list", (d) => (d.tmux_sessions = {} as never), "tmux_sessions is not a list"],
  ];
  for (const [what, fn, message] of cases) {
    test(what, async () => {
      before();
      const e = await refused(fn);
      expect(e.exitCode).toBe(1);
      expect(e.render()).toBe(`ERROR: ${message}`);
      expect(file()).toBe(COMMENTED);
      expect(existsSync(`${yaml}.bak`)).toBe(false);
    });
  }

  test("the same name on two different servers is fine", async () => {
    before();
    await mutateRegistry(yaml, (d) => {
      d.herdr_sessions.push({ name: "a", status: "running", role: "worker", herdr_server: "other" });
    });
    expect(readRegistry(yaml).herdr_sessions.length).toBe(3);
  });

  test("tx.allowRoleChange lets a create replace a row with another role", async () => {
    before();
    await mutateRegistry(yaml, (d, tx) => {
      tx.allowRoleChange("b");
      d.herdr_sessions[1] = { name: "b", status: "running", role: "reviewer" };
    });
    expect(readRegistry(yaml).herdr_sessions[1]!.role).toBe("reviewer");
  });

  test("when fn throws, nothing is written and its error comes through", async () => {
    before();
    const boom = new Error("boom");
    let caught: unknown;
    try {
      await mutateRegistry(yaml, (d) => {
        d.herdr_sessions.length = 0;
        throw boom;
      });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBe(boom);
    expect(file()).toBe(COMMENTED);
  });

  test("a broken file is never overwritten: the parse error, fn not called", async () => {
    put("herdr_sessions:\n- {name: a\n");
    let called = false;
    const e = await refused(() => {
      called = true;
    });
    expect(called).toBe(false);
    expect(e.render()).toBe(`ERROR: ${yaml} is not valid YAML (line 3: flow map in block collection must be sufficiently indented and end with a }); fix it, or rebuild it from the panes the agents run in: mam registry rebuild`);
    expect(file()).toBe("herdr_sessions:\n- {name: a\n");
  });

  test("a file that already fails validation is not written", async () => {
    put("herdr_sessions:\n- name: a\n  status: runing\n");
    const e = await refused((d) => d.tmux_sessions.push({ name: "t", status: "running" }));
    expect(e.message).toBe(`${yaml}: herdr_sessions[0] 'a' bad status 'runing'`);
    expect(file()).toBe("herdr_sessions:\n- name: a\n  status: runing\n");
  });
});

describe("durability details", () => {
  test(".bak holds the previous version after each write; an existing file keeps its mode", async () => {
    put("herdr_sessions: []\n");
    const { chmodSync } = await import("node:fs");
    chmodSync(yaml, 0o640);
    await mutateRegistry(yaml, (d) => d.herdr_sessions.push({ name: "a", status: "running" }));
    const v1 = file();
    expect(bak()).toBe("herdr_sessions: []\n");
    await mutateRegistry(yaml, (d) => (d.herdr_sessions[0]!.status = "stopped"));
    expect(bak()).toBe(v1);
    expect(statSync(yaml).mode & 0o777).toBe(0o640);
  });

  test("temp files of a dead writer are removed by the next write; others are left", async () => {
    put("herdr_sessions: []\n");
    const dead = join(sb.ws, ".mam", ".agent-sessions.yaml.999999999.abc1234.tmp");
    const deadBak = join(sb.ws, ".mam", ".agent-sessions.yaml.bak.999999999.abc1234.tmp");
    const other = join(sb.ws, ".mam", ".other.yaml.999999999.abc1234.tmp");
    for (const p of [dead, deadBak, other]) writeFileSync(p, "half");
    await mutateRegistry(yaml, (d) => d.herdr_sessions.push({ name: "a", status: "running" }));
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(deadBak)).toBe(false);
    expect(existsSync(other)).toBe(true);
  });

  test("a held lock makes a writer give up with exit 5 after its budget, file untouched", async () => {
    put("herdr_sessions: []\n");
    const held = await lockFile(join(sb.ws, ".mam", "agent-sessions.lock"), { budgetMs: 1000 });
    if (held === "timeout") throw new Error("could not take the lock");
    try {
      let e: unknown;
      try {
        await mutateRegistry(yaml, (d) => d.herdr_sessions.push({ name: "a", status: "running" }), { lockBudgetMs: 200 });
      } catch (x) {
        e = x;
      }
      expect(e).toBeInstanceOf(MamError);
      expect((e as MamError).exitCode).toBe(5);
      expect((e as MamError).message).toContain("waiting for the registry lock");
    } finally {
      held.close();
    }
    expect(file()).toBe("herdr_sessions: []\n");
  });

  test("AGENT_SESSIONS_YAML elsewhere: lock and backup sit next to it", async () => {
    const { registryPath } = await import("../../lib/registry/paths.ts");
    const p = registryPath(sb.ws, { AGENT_SESSIONS_YAML: join(sb.root, "elsewhere", "reg.yaml") });
    await mutateRegistry(p, (d) => d.herdr_sessions.push({ name: "a", status: "running" }));
    await mutateRegistry(p, (d) => (d.herdr_sessions[0]!.status = "stopped"));
    expect(readdirSync(join(sb.root, "elsewhere")).sort()).toEqual(["agent-sessions.lock", "reg.yaml", "reg.yaml.bak"]);
    expect(existsSync(join(sb.ws, ".mam"))).toBe(false);
  });
});

describe("random edits always land exactly (splice checked against the parser)", () => {
  test("200 random mutations of a commented registry", async () => {
    put(COMMENTED);
    let seed = 12345;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const strategies = new Set<string>();
    let expected = readRegistry(yaml);
    for (let i = 0; i < 200; i++) {
      const op = rnd(7);
      const r = await mutateRegistry(yaml, (d) => {
        const rows = d.herdr_sessions;
        if (op === 0 || rows.length < 2) rows.push({ name: `r${i}`, status: "stopped", role: "w", n: i, pane: { id: `w1:p${i}` } });
        else if (op === 1) rows.splice(rnd(rows.length), 1);
        else if (op === 2) rows[rnd(rows.length)]!.n = rnd(3) === 0 ? `s ${i}: x` : i;
        else if (op === 3) delete rows[rnd(rows.length)]!.pane;
        else if (op === 4) rows.sort((a, b) => (String(a.name) < String(b.name) ? 1 : -1));
        else if (op === 5) rows[rnd(rows.length)]!.pane = { id: `w2:p${i}`, pid: i };
        else d.tmux_sessions.push({ name: `t${i}`, status: "archived" });
        expected = structuredClone(d);
      });
      if (r.changed) strategies.add(strategy()!);
      expect(readRegistry(yaml)).toEqual(expected);
    }
    expect([...strategies]).toEqual(["splice"]);
    expect(file()).toContain("# my team\n");
    expect(file()).toContain("# end comment\n");
  });
});

describe("the yaml Document path on its own (what files with anchors or tags get)", () => {
  test("60 random edits land exactly and keep the comments of untouched rows", async () => {
    const { loadRegistryFile, normalize } = await import("../../lib/registry/load.ts");
    const { matchRows, renderRegistry } = mutate;
    put(COMMENTED);
    let seed = 777;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let i = 0; i < 60; i++) {
      const f = { ...loadRegistryFile(yaml), outline: null };
      const before = normalize(f.raw);
      const d = structuredClone(before);
      const given = { herdr_sessions: [...d.herdr_sessions], tmux_sessions: [...d.tmux_sessions] };
      const rows = d.herdr_sessions;
      const op = rnd(6);
      if (op === 0 || rows.length < 2) rows.push({ name: `r${i}`, status: "stopped", n: i, pane: { id: `w1:p${i}` } });
      else if (op === 1) rows.splice(rnd(rows.length), 1);
      else if (op === 2) rows[rnd(rows.length)]!.n = `v${i}`;
      else if (op === 3) delete rows[rnd(rows.length)]!.pane;
      else if (op === 4) rows.reverse();
      else d.tmux_sessions.push({ name: `t${i}`, status: "archived" });
      const text = renderRegistry(f, d, { herdr_sessions: matchRows("herdr_sessions", before.herdr_sessions, given.herdr_sessions, d.herdr_sessions), tmux_sessions: matchRows("tmux_sessions", before.tmux_sessions, given.tmux_sessions, d.tmux_sessions) });
      expect(strategy()).toBe("document");
      writeFileSync(yaml, text);
      expect(readRegistry(yaml)).toEqual(d);
    }
    expect(file()).toContain("# my team\n");
    expect(file()).toContain("# end comment\n");
  });
});
