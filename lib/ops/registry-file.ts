// The registry file itself (docs/registry.md): check it (every problem, the backup's state; reads
// only), and put its backup back (the current file becomes the new backup; without `yes` only the
// difference is shown). Restore writes the file under the registry's lock, atomically.
import { existsSync, readFileSync, statSync } from "node:fs";
import { diffRegistries, type RegistryDiff, type RowId } from "../registry/diff.ts";
import { type Inspection, inspectRegistry, loadRegistryFile, normalize } from "../registry/load.ts";
import { registryBackupPath, registryLockPath } from "../registry/paths.ts";
import { emptyRegistry } from "../registry/rows.ts";
import type { RegistryData } from "../registry/types.ts";
import { nameProblems, validateRegistry } from "../registry/validate.ts";
import { atomicWriteFile } from "../sys/atomic.ts";
import { EXIT, MamError, notFound } from "../sys/errors.ts";
import { withLock } from "../sys/lock-file.ts";
import type { RegistryStore } from "./deps.ts";

const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? "" : "s"}`;
const counts = (r: Inspection["rows"]) => `herdr_sessions: ${plural(r.herdr_sessions, "row")}, tmux_sessions: ${plural(r.tmux_sessions, "row")}`;

interface FileState {
  path: string;
  exists: boolean;
  ok: boolean;
  rows?: Inspection["rows"];
  /** why it is not ok */
  error?: string;
  data?: RegistryData;
}

/** a registry file described, never throwing for its content */
function describe(path: string): FileState {
  if (!existsSync(path)) return { path, exists: false, ok: false, error: "missing" };
  try {
    const ins = inspectRegistry(path);
    if (ins.problems.length) return { path, exists: true, ok: false, rows: ins.rows, error: `${plural(ins.problems.length, "problem")}: ${ins.problems[0]}` };
    return { path, exists: true, ok: true, rows: ins.rows, data: ins.data! };
  } catch (e) {
    if (!(e instanceof MamError)) throw e;
    return { path, exists: true, ok: false, error: e.message.startsWith(`${path} `) ? e.message.slice(path.length + 1) : e.message };
  }
}

export interface Checked {
  path: string;
  exists: boolean;
  ok: boolean;
  rows: Inspection["rows"];
  problems: string[];
  backup: { path: string; exists: boolean; ok: boolean; error?: string };
  /** the backup's rows, for the text */
  backupRows?: Inspection["rows"];
}

export function checkRegistry(registry: RegistryStore): Checked {
  const path = registry.path;
  const ins = inspectRegistry(path);
  const bak = describe(registryBackupPath(path));
  // names mam would refuse: problems for the check (the file stays readable for everything else)
  const problems = [...ins.problems, ...nameProblems(ins.raw)];
  return {
    path,
    exists: ins.exists,
    ok: problems.length === 0,
    rows: ins.rows,
    problems,
    backup: { path: bak.path, exists: bak.exists, ok: bak.ok, ...(bak.error && bak.exists ? { error: bak.error } : {}) },
    ...(bak.rows ? { backupRows: bak.rows } : {}),
  };
}

export function checkedText(c: Checked): string {
  const state = !c.exists ? "missing, an empty registry" : c.ok ? "ok" : plural(c.problems.length, "problem");
  const lines = [`${c.path}: ${state} (${counts(c.rows)})`, ...c.problems.map((p) => `  ${p}`)];
  lines.push(`backup ${c.backup.path}: ${c.backup.ok && c.backupRows ? `ok (${counts(c.backupRows)})` : (c.backup.error ?? "missing")}`);
  return lines.join("\n");
}

export interface Restored {
  path: string;
  backup: string;
  restored: boolean;
  dry_run: boolean;
  /** the file was already the same as its backup */
  same: boolean;
  had_current: boolean;
  current: { exists: boolean; ok: boolean; rows?: Inspection["rows"]; error?: string };
  from_backup: { rows: Inspection["rows"] };
  diff: { only_current: RowId[]; only_backup: RowId[]; changed: (RowId & { fields: string[] })[]; unchanged: number };
  /** the summary lines of the text */
  summary: string[];
}

const rowText = (r: RowId) => `${r.section === "herdr_sessions" ? "herdr" : "tmux"} ${r.server}/${r.name} (${r.status})`;

function diffLines(d: RegistryDiff): string[] {
  const lines: string[] = [];
  for (const r of d.onlyInA) lines.push(`  - ${rowText(r)}  only in the current file: dropped`);
  for (const r of d.onlyInB) lines.push(`  + ${rowText(r)}  only in the backup: comes back`);
  for (const r of d.changed) lines.push(`  ~ ${rowText(r)}  differs in: ${r.fields.join(", ")}`);
  lines.push(`  ${plural(d.unchanged, "row")} the same`);
  return lines;
}

export async function restoreRegistry(registry: RegistryStore, yes: boolean): Promise<Restored> {
  const path = registry.path;
  const bakPath = registryBackupPath(path);
  const left = `${path} left as it is`;
  /** the backup's bytes and data, refused when it is missing or not a valid registry */
  const loadBackup = (): { bytes: Buffer; data: RegistryData; mode: number } => {
    if (!existsSync(bakPath)) throw notFound(`no backup to restore: ${bakPath} does not exist`, `${left}; mam registry rebuild re-registers the running agents from their panes`);
    let f;
    try {
      f = loadRegistryFile(bakPath, { hint: left });
    } catch (e) {
      if (e instanceof MamError) throw new MamError(`cannot restore: ${e.message}`, e.exitCode, `${left}; mam registry rebuild re-registers the running agents from their panes`);
      throw e;
    }
    const problems = validateRegistry(f.raw, undefined, { parsed: true });
    if (problems.length) throw new MamError(`cannot restore: ${bakPath}: ${problems[0]}`, EXIT.FAIL, `${left}; mam registry rebuild re-registers the running agents from their panes`);
    return { bytes: Buffer.from(f.text, "utf8"), data: normalize(f.raw), mode: f.mode ?? 0o600 };
  };
  const bak = loadBackup();
  const cur = describe(path);
  const diff = diffRegistries(cur.data ?? emptyRegistry(), bak.data);
  const bakRows = { herdr_sessions: bak.data.herdr_sessions.length, tmux_sessions: bak.data.tmux_sessions.length };
  const curText = !cur.exists ? "missing" : cur.ok ? counts(cur.rows!) : cur.rows ? `${counts(cur.rows)}, ${cur.error}` : cur.error!;
  const summary = [`current ${path}: ${curText}`, `backup  ${bakPath}: ${counts(bakRows)}`, ...(cur.data || !cur.exists ? diffLines(diff) : [])];
  const doc: Restored = {
    path,
    backup: bakPath,
    restored: false,
    dry_run: !yes,
    same: false,
    had_current: cur.exists,
    current: { exists: cur.exists, ok: cur.ok, ...(cur.rows ? { rows: cur.rows } : {}), ...(cur.exists && cur.error ? { error: cur.error } : {}) },
    from_backup: { rows: bakRows },
    diff: { only_current: diff.onlyInA, only_backup: diff.onlyInB, changed: diff.changed, unchanged: diff.unchanged },
    summary,
  };
  if (!yes) return doc;
  await withLock(registryLockPath(path), "registry", 60_000, () => {
    const fresh = loadBackup(); // again under the lock: a writer may have replaced it meanwhile
    const current = existsSync(path) ? readFileSync(path) : null;
    doc.had_current = current !== null;
    if (current !== null && current.equals(fresh.bytes)) {
      doc.same = true;
      return;
    }
    const mode = current !== null ? statSync(path).mode & 0o7777 : fresh.mode;
    atomicWriteFile(path, fresh.bytes, { backupPath: bakPath, mode, regularOnly: true });
  });
  doc.restored = !doc.same;
  return doc;
}

export function restoredText(r: Restored): string {
  if (r.dry_run) return [...r.summary, "dry run: nothing changed; run again with --yes to restore (the current file becomes the new .bak)"].join("\n");
  if (r.same) return `${r.path} is already the same as ${r.backup}; nothing to do`;
  return [...r.summary, `restored ${r.path} from ${r.backup}${r.had_current ? `; the replaced version is now ${r.backup}` : ""}`].join("\n");
}
