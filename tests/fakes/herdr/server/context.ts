// What a method handler gets: its connection (to stream, or to learn that the client left) and
// a helper to wait on a condition with herdr's cancellation rules (client disconnect, server stop).
import type { FakeHerdr } from "./core.ts";
import { ApiError } from "./model.ts";

export interface Conn {
  readonly closed: boolean;
  onClose(fn: () => void): void;
  /** write one JSON line */
  send(obj: unknown): void;
  end(): void;
}

export interface Ctx {
  id: string;
  conn: Conn;
}

export type Handler = (h: FakeHerdr, params: any, ctx: Ctx) => unknown;

export interface MethodDef {
  run: Handler;
  /** long-lived: runs outside the mutation queue (it queues its own mutations) */
  long?: boolean;
}

/** the handler already wrote to the connection and keeps it (events.subscribe) */
export const STREAMING = Symbol("streaming");

/** the client went away or the server is stopping: no response is written */
export class Cancelled extends Error {}

/**
 * Resolve with the first non-undefined value of check(), re-evaluated on every state change and
 * at least every 100 ms. check may throw an ApiError to end the wait with that error.
 */
export function waitFor<T>(h: FakeHerdr, ctx: Ctx, check: () => T | undefined, timeoutMs: number | null | undefined, onTimeout: () => ApiError): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const finish = (err?: Error, v?: T) => {
      if (done) return;
      done = true;
      unwatch();
      clearInterval(iv);
      if (to) clearTimeout(to);
      if (err) reject(err);
      else resolve(v as T);
    };
    const probe = () => {
      if (done) return;
      if (h.stopping || ctx.conn.closed) return finish(new Cancelled());
      try {
        const v = check();
        if (v !== undefined) finish(undefined, v);
      } catch (e) {
        finish(e as Error);
      }
    };
    const unwatch = h.watch(probe);
    const iv = setInterval(probe, 100);
    const to =
      timeoutMs !== undefined && timeoutMs !== null
        ? setTimeout(() => {
            // one last look at the deadline, as herdr does
            probe();
            finish(onTimeout());
          }, timeoutMs)
        : undefined;
    ctx.conn.onClose(() => finish(new Cancelled()));
    probe();
  });
}

export function invalidParams(message: string): ApiError {
  return new ApiError("invalid_params", message);
}
