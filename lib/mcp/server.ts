// `mam mcp`: mam as an MCP server over stdio (issue 17), on the official TypeScript SDK. One
// workspace per server (resolved once, at start). Tools come from tools.ts; resources are the
// registry and each job's record and journal, read-only. stdout carries the protocol and nothing
// else; warnings go to stderr. The transport is stdio.ts (a line that is no message gets an error
// answer); the server exits 0 when stdin ends, and 1 with a line on stderr when the connection
// fails. A tool that fails answers `isError: true`, mam's ERROR line as its text and no
// structured content (which would have to match the tool's output schema); the exit code the
// command would have is in `_meta["mam/error"]`. Loaded only by `mam mcp` (the SDK and zod stay
// out of other commands).
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { existsSync, readFileSync } from "node:fs";
import type { Deps } from "../ops/deps.ts";
import { realDeps } from "../ops/wiring.ts";
import { EXIT, MamError } from "../sys/errors.ts";
import type { Env } from "../sys/paths.ts";
import { LineTransport } from "./stdio.ts";
import { runTool, type Tool, type ToolContext, toolNamed, tools } from "./tools.ts";

export const SERVER_NAME = "mam";

/** where a tool error's parts are in the result's `_meta` (MCP reserves unprefixed keys) */
export const ERROR_META = "mam/error";

/**
 * a thrown error as the tool error a client sees: mam's one `ERROR: …; fix` line as the text. No
 * structuredContent: a client checks that against the tool's output schema (which describes a
 * success) and would reject the whole call; the parts are in `_meta` instead.
 */
export function toolError(e: unknown) {
  const m = e instanceof MamError ? e : undefined;
  const text = m ? m.render() : `ERROR: internal error: ${e instanceof Error ? e.message : String(e)}; run mam with MAM_DEBUG=1 for details`;
  if (!m && process.env.MAM_DEBUG === "1" && e instanceof Error && e.stack) console.error(e.stack);
  return {
    isError: true,
    content: [{ type: "text" as const, text }],
    _meta: { [ERROR_META]: { error: m?.message ?? text.slice(7), hint: m?.hint ?? null, exit_code: m?.exitCode ?? EXIT.FAIL } },
  };
}

type Extra = {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification: (n: { method: "notifications/progress"; params: { progressToken: string | number; progress: number; total?: number; message?: string } }) => Promise<void>;
};

function register(server: McpServer, t: Tool, deps: Deps): void {
  server.registerTool(
    t.name,
    { description: t.description, inputSchema: t.input, outputSchema: t.output as never, annotations: { readOnlyHint: t.readOnly, openWorldHint: false } },
    (async (args: Record<string, unknown>, extra: Extra) => {
      const token = extra._meta?.progressToken;
      const ctx: ToolContext = {
        deps,
        signal: extra.signal,
        progress: async (progress, message, total) => {
          if (token === undefined) return;
          await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress, message, ...(total !== undefined ? { total } : {}) } });
        },
      };
      try {
        const r = await runTool(t, args, ctx);
        return { content: [{ type: "text" as const, text: r.text }], structuredContent: r.data };
      } catch (e) {
        return toolError(e);
      }
    }) as never,
  );
}

/**
 * a tools/call naming a tool by its old name is sent on as the tool of today's name (old names
 * stay callable; only today's are listed)
 */
function withAliases(transport: LineTransport, all: Tool[]): void {
  type Deliver = (msg: unknown, extra?: unknown) => void;
  const t = transport as unknown as { onmessage?: Deliver };
  const deliver = t.onmessage;
  if (!deliver) return;
  t.onmessage = (msg, extra) => {
    const m = msg as { method?: string; params?: { name?: unknown } };
    if (m.method === "tools/call" && typeof m.params?.name === "string") {
      const tool = toolNamed(all, m.params.name);
      if (tool && tool.name !== m.params.name) m.params.name = tool.name;
    }
    deliver.call(transport, msg, extra);
  };
}

function text(uri: string, mimeType: string, body: string) {
  return { contents: [{ uri, mimeType, text: body }] };
}

