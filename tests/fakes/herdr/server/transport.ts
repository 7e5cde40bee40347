// The API socket (herdr.md §3.1–3.2): NDJSON, exactly one request per connection (later lines
// ignored), a 1 MiB line limit, the whole line within 5 s, `invalid_request` with id "" for a
// line that is not a request of a known method with valid params. Waits and subscriptions keep
// their connection; a client that closes it cancels them.
import { createServer, type Server, type Socket } from "node:net";
import type { HerdrSchema } from "../schema/herdr-schema.ts";
import { formatErrors } from "../schema/validator.ts";
import { Cancelled, type Conn, type MethodDef, STREAMING } from "./context.ts";
import type { FakeHerdr } from "./core.ts";
import { agentMethods } from "./handlers/agent.ts";
import { eventMethods } from "./handlers/events.ts";
import { fakeMethods } from "./handlers/fake.ts";
import { ioMethods } from "./handlers/io.ts";
import { notificationMethods } from "./handlers/notification.ts";
import { structureMethods } from "./handlers/structure.ts";
import { worktreeMethods } from "./handlers/worktree.ts";
import { ApiError } from "./model.ts";

export const MAX_LINE = 1024 * 1024;
export const LINE_TIMEOUT_MS = 5000;

export const METHODS: Record<string, MethodDef> = { ...structureMethods, ...ioMethods, ...agentMethods, ...eventMethods, ...worktreeMethods, ...notificationMethods, ...fakeMethods };

function invalid(message: string) {
  return { id: "", error: { code: "invalid_request", message: `invalid request: ${message}` } };
}

class Connection implements Conn {
  /** the client closed (or half-closed) its side: waits and subscriptions are abandoned */
  closed = false;
  private closers: (() => void)[] = [];

  constructor(
    readonly sock: Socket,
    private readonly check?: (obj: unknown) => void,
  ) {
    sock.on("close", () => this.gone());
  }

  gone(): void {
    if (this.closed) return;
    this.closed = true;
    for (const f of this.closers.splice(0)) f();
  }

  onClose(fn: () => void): void {
    if (this.closed) fn();
    else this.closers.push(fn);
  }

  send(obj: unknown): void {
    if (this.sock.destroyed || !this.sock.writable) return;
    this.check?.(obj);
    this.sock.write(`${JSON.stringify(obj)}\n`);
  }

  end(): void {
    if (!this.sock.destroyed) this.sock.end();
  }
}

export class Transport {
  private server: Server;
  private conns = new Map<Socket, Connection>();
  trace: ((dir: "<" | ">", line: string) => void) | undefined;
  /** check every line written against the schema (FAKE_HERDR_CHECK_SCHEMA); violations are kept */
  checkSchema = false;

  constructor(
    private readonly h: FakeHerdr,
    private readonly schema: HerdrSchema,
  ) {
    this.server = createServer({ allowHalfOpen: true }, (sock) => this.accept(sock));
  }

  listen(path: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(path, () => {
        this.server.off("error", reject);
        resolve();
      });
    });
  }

  /** stop accepting, drop every open connection (waits and subscriptions end) */
  close(): Promise<void> {
    for (const s of this.conns.keys()) s.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  /** drop every connection but keep (a restart ends waits and subscriptions) */
  dropAll(keep?: unknown): void {
    for (const [s, c] of this.conns) if (c !== keep) s.destroy();
  }

  private accept(sock: Socket): void {
    sock.on("close", () => this.conns.delete(sock));
    sock.on("error", () => {});
    const conn = new Connection(sock, this.checkSchema ? (o) => this.checkLine(o) : undefined);
    this.conns.set(sock, conn);
    let buf = "";
    let taken = false;
    const timer = setTimeout(() => {
      if (!taken) sock.destroy();
    }, LINE_TIMEOUT_MS);
    const take = (line: string) => {
      taken = true;
      clearTimeout(timer);
      void this.handle(line, conn);
    };
    sock.setEncoding("utf8");
    sock.on("data", (chunk: string) => {
      if (taken) return; // one request per connection: later lines are ignored
      buf += chunk;
      const nl = buf.indexOf("\n");
      if (nl >= 0) return take(buf.slice(0, nl));
      if (Buffer.byteLength(buf) > MAX_LINE) {
        taken = true;
        clearTimeout(timer);
        conn.send(invalid("request line exceeds 1 MiB"));
        conn.end();
      }
    });
    sock.on("end", () => {
      // a request line cut by EOF is still a request; after it, EOF means the client is gone
      if (!taken && buf.trim()) take(buf);
      else if (!taken) {
        clearTimeout(timer);
        sock.end();
      }
      conn.gone();
    });
  }

  private checkLine(obj: unknown): void {
    const type = (obj as { result?: { type?: unknown } })?.result?.type;
    if (typeof type === "string" && type.startsWith("fake_")) return;
    const errs = this.schema.checkServerLine(obj);
    if (!errs.length) return;
    const msg = `schema violation: ${formatErrors(errs)} in ${JSON.stringify(obj).slice(0, 1000)}`;
    this.h.violations.push(msg);
    process.stderr.write(`${msg}\n`);
  }

  private async handle(line: string, conn: Connection): Promise<void> {
    this.trace?.(">", line);
    const reply = (obj: unknown) => {
      this.trace?.("<", JSON.stringify(obj));
      conn.send(obj);
      conn.end();
    };
    if (Buffer.byteLength(line) > MAX_LINE) return reply(invalid("request line exceeds 1 MiB"));
    let req: Record<string, unknown>;
    try {
      req = JSON.parse(line);
    } catch (e) {
      return reply(invalid((e as Error).message));
    }
    if (typeof req !== "object" || req === null || Array.isArray(req)) return reply(invalid("expected a JSON object"));
    if (typeof req.id !== "string") return reply(invalid("missing field `id`"));
    if (typeof req.method !== "string") return reply(invalid("missing field `method`"));
    const method = req.method;
    const isFake = method.startsWith("fake.") && method in fakeMethods;
    if (!isFake && !this.schema.hasMethod(method)) return reply(invalid(`unknown method \`${method}\``));
    if (!("params" in req)) return reply(invalid("missing field `params`"));
    if (!isFake) {
      const errs = this.schema.checkParams(method, req.params);
      if (errs.length) return reply(invalid(`${method} params${errs[0]!.path}: ${errs[0]!.message}`));
    }
    const def = METHODS[method];
    const id = req.id;
    if (!def) return reply({ id, error: { code: "not_implemented", message: `the fake herdr does not implement ${method}` } });
    if (this.h.stopping) return reply({ id, error: { code: "server_unavailable", message: "server is shutting down" } });
    const ctx = { id, conn };
    try {
      const run = () => def.run(this.h, req.params ?? {}, ctx);
      const result = method === "ping" || def.long ? await run() : await this.h.serialize(run);
      this.h.notify();
      if (result === STREAMING) return;
      reply({ id, result });
    } catch (e) {
      this.h.notify();
      if (e instanceof Cancelled) return conn.end();
      if (e instanceof ApiError) return reply({ id, error: { code: e.code, message: e.message } });
      reply({ id, error: { code: "internal_error", message: (e as Error).message ?? String(e) } });
    }
  }
}
