// What this user's mam wrote itself (security review 2, B1): a workspace's `.mam/` can come from
// someone else (a cloned repository ships `.mam/schedules/*.json` or a queued `.mam/jobs/<id>.json`),
// and the daemon must act only on the schedules and queued jobs this user's mam made. mam marks
// each one with a MAC (HMAC-SHA-256) under a random per-user key made on first use and kept 0600
// under mam's per-user state, never in `.mam/` (the same place as the daemon's client-id key,
// lib/daemon/broker-link.ts). A record without a MAC, or with one that does not match, was not
// written by this user's mam (or by an older mam, which wrote none): it is never acted on.
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { hmacSha256Hex, randomBytes, sameBytes } from "./digest.ts";
import { type Env, stateDir } from "./paths.ts";

/** where the key lives: `<home>/.local/state/mam/record-key` (0600) */
export const recordKeyPath = (env: Env): string => join(stateDir(env), "record-key");

const KEY_RE = /^[0-9a-f]{64}$/;

/**
 * this user's record key (64 hex digits); made on first use when `create`. undefined when there is
 * none and it cannot be made (no home, a read-only one): records are then written without a MAC,
 * and the daemon says so when it skips them.
 */
export function recordKey(env: Env, create: boolean): string | undefined {
  let path: string;
  try {
    path = recordKeyPath(env);
  } catch {
    return undefined; // no home
  }
  try {
    const kept = readFileSync(path, "utf8").trim();
    if (KEY_RE.test(kept)) return kept;
  } catch {}
  if (!create) return undefined;
  try {
    mkdirSync(stateDir(env), { recursive: true, mode: 0o700 });
    // written whole under another name, then linked into place: the link fails when another mam
    // made the key first, and both then use the one that is there (never two keys for one user)
    const tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}`;
    const fd = openSync(tmp, "wx", 0o600);
    try {
      writeSync(fd, `${randomBytes(32).toString("hex")}\n`);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(tmp, path);
    } catch {}
    rmSync(tmp, { force: true });
    const kept = readFileSync(path, "utf8").trim();
    return KEY_RE.test(kept) ? kept : undefined;
  } catch {
    return undefined;
  }
}

/** the MAC of a record of `kind` (its fields in a fixed order) under the key */
export const recordMac = (key: string, kind: string, fields: readonly unknown[]): string => hmacSha256Hex(key, JSON.stringify([kind, ...fields]));

/**
 * why a record is not this user's own (undefined: it is): its `mac` checked against the MAC of its
 * fields under the key
 */
export function notOwn(key: string | undefined, kind: string, fields: readonly unknown[], mac: unknown): string | undefined {
  if (typeof mac !== "string" || mac === "") return "it carries no mark of this user's mam (a cloned repository's, another user's, or written by an older mam, which marked nothing)";
  if (key === undefined) return "this user's record key is missing, so its mark cannot be checked";
  const want = recordMac(key, kind, fields);
  if (!sameBytes(Buffer.from(want), Buffer.from(mac))) return "its mark is not this user's mam's (the file was written or changed by someone else)";
  return undefined;
}
