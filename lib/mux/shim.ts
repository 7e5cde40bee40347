// The herdr shim (SPEC §4.3): the bash script embedded in the binary, how it is recognised, and
// how it is written (atomically, executable, with the installing mam's own path inside).
//
// Where mam's agents find it (issue 23, R3): first on their PATH, so that folder must hold only
// what mam wrote. It is never in the workspace (a repository that ships `.mam/bin/git` would run
// its own git for every agent): it is `<home>/.local/state/mam/shims/<key>/`, one per workspace
// (key: the first 16 hex digits of sha256 of its path), made 0700 by mam and written again by
// every create whose shim is not already there byte for byte (executable, a plain file).
import { selfCommand } from "../sys/self.ts";
import { sha256Hex } from "../sys/digest.ts";
import { closeSync, fsyncSync, lstatSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, writeSync, chmodSync } from "node:fs";
import { join } from "node:path";
import { errCode, EXIT, MamError, writeRefused } from "../sys/errors.ts";
import { field } from "../sys/fields.ts";
import { type Env, stateDir } from "../sys/paths.ts";
import script from "../assets/herdr-shim.sh" with { type: "text" };

/** line 2 of every shim starts with this */
export const SHIM_MARKER = "# mam-herdr-shim:";

/** true when the file at p is a mam herdr shim (its second line carries the marker) */
export function isMamShimFile(p: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(p, "r");
    const buf = Buffer.alloc(512);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const lines = buf.subarray(0, n).toString("latin1").split("\n");
    return (lines[1] ?? "").startsWith(SHIM_MARKER);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** bash single-quoting */
function bashQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}


/** the shim text with the mam command written in */
export function renderShim(mamCmd: string[]): string {
  const words = mamCmd.map(bashQuote).join(" ");
  if (!script.includes("(__MAM_CMD__)")) throw new Error("herdr-shim.sh lost its __MAM_CMD__ placeholder");
  return script.replace("(__MAM_CMD__)", () => `(${words})`);
}

/** the folder of the herdr shim of a workspace's agents (see the header): mam's, never the workspace's */
export function agentShimDir(ws: string, env: Env): string {
  return join(stateDir(env), "shims", sha256Hex(ws).slice(0, 16));
}

/**
 * PATH without the folders of mam's herdr shims: agentShimDir's, and the `<ws>/.mam/bin` of
 * older mams (a workspace's own folder, which it could fill with anything)
 */
export function withoutShimDirs(path: string, env: Env): string {
  let mine: string | undefined;
  try {
    mine = join(stateDir(env), "shims");
  } catch {} // no home: no shim folder of mam's either
  const isShimDir = (d: string) => /(^|\/)\.mam\/bin\/?$/.test(d) || (mine !== undefined && (d === mine || d.startsWith(`${mine}/`)));
  return path
    .split(":")
    .filter((d) => !isShimDir(d))
    .join(":");
}

/** make dir (0700, its missing parents too) and check it is a folder of this user's, not a link */
function privateDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw writeRefused(e, dir) ?? new MamError(`cannot create ${dir}: ${(e as Error).message}`, EXIT.FAIL);
  }
  const st = lstatSync(dir);
  const uid = process.getuid?.();
  if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) {
    throw new MamError(`${dir} is not a folder of yours; mam keeps the agents' herdr shim there`, EXIT.FAIL, "remove it, and mam makes it again");
  }
  if ((st.mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
}

/**
 * (Re)write the herdr shim of the workspace's agents into agentShimDir (whatever was there is
 * replaced: the folder is mam's alone); returns the folder, for the front of the agents' PATH
 */
export function installAgentShim(ws: string, env: Env, mamCmd: string[] = selfCommand()): string {
  const dir = agentShimDir(ws, env);
  privateDir(dir);
  if (!shimInPlace(join(dir, "herdr"), renderShim(mamCmd))) installShim(dir, mamCmd, true);
  return dir;
}

/** `path` is a plain file of this user's, 0755, holding exactly `text` (then writing it again, with its fsyncs, would change nothing) */
function shimInPlace(path: string, text: string): boolean {
  try {
    const st = lstatSync(path);
    const uid = process.getuid?.();
    if (!st.isFile() || (st.mode & 0o7777) !== 0o755 || (uid !== undefined && st.uid !== uid)) return false;
    return readFileSync(path, "utf8") === text;
  } catch {
    return false;
  }
}

/**
 * Write `<dir>/herdr` (creating dir): temp file in dir → fsync → chmod 0755 → rename. An existing
 * file that is not a mam shim is never overwritten, unless `replace` (a folder that is mam's
 * alone). Returns the installed path.
 */
export function installShim(dir: string, mamCmd: string[] = selfCommand(), replace = false): string {
  const dest = join(dir, "herdr");
  try {
    mkdirSync(dir, { recursive: true, mode: 0o755 });
  } catch (e) {
    throw writeRefused(e, dir) ?? new MamError(`cannot create ${dir}: ${(e as Error).message}`, EXIT.FAIL);
  }
  let existing = true;
  try {
    closeSync(openSync(dest, "r"));
  } catch (e) {
    if (errCode(e) === "ENOENT") existing = false;
  }
  if (existing && !replace && !isMamShimFile(dest)) {
    throw new MamError(`${dest} exists and is not a mam herdr shim; refusing to overwrite it`, EXIT.FAIL, `pass another ${field("dir")}`);
  }
  const tmp = join(dir, `.herdr.${process.pid}.${Date.now()}.tmp`);
  const text = Buffer.from(renderShim(mamCmd), "utf8");
  try {
    const fd = openSync(tmp, "w", 0o755);
    try {
      let off = 0;
      while (off < text.length) off += writeSync(fd, text, off, text.length - off);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    chmodSync(tmp, 0o755);
    renameSync(tmp, dest);
    const dfd = openSync(dir, "r");
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch (e) {
    rmSync(tmp, { force: true });
    throw writeRefused(e, dir) ?? new MamError(`cannot write ${dest}: ${(e as Error).message}`, EXIT.FAIL);
  }
  return dest;
}
