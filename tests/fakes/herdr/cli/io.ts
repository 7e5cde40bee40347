// CLI plumbing shared by the commands: output that is flushed before exit, the ping + request
// round trip with herdr's error conventions (herdr.md §2.1).
import { type Json, NotRunningError, request } from "../common/client.ts";
import { fakeProtocol, fakeRelease, fakeVersion, type Release } from "../common/release.ts";
import { resolveTarget, serverNotRunningMessage, type Target } from "../common/session.ts";

export async function out(s: string): Promise<void> {
  await Bun.write(Bun.stdout, s);
}

export async function err(s: string): Promise<void> {
  await Bun.write(Bun.stderr, s);
}

export const line = (o: unknown) => `${JSON.stringify(o)}\n`;

/** the CLI's protocol: FAKE_HERDR_PROTOCOL, else its release's (common/release.ts) */
export function cliProtocol(env: Record<string, string | undefined>): number {
  return fakeProtocol(env);
}

export function cliVersion(env: Record<string, string | undefined>): string {
  return fakeVersion(env);
}

/** the release whose CLI behaviour this one plays */
export function cliRelease(env: Record<string, string | undefined>): Release {
  return fakeRelease(env);
}

export interface CliCtx {
  env: Record<string, string | undefined>;
  session?: string;
  /** the resolved server target (throws UsageError for a bad --session / HERDR_SESSION) */
  target(): Target;
}

export function makeCtx(env: Record<string, string | undefined>, session?: string): CliCtx {
  let t: Target | undefined;
  return {
    env,
    session,
    target() {
      t ??= resolveTarget(env, session);
      return t;
    },
  };
}

export class Failed extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** print an error response line to stderr and fail with exit 1 */
export async function failWith(id: string, code: string, message: string): Promise<never> {
  await err(line({ id, error: { code, message } }));
  throw new Failed(1);
}

/** ping the server (protocol check), as the real CLI does before every API command */
export async function ping(ctx: CliCtx, id: string): Promise<Json> {
  const t = ctx.target();
  let pong: Json;
  try {
    pong = await request(t.socket, { id: "cli:ping", method: "ping", params: {} });
  } catch (e) {
    if (e instanceof NotRunningError) return failWith(id, "server_not_running", serverNotRunningMessage(t));
    throw e;
  }
  const result = pong.result as Json | undefined;
  const mine = cliProtocol(ctx.env);
  const theirs = result?.protocol;
  if (typeof theirs === "number" && theirs !== mine) {
    // src/cli/protocol_guard.rs:24-33
    return failWith(
      id,
      "protocol_mismatch",
      mine > theirs
        ? `client protocol ${mine} is newer than server protocol ${theirs}; restart the Herdr server before using this command. Stop the old server to use the new version.\nStopping exits pane processes.\nRun \`herdr server stop\`, then run \`herdr\` again.`
        : `client protocol ${mine} is older than server protocol ${theirs}; upgrade the Herdr client before using this command`,
    );
  }
  return pong;
}

/** one request on its own connection; server_not_running when nothing listens any more */
export async function call(ctx: CliCtx, id: string, method: string, params: Json): Promise<Json> {
  const t = ctx.target();
  try {
    return await request(t.socket, { id, method, params });
  } catch (e) {
    if (e instanceof NotRunningError) return failWith(id, "server_not_running", serverNotRunningMessage(t));
    throw e;
  }
}

export type OutMode = "json" | "silent" | "text";

/** ping, request, and print by herdr's rules; returns the exit code */
export async function apiCommand(ctx: CliCtx, id: string, method: string, params: Json, mode: OutMode = "json"): Promise<number> {
  await ping(ctx, id);
  const resp = await call(ctx, id, method, params);
  if (resp.error) {
    await err(line(resp));
    return 1;
  }
  if (mode === "json") await out(line(resp));
  else if (mode === "text") {
    const read = (resp.result as Json | undefined)?.read as Json | undefined;
    await out(String(read?.text ?? ""));
  }
  return 0;
}
