// herdr servers reachable only by a custom socket path (audit #8c). herdr's own resolution lets
// HERDR_SOCKET_PATH name any socket (its tests do), and an explicit --session would override it
// (src/session.rs:173-176), so such a server cannot be named with --session at all.
//
// mam names it `sock-<first 8 hex digits of sha256(path)>` (a valid server name for rows, status
// and locks) and drives it with HERDR_SOCKET_PATH=<path> and no --session. The name → path map is
// learnt from the caller's HERDR_SOCKET_PATH (the ambient server of a pane of that server) and
// kept in <state>/herdr-sockets.json, so reconcile and the daemon reach it from anywhere. Its
// pane-claim lock is default.lock: what the shim and `mam pane-lock path` (SPEC §4.1: any other
// socket path → default) take in its panes.
import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { atomicWriteFile } from "../sys/atomic.ts";
import { configBase, type Env, stateDir } from "../sys/paths.ts";

const NAME_RE = /^sock-[0-9a-f]{8}$/;

export function isSocketServer(server: string): boolean {
  return NAME_RE.test(server);
}

/** the server name of a custom socket path */
export function socketServerName(path: string): string {
  return `sock-${new Bun.CryptoHasher("sha256").update(resolve(path)).digest("hex").slice(0, 8)}`;
}

/** the caller's HERDR_SOCKET_PATH when it is outside herdr's own layout (a custom socket), else undefined */
export function customHerdrSocket(env: Env): string | undefined {
  const sock = env.HERDR_SOCKET_PATH;
  if (!sock) return undefined;
  const herdrDir = join(configBase(env), "herdr");
  const norm = resolve(sock);
  if (norm === join(herdrDir, "herdr.sock")) return undefined;
  if (norm.startsWith(join(herdrDir, "sessions") + sep) && norm.endsWith(`${sep}herdr.sock`)) return undefined;
  return norm;
}

const mapPath = (env: Env) => join(stateDir(env), "herdr-sockets.json");

function readMap(env: Env): Record<string, string> {
  try {
    const v = JSON.parse(readFileSync(mapPath(env), "utf8"));
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, string>) : {};
  } catch {
    return {};
  }
}

/** remember name → path (best effort: a read-only state dir only costs reachability elsewhere) */
export function rememberSocket(path: string, env: Env): string {
  const name = socketServerName(path);
  const map = readMap(env);
  if (map[name] !== resolve(path)) {
    try {
      mkdirSync(stateDir(env), { recursive: true, mode: 0o700 });
      atomicWriteFile(mapPath(env), `${JSON.stringify({ ...map, [name]: resolve(path) })}\n`);
    } catch {}
  }
  return name;
}

/** the socket path of a sock-* server: the caller's own when it matches, else the kept map */
export function socketOf(server: string, env: Env): string | undefined {
  if (!isSocketServer(server)) return undefined;
  const own = customHerdrSocket(env);
  if (own && socketServerName(own) === server) return own;
  return readMap(env)[server];
}
