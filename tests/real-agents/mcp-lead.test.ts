// The real Claude Code as the lead, orchestrating through `mam mcp` (issue 17): `mam create
// --mcp --mcp-all-tools` starts it with --mcp-config pointing at this mam (and every mam tool allowed); its task
// comes as a mam job; the scripted model makes it call mcp__mam__session_create (a demo
// worker on the same private tmux server), mcp__mam__job_submit and mcp__mam__job_wait. The
// worker does the job and the lead's wait returns completed. The test presses no key.
import { afterEach, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Reply, Turn } from "../fakes/model-api/server.ts";
import { type RealAgentWorld, realAgentWorld, waitScreen, claudeFooter } from "../helpers/real-agents.ts";
import { anchoredPids, waitFor } from "../helpers/sandbox.ts";

let w: RealAgentWorld | undefined;
afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

const WORKER = "ra-mcp-worker";

/** the lead's script: one tool per step, each step reading the result of the one before */
function leadScript(server: string) {
  return (t: Turn): Reply => {
    if (!t.lastUserText.includes("Delegate the greeting")) return { text: "ready" };
    const outs = t.toolOutputs;
    if (outs.length === 0) {
      return { tool: { name: "mcp__mam__session_create", input: { agent: "demo", role: "worker", name: WORKER, mux: "tmux", tmux_server: server, onboard: false } } };
    }
    if (outs.length === 1) return { tool: { name: "mcp__mam__job_submit", input: { to: WORKER, prompt: "Write a greeting" } } };
    if (outs.length === 2) {
      const id = /"job_id":"([0-9a-f]{8})"/.exec(outs[1]!)?.[1] ?? "00000000";
      return { tool: { name: "mcp__mam__job_wait", input: { job_ids: [id], timeout_s: 120 } } };
    }
    const r = JSON.parse(outs[2]!) as { outcome: string; jobs: { job_id: string; status: string }[] };
    return { text: `LEAD DONE: ${r.outcome} ${r.jobs.map((j) => `${j.job_id} ${j.status}`).join(", ")}` };
  };
}

test("claude as the lead: session_create, job_submit and job_wait through mam mcp; the wait returns completed", async () => {
  let tmuxServer = "";
  const script = (t: Turn) => leadScript(tmuxServer)(t);
  // claude 2.1.332 defers MCP tools behind its ToolSearch tool by default (a model loads them by
  // name first; this script calls them directly): ENABLE_TOOL_SEARCH=false offers them in every
  // request, as 2.1.197 does
  w = await realAgentWorld({ script, env: { MAM_NO_SUBSCRIBER_DAEMON: "1", ENABLE_TOOL_SEARCH: "false" } });
  tmuxServer = w.server;
  const r = await w.mam([
    "create", "--agent", "claude", "--role", "lead", "--session", "ra-lead", "--mux", "tmux", "--tmux-server", tmuxServer,
    // every mam tool pre-approved (the opt-in): by default claude asks before session_create and
    // job_submit (review A7), and this test is about the lead orchestrating unattended
    "--no-onboard", "--mcp", "--mcp-all-tools", "--json",
  ]);
  expect(r.code, `${r.stdout}${r.stderr}`).toBe(0);
  const lead = JSON.parse(r.stdout);
  expect(lead.start_command).toContain("--mcp-config=");
  // the task reaches the lead as a mam job once it is up (claude connects its MCP servers in the
  // background and fixes a turn's tools when the turn starts: a prompt given on its command line
  // races the connection)
  await waitScreen(w, lead.pane, claudeFooter, "claude's prompt box", 60_000);
  const isMamMcp = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(`mcp\0--workspace\0${w!.sb.ws}`);
  expect(await waitFor(() => anchoredPids(w!.sb.ws).some((p) => { try { return isMamMcp(p); } catch { return false; } }), 30_000)).toBe(true);
  await Bun.sleep(1000); // its handshake (≈ 0.4 s observed)
  const task = await w.mam(["job", "submit", "--to", "ra-lead", "--prompt", "Delegate the greeting job to a worker and wait for it."]);
  expect(task.code, task.stderr).toBe(0);

  // the lead's screen ends with the scripted summary of the wait's result
  const screen = await waitScreen(w, lead.pane, (s) => s.includes("LEAD DONE:"), "the lead's summary", 90_000);
  const turns = w.api.turns("anthropic").filter((t) => t.lastUserText.includes("Delegate the greeting"));
  const outs = turns[turns.length - 1]!.toolOutputs;
  expect(outs).toHaveLength(3);
  // claude hands the model each tool's structured result (JSON)
  const [created, submitted, waited] = outs.map((o) => JSON.parse(o));
  expect(created).toMatchObject({ name: WORKER, agent: "demo", role: "worker", backend: "tmux" });
  const id = submitted.job_id as string;
  expect(submitted).toMatchObject({ agent_session: WORKER, status: "pending" });
  expect(waited).toMatchObject({ outcome: "done", all_completed: true, jobs: [{ job_id: id, status: "completed" }] });
  expect(screen).toContain(`LEAD DONE: done ${id} completed`);

  // the registry and the journal agree: the worker runs, the job completed (its own events)
  const reg = readFileSync(join(w.sb.ws, ".mam", "agent-sessions.yaml"), "utf8");
  expect(reg).toContain(`name: ${WORKER}`);
  expect(reg).toContain("name: ra-lead");
  const journal = readFileSync(join(w.sb.ws, ".mam", "jobs", `${id}.events.ndjson`), "utf8").trim().split("\n").map((l) => JSON.parse(l));
  expect(journal.map((e: { event: string }) => e.event)).toContain("started");
  expect(journal[journal.length - 1].event).toBe("completed");
  const st = await w.mam(["job", "status", id, "--json"]);
  expect(JSON.parse(st.stdout).status).toBe("completed");
  const lastReq = w.api.requests.filter((q) => q.turn?.main).pop()!;
  expect((lastReq.body.tools as { name: string }[]).map((x) => x.name).filter((n) => n.startsWith("mcp__mam__")).sort()).toContain("mcp__mam__job_wait");
  // the tools never ran through claude's Bash (no permission prompt, no shell): only MCP calls
  expect(w.api.requests.some((q) => q.reply?.shell !== undefined)).toBe(false);
  expect(await waitFor(async () => (await w!.mam(["stop", WORKER, "--hard"])).code === 0, 10_000)).toBe(true);
}, 240_000);
