// Each kind's `mcp` (lib/agents/kinds/claude.ts, codex.ts): the agent arguments of `mam create
// --mcp` and the pure edits of the agents' MCP config files (merge, idempotent, never clobber,
// refuse what cannot be edited safely); serverEntry (lib/sys/self.ts).
import { describe, expect, test } from "bun:test";
import { agentKind, agentMcpArgs } from "../../lib/agents/kinds/index.ts";
import { MCP_PREAPPROVED } from "../../lib/agents/kinds/kind.ts";
import { serverEntry } from "../../lib/sys/self.ts";

const { install: claudeInstall, uninstall: claudeUninstall } = agentKind("claude").mcp!;
const { install: codexInstall, uninstall: codexUninstall } = agentKind("codex").mcp!;
const e = serverEntry("/w s", ["/opt/mam"]);

describe("serverEntry and agentMcpArgs", () => {
  test("the entry runs this mam with mcp --workspace", () => {
    expect(e).toEqual({ command: "/opt/mam", args: ["mcp", "--workspace", "/w s"] });
    expect(serverEntry("/w", ["/bun", "/src/mam.ts"])).toEqual({ command: "/bun", args: ["/src/mam.ts", "mcp", "--workspace", "/w"] });
  });
  test("claude: --mcp-config= with the server, the tools that cannot run a command or answer a dialog allowed; all with --mcp-all-tools; codex: -c TOML values; others refused", () => {
    const [cfg, ...allow] = agentMcpArgs("claude", e);
    expect(JSON.parse(cfg!.slice("--mcp-config=".length))).toEqual({ mcpServers: { mam: { type: "stdio", command: "/opt/mam", args: ["mcp", "--workspace", "/w s"] } } });
    // review A7: not --allowedTools=mcp__mam (every tool: session_create a shell, job_submit to one, session_approve)
    expect(allow).toEqual([
      "--allowedTools=mcp__mam__session_status",
      "--allowedTools=mcp__mam__job_status",
      "--allowedTools=mcp__mam__job_list",
      "--allowedTools=mcp__mam__job_logs",
      "--allowedTools=mcp__mam__job_wait",
      "--allowedTools=mcp__mam__plan_status",
      "--allowedTools=mcp__mam__team_show",
      "--allowedTools=mcp__mam__job_cancel",
    ]);
    expect(agentMcpArgs("claude", e, true).slice(1)).toEqual(["--allowedTools=mcp__mam"]);
    const cx = agentMcpArgs("codex", e);
    expect(cx).toEqual(["-c", 'mcp_servers.mam.command="/opt/mam"', "-c", 'mcp_servers.mam.args=["mcp", "--workspace", "/w s"]', "-c", "mcp_servers.mam.tool_timeout_sec=3700"]);
    expect(Bun.TOML.parse(cx[3]!.replace("mcp_servers.mam.args=", "a = "))).toEqual({ a: ["mcp", "--workspace", "/w s"] });
    expect(() => agentMcpArgs("gemini", e)).toThrow("--mcp works with claude and codex (not gemini)");
  });
});

describe("what an --mcp agent may call without asking (review A7)", () => {
  test("every read-only tool of the ops table, and job_cancel; none that can start an agent, submit a job, approve, stop or resume", async () => {
    const { tools } = await import("../../lib/mcp/tools.ts");
    const all = tools();
    const names = all.map((t) => t.name);
    for (const t of MCP_PREAPPROVED) expect(names, t).toContain(t);
    const readOnly = all.filter((t) => t.readOnly).map((t) => t.name);
    // a new read-only tool is added here on purpose; a new tool that changes things is not, unless it can neither run a command nor answer a dialog
    expect([...MCP_PREAPPROVED].sort() as string[]).toEqual([...readOnly, "job_cancel"].sort());
    for (const t of ["session_create", "job_submit", "session_approve", "session_resume", "session_stop", "registry_reconcile"]) expect(MCP_PREAPPROVED as readonly string[]).not.toContain(t);
  });
  test("an agent's session_create cannot ask for every tool; the CLI's --mcp-all-tools needs --mcp", async () => {
    const { tools } = await import("../../lib/mcp/tools.ts");
    expect(Object.keys(tools().find((t) => t.name === "session_create")!.input)).not.toContain("mcp_all_tools");
    const { checkCreate } = await import("../../lib/ops/session/rules.ts");
    expect(() => checkCreate({ role: "r", mcp_all_tools: true })).toThrow("{{mcp_all_tools}} goes with {{mcp}}");
    expect(() => checkCreate({ role: "r", mcp: true, mcp_all_tools: true })).not.toThrow();
  });
});

