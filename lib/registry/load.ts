// Reading the registry: no lock, never creates anything. Bun.YAML parses (native, fast); the
// outline scan adds what it lacks (duplicate keys) and what writers need (where rows sit); the
// yaml library is only asked for the line and reason when something is wrong.
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { errCode, EXIT, MamError } from "../sys/errors.ts";
import { libraryParseError, type ParseProblem } from "./document.ts";
import { type Outline, scanOutline } from "./outline.ts";
import { registryBackupPath } from "./paths.ts";
import { emptyRegistry } from "./rows.ts";
import type { RegistryData } from "./types.ts";
import { SECTIONS } from "./types.ts";
import { validateRegistry } from "./validate.ts";
import { isPlainObject } from "./values.ts";

/** files larger than this are refused before parsing */
export const MAX_REGISTRY_BYTES = 16 * 1024 * 1024;

export interface RegistryFile {
  path: string;
  exists: boolean;
  text: string;
  /** what the file holds, as parsed (null for a missing or empty file) */
  raw: unknown;
  /** where things sit in the text; null when the outline cannot describe this file */
  outline: Extract<Outline, { kind: "ok" }> | null;
  /** permission bits of the file */
  mode?: number;
}

/**
 * the way out of a broken registry that exists: its backup when that reads as a registry
 * (`mam registry restore --yes`), else a rebuild from the panes the agents run in (`mam registry
 * rebuild`). Looked at only when an error is raised.
 */
export function wayOut(path: string): string {
  const bak = registryBackupPath(path);
  let usable = false;
  try {
    const f = loadRegistryFile(bak, { hint: "" });
    usable = f.exists && validateRegistry(f.raw, undefined, { parsed: true }).length === 0;
  } catch {}
  return usable
    ? `fix it, or put back its previous version ${bak}: mam registry restore --yes`
    : `fix it, or rebuild it from the panes the agents run in: mam registry rebuild`;
}

export function notYaml(path: string, p: ParseProblem, hint = wayOut(path)): MamError {
  return new MamError(`${path} is not valid YAML (line ${p.line}: ${p.reason})`, EXIT.FAIL, hint === "" ? undefined : hint);
}

function readBytes(path: string): { buf: Buffer; mode: number } | null {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (e) {
    if (errCode(e) === "ENOENT") return null;
    throw new MamError(`cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`, EXIT.FAIL);
  }
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) throw new MamError(`cannot read ${path}: it is a folder`, EXIT.FAIL);
    if (st.size > MAX_REGISTRY_BYTES) {
      throw new MamError(`${path} is too large (${st.size} bytes, the limit is ${MAX_REGISTRY_BYTES / 1024 / 1024} MiB)`, EXIT.FAIL, wayOut(path));
    }
    const buf = Buffer.alloc(st.size);
    let off = 0;
    while (off < buf.length) {
      const n = readSync(fd, buf, off, buf.length - off, off);
      if (n === 0) break;
      off += n;
    }
    return { buf: off === buf.length ? buf : buf.subarray(0, off), mode: st.mode & 0o7777 };
  } catch (e) {
    if (e instanceof MamError) throw e;
    throw new MamError(`cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`, EXIT.FAIL);
  } finally {
    closeSync(fd);
  }
}

function decodeUtf8(buf: Buffer): string | ParseProblem {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(buf);
  } catch {
    const loose = new TextDecoder("utf-8").decode(buf);
    const at = loose.indexOf("\ufffd");
    const line = (loose.slice(0, Math.max(0, at)).match(/\n/g)?.length ?? 0) + 1;
    return { line, reason: "invalid UTF-8" };
  }
}

/**
 * parse registry text: the data and (unless `outline` is false) the outline, which also finds
 * duplicate keys; throws the "not valid YAML" error
 */
export function parseRegistryText(text: string, path: string, hint?: string, withOutline = true): { raw: unknown; outline: RegistryFile["outline"] } {
  const outline: Outline = withOutline ? scanOutline(text) : { kind: "unsupported", why: "not scanned" };
  let raw: unknown;
  try {
    raw = Bun.YAML.parse(text);
  } catch (e) {
    const p = libraryParseError(text);
    throw notYaml(path, p ?? { line: outline.kind === "error" ? outline.line : 1, reason: String((e as Error).message ?? e).replace(/^YAML Parse error: /, "") }, hint);
  }
  if (withOutline && outline.kind !== "ok") {
    // the outline saw an error (e.g. a duplicate key, which Bun.YAML lets pass) or could not
    // describe the file: the yaml library decides
    const p = libraryParseError(text);
    if (p) throw notYaml(path, p, hint);
  }
  if (Array.isArray(raw) && /^(?:---|\.\.\.)/m.test(text)) {
    const p = libraryParseError(text);
    if (p) throw notYaml(path, p, hint);
  }
  return { raw, outline: outline.kind === "ok" ? outline : null };
}

