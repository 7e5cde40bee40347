// MCP job_submit's brief_file (issue 23 item 13, R8): an agent may hand over only a file inside
// the workspace (or the target session's worktree), symlinks resolved, and the refusal never
// tells whether a file outside exists; the user's own command line may name any file.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MAM_CMD, runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "../helpers/tmux.ts";

let sb: Sandbox;
beforeEach(() => {
  sb = makeSandbox("mam-mcpb-");
});
afterEach(() => sb.cleanup());

type Res = { isError?: boolean; content: { type: string; text?: string }[]; structuredContent?: unknown; _meta?: Record<string, unknown> };
const text = (r: Res) => r.content.map((c) => c.text ?? "").join("\n");

async function connect(env = sb.env): Promise<{ client: Client; close(): Promise<void> }> {
  const transport = new StdioClientTransport({ command: MAM_CMD[0]!, args: [...MAM_CMD.slice(1), "mcp", "--workspace", sb.ws], env, cwd: sb.ws, stderr: "ignore" });
  const client = new Client({ name: "mam-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, close: () => client.close() };
}

describe("job_submit's brief_file through MCP: inside the workspace only", () => {
  const it = TMUX_BIN ? test : test.skip;

  test("outside, up and out, through a symlink: one refusal that never tells whether the file exists; nothing written", async () => {
    writeFileSync(join(sb.ws, "brief.md"), "do it\n");
    symlinkSync("/etc/passwd", join(sb.ws, "link.md"));
    symlinkSync("/etc/no-such-file-here", join(sb.ws, "dangling.md"));
    const c = await connect();
    try {
      const refusal = (f: string) => `ERROR: brief file '${f}' is not a file inside the workspace ${sb.ws}; write the brief into the workspace (a relative brief_file is from the workspace), or give the task as prompt`;
      for (const f of ["/etc/passwd", "/etc/no-such-file-here", "../../../etc/passwd", "../../../etc/no-such-file-here", "link.md", "dangling.md", "missing.md", ".", "/"]) {
        const r = (await c.client.callTool({ name: "job_submit", arguments: { to: "ghost", brief_file: f } })) as Res;
        expect(r.isError, f).toBe(true);
        expect(text(r), f).toBe(refusal(f));
        expect(r._meta?.["mam/error"], f).toMatchObject({ exit_code: 2 });
      }
      // a brief inside gets past the brief's check (to the missing session)
      const inside = (await c.client.callTool({ name: "job_submit", arguments: { to: "ghost", brief_file: "brief.md" } })) as Res;
      expect(text(inside)).toMatch(/^ERROR: no running session named 'ghost'/);
      expect(existsSync(join(sb.ws, ".mam", "jobs"))).toBe(false);
    } finally {
      await c.close();
    }
    // the user's own command line may name any file
    const cli = await runMam(["job", "submit", "--to", "ghost", "--brief-file", "/etc/passwd"], { env: sb.env, cwd: sb.ws });
    expect(cli.stderr).toMatch(/^ERROR: no running session named 'ghost'/);
  });

  it("a brief inside the workspace reaches a running session; the record names its real path", async () => {
    const server = tmuxServerName("mamcpe");
    const env = sb.with({ TMUX_TMPDIR: sb.root, MAM_MUX: "tmux" });
    try {
      const cr = await runMam(["create", "--agent", "demo", "--role", "worker", "--session", "w1", "--tmux-server", server, "--no-onboard"], { env, cwd: sb.ws, timeoutMs: 60_000 });
      expect(cr.code, cr.stderr).toBe(0);
      mkdirSync(join(sb.ws, "briefs"));
      writeFileSync(join(sb.ws, "briefs", "b.md"), "Write hello.txt\n");
      symlinkSync(join(sb.ws, "briefs", "b.md"), join(sb.ws, "in.md")); // a symlink that stays inside is fine
      const c = await connect(env);
      try {
        for (const [f, real] of [["briefs/b.md", join(sb.ws, "briefs", "b.md")], ["in.md", join(sb.ws, "briefs", "b.md")]] as const) {
          const r = (await c.client.callTool({ name: "job_submit", arguments: { to: "w1", brief_file: f } })) as Res;
          expect(r.isError, text(r)).toBeFalsy();
          const id = (r.structuredContent as { job_id: string }).job_id;
          expect(JSON.parse(readFileSync(join(sb.ws, ".mam", "jobs", `${id}.json`), "utf8")).brief_file).toBe(real);
          await runMam(["job", "cancel", id], { env, cwd: sb.ws });
        }
        const out = (await c.client.callTool({ name: "job_submit", arguments: { to: "w1", brief_file: "/etc/passwd" } })) as Res;
        expect(out.isError).toBe(true);
        expect(readdirSync(join(sb.ws, ".mam", "jobs")).filter((f) => f.endsWith(".json")).length).toBe(2);
      } finally {
        await c.close();
      }
    } finally {
      await killTmuxServer(server, env, sb.root);
    }
  });
});
