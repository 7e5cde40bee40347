// The one writer of the registry (SPEC §2.1): under the registry flock, read the file fresh, let
// the caller change a copy, validate, and replace the file atomically with a .bak of the previous
// version, changing only the text of what changed. Nothing is written when nothing changed, when
// the change fails validation, or when the caller throws.
import { basename, dirname } from "node:path";
import { atomicWriteFile, checkRegular, removeStaleTemps } from "../sys/atomic.ts";
import { debugLine } from "../sys/debug.ts";
import { EXIT, MamError } from "../sys/errors.ts";
import { withLock } from "../sys/lock-file.ts";
import { documentEdit } from "./document.ts";
import { invalidRegistry, loadRegistryFile, normalize, type RegistryFile } from "./load.ts";
import { registryBackupPath, registryLockPath } from "./paths.ts";
import { serverOf } from "./rows.ts";
import { Bail, type RowMatch, spliceRegistry } from "./splice.ts";
import type { RegistryData, Row, Section } from "./types.ts";
import { SECTIONS } from "./types.ts";
import { validateRegistry } from "./validate.ts";
import { deepEqual, isPlainObject } from "./values.ts";

/** what a mutation function gets besides the data */
export interface RegistryTx {
  /** the registry file being changed */
  readonly path: string;
  /**
   * let this write change the role of rows named `name` (the role rule otherwise refuses it):
   * for create replacing a stopped row, or adopting the monitor's registration of its pane
   */
  allowRoleChange(name: string): void;
}

export interface MutateOptions {
  /** how long to wait for the registry lock (default 60 s; then MamError exit 5) */
  lockBudgetMs?: number;
}

export const HEADER = [
  "# mam agent registry: one row per agent session, written by mam under a lock.",
  "# The previous version is kept in the .bak file next to this one. Check it with: mam registry check",
];

/** which strategy produced the last write (for tests and MAM_DEBUG) */
export let lastWriteStrategy: "splice" | "document" | "fresh" | undefined;

/** for each row after the change, the row of the file it continues: the same object, else the same name and server, else the same name */
export function matchRows(section: Section, fileRows: Row[], given: Row[], after: unknown[]): RowMatch {
  const index = new Map<unknown, number>();
  given.forEach((r, i) => index.set(r, i));
  const used = new Set<number>();
  const match: RowMatch = after.map((r) => {
    const j = index.get(r);
    if (j === undefined || used.has(j)) return null;
    used.add(j);
    return j;
  });
  for (const sameServer of [true, false]) {
    for (let k = 0; k < after.length; k++) {
      const r = after[k];
      if (match[k] !== null || !isPlainObject(r) || typeof r.name !== "string") continue;
      const j = fileRows.findIndex((f, i) => !used.has(i) && f.name === r.name && (!sameServer || serverOf(f, section) === serverOf(r as Row, section)));
      if (j >= 0) {
        used.add(j);
        match[k] = j;
      }
    }
  }
  return match;
}

/** the data as the file should hold it: sections the file lacks stay absent while empty */
function fileShape(file: RegistryFile, after: RegistryData): Record<string, unknown> {
  const raw = isPlainObject(file.raw) ? file.raw : null;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(after)) {
    const v = after[k];
    if (v === undefined) continue;
    if ((SECTIONS as readonly string[]).includes(k) && Array.isArray(v) && v.length === 0 && raw !== null) {
      if (!(k in raw)) continue;
      if (raw[k] === null) {
        out[k] = null;
        continue;
      }
    }
    out[k] = v;
  }
  return out;
}

function sameContent(text: string, after: RegistryData): boolean {
  try {
    const raw = Bun.YAML.parse(text);
    if (raw !== null && !isPlainObject(raw)) return false;
    return deepEqual(normalize(raw), after);
  } catch {
    return false;
  }
}

/** the text that holds `after`, keeping as much of the file as it can */
export function renderRegistry(file: RegistryFile, after: RegistryData, matches: Partial<Record<Section, RowMatch>>): string {
  const shaped = fileShape(file, after);
  const before = isPlainObject(file.raw) ? file.raw : null;
  if (file.outline) {
    try {
      const text = spliceRegistry({ lines: file.outline.lines, root: file.outline.root, before, after: shaped, matches, header: HEADER });
      if (sameContent(text, after)) {
        lastWriteStrategy = "splice";
        return text;
      }
      debugLine("registry splice gave different content; using the yaml Document");
    } catch (e) {
      if (!(e instanceof Bail)) throw e;
      debugLine(`registry splice: ${e.message}; using the yaml Document`);
    }
  }
  if (file.exists && file.text.trim() !== "") {
    try {
      const text = documentEdit(file.text, before, shaped, matches);
      if (sameContent(text, after)) {
        lastWriteStrategy = "document";
        return text;
      }
    } catch (e) {
      debugLine(`registry Document edit: ${String(e)}; writing the file anew`);
    }
  }
  const text = spliceRegistry({ lines: [], root: null, before: null, after: { ...after }, matches: {}, header: HEADER });
  if (!sameContent(text, after)) throw new MamError(`internal error: cannot render the registry for ${file.path}; nothing written`, EXIT.FAIL);
  lastWriteStrategy = "fresh";
  return text;
}

/**
 * Change the registry at `path`: `fn` gets a fresh copy of the data, read under the registry lock,
 * and changes it in place (edit rows, push, splice, replace). Returns fn's result and whether the
 * file changed. See lib/registry/index.ts for the rules.
 */
export async function mutateRegistry<T>(
  path: string,
  fn: (data: RegistryData, tx: RegistryTx) => T | Promise<T>,
  opts: MutateOptions = {},
): Promise<{ result: T; changed: boolean }> {
  return withLock(registryLockPath(path), "registry", opts.lockBudgetMs ?? 60_000, async () => {
    // never through a link (it became a 0644 regular file, its target's mode): refused before any change
    checkRegular(path);
    const file = loadRegistryFile(path);
    const problems = validateRegistry(file.raw, undefined, { parsed: true });
    if (problems.length) throw invalidRegistry(path, problems);
    const before = normalize(file.raw);
    const data = structuredClone(before);
    const given: Record<Section, Row[]> = { herdr_sessions: [...data.herdr_sessions], tmux_sessions: [...data.tmux_sessions] };
    const allowed = new Set<string>();
    const tx: RegistryTx = {
      path,
      allowRoleChange(name: string) {
        allowed.add(name);
      },
    };
    const result = await fn(data, tx);
    for (const s of SECTIONS) if (data[s] === undefined || data[s] === null) data[s] = [];
    const bad = validateRegistry(data, before, { allowRoleChange: allowed });
    if (bad.length) {
      const more = bad.length > 1 ? ` (and ${bad.length - 1} more problem${bad.length > 2 ? "s" : ""})` : "";
      throw new MamError(`${bad[0]}${more}`, EXIT.FAIL);
    }
    if (deepEqual(before, data)) return { result, changed: false };
    const matches: Partial<Record<Section, RowMatch>> = {};
    for (const s of SECTIONS) matches[s] = matchRows(s, before[s], given[s], data[s]);
    const text = renderRegistry(file, data, matches);
    const dir = dirname(path);
    removeStaleTemps(dir, basename(path));
    removeStaleTemps(dir, basename(registryBackupPath(path)));
    atomicWriteFile(path, text, { backupPath: registryBackupPath(path), mode: file.mode ?? 0o600, regularOnly: true });
    return { result, changed: true };
  });
}