function registerResources(server: McpServer, ws: string, deps: Deps): void {
  server.registerResource(
    "registry",
    "mam://registry",
    { title: "agent sessions registry", description: "the workspace's .mam/agent-sessions.yaml (read-only)", mimeType: "application/yaml" },
    async (uri) => {
      const path = deps.registry.path;
      return text(uri.href, "application/yaml", existsSync(path) ? readFileSync(path, "utf8") : "herdr_sessions: []\ntmux_sessions: []\n");
    },
  );
  const listJobResources = async (suffix: string, what: string) => {
    const [{ listJobs }, { loadPrices }] = await Promise.all([import("../jobs/query.ts"), import("../cost/prices.ts")]);
    return {
      resources: listJobs(ws, loadPrices(deps.env)).map((j) => ({
        uri: `mam://jobs/${j.job_id}${suffix}`,
        name: `job ${j.job_id}${what}`,
        description: `${j.status}: ${j.agent_session}`,
        mimeType: suffix ? "application/x-ndjson" : "application/json",
      })),
    };
  };
  server.registerResource(
    "job",
    new ResourceTemplate("mam://jobs/{job_id}", { list: () => listJobResources("", "") }),
    { title: "job record", description: "a job's record without its token, with its status from the journal", mimeType: "application/json" },
    async (uri, vars) => {
      const [{ jobStatus }, { loadPrices }] = await Promise.all([import("../jobs/query.ts"), import("../cost/prices.ts")]);
      return text(uri.href, "application/json", JSON.stringify(jobStatus(ws, String(vars.job_id), loadPrices(deps.env)), null, 2));
    },
  );
  server.registerResource(
    "job-events",
    new ResourceTemplate("mam://jobs/{job_id}/events", { list: () => listJobResources("/events", " events") }),
    { title: "job event journal", description: "a job's events, one JSON object per line, oldest first", mimeType: "application/x-ndjson" },
    async (uri, vars) => {
      const { jobEvents } = await import("../jobs/query.ts");
      const lines = jobEvents(ws, String(vars.job_id)).map((e) => JSON.stringify(e));
      return text(uri.href, "application/x-ndjson", lines.length ? `${lines.join("\n")}\n` : "");
    },
  );
}

export function buildServer(ws: string, env: Env, version: string): { server: McpServer; tools: Tool[] } {
  const server = new McpServer(
    { name: SERVER_NAME, version },
    {
      instructions:
        `mam runs a team of coding agents for the workspace ${ws}. Typical flow: session_status → session_create (or use a running session) → ` +
        "job_submit → job_wait (returns early with outcome attention when an agent needs permission) → job_logs. Errors start with ERROR: and name the fix.",
    },
  );
  // the SDK's own argument check answers "MCP error -32602: Input validation error: …"; mam checks
  // them itself (checkArgs) so that a bad argument reads like every other mam error
  (server as unknown as { validateToolInput: (tool: unknown, args: unknown) => Promise<unknown> }).validateToolInput = async (_tool, args) => args ?? {};
  const all = tools();
  const deps = realDeps(ws, env, { warn: (l) => process.stderr.write(`${l}\n`) });
  for (const t of all) register(server, t, deps);
  registerResources(server, ws, deps);
  return { server, tools: all };
}

/**
 * serve on stdin/stdout until the client closes stdin (exit 0) or a signal arrives (130, 143);
 * a connection that fails or closes for any other reason says so on stderr and exits 1
 */
export async function serveStdio(ws: string, env: Env, version: string): Promise<number> {
  const { server, tools: all } = buildServer(ws, env, version);
  const transport = new LineTransport();
  const say = (line: string) => process.stderr.write(`mam mcp: ${line}\n`);
  // what the protocol layer could not handle (a response to nothing, a failed send): a line on stderr
  server.server.onerror = (e) => say(e.message);
  let settled = false;
  let settle!: (code: number) => void;
  const done = new Promise<number>((resolve) => {
    settle = (code) => {
      if (settled) return;
      settled = true;
      resolve(code);
    };
  });
  void transport.ended.then((e) => {
    if (e.kind === "eof") return settle(EXIT.OK);
    say(`the connection failed (${e.error.message}); stopping`);
    settle(EXIT.FAIL);
  });
  // closed by anything but the end of stdin or a signal (after which mam closes it itself)
  transport.onclose = () => {
    if (settled) return;
    say("the connection was closed; stopping");
    settle(EXIT.FAIL);
  };
  process.once("SIGTERM", () => settle(143));
  process.once("SIGINT", () => settle(130));
  await server.connect(transport);
  withAliases(transport, all);
  const code = await done;
  await server.close().catch(() => {});
  return code;
}
