// mam registry check | restore (docs/registry.md; SPEC §2.1)
import { existsSync, readFileSync, statSync } from "node:fs";
import { atomicWriteFile } from "../sys/atomic.ts";
import { EXIT, MamError, notFound } from "../sys/errors.ts";
import { withLock } from "../sys/flock.ts";
import { out, outJson } from "../sys/io.ts";
import { resolveWorkspace } from "../sys/paths.ts";
import { diffRegistries, type RegistryDiff, type RowId } from "../registry/diff.ts";
import { inspectRegistry, type Inspection, loadRegistryFile, normalize } from "../registry/load.ts";
import { registryBackupPath, registryLockPath, registryPath } from "../registry/paths.ts";
import { emptyRegistry } from "../registry/rows.ts";
import type { RegistryData } from "../registry/types.ts";
import { validateRegistry } from "../registry/validate.ts";
import { bool, defineCommand, jsonArg, str, workspaceArg } from "./command.ts";

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

const check = defineCommand({
  meta: {
    name: "check",
    description: "validate the registry and list every problem (exit 1 when there is one); reads only",
    examples: ["mam registry check", "mam registry check --workspace ~/src/api --json"],
  },
  args: { ...workspaceArg, ...jsonArg },
  run({ args }) {
    const path = registryPath(resolveWorkspace(str(args, "workspace")));
    const ins = inspectRegistry(path);
    const bak = describe(registryBackupPath(path));
    const ok = ins.problems.length === 0;
    if (bool(args, "json")) {
      outJson({
        path,
        exists: ins.exists,
        ok,
        rows: ins.rows,
        problems: ins.problems,
        backup: { path: bak.path, exists: bak.exists, ok: bak.ok, ...(bak.error && bak.exists ? { error: bak.error } : {}) },
      });
      return ok ? 0 : 1;
    }
    const state = !ins.exists ? "missing, an empty registry" : ok ? "ok" : plural(ins.problems.length, "problem");
    const lines = [`${path}: ${state} (${counts(ins.rows)})`, ...ins.problems.map((p) => `  ${p}`)];
    lines.push(`backup ${bak.path}: ${bak.ok ? `ok (${counts(bak.rows!)})` : bak.error}`);
    out(lines.join("\n"));
    return ok ? 0 : 1;
  },
});

const rowText = (r: RowId) => `${r.section === "herdr_sessions" ? "herdr" : "tmux"} ${r.server}/${r.name} (${r.status})`;

function diffLines(d: RegistryDiff): string[] {
  const lines: string[] = [];
  for (const r of d.onlyInA) lines.push(`  - ${rowText(r)}  only in the current file: dropped`);
  for (const r of d.onlyInB) lines.push(`  + ${rowText(r)}  only in the backup: comes back`);
  for (const r of d.changed) lines.push(`  ~ ${rowText(r)}  differs in: ${r.fields.join(", ")}`);
  lines.push(`  ${plural(d.unchanged, "row")} the same`);
  return lines;
}

const restore = defineCommand({
  meta: {
    name: "restore",
    description: "put agent-sessions.yaml.bak back (the current file becomes the new .bak); without --yes only shows what would change",
    examples: ["mam registry restore            # what would change; changes nothing", "mam registry restore --yes      # restore it"],
  },
  args: {
    ...workspaceArg,
    yes: { type: "boolean", description: "really restore (without it nothing is changed)" },
    ...jsonArg,
  },
  async run({ args }) {
    const path = registryPath(resolveWorkspace(str(args, "workspace")));
    const bakPath = registryBackupPath(path);
    const left = `${path} left as it is`;
    /** the backup's bytes and data, refused when it is missing or not a valid registry */
    const loadBackup = (): { bytes: Buffer; data: RegistryData; mode: number } => {
      if (!existsSync(bakPath)) throw notFound(`no backup to restore: ${bakPath} does not exist`, left);
      let f;
      try {
        f = loadRegistryFile(bakPath, { hint: left });
      } catch (e) {
        if (e instanceof MamError) throw new MamError(`cannot restore: ${e.message}`, e.exitCode, left);
        throw e;
      }
      const problems = validateRegistry(f.raw, undefined, { parsed: true });
      if (problems.length) throw new MamError(`cannot restore: ${bakPath}: ${problems[0]}`, EXIT.FAIL, left);
      return { bytes: Buffer.from(f.text, "utf8"), data: normalize(f.raw), mode: f.mode ?? 0o600 };
    };
    const yes = bool(args, "yes");
    const json = bool(args, "json");
    const bak = loadBackup();
    const cur = describe(path);
    const diff = diffRegistries(cur.data ?? emptyRegistry(), bak.data);
    const bakRows = { herdr_sessions: bak.data.herdr_sessions.length, tmux_sessions: bak.data.tmux_sessions.length };
    const doc = {
      path,
      backup: bakPath,
      restored: false,
      dry_run: !yes,
      current: { exists: cur.exists, ok: cur.ok, ...(cur.rows ? { rows: cur.rows } : {}), ...(cur.exists && cur.error ? { error: cur.error } : {}) },
      from_backup: { rows: bakRows },
      diff: { only_current: diff.onlyInA, only_backup: diff.onlyInB, changed: diff.changed, unchanged: diff.unchanged },
    };
    const curText = !cur.exists ? "missing" : cur.ok ? counts(cur.rows!) : cur.rows ? `${counts(cur.rows)}, ${cur.error}` : cur.error!;
    const summary = [`current ${path}: ${curText}`, `backup  ${bakPath}: ${counts(bakRows)}`, ...(cur.data || !cur.exists ? diffLines(diff) : [])];
    if (!yes) {
      if (json) outJson(doc);
      else out([...summary, "dry run: nothing changed; run again with --yes to restore (the current file becomes the new .bak)"].join("\n"));
      return 0;
    }
    let same = false;
    let hadCurrent = false;
    await withLock(registryLockPath(path), "registry", 60_000, () => {
      const fresh = loadBackup(); // again under the lock: a writer may have replaced it meanwhile
      const current = existsSync(path) ? readFileSync(path) : null;
      hadCurrent = current !== null;
      if (current !== null && current.equals(fresh.bytes)) {
        same = true;
        return;
      }
      const mode = current !== null ? statSync(path).mode & 0o7777 : fresh.mode;
      atomicWriteFile(path, fresh.bytes, { backupPath: bakPath, mode });
    });
    doc.restored = !same;
    if (json) outJson(doc);
    else if (same) out(`${path} is already the same as ${bakPath}; nothing to do`);
    else out([...summary, `restored ${path} from ${bakPath}${hadCurrent ? `; the replaced version is now ${bakPath}` : ""}`].join("\n"));
    return 0;
  },
});

export default defineCommand({
  meta: {
    name: "registry",
    description: "check the registry (.mam/agent-sessions.yaml) or put its backup back",
    examples: ["mam registry check", "mam registry restore --yes"],
  },
  subCommands: { check, restore },
});
