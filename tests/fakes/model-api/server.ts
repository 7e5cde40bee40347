// A scripted model endpoint for the real agent CLIs (tests/real-agents): just enough of the
// Anthropic Messages API (Claude Code), the OpenAI Responses API (Codex), the Gemini API (Gemini
// CLI) and OpenAI chat completions (opencode, Qwen Code) for the real TUIs to run offline, go
// working/idle, call their shell tool and write their real conversation files.
// Shapes as observed (shared/reference/real-agents.md §1, real-gemini.md, real-opencode-qwen.md):
//   Anthropic: POST /v1/messages[?beta=true] (SSE when stream:true), POST /v1/messages/count_tokens,
//              side requests without the Bash tool answered with plain text, HEAD / as a probe.
//   OpenAI:    POST /v1/responses (SSE), the shell tool as a function call (exec_command {cmd}, or
//              shell {command: [...]}) answered through `function_call_output` items.
//   Gemini:    POST /v1beta/models/<m>:streamGenerateContent?alt=sse (SSE of GenerateContentResponse)
//              and :generateContent (one JSON; helper requests with a responseJsonSchema get a JSON
//              text that fits it), :countTokens; the shell tool is run_shell_command {command}
//              answered through a functionResponse part.
//   Chat:      POST /v1/chat/completions (SSE chunks when stream:true, usage last when asked); the
//              shell tool is a tool call of `bash` (opencode), `run_shell_command` (qwen) or
//              `run_commands {commands: [...]}` (cline), answered by a `tool` message.
// A Script (one per test) decides each answer from the conversation it is sent, normalised to a
// Turn. Every request is kept (requests[]) for the test's assertions.

export type Api = "anthropic" | "openai" | "gemini" | "chat";

/** what the script sees of one request */
export interface Turn {
  api: Api;
  /** the request carries the agent's shell tool (false: a side request, e.g. a title) */
  main: boolean;
  /** the text of the last user message that is not only tool results */
  lastUserText: string;
  /** the texts of every user message (oldest first), tool results excluded */
  userTexts: string[];
  /** tool results sent after lastUserText, oldest first (their text) */
  toolOutputs: string[];
  /** Claude Code's conversation id (its x-claude-code-session-id header): which claude asks */
  claudeSession?: string;
}

export interface Reply {
  /** assistant text (ends the turn unless `shell` is set) */
  text?: string;
  /** run this shell command with the agent's shell tool; the turn goes on with its result */
  shell?: string;
  /** call this tool by name (e.g. an MCP tool, mcp__mam__status; Anthropic only); the turn goes on with its result */
  tool?: { name: string; input: Record<string, unknown> };
  /** codex: ask to run `shell` outside its sandbox (exec_command's require_escalated), which asks the user */
  escalate?: boolean;
  /** hold the answer this long after the stream opened (keeps the agent "working") */
  delayMs?: number;
  /** the token usage this answer reports (default: DEFAULT_USAGE) */
  usage?: Usage;
}

/**
 * a 429 as the providers send it (shared/reference/real-limits.md, "Error bodies and headers sent"):
 *   subscription  Anthropic, a claude.ai plan at its unified limit: `anthropic-ratelimit-unified-status:
 *                 rejected`, `-unified-reset` (epoch s), `-unified-representative-claim` and that
 *                 window's set (5h or 7d: status, reset, utilization), the other window allowed
 *   api-key       Anthropic, an API key's rate limit: the rate_limit_error body with `retry-after`
 *                 (claude retries none when it is over 60 s) and the requests/tokens headers
 *   codex-usage   OpenAI, a ChatGPT plan at its usage limit: `usage_limit_reached` with `resets_at`,
 *                 and the x-codex-primary-* / secondary-* headers (primary at 100 %)
 */
export type Refusal =
  | { shape: "subscription"; resetsAt: number; claim?: "five_hour" | "seven_day" }
  | { shape: "api-key"; retryAfter: number }
  | { shape: "codex-usage"; resetsAt: number; planType?: string; windowMinutes?: number };

/**
 * the tokens one answer reports, in the four kinds providers bill: `input` not served from a
 * cache, `cache_write` (Anthropic's cache creation), `cache_read` (Anthropic's cache read,
 * OpenAI's cached input) and `output` (OpenAI's reasoning tokens included)
 */
