// Reading the registry: formats the original wrote, bad files and their exact errors, the
// outline scan, and how new values are written (quoting that every YAML reader agrees on).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { dq, plainSafe, renderInline, renderScalar } from "../../lib/registry/emit.ts";
import { inspectRegistry, MAX_REGISTRY_BYTES, readRegistry, registryReader } from "../../lib/registry/load.ts";
import { mutateRegistry } from "../../lib/registry/mutate.ts";
import { scanOutline } from "../../lib/registry/outline.ts";
import { MamError } from "../../lib/sys/errors.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

let sb: Sandbox;
let yaml: string;
beforeEach(() => {
  sb = makeSandbox("mam-rr-");
  yaml = join(sb.ws, ".mam", "agent-sessions.yaml");
});
afterEach(() => sb.cleanup());

function put(text: string): void {
  mkdirSync(join(sb.ws, ".mam"), { recursive: true });
  writeFileSync(yaml, text);
}

function errorOf(fn: () => unknown): MamError {
  try {
    fn();
  } catch (e) {
    if (e instanceof MamError) return e;
    throw e;
  }
  throw new Error("no error");
}

/** the seed's _seed_row: "herdr_sessions:\n- " + json.dumps(row) */
const seedRow = {
  name: "t50-adopted-creator-claude",
  status: "running",
  role: "creator",
  herdr_session_created_at: "2026-10-11T00:00:00Z",
  herdr_session_epoch: 1791590460,
  herdr_session: "t50-srv",
  herdr_server: "t50-srv",
  pane: { index: 0, pid: 9999, cmd: "claude", cmd_full: "claude", cwd: "/tmp/x" },
  last_visible_status: "running",
  last_visible_note: "auto-registered by monitor",
};
const jsonDumps = (o: unknown) => JSON.stringify(o).replace(/","/g, '", "').replace(/":/g, '": ').replace(/,"/g, ', "');

describe("readRegistry", () => {
  test("a missing file is an empty registry, and reading creates no file and no folder", () => {
    expect(readRegistry(yaml)).toEqual({ herdr_sessions: [], tmux_sessions: [] });
    expect(existsSync(join(sb.ws, ".mam"))).toBe(false);
    expect(readdirSync(sb.ws)).toEqual([]);
  });

  test("empty file, comments only, and null sections are empty", () => {
    for (const t of ["", "# nothing yet\n", "herdr_sessions:\ntmux_sessions: ~\n"]) {
      put(t);
      expect(readRegistry(yaml)).toEqual({ herdr_sessions: [], tmux_sessions: [] });
    }
  });

  test("the original's flow-style JSON rows load (the seed writes them this way)", () => {
    put(`herdr_sessions:\n- ${jsonDumps(seedRow)}\n`);
    const d = readRegistry(yaml);
    expect(d.herdr_sessions).toEqual([seedRow as never]);
    expect(d.tmux_sessions).toEqual([]);
  });

  test("the tmux era: tmux_sessions with tmux_server, globals and unknown fields are kept", () => {
    put(
      [
        "tmux_sessions:",
        "- name: api-creator-claude",
        "  status: stopped",
        "  role: creator",
        "  tmux_server: multi-agent-api",
        "  agent-session: tmux:api-creator-claude",
        "  mcp_attachments: [fs, git]",
        "  resumable: true",
        "agent_identities:",
        "  claude:",
        "    project_cwd: /w",
        "    session_id: abc",
        "",
      ].join("\n"),
    );
    const d = readRegistry(yaml);
    expect(d.herdr_sessions).toEqual([]);
    expect(d.tmux_sessions[0]).toEqual({
      name: "api-creator-claude",
      status: "stopped",
      role: "creator",
      tmux_server: "multi-agent-api",
      "agent-session": "tmux:api-creator-claude",
      mcp_attachments: ["fs", "git"],
      resumable: true,
    } as never);
    expect(d.agent_identities).toEqual({ claude: { project_cwd: "/w", session_id: "abc" } });
  });

  test("YAML 1.2 core: yes/on stay strings, timestamps stay strings", () => {
    put('herdr_sessions:\n- {name: a, status: running, x: yes, y: on, t: 2026-10-11T00:00:00Z, q: "5"}\n');
    expect(readRegistry(yaml).herdr_sessions[0]).toEqual({ name: "a", status: "running", x: "yes", y: "on", t: "2026-10-11T00:00:00Z", q: "5" } as never);
  });

  test("anchors and aliases load (the outline hands such files to the yaml library)", () => {
    put("base: &p {cmd: claude}\nherdr_sessions:\n- name: a\n  status: running\n  pane: *p\n");
    expect(readRegistry(yaml).herdr_sessions[0]!.pane).toEqual({ cmd: "claude" });
  });

  const malformed: [string, string, number, string][] = [
    ["tab indentation", "herdr_sessions:\n\t- name: a\n", 2, "tabs are not allowed as indentation"],
    ["tab indentation inside a row", "herdr_sessions:\n  - name: a\n\tstatus: running\n", 3, "tabs are not allowed as indentation"],
    ["unclosed flow map", 'herdr_sessions:\n- {"name": "a", "status": "running"\n', 3, "flow map in block collection must be sufficiently indented and end with a }"],
    ["duplicate key in a block row", "herdr_sessions:\n- name: a\n  status: running\n  name: b\n", 4, "map keys must be unique"],
    ["duplicate key in a JSON row", 'herdr_sessions:\n- {"name": "a", "status": "running", "name": "b"}\n', 2, "map keys must be unique"],
    ["duplicate top-level key", "herdr_sessions: []\ntmux_sessions: []\nherdr_sessions: []\n", 3, "map keys must be unique"],
    ["two documents", "herdr_sessions: []\n---\ntmux_sessions: []\n", 2, "source contains multiple documents"],
    ["unclosed quote", 'herdr_sessions:\n- name: "a\n', 3, 'missing closing "quote'],
    ["bad indentation", "herdr_sessions:\n  - name: a\n   status: x\n", 3, "sequence item without - indicator"],
  ];
  for (const [what, text, line, reason] of malformed) {
    test(`malformed: ${what} → exit 1, the exact ERROR line`, () => {
      put(text);
      const e = errorOf(() => readRegistry(yaml));
      expect(e.exitCode).toBe(1);
      expect(e.render()).toBe(`ERROR: ${yaml} is not valid YAML (line ${line}: ${reason}); fix it, or rebuild it from the panes the agents run in: mam registry rebuild`);
    });
  }

  test("invalid UTF-8 is not valid YAML, with its line", () => {
    mkdirSync(join(sb.ws, ".mam"), { recursive: true });
    writeFileSync(yaml, Buffer.concat([Buffer.from("herdr_sessions:\n- name: "), Buffer.from([0xff, 0xfe]), Buffer.from("\n")]));
    expect(errorOf(() => readRegistry(yaml)).render()).toBe(`ERROR: ${yaml} is not valid YAML (line 2: invalid UTF-8); fix it, or rebuild it from the panes the agents run in: mam registry rebuild`);
  });

  test("a file over 16 MiB is refused before parsing", () => {
    put("");
    truncateSync(yaml, MAX_REGISTRY_BYTES + 1);
    const e = errorOf(() => readRegistry(yaml));
    expect(e.exitCode).toBe(1);
    expect(e.message).toBe(`${yaml} is too large (${MAX_REGISTRY_BYTES + 1} bytes, the limit is 16 MiB)`);
  });

  test("content that fails validation → exit 1 naming the first problem; inspect lists them all", () => {
    put("herdr_sessions:\n- name: a\n  status: runing\n- [x]\ntmux_sessions: {a: 1}\n");
    const e = errorOf(() => readRegistry(yaml));
    expect(e.exitCode).toBe(1);
    expect(e.message).toBe(`${yaml}: herdr_sessions[0] 'a' bad status 'runing' (and 2 more problems)`);
    const ins = inspectRegistry(yaml);
    expect(ins.problems).toEqual(["herdr_sessions[0] 'a' bad status 'runing'", "herdr_sessions[1] is not a mapping", "tmux_sessions is not a list"]);
    expect(ins.rows).toEqual({ herdr_sessions: 2, tmux_sessions: 0 });
    expect(ins.data).toBeNull();
  });

  test("a top level that is a list is a problem, not a parse error", () => {
    put("- name: a\n");
    expect(errorOf(() => readRegistry(yaml)).message).toBe(`${yaml}: the top level is not a mapping`);
  });
});

describe("registryReader: the parse kept while the file is unchanged", () => {
  const row = (name: string, role = "worker") => `  - {name: ${name}, status: running, role: ${role}, herdr_session: mam, herdr_session_created_at: "2026-10-11T00:00:00Z"}\n`;
  test("the same data as readRegistry, a copy each time; a change of the file is read again", async () => {
    const read = registryReader(yaml);
    expect(read()).toEqual(readRegistry(yaml)); // missing: empty
    put(`herdr_sessions:\n${row("a")}`);
    const first = read();
    expect(first.herdr_sessions.map((r) => r.name)).toEqual(["a"]);
    first.herdr_sessions[0]!.name = "changed by the caller";
    first.herdr_sessions.push({ name: "pushed", status: "running", role: "x" } as never);
    expect(read().herdr_sessions.map((r) => r.name)).toEqual(["a"]);
    // written by a mam writer (a rename: another inode)
    await mutateRegistry(yaml, (d) => void d.herdr_sessions.push({ ...d.herdr_sessions[0]!, name: "b" }));
    expect(read().herdr_sessions.map((r) => r.name)).toEqual(["a", "b"]);
    // edited in place, the same size (another role of the same length): its ctime changes
    const before = readFileSync(yaml, "utf8");
    await Bun.sleep(20);
    writeFileSync(yaml, before.replace("role: worker", "role: tester"));
    expect(read().herdr_sessions.map((r) => r.role)).toEqual(["tester", "worker"]);
    // broken now: the error, not the data kept from before
    writeFileSync(yaml, "herdr_sessions: [\n");
    expect(() => read()).toThrow(/not valid YAML/);
    // gone: empty
    rmSync(yaml);
    expect(read()).toEqual(readRegistry(yaml));
  });
});

describe("the outline agrees with the parser", () => {
  const samples = [
    `herdr_sessions:\n- ${jsonDumps(seedRow)}\n- ${jsonDumps({ ...seedRow, name: "b" })}\n`,
    "# c\nherdr_sessions:   # rows\n  # first\n  - name: a   # n\n    status: running\n    note: |\n      # not a comment\n      - not an item\n    pane:\n      pid: 3\n      # deep\n    long: folded\n      plain text\n  - {name: b, status: stopped}\ntmux_sessions:\n- name: t\n  status: running\n  list:\n  - 1\n  - 2\nother: {a: [1, {b: c}]}\n",
    'herdr_sessions:\n  -\n    name: a\n    status: "run\n      ning"\n  - name: b\n    status: stopped\n',
  ];
  for (const [i, text] of samples.entries()) {
    test(`sample ${i}: rows and keys where the data has them`, () => {
      const o = scanOutline(text);
      expect(o.kind).toBe("ok");
      if (o.kind !== "ok") return;
      const data = Bun.YAML.parse(text) as Record<string, unknown[]>;
      const root = o.root!;
      expect(root.entries.map((e) => e.key)).toEqual(Object.keys(data));
      for (const e of root.entries) {
        if (e.key.endsWith("_sessions")) {
          expect(e.value.t).toBe("seq");
          if (e.value.t !== "seq") continue;
          expect(e.value.items.length).toBe(data[e.key]!.length);
          for (const [k, item] of e.value.items.entries()) {
            const row = data[e.key]![k] as Record<string, unknown>;
            if (item.value.t === "map") expect(item.value.entries.map((x) => x.key)).toEqual(Object.keys(row));
            else expect(item.value.t).toBe("flow");
          }
        }
      }
    });
  }

  test("duplicate keys and unsupported constructs are flagged", () => {
    expect(scanOutline("a: 1\nb:\n  c: 1\n  c: 2\n")).toEqual({ kind: "error", line: 4, reason: "map keys must be unique" });
    expect(scanOutline('a: {"x": 1, "x": 2}\n')).toEqual({ kind: "error", line: 1, reason: "map keys must be unique" });
    expect(scanOutline("a: &x 1\nb: *x\n").kind).toBe("unsupported");
    expect(scanOutline("a: !!str 1\n").kind).toBe("unsupported");
    expect(scanOutline("a: 1\r\n").kind).toBe("unsupported");
    expect(scanOutline("---\na: 1\n").kind).toBe("unsupported");
  });
});

describe("writing values: plain only when every reader agrees", () => {
  const tricky = [
    "yes", "No", "on", "OFF", "y", "n", "null", "Null", "~", "true", "False", "", " lead", "trail ", "123", "0x1F", "0o17", "1e3",
    "1_000", ".inf", "-.inf", ".nan", "-", "- a", "-a", "a: b", "a:b", "w1:p2", "a #b", "a#b", "#x", "@x", "`x", "%x", "!x", "&x",
    "*x", "|x", ">x", "[x", "{x", "x]", "x,y", "?x", "? x", "=", "<<", "multi\nline", "tab\there", 'quo"te', "it's", "back\\slash",
    "2026-10-11T00:00:00Z", "2026-10-11", "12:30:45", "é", "日本語", "emoji 😀", "\u2028", "\u0085", "\u0007bell", "\u007f", "claude --session-id 3f0c",
    "/abs/workspace", "auto-registered by monitor", "terminated (auto-detected)",
  ];
  const Y = require("yaml") as typeof import("yaml");
  for (const s of tricky) {
    test(`round trip ${JSON.stringify(s)}`, () => {
      for (const style of [undefined, "plain", "dq", "sq"] as const) {
        const r = renderScalar(s, "yaml", style);
        expect(Bun.YAML.parse(`k: ${r}\n`)).toEqual({ k: s });
        expect(Bun.YAML.parse(`{k: ${r}}`)).toEqual({ k: s });
        expect(Y.parse(`k: ${r}\n`)).toEqual({ k: s });
      }
    });
  }

  test("plain only for the safe ones", () => {
    for (const s of ["claude", "api-worker-claude", "/abs/workspace", "auto-registered by monitor", "claude --session-id 3f0c", "é"]) expect(plainSafe(s)).toBe(true);
    for (const s of ["yes", "on", "null", "~", "123", "2026-10-11T00:00:00Z", "w1:p2", "a #b", "-a", ".inf", " x", "x "]) expect(plainSafe(s)).toBe(false);
    expect(renderScalar("2026-10-11T00:00:00Z")).toBe('"2026-10-11T00:00:00Z"');
    expect(renderScalar(4242)).toBe("4242");
    expect(renderScalar(null)).toBe("null");
    expect(renderScalar(Infinity)).toBe(".inf");
    expect(dq("a\u0085b")).toBe('"a\\u0085b"');
  });

  test("flow values: JSON flavour writes every key and string double-quoted", () => {
    expect(renderInline({ id: "w1:p2", index: 1, cmd: "claude" })).toBe('{id: "w1:p2", index: 1, cmd: claude}');
    expect(renderInline({ name: "a", n: [1, "x"] }, "json")).toBe('{"name": "a", "n": [1, "x"]}');
  });
});
