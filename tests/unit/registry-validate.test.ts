// Pure registry logic: validation (SPEC §2.1 messages), servers, lookups, diffs, values.
import { describe, expect, test } from "bun:test";
import { diffRegistries } from "../../lib/registry/diff.ts";
import { registryBackupPath, registryLockPath, registryPath } from "../../lib/registry/paths.ts";
import { backendOf, DEFAULT_SERVER, emptyRegistry, findRows, sectionOf, serverOf } from "../../lib/registry/rows.ts";
import type { RegistryData, Row } from "../../lib/registry/types.ts";
import { roleChanges, validateRegistry } from "../../lib/registry/validate.ts";
import { deepEqual, repr, unstorable } from "../../lib/registry/values.ts";

const row = (name: string, extra: Partial<Row> = {}): Row => ({ name, status: "running", role: "worker", ...extra }) as Row;
const reg = (herdr: unknown[], tmux: unknown[] = []): RegistryData => ({ herdr_sessions: herdr as Row[], tmux_sessions: tmux as Row[] });

describe("validateRegistry: each SPEC §2.1 problem, with section, index and name", () => {
  const cases: [string, unknown, string[]][] = [
    ["a valid registry", reg([row("a"), row("b", { status: "stopped" })], [row("t", { tmux_server: "x" })]), []],
    ["null / missing file content", null, []],
    ["row not a mapping (a list)", reg([row("a"), ["name", "b"]]), ["herdr_sessions[1] is not a mapping"]],
    ["row not a mapping (a scalar)", reg([], ["oops"]), ["tmux_sessions[0] is not a mapping"]],
    ["missing name", reg([{ status: "running" }]), ["herdr_sessions[0] missing name"]],
    ["empty name", reg([{ name: "", status: "running" }]), ["herdr_sessions[0] missing name"]],
    ["missing status", reg([{ name: "a" }]), ["herdr_sessions[0] 'a' missing status"]],
    ["bad status", reg([row("x"), row("y"), row("api-worker", { status: "runing" as never })]), ["herdr_sessions[2] 'api-worker' bad status 'runing'"]],
    ["non-string status", reg([row("a", { status: 3 as never })]), ["herdr_sessions[0] 'a' bad status 3"]],
    ["empty role", reg([row("a", { role: "" })]), ["herdr_sessions[0] 'a' role must be a non-empty string"]],
    ["blank role", reg([row("a", { role: "  " })]), ["herdr_sessions[0] 'a' role must be a non-empty string"]],
    ["null role", reg([row("a", { role: null as never })]), ["herdr_sessions[0] 'a' role must be a non-empty string"]],
    ["no role is fine", reg([{ name: "a", status: "running" }]), []],
    ["pane not a mapping", reg([row("a", { pane: "w1:p2" as never })]), ["herdr_sessions[0] 'a' pane is not a mapping"]],
    ["pane a list", reg([row("a", { pane: [1] as never })]), ["herdr_sessions[0] 'a' pane is not a mapping"]],
    [
      "two running rows of one name on one server",
      reg([row("a", { herdr_server: "mam" }), row("b"), row("a", { herdr_session: "mam" })]),
      ["herdr_sessions[2] 'a' is running twice on herdr server 'mam' (also herdr_sessions[0])"],
    ],
    ["two running rows without server fields (both on default)", reg([row("a"), row("a")]), ["herdr_sessions[1] 'a' is running twice on herdr server 'default' (also herdr_sessions[0])"]],
    ["same name on two servers is fine", reg([row("a", { herdr_server: "one" }), row("a", { herdr_server: "two" })]), []],
    ["same name running once and stopped once is fine", reg([row("a"), row("a", { status: "stopped" })]), []],
    ["same name in herdr and tmux is fine", reg([row("a")], [row("a")]), []],
    ["tmux default server is mam", reg([], [row("a"), row("a", { tmux_server: "mam" })]), ["tmux_sessions[1] 'a' is running twice on tmux server 'mam' (also tmux_sessions[0])"]],
    ["section not a list", { herdr_sessions: { name: "a" } }, ["herdr_sessions is not a list"]],
    ["top level not a mapping", ["a"], ["the top level is not a mapping"]],
    ["null sections are empty", { herdr_sessions: null, tmux_sessions: null }, []],
    ["a value YAML cannot store", reg([row("a", { when: new Date(0) as never })]), ["herdr_sessions[0] 'a' cannot be stored: when is a Date"]],
  ];
  for (const [what, data, want] of cases) test(what, () => expect(validateRegistry(data)).toEqual(want));

  test("several problems are all listed", () => {
    expect(validateRegistry(reg([{ name: "a", status: "x", role: "" }, 5]))).toEqual([
      "herdr_sessions[0] 'a' bad status 'x'",
      "herdr_sessions[0] 'a' role must be a non-empty string",
      "herdr_sessions[1] is not a mapping",
    ]);
  });
});

