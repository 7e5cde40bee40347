// The herdr shim (SPEC §4.3): the bash script embedded in the binary, how it is recognised, and
// how it is written (atomically, executable, with the installing mam's own path inside).
import { selfCommand } from "../sys/self.ts";
import { closeSync, fsyncSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeSync, chmodSync } from "node:fs";
import { join } from "node:path";
import { errCode, EXIT, MamError } from "../sys/errors.ts";
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

/**
 * Write `<dir>/herdr` (creating dir): temp file in dir → fsync → chmod 0755 → rename. An existing
 * file that is not a mam shim is never overwritten. Returns the installed path.
 */
export function installShim(dir: string, mamCmd: string[] = selfCommand()): string {
  const dest = join(dir, "herdr");
  try {
    mkdirSync(dir, { recursive: true, mode: 0o755 });
  } catch (e) {
    throw new MamError(`cannot create ${dir}: ${(e as Error).message}`, EXIT.FAIL);
  }
  let existing = true;
  try {
    closeSync(openSync(dest, "r"));
  } catch (e) {
    if (errCode(e) === "ENOENT") existing = false;
  }
  if (existing && !isMamShimFile(dest)) {
    throw new MamError(`${dest} exists and is not a mam herdr shim; refusing to overwrite it`, EXIT.FAIL, "pass another --dir");
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
    throw new MamError(`cannot write ${dest}: ${(e as Error).message}`, EXIT.FAIL);
  }
  return dest;
}
