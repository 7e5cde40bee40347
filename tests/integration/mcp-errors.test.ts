// `mam mcp` as any client sees it (issue 23 items 13 and 14): every tool's error comes back as a
// protocol-legal tool error that the official SDK client accepts after listing the tools (it then
// checks structured content against each tool's output schema), a line that is no JSON-RPC
// message gets an error answer and the server goes on, a message over the size limit too, the
// server never ends silently.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MAM_CMD, run } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";

let sb: Sandbox;
const procs: ReturnType<typeof Bun.spawn>[] = [];
beforeEach(() => {
  sb = makeSandbox("mam-mcpe-");
});
afterEach(async () => {
  for (const p of procs.splice(0)) if (p.exitCode === null) p.kill("SIGKILL");
  await sb.cleanup();
});

type Res = { isError?: boolean; content: { type: string; text?: string }[]; structuredContent?: unknown; _meta?: Record<string, unknown> };
const text = (r: Res) => r.content.map((c) => c.text ?? "").join("\n");

async function connect(env = sb.env): Promise<{ client: Client; stderr: () => string; close(): Promise<void> }> {
  const transport = new StdioClientTransport({ command: MAM_CMD[0]!, args: [...MAM_CMD.slice(1), "mcp", "--workspace", sb.ws], env, cwd: sb.ws, stderr: "pipe" });
  let err = "";
  transport.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: "mam-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, stderr: () => err, close: () => client.close() };
}

const TOOLS = ["session_status", "session_create", "session_stop", "session_resume", "session_prune", "session_approve", "job_submit", "job_status", "job_list", "job_logs", "job_cancel", "job_wait", "plan_run", "plan_status", "registry_reconcile", "team_show"];

/** one call that fails at run time per tool, its message, and the exit code the command would have */
const FAILING: [string, Record<string, unknown>, RegExp, number][] = [
  ["session_create", { agent: "nosuch" }, /^ERROR: unknown agent kind 'nosuch'; use one of: /, 2],
  ["session_stop", { name: "ghost" }, /^ERROR: no session named 'ghost'/, 3],
  ["session_resume", { name: "ghost" }, /^ERROR: no session named 'ghost'/, 3],
  ["session_prune", { names: ["ghost"] }, /^ERROR: no session named 'ghost' in the registry; see: mam status$/, 3],
  ["session_approve", { target: "ghost" }, /^ERROR: no running session ghost with a live pane; see: mam status$/, 3],
  ["job_submit", { to: "ghost", prompt: "x" }, /^ERROR: no running session named 'ghost'/, 3],
  ["job_status", { job_id: "abcdef12" }, /^ERROR: no job abcdef12 in /, 3],
  ["job_list", { status: "nosuch" }, /^ERROR: job_list: status must be one of /, 2],
  ["job_logs", { job_id: "abcdef12" }, /^ERROR: no job abcdef12 in /, 3],
  ["job_cancel", { job_id: "abcdef12" }, /^ERROR: no job abcdef12 in /, 3],
  ["job_wait", { job_ids: ["abcdef12"], timeout_s: 1 }, /^ERROR: no job abcdef12 in /, 3],
  ["plan_run", { text: "jobs:\n  a:\n    to: ghost\n    prompt: x\n" }, /^ERROR: plan:2: job a: no running session named 'ghost' \(see: mam status\); nothing was submitted/, 2],
  ["plan_status", {}, /^ERROR: no plan was run in /, 3],
  ["team_show", {}, /^ERROR: this machine is in no team; /, 1],
];

describe("tool errors, through the SDK's own client after tools/list", () => {
  test("every tool: a failure is isError with mam's ERROR line, no structured content, the exit code in _meta", async () => {
    const c = await connect();
    try {
      const { tools } = await c.client.listTools(); // the client now checks results against each outputSchema
      expect(tools.map((t) => t.name)).toEqual(TOOLS);
      const failed = new Set<string>();
      for (const [name, args, message, exit] of FAILING) {
        const r = (await c.client.callTool({ name, arguments: args })) as Res; // throws on a result that breaks the schema
        expect(r.isError, name).toBe(true);
        expect(text(r), name).toMatch(message);
        expect(r.structuredContent, name).toBeUndefined();
        expect(r._meta?.["mam/error"], name).toMatchObject({ exit_code: exit });
        failed.add(name);
      }
      // and a bad argument, for every tool
      for (const name of TOOLS) {
        const r = (await c.client.callTool({ name, arguments: { zzz: 1 } })) as Res;
        expect(r.isError, name).toBe(true);
        expect(text(r)).toMatch(new RegExp(`^ERROR: ${name}: (.*; )?unknown argument 'zzz'; see the tool's input schema$`));
        expect(r.structuredContent, name).toBeUndefined();
        expect(r._meta?.["mam/error"]).toMatchObject({ hint: "see the tool's input schema", exit_code: 2 });
      }
      // a broken registry: the tools that read it fail with its error (session_status, registry_reconcile too)
      mkdirSync(join(sb.ws, ".mam"), { recursive: true });
      writeFileSync(join(sb.ws, ".mam", "agent-sessions.yaml"), "herdr_sessions: [unclosed\n");
      for (const name of ["session_status", "registry_reconcile", "session_stop", "session_prune"]) {
        const r = (await c.client.callTool({ name, arguments: name === "session_stop" ? { name: "w" } : {} })) as Res;
        expect(r.isError, name).toBe(true);
        expect(text(r), name).toMatch(/^ERROR: .*agent-sessions\.yaml is not valid YAML/);
        expect(r.structuredContent).toBeUndefined();
        failed.add(name);
      }
      expect([...failed].sort()).toEqual([...TOOLS].sort());
      // a success still carries its structured result
      writeFileSync(join(sb.ws, ".mam", "agent-sessions.yaml"), "");
      const ok = (await c.client.callTool({ name: "session_status", arguments: {} })) as Res;
      expect(ok.isError).toBeFalsy();
      expect(ok.structuredContent).toMatchObject({ sessions: [] });
    } finally {
      await c.close();
    }
  });
});

