// `herdr session list [--json]`, `herdr session stop NAME [--json]`, `herdr server stop`,
// `herdr status [server|client] [--json]` (src/cli/status.rs).
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { isListening, NotRunningError, request } from "../common/client.ts";
import { apiSocketPath, configDir, DEFAULT_SESSION, sessionDir, validateSessionName } from "../common/session.ts";
import { CliUsage } from "./args.ts";
import { type CliCtx, cliProtocol, cliVersion, err, line, out } from "./io.ts";

export const STOP_WAIT_MS = 15_000;

interface SessionInfo {
  name: string;
  default: boolean;
  running: boolean;
  socket_path: string;
  session_dir: string;
}

async function info(env: CliCtx["env"], name?: string): Promise<SessionInfo> {
  const socket = apiSocketPath(env, name);
  return { name: name ?? DEFAULT_SESSION, default: !name, running: await isListening(socket), socket_path: socket, session_dir: sessionDir(env, name) };
}

async function waitGone(socket: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!(await isListening(socket))) return true;
    await Bun.sleep(25);
  }
  return !(await isListening(socket));
}

export async function sessionList(ctx: CliCtx, args: string[]): Promise<number> {
  const json = args.length === 1 && args[0] === "--json";
  if (args.length > 1 || (args.length === 1 && !json)) throw new CliUsage("usage: herdr session list [--json]");
  const names: string[] = [];
  try {
    for (const e of readdirSync(join(configDir(ctx.env), "sessions"), { withFileTypes: true }))
      if (e.isDirectory() && e.name !== DEFAULT_SESSION && !validateSessionName(e.name)) names.push(e.name);
  } catch {}
  names.sort();
  const sessions = [await info(ctx.env), ...(await Promise.all(names.map((n) => info(ctx.env, n))))];
  if (json) await out(line({ sessions }));
  else {
    const rows = [`${"name".padEnd(20)} ${"status".padEnd(8)} ${"directory".padEnd(48)} socket`];
    for (const s of sessions) rows.push(`${s.name.padEnd(20)} ${(s.running ? "running" : "stopped").padEnd(8)} ${s.session_dir.padEnd(48)} ${s.socket_path}`);
    await out(`${rows.join("\n")}\n`);
  }
  return 0;
}

export async function sessionStop(ctx: CliCtx, args: string[]): Promise<number> {
  const usage = "usage: herdr session stop <name> [--json]";
  let name: string | undefined;
  let json = false;
  for (const a of args) {
    if (a === "--json") json = true;
    else if (name === undefined) name = a;
    else throw new CliUsage(usage);
  }
  if (name === undefined) throw new CliUsage(usage);
  const sessionErr = async (code: string, message: string) => {
    await err(line({ error: { code, message } }));
    return 1;
  };
  const target = name === DEFAULT_SESSION ? undefined : name;
  if (target !== undefined) {
    const bad = validateSessionName(target);
    if (bad) return sessionErr("invalid_session_name", bad);
  }
  const socket = apiSocketPath(ctx.env, target);
  let resp;
  try {
    resp = await request(socket, { id: "cli:session:stop", method: "server.stop", params: {} }, { timeoutMs: 10_000 });
  } catch (e) {
    return sessionErr("session_stop_failed", `session ${name} is not running or cannot be reached at ${socket}: ${(e as Error).message}`);
  }
  if (resp.error) return sessionErr("session_stop_failed", JSON.stringify(resp.error));
  if (!(await waitGone(socket, STOP_WAIT_MS))) return sessionErr("session_stop_failed", `session ${name} did not stop within ${STOP_WAIT_MS}ms; socket is still reachable at ${socket}`);
  const session = await info(ctx.env, target);
  if (json) await out(line({ stopped: true, session }));
  else await out(`stopped session ${session.name}\n`);
  return 0;
}

/**
 * `herdr server stop` as 0.8.0 (src/cli/server.rs:27-40, src/session.rs:236-297): silent on
 * success; a server that cannot be reached is a plain-text line on stderr, exit 1
 */
