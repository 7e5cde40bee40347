// `mam mcp`: mam as an MCP server over stdio (issue 17), on the official TypeScript SDK. One
// workspace per server (resolved once, at start). Tools come from tools.ts; resources are the
// registry and each job's record and journal, read-only. stdout carries the protocol and nothing
// else; warnings go to stderr. Loaded only by `mam mcp` (the SDK and zod stay out of other commands).
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { existsSync, readFileSync } from "node:fs";
import { z } from "zod";
import { MamError, usageError } from "../sys/errors.ts";
import type { Env } from "../sys/paths.ts";
import { OUTPUTS } from "./results.ts";
import { TOOLS, type ToolContext, type ToolDef } from "./tools.ts";

export const SERVER_NAME = "mam";

/** a thrown error as the tool error a client sees: mam's one `ERROR: …; fix` line */
export function toolError(e: unknown) {
  const m = e instanceof MamError ? e : undefined;
  const text = m ? m.render() : `ERROR: internal error: ${e instanceof Error ? e.message : String(e)}; run mam with MAM_DEBUG=1 for details`;
  if (!m && process.env.MAM_DEBUG === "1" && e instanceof Error && e.stack) console.error(e.stack);
  return {
    isError: true,
    content: [{ type: "text" as const, text }],
    structuredContent: { error: m?.message ?? text.slice(7), hint: m?.hint ?? null, exit_code: m?.exitCode ?? 1 },
  };
}

type Extra = {
  signal: AbortSignal;
  _meta?: { progressToken?: string | number };
  sendNotification: (n: { method: "notifications/progress"; params: { progressToken: string | number; progress: number; total?: number; message?: string } }) => Promise<void>;
};

/**
 * a tool's arguments checked against its schema: unknown or bad arguments are a usage error in
 * mam's words (exit code 2), as an unknown or bad flag is on the command line
 */
export function checkArgs(t: ToolDef, args: unknown): Record<string, unknown> {
  const r = z.object(t.input).strict().safeParse(args ?? {});
  if (r.success) return r.data;
  const what = r.error.issues.map((i) => {
    const at = i.path.join(".");
    if (i.code === "unrecognized_keys") return `unknown argument${i.keys.length > 1 ? "s" : ""} ${i.keys.map((k) => `'${k}'`).join(", ")}`;
    return `${at || "arguments"}: ${i.message.replace(/^Invalid (input|option): /, "")}`;
  });
  throw usageError(`${t.name}: ${what.join("; ")}`, "see the tool's input schema");
}

function register(server: McpServer, t: ToolDef, ws: string, env: Env): void {
  const outputSchema = OUTPUTS[t.name as keyof typeof OUTPUTS];
  if (!outputSchema) throw new Error(`tool ${t.name} has no output schema in results.ts`);
  server.registerTool(
    t.name,
    { description: t.description, inputSchema: t.input, outputSchema, annotations: { readOnlyHint: t.readOnly, openWorldHint: false } },
    (async (args: Record<string, unknown>, extra: Extra) => {
      const token = extra._meta?.progressToken;
      const ctx: ToolContext = {
        ws,
        env,
        signal: extra.signal,
        progress: async (progress, message, total) => {
          if (token === undefined) return;
          await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress, message, ...(total !== undefined ? { total } : {}) } });
        },
      };
      try {
        const r = await t.run(checkArgs(t, args) as never, ctx);
        return { content: [{ type: "text" as const, text: r.text }], structuredContent: r.data };
      } catch (e) {
        return toolError(e);
      }
    }) as never,
  );
}

function text(uri: string, mimeType: string, body: string) {
  return { contents: [{ uri, mimeType, text: body }] };
}

function registerResources(server: McpServer, ws: string, env: Env): void {
  server.registerResource(
    "registry",
    "mam://registry",
    { title: "agent sessions registry", description: "the workspace's .mam/agent-sessions.yaml (read-only)", mimeType: "application/yaml" },
    async (uri) => {
      const { registryPath } = await import("../registry/index.ts");
      const path = registryPath(ws, env);
      return text(uri.href, "application/yaml", existsSync(path) ? readFileSync(path, "utf8") : "herdr_sessions: []\ntmux_sessions: []\n");
    },
  );
  const listJobResources = async (suffix: string, what: string) => {
    const { listJobs } = await import("../jobs/query.ts");
    return {
      resources: listJobs(ws).map((j) => ({
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
      const { jobStatus } = await import("../jobs/query.ts");
      return text(uri.href, "application/json", JSON.stringify(jobStatus(ws, String(vars.job_id)), null, 2));
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

export function buildServer(ws: string, env: Env, version: string): McpServer {
  const server = new McpServer(
    { name: SERVER_NAME, version },
    {
      instructions:
        `mam runs a team of coding agents for the workspace ${ws}. Typical flow: status → create_agent (or use a running session) → ` +
        "submit_job → wait_jobs (returns early with outcome attention when an agent needs permission) → job_logs. Errors start with ERROR: and name the fix.",
    },
  );
  // the SDK's own argument check answers "MCP error -32602: Input validation error: …"; mam checks
  // them itself (checkArgs) so that a bad argument reads like every other mam error
  (server as unknown as { validateToolInput: (tool: unknown, args: unknown) => Promise<unknown> }).validateToolInput = async (_tool, args) => args ?? {};
  for (const t of TOOLS) register(server, t, ws, env);
  registerResources(server, ws, env);
  return server;
}

/** serve on stdin/stdout until the client closes stdin or a signal arrives; the exit code */
export async function serveStdio(ws: string, env: Env, version: string): Promise<number> {
  const server = buildServer(ws, env, version);
  const transport = new StdioServerTransport();
  const done = new Promise<number>((resolve) => {
    process.stdin.once("end", () => resolve(0));
    process.stdin.once("close", () => resolve(0));
    transport.onclose = () => resolve(0);
    process.once("SIGTERM", () => resolve(143));
    process.once("SIGINT", () => resolve(130));
  });
  await server.connect(transport);
  const code = await done;
  await server.close().catch(() => {});
  return code;
}
