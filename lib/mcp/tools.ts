// The MCP tools of `mam mcp`: a loop over the operations table (lib/ops). Each op with an `mcp`
// block is a tool named after it (`session.create` → `session_create`); the names tools had
// before the table stay callable as aliases (not listed). A call's arguments are the op's input
// (the tool's own defaults and limits where its mcp block says so), checked by the op; the
// result is the op's JSON document as structured content (its shape, the tool's output schema,
// is the op's `result`) and its text (notices appended) as content. What a tool gets besides its arguments: the workspace, the client's cancellation and
// progress notifications (a heartbeat while a long op runs).
import { parseInput, shapeOf, spelledShape } from "../ops/input.ts";
import { OPS } from "../ops/index.ts";
import type { AnyOp, OpContext, Shape } from "../ops/op.ts";
import type { Deps } from "../ops/deps.ts";
import { plainSpelling, spellFields } from "../sys/fields.ts";
import { MamError, usageError } from "../sys/errors.ts";
import { noticeLine, noticesOf, withNoticeLines } from "../sys/notice.ts";
import * as z from "zod/mini";

/** what a tool call gets besides its arguments */
export interface ToolContext {
  deps: Deps;
  /** aborted when the client cancels the call */
  signal: AbortSignal;
  /** an MCP progress notification, when the client asked for them (no-op otherwise) */
  progress(progress: number, message: string, total?: number): Promise<void>;
}

export interface ToolResult {
  data: unknown;
  text: string;
}

export interface Tool {
  name: string;
  aliases: string[];
  description: string;
  op: AnyOp;
  /** the tool's input: the op's, less hidden fields, with the tool's own defaults and limits */
  input: Shape;
  /** the tool's structured result (its output schema): the op's result, of a union the first member (what the tool's inputs give) */
  output: z.ZodMiniType;
  readOnly: boolean;
}

/** a progress notification at least this often while a long op runs (when the client asked for progress) */
export const PROGRESS_EVERY_MS = Number(process.env.MAM_MCP_HEARTBEAT_MS) > 0 ? Number(process.env.MAM_MCP_HEARTBEAT_MS) : 20_000;

/** the tool name of an op: `session.create` → `session_create` (Claude's API takes [A-Za-z0-9_-] only) */
export const toolName = (op: AnyOp) => op.name.replace(/\./g, "_");

function toolOf(op: AnyOp): Tool {
  const spec = op.mcp || {};
  let input: Shape = { ...shapeOf(op) };
  for (const h of spec.hide ?? []) delete input[h];
  if (spec.input) input = spec.input(input);
  input = spelledShape(input, plainSpelling);
  return { name: toolName(op), aliases: spec.aliases ?? [], description: spec.description ?? op.summary, op, input, output: mcpResult(op), readOnly: op.readOnly };
}

/** an op's result as its tool returns it: an object schema (of a union, the first member: the others come from inputs only the command line offers) */
export function mcpResult(op: AnyOp): z.ZodMiniType {
  const r = op.result();
  const def = r._zod.def as { type: string; options?: z.ZodMiniType[] };
  return def.type === "union" ? def.options![0]! : r;
}

/** every tool of `mam mcp`, in the order of the table */
export function tools(): Tool[] {
  return OPS.filter((o) => o.mcp).map(toolOf);
}

/** the tool a name (or an old name) calls */
export function toolNamed(all: Tool[], name: string): Tool | undefined {
  return all.find((t) => t.name === name) ?? all.find((t) => t.aliases.includes(name));
}

const schemas = new WeakMap<Tool, z.ZodMiniObject>();

/** a tool's arguments checked as the op checks its input: a bad one is a usage error naming it as MCP does */
export function checkArgs(t: Tool, args: unknown): Record<string, unknown> {
  let schema = schemas.get(t);
  if (!schema) {
    schema = z.strictObject(t.input);
    schemas.set(t, schema);
  }
  const shapeError = (message: string, hint?: string) => usageError(`${t.name}: ${message}`, hint ?? "see the tool's input schema");
  try {
    return parseInput(t.op, args ?? {}, schema, shapeError) as Record<string, unknown>;
  } catch (e) {
    throw e instanceof MamError ? e.spelled((s) => spellFields(s, plainSpelling)) : e;
  }
}

/** run a tool: its result as MCP shows it; errors are MamErrors with their fields spelled as MCP names them */
export async function runTool(t: Tool, args: unknown, ctx: ToolContext): Promise<ToolResult> {
  const input = checkArgs(t, args);
  let n = 0;
  const sent: Promise<void>[] = [];
  const note = (message: string) => void sent.push(ctx.progress(++n, message).catch(() => {}));
  const octx: OpContext = { signal: ctx.signal, progress: note, surface: "mcp", form: "json" };
  // a quiet long op still sends a sign of life now and then: clients that time a call out unless
  // progress arrives keep waiting
  const t0 = Date.now();
  const beat = t.op.mcp && t.op.mcp.heartbeat ? setInterval(() => note(`${t.name}: working (${Math.round((Date.now() - t0) / 1000)} s)`), PROGRESS_EVERY_MS) : undefined;
  let out: unknown;
  try {
    out = await t.op.run(ctx.deps, input as never, octx);
  } catch (e) {
    throw e instanceof MamError ? e.spelled((s) => spellFields(s, plainSpelling)) : e;
  } finally {
    if (beat) clearInterval(beat);
  }
  await Promise.all(sent);
  for (const n of noticesOf(out)) n.text = spellFields(n.text, plainSpelling);
  // a `mam: …` line about the setup goes to the server's stderr; warnings and notes are the caller's
  const notices = noticesOf(out);
  for (const n of notices) if (n.level === "info") process.stderr.write(`${noticeLine(n)}\n`);
  const text = [t.op.text(out, { color: false }), ...notices.filter((n) => n.level !== "info").map(noticeLine)].filter((l) => l !== "").join("\n");
  const data = t.op.json ? t.op.json(out) : withNoticeLines(out);
  return { data, text };
}
