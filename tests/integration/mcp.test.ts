// `mam mcp` (issue 17) driven by the official SDK client, against the compiled binary: every tool,
// bad arguments, a long wait_jobs with progress notifications, early return on
// permission_required, cancellation, the resources, and `mam mcp install|uninstall`. Sessions are
// fake agents on the fake herdr that follow their job header (tests/helpers/jobs-e2e.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type E2E, journalEvents, newWorkspace, openGate, startE2E, type Ws } from "../helpers/jobs-e2e.ts";
import { CLAUDE_GRANTS, MAM_CMD } from "../helpers/mam.ts";
import { MCP_PREAPPROVED as PREAPPROVED } from "../../lib/agents/kinds/kind.ts";
import { waitFor } from "../helpers/sandbox.ts";
import { progressSince, recordServerMessages, type ServerMessage } from "../helpers/mcp-client.ts";

let e: E2E;
beforeAll(async () => {
  e = await startE2E("mam-mcp-", "mcp");
});
afterAll(async () => {
  await e.cleanup();
});

interface Conn {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  /** what the server sent, in order (tests/helpers/mcp-client.ts) */
  raw: ServerMessage[];
  call(name: string, args?: Record<string, unknown>, opts?: Parameters<Client["callTool"]>[2]): Promise<Res>;
  close(): Promise<void>;
}
type Res = { isError?: boolean; content: { type: string; text?: string }[]; structuredContent?: Record<string, unknown>; _meta?: Record<string, unknown> };

const text = (r: Res) => r.content.map((c) => c.text ?? "").join("\n");