export interface Usage {
  input: number;
  output: number;
  cache_write: number;
  cache_read: number;
}

export const DEFAULT_USAGE: Usage = { input: 10, output: 5, cache_write: 0, cache_read: 0 };

export type Script = (t: Turn) => Reply;

export interface KeptRequest {
  api: Api | "other";
  method: string;
  path: string;
  /** parsed JSON body (undefined when none) */
  body: any;
  /** the request's headers, names in lower case */
  headers: Record<string, string>;
  /** the normalised turn, for /v1/messages and /v1/responses */
  turn?: Turn;
  reply?: Reply;
  /** the usage the answer reported (model answers only) */
  usage?: Usage;
  /** the HTTP status when not 200 (a refusal: 429) */
  status?: number;
}

export interface ModelApi {
  url: string;
  port: number;
  requests: KeptRequest[];
  /** main turns only (the ones carrying the shell tool) */
  turns(api?: Api): Turn[];
  /**
   * from now on (the request being answered included), refuse every model request with this 429
   * (a limit), or only those of one API (`only`: one vendor's account at its limit, another's
   * answering), or those `only` picks (one claude of two: its claudeSession); undefined: answer again
   */
  refuse(r: Refusal | undefined, only?: Api | ((k: KeptRequest) => boolean)): void;
  stop(): Promise<void>;
}

const enc = new TextEncoder();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let seq = 0;
const nextId = (p: string) => `${p}_${Date.now().toString(36)}${(++seq).toString(36)}`;

/** claude 2.1.332 sends text pasted into its box wrapped: `<pasted_content id="45b2">\n…\n</pasted_content id="45b2">` */
const unwrapPasted = (t: string) => t.replace(/<pasted_content id="[^"]*">\n?([\s\S]*?)\n?<\/pasted_content id="[^"]*">/g, "$1");

function textOf(content: unknown): string {
  if (typeof content === "string") return unwrapPasted(content);
  if (!Array.isArray(content)) return "";
  return content
    .map((b: any) => (typeof b?.text === "string" && (b.type === "text" || b.type === "input_text" || b.type === "output_text") ? unwrapPasted(b.text) : ""))
    .filter((s) => s !== "")
    .join("\n");
}

/** a text block Claude Code adds on its own (not the user's words) */
const isClaudeNote = (t: string) => /^\s*(<system-reminder>[\s\S]*<\/system-reminder>\s*|\[Request interrupted by user[^\]]*\]\s*)$/.test(t);

/** Anthropic messages → Turn */
export function anthropicTurn(body: any): Turn {
  const tools: any[] = Array.isArray(body?.tools) ? body.tools : [];
  const msgs: any[] = Array.isArray(body?.messages) ? body.messages : [];
  const userTexts: string[] = [];
  let lastUserText = "";
  let toolOutputs: string[] = [];
  for (const m of msgs) {
    if (m.role !== "user") continue;
    const blocks = Array.isArray(m.content) ? m.content : [{ type: "text", text: String(m.content ?? "") }];
    const results = blocks.filter((b: any) => b?.type === "tool_result");
    // beside tool results, Claude Code sends its own notes (system reminders, "[Request interrupted
    // by user for tool use]" after a refused tool), and, after a refusal, the user's next message
    const said = results.length ? blocks.filter((b: any) => b?.type === "text" && !isClaudeNote(String(b.text ?? ""))) : blocks.filter((b: any) => b?.type === "text");
    const text = textOf(said);
    if (results.length) {
      for (const r of results) toolOutputs.push(typeof r.content === "string" ? r.content : textOf(r.content));
    }
    if (text !== "") {
      userTexts.push(text);
      lastUserText = text;
      toolOutputs = [];
    }
  }
  return { api: "anthropic", main: tools.some((t) => t?.name === "Bash"), lastUserText, userTexts, toolOutputs };
}

/** the shell tools of the Gemini API and chat completions agents (gemini and qwen: run_shell_command; opencode: bash; cline: run_commands) */
const SHELL_TOOLS = ["run_shell_command", "bash", "run_commands"];

