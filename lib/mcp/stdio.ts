// The stdio transport of `mam mcp`: one JSON-RPC message per line on stdin, one per line on
// stdout (the MCP stdio transport). Unlike the SDK's own, it answers what it cannot deliver
// instead of dropping it or closing: a line that is not JSON gets a JSON-RPC parse error
// (-32700), a line that is JSON but no JSON-RPC message an invalid-request error (-32600), and a
// line over the size limit an invalid-request error too, its bytes skipped (never held in
// memory) up to the next newline; the server goes on serving after each. It closes only when
// stdin ends or fails (`ended` says which), and the server says why (lib/mcp/server.ts).
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";

/** the longest message (one line, without its newline) the server reads: 10 MiB, as the SDK's */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

/** JSON-RPC's error codes for what the transport refuses */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

/** how the input ended: the client closed stdin, or reading (or writing) failed */
export type Ended = { kind: "eof" } | { kind: "error"; error: Error };

type In = Pick<NodeJS.ReadableStream, "on" | "off" | "pause"> & { listenerCount(event: string): number };
type Out = Pick<NodeJS.WritableStream, "write" | "once" | "on" | "off">;

export class LineTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;
  /** resolves once, when the input ends (the server then closes) */
  readonly ended: Promise<Ended>;
  private end!: (e: Ended) => void;
  private parts: Buffer[] = [];
  private size = 0;
  /** bytes of an over-long line dropped so far (> 0: dropping until its newline) */
  private dropped = 0;
  private closed = false;

  constructor(
    private readonly input: In = process.stdin,
    private readonly output: Out = process.stdout,
    private readonly maxBytes = MAX_MESSAGE_BYTES,
  ) {
    let once = false;
    this.ended = new Promise<Ended>((resolve) => {
      this.end = (e) => {
        if (once) return;
        once = true;
        resolve(e);
      };
    });
  }

  private readonly onData = (chunk: Buffer | string) => {
    const buf = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk;
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(10, start);
      const piece = buf.subarray(start, nl === -1 ? buf.length : nl);
      if (this.dropped > 0 || this.size + piece.length > this.maxBytes) {
        this.dropped += this.size + piece.length;
        this.parts = [];
        this.size = 0;
      } else if (piece.length > 0) {
        this.parts.push(piece);
        this.size += piece.length;
      }
      if (nl === -1) return;
      start = nl + 1;
      if (this.dropped > 0) {
        const n = this.dropped;
        this.dropped = 0;
        this.refuse(null, INVALID_REQUEST, `Invalid Request: a message of ${n} bytes is over the limit of ${this.maxBytes} bytes; it was not read`);
        continue;
      }
      const line = Buffer.concat(this.parts, this.size).toString("utf8");
      this.parts = [];
      this.size = 0;
      this.line(line);
    }
  };

  private readonly onEnd = () => this.end({ kind: "eof" });
  private readonly onInputError = (e: Error) => this.end({ kind: "error", error: e });

  /** one line: a message for the server, or an error answer */
  private line(raw: string): void {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      this.refuse(null, PARSE_ERROR, `Parse error: the line is not JSON (${(e as Error).message})`);
      return;
    }
    const m = JSONRPCMessageSchema.safeParse(value);
    if (!m.success) {
      const id = typeof value === "object" && value !== null && "id" in value ? (value as { id: unknown }).id : null;
      this.refuse(typeof id === "string" || typeof id === "number" ? id : null, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message");
      return;
    }
    this.onmessage?.(m.data);
  }

  private refuse(id: string | number | null, code: number, message: string): void {
    this.write(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } })).catch(() => {});
  }

  private write(text: string): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      if (this.output.write(`${text}\n`)) resolve();
      else this.output.once("drain", resolve);
    });
  }

  async start(): Promise<void> {
    this.input.on("data", this.onData);
    this.input.on("end", this.onEnd);
    this.input.on("close", this.onEnd);
    this.input.on("error", this.onInputError);
    this.output.on("error", this.onInputError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(JSON.stringify(message));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off("data", this.onData);
    this.input.off("end", this.onEnd);
    this.input.off("close", this.onEnd);
    this.input.off("error", this.onInputError);
    this.output.off("error", this.onInputError);
    if (this.input.listenerCount("data") === 0) this.input.pause();
    this.parts = [];
    this.onclose?.();
  }
}