async function connect(w: Ws, extra: Record<string, string> = {}): Promise<Conn> {
  const transport = new StdioClientTransport({
    command: MAM_CMD[0]!,
    args: [...MAM_CMD.slice(1), "mcp", "--workspace", w.dir],
    env: { ...w.env, MAM_NO_SUBSCRIBER_DAEMON: "1", ...extra },
    cwd: w.dir,
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (d: Buffer) => (err += d.toString()));
  const client = new Client({ name: "mam-test", version: "1.0.0" });
  await client.connect(transport);
  const raw = recordServerMessages(transport);
  return {
    client,
    transport,
    raw,
    stderr: () => err,
    call: (name, args = {}, opts) => client.callTool({ name, arguments: args }, CallToolResultSchema, opts) as Promise<Res>,
    close: () => client.close(),
  };
}

/** a connected server for a fresh workspace; closed after fn */
async function withServer(fn: (c: Conn, w: Ws) => Promise<void>, opts: { gated?: boolean; env?: Record<string, string> } = {}): Promise<void> {
  const w = newWorkspace(e, {}, { gated: opts.gated });
  const c = await connect(w, opts.env);
  try {
    await fn(c, w);
  } finally {
    await c.close();
  }
}

async function createWorker(c: Conn, w: Ws, base = "worker", extra: Record<string, unknown> = {}): Promise<string> {
  const r = await c.call("session_create", { agent: "claude", role: "worker", name: w.n(base), herdr_server: e.server, onboard: false, ...extra });
  expect(r.isError, text(r)).toBeFalsy();
  return r.structuredContent!.name as string;
}

const TOOL_NAMES = ["session_status", "session_create", "session_stop", "session_resume", "session_prune", "session_approve", "job_submit", "job_status", "job_list", "job_logs", "job_cancel", "job_wait", "plan_run", "plan_status", "registry_reconcile", "team_show"];

describe("mam mcp: the server", () => {
  test("lists every tool with a description and an object schema; two resources templates and the registry", async () => {
    await withServer(async (c) => {
      const { tools } = await c.client.listTools();
      expect(tools.map((t) => t.name)).toEqual(TOOL_NAMES);
      // what create --mcp pre-approves in claude (review A7): the read-only tools and job_cancel, by the names the server lists
      expect(tools.filter((t) => t.annotations?.readOnlyHint === true).map((t) => t.name).sort()).toEqual(PREAPPROVED.filter((n) => n !== "job_cancel").sort());
      // the agent cannot pre-approve every tool for an agent it starts: not in session_create's input
      expect(Object.keys(tools.find((t) => t.name === "session_create")!.inputSchema.properties!)).not.toContain("mcp_all_tools");
      for (const t of tools) {
        expect(t.description!.length, t.name).toBeGreaterThan(20);
        expect(t.description!.includes("\n"), t.name).toBe(false);
        expect(t.inputSchema.type).toBe("object");
        expect(t.outputSchema?.type, t.name).toBe("object"); // the client checks every result against it
      }
      const submit = tools.find((t) => t.name === "job_submit")!;
      // to, or to_role (a pool): neither is required alone
      expect(submit.inputSchema.required).toBeUndefined();
      expect(Object.keys(submit.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["to", "to_role", "priority"]));
      expect(Object.keys(submit.inputSchema.properties!)).toContain("reviewer");
      const { resources } = await c.client.listResources();
      expect(resources.map((r) => r.uri)).toEqual(["mam://registry"]);
      const { resourceTemplates } = await c.client.listResourceTemplates();
      expect(resourceTemplates.map((r) => r.uriTemplate).sort()).toEqual(["mam://jobs/{job_id}", "mam://jobs/{job_id}/events"]);
    });
  });

  test("the tools' names before the operations table still answer (not listed)", async () => {
    await withServer(async (c, w) => {
      for (const [old, now] of [["status", "session_status"], ["list_jobs", "job_list"], ["reconcile", "registry_reconcile"]] as const) {
        const a = await c.call(old, now === "registry_reconcile" ? { dry_run: true } : {});
        const b = await c.call(now, now === "registry_reconcile" ? { dry_run: true } : {});
        expect(a.isError, text(a)).toBeFalsy();
        expect({ ...a.structuredContent, timestamp: 0 }).toEqual({ ...b.structuredContent, timestamp: 0 });
      }
      const bad = await c.call("wait_jobs", { job_ids: [] });
      expect(text(bad)).toMatch(/^ERROR: job_wait: job_ids needs at least 1 item/);
      expect(existsSync(join(w.dir, ".mam", "jobs"))).toBe(false);
    });
  });

  test("status of an empty workspace: a structured empty list, and nothing created (read-only)", async () => {
    await withServer(async (c, w) => {
      const r = await c.call("session_status");
      expect(r.isError).toBeFalsy();
      expect(r.structuredContent).toEqual({ workspace: w.dir, registry: join(w.dir, ".mam", "agent-sessions.yaml"), sessions: [], needs: [] });
      expect(text(r)).toContain("no agent sessions");
      expect(existsSync(join(w.dir, ".mam"))).toBe(false);
    });
  });

  test("bad arguments: schema errors and mam's own ERROR lines come back as tool errors, nothing changes", async () => {
    await withServer(async (c, w) => {
      const missing = await c.call("job_status", {});
      expect(missing.isError).toBe(true);
      expect(text(missing)).toBe("ERROR: job_status: job_id is missing; see the tool's input schema");
      expect(missing._meta?.["mam/error"]).toMatchObject({ exit_code: 2 });
      const extra = await c.call("session_status", { verbose: true });
      expect(text(extra)).toBe("ERROR: session_status: unknown argument 'verbose'; see the tool's input schema");
      const typed = await c.call("job_wait", { job_ids: [], timeout_s: 99999 });
      expect(text(typed)).toMatch(/^ERROR: job_wait: job_ids needs at least 1 item\(s\); timeout_s must be at most 3600 \(got 99999\); see the tool's input schema$/);
      const badId = await c.call("job_status", { job_id: "../etc" });
      expect(badId.isError).toBe(true);
      expect(text(badId)).toBe("ERROR: job_status: invalid job id '../etc'; job ids are 8 lowercase hex digits");
      expect(badId._meta?.["mam/error"]).toMatchObject({ exit_code: 2 });
      const noJob = await c.call("job_logs", { job_id: "abcdef12" });
      expect(text(noJob)).toMatch(/^ERROR: no job abcdef12 in .*; see: mam job list$/);
      expect(noJob._meta?.["mam/error"]).toMatchObject({ exit_code: 3 });
      const kind = await c.call("session_create", { agent: "nosuch", role: "worker" });
      expect(kind.isError).toBe(true);
      expect(text(kind)).toMatch(/^ERROR: unknown agent kind 'nosuch'; use one of: .*claude/);
      const to = await c.call("job_submit", { to: "ghost", prompt: "x" });
      expect(to._meta?.["mam/error"]).toMatchObject({ exit_code: 3 });
      expect(text(to)).toContain("no running session named 'ghost'");
      // a rule between fields names them as the tool does, never as command-line flags
      const both = await c.call("job_submit", { to: "ghost", prompt: "x", brief_file: "b.md" });
      expect(text(both)).toBe('ERROR: give exactly one of prompt and brief_file; the job\'s text: prompt "Fix the failing test", or a file that holds it: brief_file brief.md');
      const loop = await c.call("job_submit", { to: "ghost", prompt: "x", type: "loop" });
      expect(text(loop)).toBe('ERROR: type "loop" needs reviewer');
      const stop = await c.call("session_stop", { name: "ghost" });
      expect(stop._meta?.["mam/error"]).toMatchObject({ exit_code: 3 });
      const badName = await c.call("session_stop", { name: "a/b" });
      expect(badName._meta?.["mam/error"]).toMatchObject({ exit_code: 2 });
      const mode = await c.call("session_stop", { name: "x", mode: "gently" });
      expect(text(mode)).toBe("ERROR: session_stop: mode must be one of graceful, hard, soft (got 'gently'); see the tool's input schema");
      const purge = await c.call("session_stop", { name: "x", purge: true });
      expect(text(purge)).toBe("ERROR: session_stop: unknown argument 'purge'; see the tool's input schema");
      const unknownTool = await c.call("nosuch_tool");
      expect(unknownTool.isError).toBe(true);
      expect(existsSync(join(w.dir, ".mam", "jobs"))).toBe(false);
      expect(existsSync(join(w.dir, ".mam", "agent-sessions.yaml"))).toBe(false);
    });
  });
});

describe("mam mcp: a delegation through the tools", () => {
  test("create_agent, submit_job, a long wait_jobs with progress, then job_status, job_logs, list_jobs, the resources", async () => {
    await withServer(
      async (c, w) => {
        const name = await createWorker(c, w);
        const st = await c.call("session_status");
        const sessions = st.structuredContent!.sessions as { name: string; status: string }[];
        expect(sessions.map((s) => [s.name, s.status])).toEqual([[name, "running"]]);
        expect(readFileSync(join(w.dir, ".mam", "agent-sessions.yaml"), "utf8")).not.toContain("grants: false");

        const sub = await c.call("job_submit", { to: name, prompt: "Write hello.txt", expect: ["hello.txt"] });
        expect(sub.isError, text(sub)).toBeFalsy();
        const id = sub.structuredContent!.job_id as string;
        expect(id).toMatch(/^[0-9a-f]{8}$/);
        expect(sub.structuredContent!.auth_token).toBeUndefined();
        expect(text(sub)).toBe(`job ${id} submitted to ${name}`);

        // the agent reports started, then waits at the gates; the wait streams what arrives
        expect(await waitFor(() => journalEvents(w.dir, id).some((x) => x.event === "started"), 20_000)).toBe(true);
        const from = c.raw.length;
        const progress = () => progressSince(c.raw, from);
        const waiting = c.call("job_wait", { job_ids: [id], timeout_s: 120 }, { onprogress: () => {}, timeout: 150_000 });
        // the wait streams what arrives after it began: the progress gate opens once its first
        // heartbeat shows it runs (a fixed pause lost the race on a loaded machine)
        expect(await waitFor(() => progress().some((p) => p.message.startsWith("job_wait: working")), 20_000, 20)).toBe(true);
        openGate(w.dir, "progress");
        expect(await waitFor(() => progress().some((p) => p.message.startsWith(`job ${id} progress`)), 20_000)).toBe(true);
        openGate(w.dir, "completed");
        const r = await waiting;
        expect(r.isError, text(r)).toBeFalsy();
        expect(r.structuredContent).toMatchObject({ outcome: "done", all_completed: true, jobs: [{ job_id: id, status: "completed" }] });
        const sent = progress();
        expect(sent.map((p) => p.progress)).toEqual(sent.map((_p, i) => i + 1));
        expect(sent.filter((p) => !p.message.startsWith("job_wait: working")).map((p) => p.message.split(":")[0])).toEqual([`job ${id} progress`, `job ${id} completed`]);
        expect(text(r)).toMatch(new RegExp(`^${id} completed`));

        const js = await c.call("job_status", { job_id: id });
        expect(js.structuredContent).toMatchObject({ job_id: id, status: "completed", agent_session: name, events: 3 });
        expect(text(js)).toContain("status   completed");
        const logs = await c.call("job_logs", { job_id: id });
        const evs = logs.structuredContent!.events as { event: string; data: Record<string, unknown> }[];
        expect(evs.map((x) => x.event)).toEqual(["started", "progress", "completed"]);
        expect(evs.every((x) => !("hmac_sig" in x.data))).toBe(true);
        expect(text(logs).split("\n")).toHaveLength(3);
        const last = await c.call("job_logs", { job_id: id, last: 1 });
        expect((last.structuredContent!.events as unknown[]).length).toBe(1);
        const jl = await c.call("job_list", { status: "completed" });
        expect((jl.structuredContent!.jobs as { job_id: string }[]).map((j) => j.job_id)).toEqual([id]);

        const rec = await c.client.readResource({ uri: `mam://jobs/${id}` });
        const recDoc = JSON.parse((rec.contents[0] as { text: string }).text);
        expect(recDoc).toMatchObject({ job_id: id, status: "completed" });
        expect(recDoc.auth_token).toBeUndefined();
        const jr = await c.client.readResource({ uri: `mam://jobs/${id}/events` });
        expect((jr.contents[0] as { text: string }).text.trim().split("\n").map((l) => JSON.parse(l).event)).toEqual(["started", "progress", "completed"]);
        const reg = await c.client.readResource({ uri: "mam://registry" });
        expect((reg.contents[0] as { text: string }).text).toContain(`name: ${name}`);
        const listed = await c.client.listResources();
        expect(listed.resources.map((x) => x.uri)).toContain(`mam://jobs/${id}/events`);

        const rc = await c.call("registry_reconcile", { dry_run: true });
        expect(rc.isError, text(rc)).toBeFalsy();
        expect(rc.structuredContent).toMatchObject({ dry_run: true, actions: [] });
        expect(c.stderr()).not.toContain("ERROR");
      },
      { gated: true, env: { MAM_MCP_HEARTBEAT_MS: "300" } },
    );
  }, 120_000);

  test("wait_jobs returns early on permission_required, times out with outcome timeout, and stops when the client cancels", async () => {
    await withServer(
      async (c, w) => {
        const name = await createWorker(c, w);
        const id = (await c.call("job_submit", { to: name, prompt: "Needs a permission" })).structuredContent!.job_id as string;
        expect(await waitFor(() => journalEvents(w.dir, id).some((x) => x.event === "started"), 20_000)).toBe(true);

        const t0 = Date.now();
        const beats: string[] = [];
        const timedOut = await c.call("job_wait", { job_ids: [id], timeout_s: 1 }, { onprogress: (p) => void beats.push(p.message ?? "") });
        expect(beats.length).toBeGreaterThanOrEqual(2); // MAM_MCP_HEARTBEAT_MS=200: signs of life while nothing happens
        expect(beats[0]).toMatch(/^job_wait: working \(\d+ s\)$/);
        expect(timedOut.structuredContent).toMatchObject({ outcome: "timeout", all_completed: false, jobs: [{ job_id: id, status: "running" }] });
        expect(Date.now() - t0).toBeLessThan(10_000);
        expect(text(timedOut)).toContain(`ERROR: timed out after 1 s waiting for job ${id}`);

        const waiting = c.call("job_wait", { job_ids: [id], timeout_s: 120 });
        await Bun.sleep(800);
        const ev = await w.mam(["job", "event", id, "permission_required", "--detail", "allow rm?", "--source", "wrk"]);
        expect(ev.code, ev.stderr).toBe(0);
        const att = await waiting;
        expect(att.structuredContent).toMatchObject({ outcome: "attention", event: { event: "permission_required", detail: "allow rm?" }, jobs: [{ status: "running" }] });
        expect(text(att)).toStartWith(`ATTENTION: job ${id} permission_required: allow rm?`);

        // cancellation: the client gives up; the server keeps answering
        const ac = new AbortController();
        const cancelled = c.call("job_wait", { job_ids: [id], timeout_s: 600 }, { signal: ac.signal });
        await Bun.sleep(500);
        ac.abort("the lead moved on");
        await expect(cancelled).rejects.toThrow();
        const t1 = Date.now();
        expect((await c.call("session_status")).isError).toBeFalsy();
        expect(Date.now() - t1).toBeLessThan(5000);

        const cj = await c.call("job_cancel", { job_id: id });
        expect(cj.structuredContent).toMatchObject({ job_id: id, cancelled: true, status: "cancelled", told: name });
        const again = await c.call("job_cancel", { job_id: id });
        expect(again.structuredContent).toMatchObject({ cancelled: false, status: "cancelled" });
        expect(text(again)).toContain("already ended (cancelled)");
        const done = await c.call("job_wait", { job_ids: [id] });
        expect(done.structuredContent).toMatchObject({ outcome: "done", all_completed: false, jobs: [{ status: "cancelled" }] });

        // several jobs: any returns with the one that ended, all waits for both
        const second = await createWorker(c, w, "second"); // the first one still waits at its gate
        const id2 = (await c.call("job_submit", { to: second, prompt: "A second job" })).structuredContent!.job_id as string;
        expect(await waitFor(() => journalEvents(w.dir, id2).some((x) => x.event === "started"), 20_000)).toBe(true);
        const any = await c.call("job_wait", { job_ids: [id, id2], mode: "any", timeout_s: 30 });
        expect(any.structuredContent).toMatchObject({ outcome: "done", jobs: [{ job_id: id, status: "cancelled" }, { job_id: id2, status: "running" }] });
        const all = await c.call("job_wait", { job_ids: [id, id2, id], timeout_s: 0.3, return_on_permission: false });
        expect(all.structuredContent).toMatchObject({ outcome: "timeout", jobs: [{ job_id: id }, { job_id: id2, status: "running" }] });
        expect((all.structuredContent!.jobs as unknown[]).length).toBe(2);
        await c.call("job_cancel", { job_id: id2 });
      },
      { gated: true, env: { MAM_MCP_HEARTBEAT_MS: "200" } },
    );
  }, 120_000);

  test("stop_agent and resume_agent act on the session as mam stop / resume do (and keep create_agent's grant: false)", async () => {
    await withServer(async (c, w) => {
      const name = await createWorker(c, w, "sr", { grant: false });
      const reg = () => readFileSync(join(w.dir, ".mam", "agent-sessions.yaml"), "utf8");
      expect(reg()).toContain("grants: false");
      expect(reg()).not.toContain("--allowedTools");
      const s = await c.call("session_stop", { name, mode: "hard", reason: "test" });
      expect(s.isError, text(s)).toBeFalsy();
      expect(s.structuredContent).toMatchObject({ name, status: "terminated", already: false });
      const again = await c.call("session_stop", { name });
      expect(again.structuredContent).toMatchObject({ already: true });
      expect(text(again)).toBe(`${name} is already terminated`);
      const r = await c.call("session_resume", { name, fresh: true });
      expect(r.isError, text(r)).toBeFalsy();
      expect(r.structuredContent).toMatchObject({ name, already: false });
      expect(text(r)).toStartWith(`resumed ${name} in pane `);
      expect(reg()).not.toContain("--allowedTools");
      const st = await c.call("session_status");
      expect((st.structuredContent!.sessions as { status: string }[]).map((x) => x.status)).toEqual(["running"]);
      await c.call("session_stop", { name, mode: "hard" });
    });
  }, 60_000);

  test("plan_run takes a plan as text: its jobs submitted, the second after the first; a plan with a mistake is a tool error naming its line, nothing submitted; plan_status follows it", async () => {
    await withServer(async (c, w) => {
      const name = await createWorker(c, w, "pl");
      const bad = await c.call("plan_run", { text: `jobs:\n  a:\n    to: ${name}\n    prompt: one\n    priority: urgent\n` });
      expect(bad.isError).toBe(true);
      expect(text(bad)).toContain("ERROR: plan:5: job a: priority must be one of high, normal, low (got 'urgent'); nothing was submitted");
      const r = await c.call("plan_run", { text: `jobs:\n  a:\n    to: ${name}\n    prompt: one\n  b:\n    to: ${name}\n    after: a\n    prompt: two\n` });
      expect(r.isError, text(r)).toBeFalsy();
      const jobs = (r.structuredContent!.plan as { jobs: { name: string; job_id: string; after: string[] }[] }).jobs;
      expect(jobs.map((j) => [j.name, j.after])).toEqual([
        ["a", []],
        ["b", ["a"]],
      ]);
      const st = await c.call("job_status", { job_id: jobs[1]!.job_id });
      expect(st.structuredContent).toMatchObject({ after: [jobs[0]!.job_id] });
      const ps = await c.call("plan_status", {});
      expect(ps.isError, text(ps)).toBeFalsy();
      expect((ps.structuredContent!.cards as { name: string }[]).map((x) => x.name)).toEqual(["a", "b"]);
      // a plan file outside the workspace is refused
      const out = await c.call("plan_run", { file: "/etc/hostname" });
      expect(out.isError).toBe(true);
      expect(text(out)).toContain("is not inside the workspace");
      for (const j of jobs) await c.call("job_cancel", { job_id: j.job_id });
    });
  }, 60_000);

  test("the server exits 0 when the client closes stdin", async () => {
    const w = newWorkspace(e);
    const c = await connect(w);
    const pid = c.transport.pid!;
    expect(pid).toBeGreaterThan(0);
    await c.close();
    expect(await waitFor(() => !existsSync(`/proc/${pid}`) || readFileSync(`/proc/${pid}/stat`, "utf8").split(" ")[2] === "Z", 5000)).toBe(true);
  });
});

test("SIGTERM ends the server with exit status 143, stdout untouched", async () => {
  const w = newWorkspace(e);
  const p = Bun.spawn([...MAM_CMD, "mcp", "--workspace", w.dir], { env: w.env, stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  const out = new Response(p.stdout).text();
  await Bun.sleep(500);
  p.kill("SIGTERM");
  expect(await p.exited).toBe(143);
  expect(await out).toBe("");
  p.stdin.end();
});

describe("mam create --mcp and mam mcp install", () => {
  test("create --mcp starts claude with --mcp-config naming `mam mcp --workspace <ws>`, resume keeps it; other kinds are refused", async () => {
    const w = newWorkspace(e);
    const r = await w.mam(["create", "--agent", "claude", "--role", "lead", "--session", w.n("lead"), "--herdr-session", e.server, "--no-onboard", "--mcp", "--json"], { MAM_NO_SUBSCRIBER_DAEMON: "1" });
    expect(r.code, r.stderr).toBe(0);
    const cmd = JSON.parse(r.stdout).start_command as string;
    expect(cmd).toContain("--mcp-config=");
    // only the tools that cannot run a command or answer a dialog go without a prompt (review A7)
    for (const t of PREAPPROVED) expect(cmd).toContain(`--allowedTools=mcp__mam__${t}`);
    expect(cmd).not.toMatch(/--allowedTools=mcp__mam(?!__)|mcp__mam__(session_create|job_submit|session_approve)/);
    expect(cmd).toContain(`"mcp","--workspace","${w.dir}"`);
    // mam's grants too, each its own --allowedTools= (claude adds up repeated ones)
    expect(cmd).toContain(CLAUDE_GRANTS);
    expect(readFileSync(join(w.dir, ".mam", "agent-sessions.yaml"), "utf8")).toContain("mcp_tools: true");
    // resume brings it back with the tools
    await w.mam(["stop", w.n("lead"), "--hard"]);
    const rs = await w.mam(["resume", w.n("lead"), "--fresh", "--json"], { MAM_NO_SUBSCRIBER_DAEMON: "1" });
    expect(rs.code, rs.stderr).toBe(0);
    expect(readFileSync(join(w.dir, ".mam", "agent-sessions.yaml"), "utf8")).toMatch(/start_command: .*--mcp-config=.*--allowedTools=mcp__mam__session_status/);
    await w.mam(["stop", w.n("lead"), "--hard"]);
    // --mcp-all-tools: every tool without a prompt, kept by resume; only with --mcp
    const all = await w.mam(["create", "--agent", "claude", "--role", "lead", "--session", w.n("lead2"), "--herdr-session", e.server, "--no-onboard", "--mcp", "--mcp-all-tools", "--json"], { MAM_NO_SUBSCRIBER_DAEMON: "1" });
    expect(all.code, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout).start_command).toMatch(/--allowedTools=mcp__mam(?!__)/);
    expect(readFileSync(join(w.dir, ".mam", "agent-sessions.yaml"), "utf8")).toContain("mcp_tools: all");
    await w.mam(["stop", w.n("lead2"), "--hard"]);
    const rs2 = await w.mam(["resume", w.n("lead2"), "--fresh", "--json"], { MAM_NO_SUBSCRIBER_DAEMON: "1" });
    expect(rs2.code, rs2.stderr).toBe(0);
    expect(JSON.parse(rs2.stdout).start_command ?? readFileSync(join(w.dir, ".mam", "agent-sessions.yaml"), "utf8")).toMatch(/--allowedTools=mcp__mam(?!__)/);
    await w.mam(["stop", w.n("lead2"), "--hard"]);
    const alone = await w.mam(["create", "--agent", "claude", "--role", "x", "--herdr-session", e.server, "--mcp-all-tools"], { MAM_NO_SUBSCRIBER_DAEMON: "1" });
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("ERROR: --mcp-all-tools goes with --mcp");
    const bad = await w.mam(["create", "--agent", "gemini", "--role", "x", "--herdr-session", e.server, "--mcp"], { MAM_NO_SUBSCRIBER_DAEMON: "1" });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("ERROR: --mcp works with claude and codex (not gemini)");
  }, 60_000);

  test("install claude merges into .mcp.json, is idempotent, uninstall keeps the other servers", async () => {
    const w = newWorkspace(e);
    const p = join(w.dir, ".mcp.json");
    writeFileSync(p, JSON.stringify({ mcpServers: { other: { command: "x", args: [] } }, extra: 1 }));
    const a = await w.mam(["mcp", "install", "claude"]);
    expect(a.code, a.stderr).toBe(0);
    expect(a.stdout).toContain(`installed the mam MCP server for claude in ${p}`);
    const doc = JSON.parse(readFileSync(p, "utf8"));
    expect(doc.extra).toBe(1);
    expect(doc.mcpServers.other).toEqual({ command: "x", args: [] });
    expect(doc.mcpServers.mam.args.slice(-3)).toEqual(["mcp", "--workspace", w.dir]);
    const before = readFileSync(p, "utf8");
    const b = await w.mam(["mcp", "install", "claude"]);
    expect(b.stdout).toContain("already in");
    expect(readFileSync(p, "utf8")).toBe(before);
    const u = await w.mam(["mcp", "uninstall", "claude"]);
    expect(u.code).toBe(0);
    expect(JSON.parse(readFileSync(p, "utf8")).mcpServers).toEqual({ other: { command: "x", args: [] } });
    // a .mcp.json that held only mam's server goes with it (no empty "mcpServers" left behind)
    rmSync(p);
    expect((await w.mam(["mcp", "install", "claude"])).code).toBe(0);
    expect((await w.mam(["mcp", "uninstall", "claude"])).stdout).toContain("removed");
    expect(existsSync(p)).toBe(false);
    writeFileSync(p, "{not json");
    const bad = await w.mam(["mcp", "install", "claude"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^ERROR: .*\.mcp\.json is not valid JSON .*; fix it by hand; mam changed nothing\n$/);
    expect(readFileSync(p, "utf8")).toBe("{not json");
  });

  test("install codex writes [mcp_servers.mam] in .codex/config.toml (or $CODEX_HOME with --user), keeping the rest", async () => {
    const w = newWorkspace(e);
    const p = join(w.dir, ".codex", "config.toml");
    mkdirSync(join(w.dir, ".codex"));
    writeFileSync(p, 'model = "o3"\n\n[mcp_servers.other]\ncommand = "x"\n');
    const a = await w.mam(["mcp", "install", "codex", "--json"]);
    expect(a.code, a.stderr).toBe(0);
    expect(JSON.parse(a.stdout)).toMatchObject({ agent: "codex", path: p, action: "installed" });
    const doc = Bun.TOML.parse(readFileSync(p, "utf8")) as { model: string; mcp_servers: Record<string, { command: string; args: string[] }> };
    expect(doc.model).toBe("o3");
    expect(doc.mcp_servers.other!.command).toBe("x");
    expect(doc.mcp_servers.mam!.args.slice(-3)).toEqual(["mcp", "--workspace", w.dir]);
    const again = await w.mam(["mcp", "install", "codex", "--json"]);
    expect(JSON.parse(again.stdout).action).toBe("unchanged");
    await w.mam(["mcp", "uninstall", "codex"]);
    const left = Bun.TOML.parse(readFileSync(p, "utf8")) as { mcp_servers: Record<string, unknown> };
    expect(Object.keys(left.mcp_servers)).toEqual(["other"]);

    const codexHome = join(w.dir, "codex-home");
    const u = await w.mam(["mcp", "install", "codex", "--user"], { CODEX_HOME: codexHome });
    expect(u.code, u.stderr).toBe(0);
    expect(readFileSync(join(codexHome, "config.toml"), "utf8")).toContain("[mcp_servers.mam]");
    const bad = await w.mam(["mcp", "install", "gemini"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("ERROR: mam mcp install: unknown agent 'gemini'; use one of: claude, codex");
  });
});