/** a Gemini Content's parts: its typed text (gemini's own <session_context> part left out) and its function responses */
function geminiParts(parts: any[]): { text: string; results: string[] } {
  const text = parts
    .map((p: any) => (typeof p?.text === "string" && !p.text.trimStart().startsWith("<session_context>") ? p.text : ""))
    .filter((t) => t !== "")
    .join("\n");
  const results = parts.filter((p: any) => p?.functionResponse).map((p: any) => {
    const r = p.functionResponse.response;
    return typeof r?.output === "string" ? r.output : JSON.stringify(r ?? "");
  });
  return { text, results };
}

/** Gemini generateContent request → Turn */
export function geminiTurn(body: any): Turn {
  const decls: any[] = (Array.isArray(body?.tools) ? body.tools : []).flatMap((t: any) => (Array.isArray(t?.functionDeclarations) ? t.functionDeclarations : []));
  const userTexts: string[] = [];
  let lastUserText = "";
  let toolOutputs: string[] = [];
  for (const c of Array.isArray(body?.contents) ? body.contents : []) {
    if (c?.role !== "user") continue;
    const { text, results } = geminiParts(Array.isArray(c.parts) ? c.parts : []);
    toolOutputs.push(...results);
    if (results.length === 0 && text !== "") {
      userTexts.push(text);
      lastUserText = text;
      toolOutputs = [];
    }
  }
  return { api: "gemini", main: decls.some((d) => SHELL_TOOLS.includes(d?.name)), lastUserText, userTexts, toolOutputs };
}

/** the shell tool of a chat completions request (its name and parameter schema), if any */
function chatShellTool(body: any): { name: string; parameters: any } | undefined {
  for (const t of Array.isArray(body?.tools) ? body.tools : []) {
    const f = t?.function;
    if (f && SHELL_TOOLS.includes(f.name)) return { name: f.name, parameters: f.parameters };
  }
  return undefined;
}

/** OpenAI chat completions request → Turn */
export function chatTurn(body: any): Turn {
  const userTexts: string[] = [];
  let lastUserText = "";
  let toolOutputs: string[] = [];
  for (const m of Array.isArray(body?.messages) ? body.messages : []) {
    if (m?.role === "tool") toolOutputs.push(typeof m.content === "string" ? m.content : textOf(m.content));
    else if (m?.role === "user") {
      const t = typeof m.content === "string" ? m.content : textOf(m.content);
      if (t === "") continue;
      userTexts.push(t);
      lastUserText = t;
      toolOutputs = [];
    }
  }
  // qwen's side requests carry its tools too: the next-input suggestion asks in a user message of its own
  const side = /^\s*\[SUGGESTION MODE/.test(lastUserText);
  return { api: "chat", main: chatShellTool(body) !== undefined && !side, lastUserText, userTexts, toolOutputs };
}

/** OpenAI Responses input → Turn */
export function openaiTurn(body: any): Turn {
  const tools: any[] = Array.isArray(body?.tools) ? body.tools : [];
  const input: any[] = Array.isArray(body?.input) ? body.input : typeof body?.input === "string" ? [{ type: "message", role: "user", content: body.input }] : [];
  const userTexts: string[] = [];
  let lastUserText = "";
  let toolOutputs: string[] = [];
  for (const it of input) {
    if ((it.type === "message" || it.type === undefined) && it.role === "user") {
      const t = textOf(it.content);
      userTexts.push(t);
      lastUserText = t;
      toolOutputs = [];
    } else if (it.type === "function_call_output" || it.type === "custom_tool_call_output") {
      toolOutputs.push(typeof it.output === "string" ? it.output : JSON.stringify(it.output));
    }
  }
  return { api: "openai", main: tools.some((t) => shellToolName([t]) !== undefined), lastUserText, userTexts, toolOutputs };
}

/** the name of codex's shell tool in this request's tools, if any */
function shellToolName(tools: any[]): string | undefined {
  for (const name of ["exec_command", "shell", "local_shell"]) if (tools.some((t) => t?.name === name || t?.type === name)) return name;
  return undefined;
}

function sse(events: [string, unknown][], delayMs = 0): Response {
  const stream = new ReadableStream({
    async start(c) {
      for (let i = 0; i < events.length; i++) {
        const [ev, data] = events[i];
        c.enqueue(enc.encode(`event: ${ev}\ndata: ${JSON.stringify(data)}\n\n`));
        if (i === 0 && delayMs > 0) await sleep(delayMs);
      }
      c.close();
    },
  });
  return new Response(stream, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
}

function anthropicAnswer(body: any, reply: Reply, u: Usage): Response {
  const model = String(body?.model ?? "mock-model");
  const id = nextId("msg");
  const content: any[] = [];
  if (reply.text !== undefined && reply.text !== "") content.push({ type: "text", text: reply.text });
  if (reply.shell !== undefined) content.push({ type: "tool_use", id: nextId("toolu"), name: "Bash", input: { command: reply.shell, description: "Run a command" } });
  if (reply.tool !== undefined) content.push({ type: "tool_use", id: nextId("toolu"), name: reply.tool.name, input: reply.tool.input });
  if (content.length === 0) content.push({ type: "text", text: "ok" });
  const stop = reply.shell !== undefined || reply.tool !== undefined ? "tool_use" : "end_turn";
  // as the Messages API reports it: input_tokens excludes what the cache wrote and read
  const usage = { input_tokens: u.input, output_tokens: u.output, cache_creation_input_tokens: u.cache_write, cache_read_input_tokens: u.cache_read };
  if (!body?.stream) {
    return Response.json({ id, type: "message", role: "assistant", model, content, stop_reason: stop, stop_sequence: null, usage });
  }
  const ev: [string, unknown][] = [
    ["message_start", { type: "message_start", message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } }],
  ];
  content.forEach((b, index) => {
    if (b.type === "text") {
      ev.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }]);
      ev.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: b.text } }]);
    } else {
      ev.push(["content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: b.id, name: b.name, input: {} } }]);
      ev.push(["content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(b.input) } }]);
    }
    ev.push(["content_block_stop", { type: "content_block_stop", index }]);
  });
  ev.push(["message_delta", { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: u.output } }]);
  ev.push(["message_stop", { type: "message_stop" }]);
  return sse(ev, reply.delayMs);
}