export interface LoadOptions {
  /** the hint of a "not valid YAML" error (default: the way out that exists, wayOut; "": none) */
  hint?: string;
  /** scan the outline, which finds duplicate keys (default true) */
  outline?: boolean;
}

/** the file as it is: missing → exists false; unreadable, too large or not YAML → MamError exit 1 */
export function loadRegistryFile(path: string, opts: LoadOptions = {}): RegistryFile {
  const hint = opts.hint;
  const got = readBytes(path);
  if (got === null) return { path, exists: false, text: "", raw: null, outline: null };
  const text = decodeUtf8(got.buf);
  if (typeof text !== "string") throw notYaml(path, text, hint);
  const { raw, outline } = parseRegistryText(text, path, hint, opts.outline ?? true);
  return { path, exists: true, text, raw, outline, mode: got.mode };
}

/** registry data from parsed content that passed validation: absent or null sections are empty lists */
export function normalize(raw: unknown): RegistryData {
  if (raw === null || raw === undefined) return emptyRegistry();
  if (!isPlainObject(raw)) throw new Error("normalize: not a mapping");
  const data = { ...raw } as RegistryData;
  for (const s of SECTIONS) if (data[s] === null || data[s] === undefined) data[s] = [];
  return data;
}

/** the error for a file whose content fails validation */
export function invalidRegistry(path: string, problems: string[]): MamError {
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? "s" : ""})` : "";
  return new MamError(`${path}: ${problems[0]}${more}`, EXIT.FAIL, `${wayOut(path)} (mam registry check lists every problem)`);
}

export interface ReadOptions {
  /**
   * find duplicate keys too (default true). false skips the outline scan (Bun.YAML alone takes
   * the last of duplicate keys): about 12 ms less for 200 rows in a fresh process; writes and
   * `registry check` still refuse such files.
   */
  duplicateKeys?: boolean;
}

/**
 * The registry at path, for reading: no lock, never creates anything. A missing or empty file is
 * an empty registry. A file that does not parse or fails validation → MamError exit 1.
 */
export function readRegistry(path: string, opts: ReadOptions = {}): RegistryData {
  const f = loadRegistryFile(path, { outline: opts.duplicateKeys ?? true });
  const problems = validateRegistry(f.raw, undefined, { parsed: true });
  if (problems.length) throw invalidRegistry(path, problems);
  return normalize(f.raw);
}

/**
 * readRegistry for a process that reads the same file again and again (the daemon every pass,
 * `mam ui`): the parsed data is kept while the file is the same file with the same size, mtime
 * and ctime (every mam writer replaces it by a rename, a new inode; an edit in place changes its
 * ctime), and each call gets a copy of its own to change
 */
export function registryReader(path: string): (opts?: ReadOptions) => RegistryData {
  let kept: { key: string; data: RegistryData } | undefined;
  return (opts = {}) => {
    let key: string | undefined;
    try {
      const st = statSync(path, { bigint: true });
      key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}:${opts.duplicateKeys ?? true}`;
    } catch {}
    if (key !== undefined && kept?.key === key) return structuredClone(kept.data);
    const data = readRegistry(path, opts);
    kept = key === undefined ? undefined : { key, data: structuredClone(data) };
    return data;
  };
}

export interface Inspection {
  path: string;
  exists: boolean;
  /** rows per section (0 for a section that is not a list) */
  rows: Record<(typeof SECTIONS)[number], number>;
  problems: string[];
  /** the data, when it passed validation */
  data: RegistryData | null;
  /** what the file holds, as parsed (for checks of its own: registry check's names) */
  raw: unknown;
}

/** for `registry check`: parse (a parse error still throws) and list every problem */
export function inspectRegistry(path: string, hint?: string): Inspection {
  const f = loadRegistryFile(path, { hint });
  const problems = validateRegistry(f.raw, undefined, { parsed: true });
  const rows = { herdr_sessions: 0, tmux_sessions: 0 };
  if (isPlainObject(f.raw)) for (const s of SECTIONS) if (Array.isArray(f.raw[s])) rows[s] = (f.raw[s] as unknown[]).length;
  return { path, exists: f.exists, rows, problems, data: problems.length ? null : normalize(f.raw), raw: f.raw };
}