describe("claude .mcp.json", () => {
  test("install into nothing, into a file with other servers; again is unchanged; uninstall keeps the rest", () => {
    const a = claudeInstall("", e, "p");
    expect(a.changed).toBe(true);
    expect(JSON.parse(a.text)).toEqual({ mcpServers: { mam: { type: "stdio", command: "/opt/mam", args: ["mcp", "--workspace", "/w s"] } } });
    expect(claudeInstall(a.text, e, "p")).toEqual({ text: a.text, changed: false });
    const other = JSON.stringify({ x: 1, mcpServers: { o: { command: "o" } } });
    const b = claudeInstall(other, e, "p");
    expect(JSON.parse(b.text)).toMatchObject({ x: 1, mcpServers: { o: { command: "o" }, mam: { command: "/opt/mam" } } });
    const u = claudeUninstall(b.text, "p");
    expect(JSON.parse(u.text)).toEqual({ x: 1, mcpServers: { o: { command: "o" } } });
    expect(claudeUninstall(u.text, "p").changed).toBe(false);
    // no empty "mcpServers" left behind: the key goes with its last server, the file with its last key
    expect(JSON.parse(claudeUninstall(JSON.stringify({ x: 1, mcpServers: { mam: {} } }), "p").text)).toEqual({ x: 1 });
    expect(claudeUninstall(a.text, "p")).toEqual({ text: "{}\n", changed: true, empty: true });
  });
  test("a stale mam entry is replaced; bad files are refused", () => {
    const stale = JSON.stringify({ mcpServers: { mam: { command: "/old/mam", args: [] } } });
    expect(JSON.parse(claudeInstall(stale, e, "p").text).mcpServers.mam.command).toBe("/opt/mam");
    expect(() => claudeInstall("{", e, "/x/.mcp.json")).toThrow("/x/.mcp.json is not valid JSON");
    expect(() => claudeInstall("[]", e, "p")).toThrow("p is not a JSON object");
    expect(() => claudeInstall('{"mcpServers": 3}', e, "p")).toThrow("p: mcpServers is not an object");
  });
});

describe("codex config.toml", () => {
  const base = 'model = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n\n[profiles.p]\nmodel = "y"\n';
  test("install appends the table, keeps everything else; again unchanged; a stale table is replaced; uninstall removes only it", () => {
    const a = codexInstall(base, e, "p");
    expect(a.changed).toBe(true);
    const doc = Bun.TOML.parse(a.text) as any;
    expect(doc).toMatchObject({ model: "o3", mcp_servers: { other: { command: "x" }, mam: { command: "/opt/mam", args: ["mcp", "--workspace", "/w s"], tool_timeout_sec: 3700 } }, profiles: { p: { model: "y" } } });
    expect(codexInstall(a.text, e, "p")).toEqual({ text: a.text, changed: false });
    const moved = codexInstall(a.text, serverEntry("/w2", ["/new/mam"]), "p");
    const d2 = Bun.TOML.parse(moved.text) as any;
    expect(d2.mcp_servers.mam).toEqual({ command: "/new/mam", args: ["mcp", "--workspace", "/w2"], tool_timeout_sec: 3700 });
    expect(d2.profiles.p.model).toBe("y");
    const u = codexUninstall(moved.text, "p");
    expect(Bun.TOML.parse(u.text)).toEqual(Bun.TOML.parse(base));
    expect(codexUninstall(u.text, "p").changed).toBe(false);
  });
  test("sub-tables of mam go with it; inline definitions and bad TOML are refused", () => {
    const withEnv = `${base}\n[mcp_servers.mam]\ncommand = "old"\n\n[mcp_servers.mam.env]\nA = "1"\n`;
    const d = Bun.TOML.parse(codexInstall(withEnv, e, "p").text) as any;
    expect(d.mcp_servers.mam).toEqual({ command: "/opt/mam", args: ["mcp", "--workspace", "/w s"], tool_timeout_sec: 3700 });
    expect(() => codexInstall('mcp_servers = { mam = { command = "z" } }\n', e, "p")).toThrow("in a form mam does not edit");
    expect(() => codexInstall("[[[", e, "/c.toml")).toThrow("/c.toml is not valid TOML");
  });
});