function openaiAnswer(body: any, reply: Reply, u: Usage): Response {
  const id = nextId("resp");
  const model = String(body?.model ?? "mock-model");
  const items: any[] = [];
  if (reply.text !== undefined && reply.text !== "") {
    items.push({ type: "message", id: nextId("msg"), role: "assistant", status: "completed", content: [{ type: "output_text", text: reply.text, annotations: [] }] });
  }
  if (reply.shell !== undefined) {
    const tool = shellToolName(Array.isArray(body?.tools) ? body.tools : []) ?? "exec_command";
    const args: Record<string, unknown> = tool === "exec_command" ? { cmd: reply.shell } : { command: ["bash", "-lc", reply.shell] };
    if (reply.escalate) Object.assign(args, { sandbox_permissions: "require_escalated", justification: "needs to write outside the workspace" });
    items.push({ type: "function_call", id: nextId("fc"), call_id: nextId("call"), name: tool, arguments: JSON.stringify(args), status: "completed" });
  }
  if (items.length === 0) items.push({ type: "message", id: nextId("msg"), role: "assistant", status: "completed", content: [{ type: "output_text", text: "ok", annotations: [] }] });
  // as the Responses API reports it: input_tokens includes the cached ones (OpenAI has no cache write)
  const input = u.input + u.cache_read + u.cache_write;
  const usage = { input_tokens: input, input_tokens_details: { cached_tokens: u.cache_read }, output_tokens: u.output, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: input + u.output };
  const base = { id, object: "response", created_at: Math.floor(Date.now() / 1000), model };
  const ev: [string, unknown][] = [["response.created", { type: "response.created", response: { ...base, status: "in_progress", output: [] } }]];
  items.forEach((item, output_index) => {
    if (item.type === "message") {
      ev.push(["response.output_item.added", { type: "response.output_item.added", output_index, item: { ...item, status: "in_progress", content: [] } }]);
      ev.push(["response.output_text.delta", { type: "response.output_text.delta", item_id: item.id, output_index, content_index: 0, delta: item.content[0].text }]);
    } else {
      ev.push(["response.output_item.added", { type: "response.output_item.added", output_index, item }]);
    }
    ev.push(["response.output_item.done", { type: "response.output_item.done", output_index, item }]);
  });
  ev.push(["response.completed", { type: "response.completed", response: { ...base, status: "completed", output: items, usage } }]);
  return sse(ev, reply.delayMs);
}