/** `mam mcp` on raw pipes: what it answers, line by line */
function rawServer(env = sb.env) {
  const p = Bun.spawn([...MAM_CMD, "mcp", "--workspace", sb.ws], { cwd: sb.ws, env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  procs.push(p);
  let out = "";
  let err = "";
  void (async () => {
    const dec = new TextDecoder();
    for await (const c of p.stdout as ReadableStream<Uint8Array>) out += dec.decode(c, { stream: true });
  })();
  void (async () => {
    const dec = new TextDecoder();
    for await (const c of p.stderr as ReadableStream<Uint8Array>) err += dec.decode(c, { stream: true });
  })();
  const answers = () =>
    out
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: unknown; result?: unknown; error?: { code: number; message: string } });
  return {
    proc: p,
    stderr: () => err,
    answers,
    async send(line: string | Uint8Array) {
      p.stdin.write(line);
      await p.stdin.flush();
    },
    async next(n: number) {
      if (!(await waitFor(() => answers().length >= n, 20_000))) throw new Error(`no answer ${n}: ${out} ${err}`);
      return answers()[n - 1]!;
    },
  };
}

const INIT = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } });

describe("the transport", () => {
  test("a line that is not JSON: a parse error (-32700); JSON that is no message: -32600; the server goes on", async () => {
    const s = rawServer();
    await s.send('{"jsonrpc":"2.0","id":7,"method":"ping"\n');
    expect(await s.next(1)).toMatchObject({ id: null, error: { code: -32700 } });
    expect((await s.next(1)).error!.message).toMatch(/^Parse error: the line is not JSON/);
    await s.send('[1, 2]\n{"id": 9, "hello": true}\n');
    expect(await s.next(2)).toMatchObject({ id: null, error: { code: -32600 } });
    expect(await s.next(3)).toMatchObject({ id: 9, error: { code: -32600 } });
    await s.send(`${INIT}\n`);
    expect(await s.next(4)).toMatchObject({ id: 1, result: { serverInfo: { name: "mam" } } });
    s.proc.stdin.end();
    expect(await s.proc.exited).toBe(0);
    expect(s.stderr()).toBe("");
  });

  test("a message over 10 MiB: an error answer, its bytes skipped, the server goes on and exits 0 at the end of stdin", async () => {
    const s = rawServer();
    await s.send(`${INIT}\n`);
    await s.next(1);
    const big = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "session_status", arguments: { pad: "x".repeat(11 * 1024 * 1024) } } });
    const bytes = new TextEncoder().encode(`${big}\n`);
    for (let i = 0; i < bytes.length; i += 1 << 20) await s.send(bytes.subarray(i, i + (1 << 20)));
    const refused = await s.next(2);
    expect(refused).toMatchObject({ id: null, error: { code: -32600 } });
    expect(refused.error!.message).toBe(`Invalid Request: a message of ${bytes.length - 1} bytes is over the limit of ${10 * 1024 * 1024} bytes; it was not read`);
    await s.send(`${JSON.stringify({ jsonrpc: "2.0", id: 3, method: "ping" })}\n`);
    expect(await s.next(3)).toEqual({ jsonrpc: "2.0", id: 3, result: {} } as never);
    s.proc.stdin.end();
    expect(await s.proc.exited).toBe(0);
  });

  test("a connection that fails is no silent exit: exit 1 and a line on stderr", async () => {
    // the client's end of stdout is gone (`| true` reads nothing and exits) while stdin stays open
    const r = await run(["bash", "-c", '{ printf "%s\\n" "$1"; sleep 3; } | "${@:2}" | true; echo "exit ${PIPESTATUS[1]}" >&2', "bash", INIT, ...MAM_CMD, "mcp", "--workspace", sb.ws], {
      env: sb.env,
      cwd: sb.ws,
    });
    expect(r.stderr).toMatch(/^mam mcp: the connection failed \(EPIPE[^\n]*\); stopping\nexit 1\n$/);
  });
});
