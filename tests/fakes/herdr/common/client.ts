// A minimal client of herdr's socket protocol: one NDJSON request per connection, the first
// response line back (herdr.md §3.1). Also a streaming form for events.subscribe.
import { createConnection, type Socket } from "node:net";

export class NotRunningError extends Error {
  constructor(
    readonly socket: string,
    readonly reason?: unknown,
  ) {
    super(`no server listening at ${socket}`);
    this.name = "NotRunningError";
  }
}

function isNotRunning(e: unknown): boolean {
  const code = (e as { code?: string })?.code;
  return code === "ENOENT" || code === "ECONNREFUSED" || code === "ENOTSOCK" || code === "ENOTDIR";
}

export type Json = Record<string, unknown>;

function connect(socket: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const c = createConnection(socket);
    const onErr = (e: Error) => {
      c.destroy();
      reject(isNotRunning(e) ? new NotRunningError(socket, e) : e);
    };
    c.once("error", onErr);
    c.once("connect", () => {
      c.off("error", onErr);
      resolve(c);
    });
  });
}

/** send one request line and resolve with the first response line, parsed */
export async function request(socket: string, req: Json, opts: { timeoutMs?: number } = {}): Promise<Json> {
  const c = await connect(socket);
  return new Promise<Json>((resolve, reject) => {
    let buf = "";
    let done = false;
    const timer = opts.timeoutMs ? setTimeout(() => finish(new Error(`no response from ${socket} within ${opts.timeoutMs} ms`)), opts.timeoutMs) : undefined;
    const finish = (err?: Error, value?: Json) => {
      if (done) return;
      done = true;
      if (timer) clearTimeout(timer);
      c.destroy();
      if (err) reject(err);
      else resolve(value!);
    };
    c.setEncoding("utf8");
    c.on("data", (chunk: string) => {
      buf += chunk;
      const nl = buf.indexOf("\n");
      if (nl >= 0) {
        try {
          finish(undefined, JSON.parse(buf.slice(0, nl)) as Json);
        } catch (e) {
          finish(e as Error);
        }
      }
    });
    c.on("error", (e) => finish(e));
    c.on("close", () => {
      if (buf.trim()) {
        try {
          return finish(undefined, JSON.parse(buf) as Json);
        } catch {}
      }
      finish(new Error(`connection to ${socket} closed without a response`));
    });
    c.write(`${JSON.stringify(req)}\n`);
  });
}

/** true when something accepts connections on the socket */
export async function isListening(socket: string): Promise<boolean> {
  try {
    const c = await connect(socket);
    c.destroy();
    return true;
  } catch {
    return false;
  }
}

export interface Stream {
  /** resolves with the next line (parsed), or undefined when the server closed the stream */
  next(timeoutMs?: number): Promise<Json | undefined>;
  close(): void;
}

/** open a long-lived connection (events.subscribe): every line the server writes is queued */
export async function openStream(socket: string, req: Json): Promise<Stream> {
  const c = await connect(socket);
  const lines: Json[] = [];
  const waiters: ((v: Json | undefined) => void)[] = [];
  let closed = false;
  let buf = "";
  c.setEncoding("utf8");
  c.on("data", (chunk: string) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line.trim()) continue;
      const v = JSON.parse(line) as Json;
      const w = waiters.shift();
      if (w) w(v);
      else lines.push(v);
    }
  });
  const end = () => {
    closed = true;
    for (const w of waiters.splice(0)) w(undefined);
  };
  c.on("close", end);
  c.on("error", end);
  c.write(`${JSON.stringify(req)}\n`);
  return {
    next(timeoutMs?: number) {
      if (lines.length) return Promise.resolve(lines.shift());
      if (closed) return Promise.resolve(undefined);
      return new Promise((resolve, reject) => {
        let t: ReturnType<typeof setTimeout> | undefined;
        const w = (v: Json | undefined) => {
          if (t) clearTimeout(t);
          resolve(v);
        };
        waiters.push(w);
        if (timeoutMs !== undefined)
          t = setTimeout(() => {
            const i = waiters.indexOf(w);
            if (i >= 0) waiters.splice(i, 1);
            reject(new Error(`no event within ${timeoutMs} ms`));
          }, timeoutMs);
      });
    },
    close() {
      c.destroy();
    },
  };
}
