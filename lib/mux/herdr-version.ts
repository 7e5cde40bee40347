// Which herdr versions mam drives, and how it tells one it does not. mam is written against
// herdr's source at v0.8.0 and v0.8.2 (docs/herdr-compat.md): every argv it builds, every JSON
// field it reads, every error code it keys on. `herdr --version` prints `herdr <version>`
// (src/main.rs, build_info.rs: `0.8.2`, or `0.8.2-<channel>[.<build>]` for preview builds).
//
// mam gates on herdr's socket protocol, not on the version string. herdr states it as
// PROTOCOL_VERSION (src/protocol/wire.rs: 19 in v0.8.0, 20 in v0.8.2); its CLI pings the server
// before every command and refuses one of another protocol (src/cli.rs
// ensure_server_protocol_compatible, src/cli/protocol_guard.rs: `protocol_mismatch`), so the
// protocol mam talks through the CLI is the CLI's own, which `herdr status client --json` prints
// without a server (src/cli/status.rs: {version, channel, protocol, binary, session}).
//
// The rule (supportOf, pure):
//   protocol 19, 20          supported (19: herdr 0.8.0; 20: 0.8.1 and 0.8.2), whatever the
//                            version string says
//   protocol below 19        refused: older herdr lacks what mam relies on (agent start before
//                            0.7.5, the 0.8.0 agent start / agent prompt semantics), so create and
//                            resume stop with an ERROR
//   another protocol         allowed with a WARNING naming the protocols and versions known to
//                            work, once a day per server (HerdrMux.checkVersion,
//                            lib/sys/once-a-day.ts), not on every command
//   no protocol readable     the version string decides: < 0.8.0 refused, 0.8.x supported,
//                            >= 0.9.0 the warning; unreadable: allowed, silently (a build or
//                            wrapper that prints something else: the calls themselves then say
//                            what is wrong, if anything is)
// Where 0.8.0 and 0.8.2 differ, the driver follows the release it meets (releaseOf): protocol 20
// and up (else a version from 0.8.1 on: the withdrawn 0.8.1 already carried the changes) is
// 0.8.2's behaviour: herdr refuses a prompt to a blocked agent itself and ends `agent start` of
// an agent blocked at a start dialog with agent_not_ready; on 0.8.0 mam does the first check
// itself. A herdr mam cannot read is treated as 0.8.0.
// The answers are cached per binary (path, size, mtime) in <state>/herdr-version.json, so the
// two spawns (`herdr --version`, `herdr status client --json`) happen once per herdr install,
// not once per mam call; and once per process in memory.
import { mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { EXIT, MamError } from "../sys/errors.ts";
import { atomicWriteFile } from "../sys/atomic.ts";
import { type Env, stateDir } from "../sys/paths.ts";
import { execCapture } from "./exec.ts";

export const MIN_HERDR = [0, 8, 0] as const;
/** the first version with 0.8.2's behaviour (0.8.1, withdrawn, already had it) */
export const R082 = [0, 8, 1] as const;
/** the first version mam has not been checked against */
export const NEXT_UNCHECKED = [0, 9, 0] as const;
export const SUPPORTED_TEXT = "herdr 0.8.x (0.8.0 or newer)";
/** the releases whose source mam was checked against */
export const CHECKED_TEXT = "herdr 0.8.0 and 0.8.2";
/** the socket protocols mam speaks (herdr's PROTOCOL_VERSION), and the herdr releases that speak each */
export const KNOWN_PROTOCOLS: Readonly<Record<number, string>> = { 19: "herdr 0.8.0", 20: "herdr 0.8.1 and 0.8.2" };
const MIN_PROTOCOL = 19;
/** "19 (herdr 0.8.0) and 20 (herdr 0.8.1 and 0.8.2)" */
export const PROTOCOLS_TEXT = Object.entries(KNOWN_PROTOCOLS)
  .map(([p, v]) => `${p} (${v})`)
  .join(" and ");

/** the herdr behaviour mam follows (see the header) */
export type HerdrRelease = "0.8.0" | "0.8.2";

/** what mam makes of a herdr binary; `protocol`: its socket protocol, when mam could read it */
export type Support =
  | { kind: "supported"; version: string; protocol?: number }
  | { kind: "old"; version: string; protocol?: number }
  | { kind: "newer"; version: string; protocol?: number }
  | { kind: "unknown"; text: string; protocol?: number };

function cmp(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
}

/** the `protocol` of what `herdr status client --json` printed, else undefined */
export function protocolOf(statusClientJson: string): number | undefined {
  try {
    const v = JSON.parse(statusClientJson) as { protocol?: unknown };
    return typeof v.protocol === "number" && Number.isInteger(v.protocol) && v.protocol > 0 ? v.protocol : undefined;
  } catch {
    return undefined;
  }
}

/** what `herdr --version` printed and the protocol the binary speaks → is it a herdr mam supports */
export function supportOf(versionOutput: string, protocol?: number): Support {
  const m = /(\d+)\.(\d+)\.(\d+)(\S*)/.exec(versionOutput);
  const p = protocol === undefined ? {} : { protocol };
  if (!m) {
    const text = versionOutput.trim().slice(0, 80);
    if (protocol === undefined) return { kind: "unknown", text };
    // a version mam cannot read, but a protocol it can: the protocol decides
    const version = text || "(no version)";
    if (KNOWN_PROTOCOLS[protocol]) return { kind: "supported", version, protocol };
    return protocol < MIN_PROTOCOL ? { kind: "old", version, protocol } : { kind: "newer", version, protocol };
  }
  const v = [Number(m[1]), Number(m[2]), Number(m[3])];
  const version = m[0];
  if (protocol !== undefined) {
    if (KNOWN_PROTOCOLS[protocol]) return { kind: "supported", version, protocol };
    return protocol < MIN_PROTOCOL ? { kind: "old", version, protocol } : { kind: "newer", version, protocol };
  }
  if (cmp(v, MIN_HERDR) < 0) return { kind: "old", version, ...p };
  if (cmp(v, NEXT_UNCHECKED) >= 0) return { kind: "newer", version, ...p };
  return { kind: "supported", version, ...p };
}

/** the behaviour of a herdr: 0.8.2's from protocol 20 (else from version 0.8.1) on, newer ones too; else 0.8.0's */
export function releaseOf(s: Support): HerdrRelease {
  if (s.kind !== "supported" && s.kind !== "newer") return "0.8.0";
  if (s.protocol !== undefined) return s.protocol >= 20 ? "0.8.2" : "0.8.0";
  const m = /(\d+)\.(\d+)\.(\d+)/.exec(s.version);
  if (!m) return "0.8.0";
  return cmp([Number(m[1]), Number(m[2]), Number(m[3])], R082) >= 0 ? "0.8.2" : "0.8.0";
}

/** a refused version as the error the user sees; undefined when mam may go on */
export function unsupportedError(s: Support, bin: string): MamError | undefined {
  if (s.kind !== "old") return undefined;
  const speaks = s.protocol === undefined ? "" : ` (socket protocol ${s.protocol})`;
  const supports = s.protocol === undefined ? SUPPORTED_TEXT : `${SUPPORTED_TEXT}: socket protocol ${PROTOCOLS_TEXT}`;
  return new MamError(`herdr ${s.version}${speaks} (${bin}) is too old: mam supports ${supports}`, EXIT.FAIL, "upgrade herdr (herdr update), or use --mux tmux");
}

/**
 * the warning for a version mam allows but was not checked against (said once a day per server),
 * naming what of herdr mam relies on and has not seen in that version
 */
export function versionWarning(s: Support, server: string): string | undefined {
  if (s.kind !== "newer") return undefined;
  const untested =
    "agent start (when an agent counts as ready, start dialogs), agent prompt (refusals), " +
    "the pane list and process-info fields and the error codes mam reads; if a herdr call fails, report it with `herdr --version` " +
    "(this warning comes once a day per server)";
  if (s.protocol !== undefined) {
    return (
      `WARNING: herdr ${s.version} (server '${server}') speaks socket protocol ${s.protocol}, which mam does not know: ` +
      `mam speaks protocol ${PROTOCOLS_TEXT}; untested with protocol ${s.protocol}: ${untested}`
    );
  }
  return `WARNING: herdr ${s.version} (server '${server}') is newer than mam knows: mam was checked against ${CHECKED_TEXT}; untested with ${s.version}: ${untested}`;
}

/** the once-a-day key of a herdr mam warns about (the protocol when known, else the version) */
export function warningKey(s: Support, server: string): string {
  const what = s.kind === "unknown" ? s.text : s.version;
  return s.protocol === undefined ? `herdr-newer ${server} ${what}` : `herdr-protocol ${server} ${s.protocol}`;
}

const memo = new Map<string, Support>();

interface CacheEntry {
  bin: string;
  size: number;
  mtimeMs: number;
  output: string;
  /** what `herdr status client --json` printed ("" when it failed); absent in entries of older mams */
  status?: string;
}

function cachePath(env: Env): string {
  return join(stateDir(env), "herdr-version.json");
}

/** `herdr --version` of this binary: memory, else the state file (same size and mtime), else run it */
export async function herdrSupport(bin: string, env: Env): Promise<Support> {
  const hit = memo.get(bin);
  if (hit) return hit;
  let st: { size: number; mtimeMs: number } | undefined;
  try {
    const s = statSync(bin);
    st = { size: s.size, mtimeMs: s.mtimeMs };
  } catch {}
  let entries: CacheEntry[] = [];
  try {
    const v = JSON.parse(readFileSync(cachePath(env), "utf8"));
    if (Array.isArray(v)) entries = v.filter((e): e is CacheEntry => e && typeof e.bin === "string" && typeof e.output === "string");
  } catch {}
  const cached = st && entries.find((e) => e.bin === bin && e.size === st!.size && e.mtimeMs === st!.mtimeMs && typeof e.status === "string");
  let output = cached?.output;
  let status = cached?.status;
  if (output === undefined || status === undefined) {
    const [r, c] = await Promise.all([
      execCapture([bin, "--version"], { env, timeoutMs: 5000 }),
      // the CLI's own protocol: it needs no server (src/cli/status.rs print_client_status)
      execCapture([bin, "status", "client", "--json"], { env, timeoutMs: 5000 }),
    ]);
    output = r.code === 0 ? r.stdout : `${r.stdout}${r.stderr}`;
    status = c.code === 0 ? c.stdout : "";
    if (st && r.code === 0) {
      const next = [...entries.filter((e) => e.bin !== bin), { bin, ...st, output, status }].slice(-8);
      try {
        mkdirSync(stateDir(env), { recursive: true, mode: 0o700 });
        atomicWriteFile(cachePath(env), `${JSON.stringify(next)}\n`);
      } catch {}
    }
  }
  const s = supportOf(output, protocolOf(status));
  memo.set(bin, s);
  return s;
}
