// The workspace's `.mam/` folder, as the commands that write into it make it (read-only commands
// create nothing: they never call this). It is a folder of mam's own, 0700, with a `.gitignore` of
// `*` inside, so that `git add -A` never stages the job records (their tokens), the registry or
// the logs (review R2). A `.mam/` made by an older mam, or by hand, gets its `.gitignore` the first
// time a writing command touches it; after that it costs one lstat per process. An existing
// `.gitignore` is never changed, whatever it says (the user's choice).
//
// `.mam` (or `.mam/jobs`) that is a symbolic link is refused: a workspace could ship
// `.mam -> ~/.config/x`, and mam would write its files into the link's target.
import { lstatSync, mkdirSync } from "node:fs";
import { basename, join } from "node:path";
import { atomicWriteFile } from "./atomic.ts";
import { errCode, EXIT, MamError, writeRefused } from "./errors.ts";
import { mamDir } from "./paths.ts";

export const GITIGNORE_TEXT = "# mam's state (job tokens, the registry, logs) is never committed; mam wrote this file\n*\n";

const ready = new Set<string>();

const refused = (dir: string, what: string) =>
  new MamError(`refusing to use ${dir}: it is ${what}`, EXIT.FAIL, "mam keeps its files in a folder of its own; move it away or remove it, and mam makes the folder again");

/** make `dir` (0700) unless it exists; a link or a file in its place is refused */
function folder(dir: string, recursive: boolean): boolean {
  try {
    const st = lstatSync(dir);
    if (st.isSymbolicLink()) throw refused(dir, "a symbolic link");
    if (!st.isDirectory()) throw refused(dir, "not a folder");
    return false;
  } catch (e) {
    if (errCode(e) !== "ENOENT") throw e;
  }
  try {
    mkdirSync(dir, { recursive, mode: 0o700 });
  } catch (e) {
    if (errCode(e) === "EEXIST") return false;
    // a read-only or unwritable workspace: named as such (errors.ts), else the system's reason
    throw writeRefused(e, dir) ?? new MamError(`cannot create ${dir} (${(e as Error).message})`, EXIT.FAIL, "check the workspace's permissions");
  }
  return true;
}

/** `.mam/.gitignore` when there is none; best effort (the next writing command tries again) */
function gitignore(dir: string): void {
  const p = join(dir, ".gitignore");
  try {
    lstatSync(p);
    return; // there is one (or something else there): left as it is
  } catch (e) {
    if (errCode(e) !== "ENOENT") return;
  }
  try {
    atomicWriteFile(p, GITIGNORE_TEXT, { mode: 0o644, regularOnly: true });
  } catch {}
}

/**
 * Make a folder mam writes into: a workspace's `.mam` (by its name) gets the rules above; any
 * other folder is made with its parents, 0700.
 */
export function prepareDir(dir: string): void {
  if (ready.has(dir)) return;
  if (basename(dir) !== ".mam") {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } else {
    folder(dir, true);
    gitignore(dir);
  }
  ready.add(dir);
}

/** the workspace's `.mam/`, made or checked as above */
export function ensureMamDir(ws: string): string {
  const dir = mamDir(ws);
  prepareDir(dir);
  return dir;
}

/** a folder of mam's inside `.mam/` (e.g. `jobs`), 0700; a link in its place is refused */
export function ensureMamSubdir(ws: string, name: string): string {
  const dir = join(ensureMamDir(ws), name);
  if (!ready.has(dir)) {
    folder(dir, false);
    ready.add(dir);
  }
  return dir;
}
