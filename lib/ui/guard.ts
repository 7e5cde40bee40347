// Who may talk to `mam ui` (pure; the server calls these on every request): the request must
// name this server's own Host (127.0.0.1:<port> or localhost:<port>: a DNS-rebinding page that
// reaches the port under another name is refused), carry the random token the command printed
// (compared in constant time), and, for a state-changing POST, come from the page itself (Origin,
// when sent, is ours; JSON body) and find actions enabled (--allow-actions).
import { randomBytes, sameBytes } from "../sys/digest.ts";

/** a fresh URL-safe token: 32 random bytes */
export const newUiToken = (): string => randomBytes(32).toString("base64url");

/** constant-time equality of two tokens (a length mismatch is a plain no) */
export function tokenMatches(given: string | null | undefined, expected: string): boolean {
  if (typeof given !== "string") return false;
  const a = Buffer.from(given, "utf8");
  const b = Buffer.from(expected, "utf8");
  return sameBytes(a, b);
}

/** the Host header is exactly 127.0.0.1:<port> or localhost:<port> (case-insensitive name) */
export function hostAllowed(host: string | null | undefined, port: number): boolean {
  if (typeof host !== "string") return false;
  const h = host.trim().toLowerCase();
  return h === `127.0.0.1:${port}` || h === `localhost:${port}`;
}

/** why a request with another Host is refused (421) */
export const hostRefusal = (port: number) => `wrong Host header (only 127.0.0.1:${port} or localhost:${port})`;

/** an Origin header, when present, is this server's own origin */
export function originAllowed(origin: string | null | undefined, port: number): boolean {
  if (origin === null || origin === undefined) return true;
  const o = origin.trim().toLowerCase();
  return o === `http://127.0.0.1:${port}` || o === `http://localhost:${port}`;
}

export interface RequestFacts {
  method: string;
  host: string | null;
  origin: string | null;
  /** the token from the query (?token=) or the X-Mam-Token header */
  token: string | null;
  contentType: string | null;
}

export type RequestVerdict = { ok: true } | { ok: false; status: 403 | 415 | 421; reason: string };

/** the verdict on a request before any route runs */
export function checkRequest(r: RequestFacts, port: number, expected: string, opts: { actions: boolean; isAction: boolean }): RequestVerdict {
  if (!hostAllowed(r.host, port)) return { ok: false, status: 421, reason: hostRefusal(port) };
  if (!tokenMatches(r.token, expected)) return { ok: false, status: 403, reason: "missing or wrong token (use the URL mam ui printed)" };
  if (r.method !== "GET" && r.method !== "HEAD") {
    if (!originAllowed(r.origin, port)) return { ok: false, status: 403, reason: "cross-origin request refused" };
    if (!opts.isAction) return { ok: false, status: 403, reason: `${r.method} is not allowed here` };
    if (!opts.actions) return { ok: false, status: 403, reason: "actions are off; start mam ui with --allow-actions" };
    if (!(r.contentType ?? "").toLowerCase().startsWith("application/json")) return { ok: false, status: 415, reason: "actions take a JSON body" };
  }
  return { ok: true };
}