export async function serverStop(ctx: CliCtx, args: string[]): Promise<number> {
  if (args.length) throw new CliUsage("usage: herdr server stop");
  const t = ctx.target();
  let resp;
  try {
    resp = await request(t.socket, { id: "cli:session:stop", method: "server.stop", params: {} }, { timeoutMs: 10_000 });
  } catch (e) {
    if (e instanceof NotRunningError) {
      const why = existsSync(t.socket) ? "Connection refused (os error 111)" : "No such file or directory (os error 2)";
      await err(`server is not running or cannot be reached at ${t.socket}: ${why}\n`);
      return 1;
    }
    throw e;
  }
  if (resp.error) {
    await err(`${JSON.stringify(resp.error)}\n`);
    return 1;
  }
  if (!(await waitGone(t.socket, STOP_WAIT_MS))) {
    await err(`server did not stop within ${STOP_WAIT_MS}ms; sockets are still reachable at ${t.socket}\n`);
    return 1;
  }
  return 0;
}

/**
 * `herdr status [server|client] [--json]` as src/cli/status.rs has it (the same in v0.8.0 and
 * v0.8.2): `client` is the CLI's own version and protocol (no server needed), `server` what the
 * server's ping says (`not_running`, exit 0, when none listens), and bare both with `update`.
 * A client reads the protocol from `client.protocol` (its own) or `server.protocol` (the ping's).
 */
export async function status(ctx: CliCtx, args: string[]): Promise<number> {
  const json = args[args.length - 1] === "--json";
  const rest = json ? args.slice(0, -1) : args;
  const scope = rest.length === 0 ? "full" : rest.length === 1 && (rest[0] === "server" || rest[0] === "client") ? rest[0] : undefined;
  if (!scope) throw new CliUsage("usage: herdr status [server|client] [--json]");
  const mine = cliProtocol(ctx.env);
  const client = { version: cliVersion(ctx.env), channel: "stable", protocol: mine, binary: process.execPath, session: ctx.session ?? ctx.env.HERDR_SESSION ?? null };
  if (scope === "client") {
    if (json) await out(line(client));
    else await out(`version: ${client.version}\nchannel: stable\nprotocol: ${mine}\nbinary: ${client.binary}\n`);
    return 0;
  }
  const t = ctx.target();
  let pong: Record<string, unknown> | undefined;
  try {
    pong = (await request(t.socket, { id: "cli:status", method: "ping", params: {} })).result as Record<string, unknown>;
  } catch (e) {
    if (!(e instanceof NotRunningError)) throw e;
  }
  const protocol = typeof pong?.protocol === "number" ? pong.protocol : null;
  const version = typeof pong?.version === "string" ? pong.version : null;
  const restart = pong ? (version === null ? null : version !== client.version) : false;
  const server = pong
    ? { status: "running", running: true, version, protocol, capabilities: pong.capabilities ?? null, compatible: protocol === null ? null : protocol === mine, socket: t.socket, session: client.session, restart_needed: restart }
    : { status: "not_running", running: false, version: null, protocol: null, capabilities: null, compatible: null, socket: t.socket, session: client.session, restart_needed: false };
  if (json) {
    await out(line(scope === "server" ? server : { client, server, update: { restart_needed: restart } }));
    return 0;
  }
  const body = (indent: string) =>
    pong
      ? `${indent}status: running\n${indent}version: ${version ?? "unknown"}\n${indent}protocol: ${protocol ?? "unknown"}\n${indent}compatible: ${protocol === null ? "unknown" : protocol === mine ? "yes" : "no"}\n${indent}socket: ${t.socket}\n`
      : `${indent}status: not running\n${indent}socket: ${t.socket}\n`;
  if (scope === "server") await out(body(""));
  else await out(`client:\n  version: ${client.version}\n  channel: stable\n  protocol: ${mine}\n\nserver:\n${body("  ")}\nupdate:\n  restart_needed: ${restart === null ? "unknown" : restart ? "yes" : "no"}\n`);
  return 0;
}