describe("the role rule compares with the row of the same name and server in the file as read", () => {
  const before = reg([row("x", { role: "a", herdr_server: "s1" }), row("y", { role: "b", status: "stopped" })]);
  test("a role change is refused with the SPEC message", () => {
    const after = reg([row("x", { role: "b", herdr_server: "s1" }), row("y", { role: "b", status: "stopped" })]);
    expect(validateRegistry(after, before)).toEqual(["role of session 'x' cannot be modified from 'a' to 'b'"]);
  });
  test("removing a role is a change too", () => {
    expect(roleChanges(reg([{ name: "x", status: "running", herdr_server: "s1" }]), before)).toEqual(["role of session 'x' cannot be modified from 'a' to nothing"]);
  });
  test("a new row, a row on another server, and setting a role where none was are fine", () => {
    const b2 = reg([{ name: "z", status: "stopped" }, row("x", { role: "a", herdr_server: "s1" })]);
    const after = reg([row("z", { role: "new" }), row("x", { role: "a", herdr_server: "s1" }), row("x", { role: "other", herdr_server: "s2" }), row("n", { role: "q" })]);
    expect(validateRegistry(after, b2)).toEqual([]);
  });
  test("allowRoleChange lets a named session change its role (create replacing a stopped row / adopting)", () => {
    const after = reg([row("x", { role: "b", herdr_server: "s1" }), row("y", { role: "c", status: "running" })]);
    expect(validateRegistry(after, before, { allowRoleChange: ["x"] })).toEqual(["role of session 'y' cannot be modified from 'b' to 'c'"]);
    expect(validateRegistry(after, before, { allowRoleChange: new Set(["x", "y"]) })).toEqual([]);
  });
  test("unchanged data never trips the rule, even with rows that already differ", () => {
    const b = reg([row("x", { role: "a", status: "terminated" }), row("x", { role: "b", status: "stopped" })]);
    expect(validateRegistry(structuredClone(b), b)).toEqual([]);
  });
});

describe("rows helpers", () => {
  test("serverOf: herdr_server, else herdr_session, else tmux_server, else the section default", () => {
    expect(serverOf(row("a", { herdr_server: "s", herdr_session: "t" }), "herdr_sessions")).toBe("s");
    expect(serverOf(row("a", { herdr_session: "t" }), "herdr_sessions")).toBe("t");
    expect(serverOf(row("a", { herdr_server: "", herdr_session: "t" }), "herdr_sessions")).toBe("t");
    expect(serverOf(row("a", { tmux_server: "u" }), "herdr_sessions")).toBe("u");
    expect(serverOf(row("a"), "herdr_sessions")).toBe("default");
    expect(serverOf(row("a", { tmux_server: "iso" }), "tmux_sessions")).toBe("iso");
    expect(serverOf(row("a"), "tmux_sessions")).toBe("mam");
    expect(DEFAULT_SERVER).toEqual({ herdr_sessions: "default", tmux_sessions: "mam" });
  });
  test("sectionOf / backendOf", () => {
    expect(sectionOf("herdr")).toBe("herdr_sessions");
    expect(sectionOf("tmux")).toBe("tmux_sessions");
    expect(backendOf("tmux_sessions")).toBe("tmux");
  });
  test("findRows: both sections in file order, filters by section, server, status", () => {
    const d = reg([row("a", { herdr_server: "s1" }), row("b"), row("a", { status: "stopped", herdr_server: "s2" })], [row("a")]);
    expect(findRows(d, "a").map((r) => `${r.section}:${r.index}`)).toEqual(["herdr_sessions:0", "herdr_sessions:2", "tmux_sessions:0"]);
    expect(findRows(d, "a", { section: "herdr_sessions", status: "running" }).map((r) => r.index)).toEqual([0]);
    expect(findRows(d, "a", { server: "s2" })[0]!.row).toBe(d.herdr_sessions[2]!);
    expect(findRows(d, "a", { status: ["stopped", "archived"] }).length).toBe(1);
    expect(findRows(d, "zz")).toEqual([]);
    expect(emptyRegistry()).toEqual({ herdr_sessions: [], tmux_sessions: [] });
  });
  test("paths: AGENT_SESSIONS_YAML overrides; lock and backup sit next to the yaml", () => {
    expect(registryPath("/ws", {})).toBe("/ws/.mam/agent-sessions.yaml");
    expect(registryPath("/ws", { AGENT_SESSIONS_YAML: "/else/reg.yaml" })).toBe("/else/reg.yaml");
    expect(registryPath("/ws", { AGENT_SESSIONS_YAML: "" })).toBe("/ws/.mam/agent-sessions.yaml");
    expect(registryLockPath("/else/reg.yaml")).toBe("/else/agent-sessions.lock");
    expect(registryBackupPath("/ws/.mam/agent-sessions.yaml")).toBe("/ws/.mam/agent-sessions.yaml.bak");
  });
});

describe("values", () => {
  test("deepEqual treats undefined properties as absent and NaN as NaN", () => {
    expect(deepEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(deepEqual({ a: [1, { b: NaN }] }, { a: [1, { b: NaN }] })).toBe(true);
    expect(deepEqual({ a: 1 }, { a: "1" })).toBe(false);
    expect(deepEqual([1, 2], [2, 1])).toBe(false);
    expect(deepEqual({ a: null }, {})).toBe(false);
  });
  test("repr quotes like the original's messages", () => {
    expect(repr("runing")).toBe("'runing'");
    expect(repr("it's")).toBe("'it\\'s'");
    expect(repr(3)).toBe("3");
  });
  test("unstorable names what YAML cannot hold", () => {
    expect(unstorable({ a: [1, { b: () => 1 }] })).toBe("a[1].b is a function");
    expect(unstorable({ a: [1, undefined] })).toBe("a[1] is undefined");
    expect(unstorable({ a: { b: undefined } })).toBeUndefined();
  });
});

describe("diffRegistries", () => {
  test("rows only in one version, changed fields, unchanged count", () => {
    const a = reg([row("a"), row("b", { status: "stopped" }), row("c")]);
    const b = reg([row("a"), row("b", { status: "running", pane: { id: "x" } }), row("d")]);
    const d = diffRegistries(a, b);
    expect(d.onlyInA.map((r) => r.name)).toEqual(["c"]);
    expect(d.onlyInB.map((r) => r.name)).toEqual(["d"]);
    expect(d.changed).toEqual([{ section: "herdr_sessions", name: "b", server: "default", status: "running", fields: ["status", "pane"] }]);
    expect(d.unchanged).toBe(1);
  });
});
