// What an MCP server sent over stdio, in order, as the test client read it.
//
// The SDK's client hands a notification to its handler a microtask after it read it, but a
// response at once, so a progress notification read in the same chunk as its call's response (a
// loaded machine) never reaches `onprogress`. Tests that assert on a call's progress read it here.
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

export interface ServerMessage {
  method?: string;
  params?: { message?: string; progress?: number };
  id?: unknown;
}

/** every message the server sends from now on, appended in the order read */
export function recordServerMessages(transport: StdioClientTransport): ServerMessage[] {
  const raw: ServerMessage[] = [];
  const deliver = transport.onmessage;
  transport.onmessage = (m) => {
    raw.push(m as ServerMessage);
    deliver?.(m);
  };
  return raw;
}

/** the progress notifications among `raw` from index `from` on */
export function progressSince(raw: ServerMessage[], from: number): { progress: number; message: string }[] {
  return raw.slice(from).filter((m) => m.method === "notifications/progress").map((m) => ({ progress: m.params?.progress ?? 0, message: m.params?.message ?? "" }));
}