/**
 * a value that fits a JSON schema (gemini's helper requests, e.g. its next-speaker check, ask for
 * JSON): objects get their required properties, enums their first value, strings a word
 */
export function fitSchema(schema: any): unknown {
  if (!schema || typeof schema !== "object") return "ok";
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum[0];
  const type = String(Array.isArray(schema.type) ? schema.type[0] : (schema.type ?? (schema.properties ? "object" : "string"))).toLowerCase();
  if (type === "object") {
    const props = schema.properties ?? {};
    const req: string[] = Array.isArray(schema.required) ? schema.required : Object.keys(props);
    return Object.fromEntries(req.map((k) => [k, fitSchema(props[k])]));
  }
  if (type === "array") return [];
  if (type === "boolean") return false;
  if (type === "number" || type === "integer") return 0;
  return "ok";
}

function geminiAnswer(body: any, reply: Reply, u: Usage, stream: boolean, model: string): Response {
  const parts: any[] = [];
  if (reply.text !== undefined && reply.text !== "") parts.push({ text: reply.text });
  if (reply.shell !== undefined) parts.push({ functionCall: { name: "run_shell_command", args: { command: reply.shell, description: "Run a command" } } });
  if (parts.length === 0) parts.push({ text: "ok" });
  // as the Gemini API reports it: promptTokenCount includes the cached tokens
  const prompt = u.input + u.cache_read + u.cache_write;
  const usageMetadata = { promptTokenCount: prompt, cachedContentTokenCount: u.cache_read, candidatesTokenCount: u.output, totalTokenCount: prompt + u.output };
  const chunk = { candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }], usageMetadata, modelVersion: model, responseId: nextId("gresp") };
  if (!stream) return Response.json(chunk);
  const sendOne = new ReadableStream({
    async start(c) {
      if (reply.delayMs) await sleep(reply.delayMs);
      c.enqueue(enc.encode(`data: ${JSON.stringify(chunk)}\r\n\r\n`));
      c.close();
    },
  });
  return new Response(sendOne, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
}

/** a helper request of gemini's (no shell tool): JSON that fits its schema, else a plain text */
function geminiSide(body: any): Reply {
  const gc = body?.generationConfig ?? {};
  const schema = gc.responseJsonSchema ?? gc.responseSchema;
  if (schema || gc.responseMimeType === "application/json") return { text: JSON.stringify(fitSchema(schema)) };
  return { text: "Mock session" };
}

/** the arguments of a chat shell tool call: the command, and the other required parameters filled in */
function chatShellArgs(tool: { name: string; parameters: any }, command: string): Record<string, unknown> {
  const props = tool.parameters?.properties ?? {};
  // cline's run_commands takes a list of commands
  const args: Record<string, unknown> = "commands" in props ? { commands: [command] } : { command };
  if ("description" in props) args.description = "Run a command";
  for (const k of Array.isArray(tool.parameters?.required) ? tool.parameters.required : []) if (!(k in args)) args[k] = fitSchema(props[k]);
  if ("is_background" in props) args.is_background = false;
  return args;
}

