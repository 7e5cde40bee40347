// Which herdr versions mam drives, and how it tells one it does not. mam is written against
// herdr's source at v0.8.0 and v0.8.2 (docs/herdr-compat.md): every argv it builds, every JSON
// field it reads, every error code it keys on. `herdr --version` prints `herdr <version>`
// (src/main.rs, build_info.rs: `0.8.2`, or `0.8.2-<channel>[.<build>]` for preview builds).
//
// The rule (supportOf, pure):
//   < 0.8.0   refused: older herdr lacks what mam relies on (agent start before 0.7.5, the 0.8.0
//             agent start / agent prompt semantics), so create and resume stop with an ERROR
//   0.8.x     supported
//   >= 0.9.0  allowed with a WARNING naming what mam has not checked, once a day per server
//             (HerdrMux.checkVersion, lib/sys/once-a-day.ts), not on every command
//   unreadable allowed, silently (a build or wrapper that prints something else: the calls
//             themselves then say what is wrong, if anything is)
// Where 0.8.0 and 0.8.2 differ, the driver follows the release it meets (releaseOf): 0.8.2 (and
// the withdrawn 0.8.1, which carried the same changes) refuses a prompt to a blocked agent itself
// and ends `agent start` of an agent blocked at a start dialog with agent_not_ready; on 0.8.0 mam
// does the first check itself. A herdr whose version mam cannot read is treated as 0.8.0.
// The answer is cached per binary (path, size, mtime) in <state>/herdr-version.json, so the
// `herdr --version` spawn happens once per herdr install, not once per mam call; and once per
// process in memory.
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

/** the herdr behaviour mam follows (see the header) */
export type HerdrRelease = "0.8.0" | "0.8.2";

export type Support = { kind: "supported"; version: string } | { kind: "old"; version: string } | { kind: "newer"; version: string } | { kind: "unknown"; text: string };

function cmp(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
}

/** what `herdr --version` printed → is it a herdr mam supports */
export function supportOf(versionOutput: string): Support {
  const m = /(\d+)\.(\d+)\.(\d+)(\S*)/.exec(versionOutput);
  if (!m) return { kind: "unknown", text: versionOutput.trim().slice(0, 80) };
  const v = [Number(m[1]), Number(m[2]), Number(m[3])];
  const version = m[0];
  if (cmp(v, MIN_HERDR) < 0) return { kind: "old", version };
  if (cmp(v, NEXT_UNCHECKED) >= 0) return { kind: "newer", version };
  return { kind: "supported", version };
}

/** the behaviour of a herdr: 0.8.2's from 0.8.1 on (newer ones too), else 0.8.0's */
export function releaseOf(s: Support): HerdrRelease {
  if (s.kind !== "supported" && s.kind !== "newer") return "0.8.0";
  const m = /(\d+)\.(\d+)\.(\d+)/.exec(s.version)!;
  return cmp([Number(m[1]), Number(m[2]), Number(m[3])], R082) >= 0 ? "0.8.2" : "0.8.0";
}

/** a refused version as the error the user sees; undefined when mam may go on */
export function unsupportedError(s: Support, bin: string): MamError | undefined {
  if (s.kind !== "old") return undefined;
  return new MamError(`herdr ${s.version} (${bin}) is too old: mam supports ${SUPPORTED_TEXT}`, EXIT.FAIL, "upgrade herdr (herdr update), or use --mux tmux");
}

/**
 * the warning for a version mam allows but was not checked against (said once a day per server),
 * naming what of herdr mam relies on and has not seen in that version
 */
export function versionWarning(s: Support, server: string): string | undefined {
  if (s.kind !== "newer") return undefined;
  return (
    `WARNING: herdr ${s.version} (server '${server}') is newer than mam knows: mam was checked against ${CHECKED_TEXT}; ` +
    `untested with ${s.version}: agent start (when an agent counts as ready, start dialogs), agent prompt (refusals), ` +
    `the pane list and process-info fields and the error codes mam reads; if a herdr call fails, report it with \`herdr --version\` ` +
    `(this warning comes once a day per server)`
  );
}

const memo = new Map<string, Support>();

interface CacheEntry {
  bin: string;
  size: number;
  mtimeMs: number;
  output: string;
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
  const cached = st && entries.find((e) => e.bin === bin && e.size === st!.size && e.mtimeMs === st!.mtimeMs);
  let output = cached?.output;
  if (output === undefined) {
    const r = await execCapture([bin, "--version"], { env, timeoutMs: 5000 });
    output = r.code === 0 ? r.stdout : `${r.stdout}${r.stderr}`;
    if (st && r.code === 0) {
      const next = [...entries.filter((e) => e.bin !== bin), { bin, ...st, output }].slice(-8);
      try {
        mkdirSync(stateDir(env), { recursive: true, mode: 0o700 });
        atomicWriteFile(cachePath(env), `${JSON.stringify(next)}\n`);
      } catch {}
    }
  }
  const s = supportOf(output);
  memo.set(bin, s);
  return s;
}