function chatAnswer(body: any, reply: Reply, u: Usage): Response {
  const id = nextId("chatcmpl");
  const model = String(body?.model ?? "mock-model");
  const created = Math.floor(Date.now() / 1000);
  const tool = chatShellTool(body);
  const text = reply.text !== undefined && reply.text !== "" ? reply.text : reply.shell === undefined ? "ok" : undefined;
  const calls =
    reply.shell !== undefined && tool ? [{ index: 0, id: nextId("call"), type: "function", function: { name: tool.name, arguments: JSON.stringify(chatShellArgs(tool, reply.shell)) } }] : [];
  const finish = calls.length ? "tool_calls" : "stop";
  // as chat completions report it: prompt_tokens includes the cached ones
  const prompt = u.input + u.cache_read + u.cache_write;
  const usage = { prompt_tokens: prompt, prompt_tokens_details: { cached_tokens: u.cache_read }, completion_tokens: u.output, total_tokens: prompt + u.output };
  if (!body?.stream) {
    const message = { role: "assistant", content: text ?? null, ...(calls.length ? { tool_calls: calls.map(({ index: _i, ...c }) => c) } : {}) };
    return Response.json({ id, object: "chat.completion", created, model, choices: [{ index: 0, message, finish_reason: finish }], usage });
  }
  const base = { id, object: "chat.completion.chunk", created, model };
  const chunks: unknown[] = [{ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] }];
  if (text !== undefined) chunks.push({ ...base, choices: [{ index: 0, delta: { content: text }, finish_reason: null }] });
  if (calls.length) chunks.push({ ...base, choices: [{ index: 0, delta: { tool_calls: calls }, finish_reason: null }] });
  chunks.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] });
  if (body?.stream_options?.include_usage) chunks.push({ ...base, choices: [], usage });
  const stream = new ReadableStream({
    async start(c) {
      for (let i = 0; i < chunks.length; i++) {
        c.enqueue(enc.encode(`data: ${JSON.stringify(chunks[i])}\n\n`));
        if (i === 0 && reply.delayMs) await sleep(reply.delayMs);
      }
      c.enqueue(enc.encode("data: [DONE]\n\n"));
      c.close();
    },
  });
  return new Response(stream, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } });
}

const ANTHROPIC_RATE_LIMIT = { type: "error", error: { type: "rate_limit_error", message: "This request would exceed your account's rate limit. Please try again later." } };

/** the 429 of a refusal, in the shape of the api that was asked (a refusal of another api's shape is a test's mistake) */
export function refusal(api: Api, r: Refusal, now = Date.now()): Response {
  const nowS = Math.floor(now / 1000);
  const h: Record<string, string> = { "content-type": "application/json", "request-id": nextId("req") };
  if (r.shape === "subscription" || r.shape === "api-key") {
    if (api !== "anthropic") throw new Error(`mock model api: an Anthropic refusal (${r.shape}) asked of the ${api} api`);
    const reset = new Date((nowS + 60) * 1000).toISOString();
    Object.assign(h, {
      "anthropic-ratelimit-requests-limit": "50",
      "anthropic-ratelimit-requests-remaining": "0",
      "anthropic-ratelimit-requests-reset": reset,
      "anthropic-ratelimit-tokens-limit": "40000",
      "anthropic-ratelimit-tokens-remaining": "0",
      "anthropic-ratelimit-tokens-reset": reset,
    });
    if (r.shape === "api-key") h["retry-after"] = String(r.retryAfter);
    else {
      const claim = r.claim ?? "five_hour";
      const [full, other] = claim === "five_hour" ? ["5h", "7d"] : ["7d", "5h"];
      Object.assign(h, {
        "anthropic-ratelimit-unified-status": "rejected",
        "anthropic-ratelimit-unified-reset": String(r.resetsAt),
        "anthropic-ratelimit-unified-representative-claim": claim,
        [`anthropic-ratelimit-unified-${full}-status`]: "rejected",
        [`anthropic-ratelimit-unified-${full}-reset`]: String(r.resetsAt),
        [`anthropic-ratelimit-unified-${full}-utilization`]: "1.0",
        [`anthropic-ratelimit-unified-${other}-status`]: "allowed",
        [`anthropic-ratelimit-unified-${other}-reset`]: String(nowS + (other === "7d" ? 5 * 86_400 : 3 * 3600)),
        [`anthropic-ratelimit-unified-${other}-utilization`]: "0.4",
      });
    }
    return new Response(JSON.stringify(ANTHROPIC_RATE_LIMIT), { status: 429, headers: h });
  }
  if (api !== "openai") throw new Error(`mock model api: a codex refusal asked of the ${api} api`);
  const secondaryReset = nowS + 5 * 86_400;
  Object.assign(h, {
    "x-codex-primary-used-percent": "100",
    "x-codex-primary-window-minutes": String(r.windowMinutes ?? 300),
    "x-codex-primary-reset-at": String(r.resetsAt),
    "x-codex-primary-reset-after-seconds": String(Math.max(0, r.resetsAt - nowS)),
    "x-codex-secondary-used-percent": "40",
    "x-codex-secondary-window-minutes": "10080",
    "x-codex-secondary-reset-at": String(secondaryReset),
    "x-codex-secondary-reset-after-seconds": String(secondaryReset - nowS),
  });
  const error = { type: "usage_limit_reached", message: "The usage limit has been reached", plan_type: r.planType ?? "plus", resets_at: r.resetsAt, resets_in_seconds: Math.max(0, r.resetsAt - nowS) };
  return new Response(JSON.stringify({ error }), { status: 429, headers: h });
}

/** start the endpoint on a free loopback port */
export function startModelApi(script: Script, listenPort = 0): ModelApi {
  const requests: KeptRequest[] = [];
  let refusing: Refusal | undefined;
  let refusingOnly: Api | ((k: KeptRequest) => boolean) | undefined;
  const refusedNow = (api: Api, k: KeptRequest) =>
    refusing !== undefined && (refusingOnly === undefined || (typeof refusingOnly === "function" ? refusingOnly(k) : refusingOnly === api));
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: listenPort,
    idleTimeout: 120,
    async fetch(req) {
      const url = new URL(req.url);
      let body: any;
      if (req.method === "POST") {
        try {
          body = await req.json();
        } catch {
          body = undefined;
        }
      }
      const path = url.pathname;
      const kept: KeptRequest = { api: "other", method: req.method, path, body, headers: Object.fromEntries(req.headers) };
      requests.push(kept);
      if (req.method === "HEAD" || (req.method === "GET" && path === "/")) return new Response(null, { status: 200 });
      if (path === "/v1/messages/count_tokens") {
        kept.api = "anthropic";
        return Response.json({ input_tokens: Math.max(1, Math.round(JSON.stringify(body ?? "").length / 4)) });
      }
      /** a turn of `api`: the script answers main turns, `side` the others; kept for the test */
      const turn = (api: Api, t: Turn, side: Reply, respond: (r: Reply, u: Usage) => Response): Response => {
        // at a limit every request is refused, side requests too: the provider refuses the account, not
        // a turn; a script may call refuse() to refuse the very request it is asked (a limit mid-job)
        const session = kept.headers["x-claude-code-session-id"];
        if (session !== undefined) t.claudeSession = session;
        const reply = refusedNow(api, kept) ? undefined : t.main ? script(t) : side;
        if (refusedNow(api, kept) || !reply) {
          Object.assign(kept, { api, turn: t, status: 429 });
          return refusal(api, refusing!);
        }
        const usage = reply.usage ?? DEFAULT_USAGE;
        Object.assign(kept, { api, turn: t, reply, usage });
        return respond(reply, usage);
      };
      if (path === "/v1/messages" && req.method === "POST") return turn("anthropic", anthropicTurn(body), { text: "Mock session" }, (r, u) => anthropicAnswer(body, r, u));
      if (path === "/v1/responses" && req.method === "POST") return turn("openai", openaiTurn(body), { text: "Mock session" }, (r, u) => openaiAnswer(body, r, u));
      const g = /^\/v1(?:beta|alpha|)\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/.exec(path);
      if (g && req.method === "POST") {
        kept.api = "gemini";
        if (g[2] === "countTokens") return Response.json({ totalTokens: Math.max(1, Math.round(JSON.stringify(body ?? "").length / 4)) });
        return turn("gemini", geminiTurn(body), geminiSide(body), (r, u) => geminiAnswer(body, r, u, g[2] === "streamGenerateContent", g[1]!));
      }
      if (path === "/v1/chat/completions" && req.method === "POST") return turn("chat", chatTurn(body), { text: "Mock session" }, (r, u) => chatAnswer(body, r, u));
      if (path === "/v1/models") return Response.json({ object: "list", data: [{ id: "mock-model", object: "model", owned_by: "mock" }], models: [] });
      return Response.json({ error: { type: "not_found", message: `mock model api: no ${req.method} ${path}` } }, { status: 404 });
    },
  });
  const port = server.port!;
  return {
    url: `http://127.0.0.1:${port}`,
    port: listenPort,
    requests,
    turns: (api) => requests.filter((r) => r.turn?.main && (!api || r.api === api)).map((r) => r.turn!),
    refuse: (r, only) => {
      refusing = r;
      refusingOnly = only;
    },
    stop: async () => {
      await server.stop(true);
    },
  };
}
