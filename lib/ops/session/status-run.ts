// Running `mam status` once or with --watch.
import { existsSync } from "node:fs";
import { muxFor } from "../../mux/index.ts";
import { readRegistry, registryPath } from "../../registry/index.ts";
import { type RegistryData, type Row, SECTIONS } from "../../registry/types.ts";
import { isValidJobId } from "../../sys/names.ts";
import type { Env } from "../../sys/paths.ts";
import { epochNow } from "../../sys/time.ts";
import { observe } from "./observe.ts";
import { type JobRef, renderStatus, type StatusDoc, statusDoc, type WorktreeStatus } from "./status.ts";

/** the job of a row: its delegate_job_id, when that job record exists */
function jobReader(ws: string) {
  return (row: Row): JobRef | null => {
    const id = row.delegate_job_id;
    if (typeof id !== "string" || !isValidJobId(id)) return null;
    const { effectiveStatus, readJournal, readRecord } = require("../../jobs/store.ts") as typeof import("../../jobs/store.ts");
    try {
      const rec = readRecord(ws, id);
      // the journal is the truth; the record's status is a cache
      return rec ? { id, status: effectiveStatus(rec, readJournal(ws, id)) } : { id, status: "unknown" };
    } catch {
      return { id, status: "unreadable" };
    }
  };
}

/**
 * the worktrees of the rows that have one (git is asked for no other row), all at once; the
 * ahead/behind/changed counts only when `counts` (--json)
 */
async function worktreeStatuses(ws: string, data: RegistryData, env: Env, counts: boolean): Promise<Map<Row, WorktreeStatus>> {
  const m = new Map<Row, WorktreeStatus>();
  const withWt = SECTIONS.flatMap((section) => data[section].filter((r) => r.worktree !== undefined).map((row) => ({ section, row })));
  if (withWt.length === 0) return m;
  const [{ worktreeOf }, { headOf, viewOf }] = await Promise.all([import("../../worktrees/plan.ts"), import("../worktree.ts")]);
  const head = counts ? headOf(ws, env) : undefined;
  await Promise.all(
    withWt.map(async ({ section, row }) => {
      const wt = worktreeOf(row);
      if (!wt) return;
      const v = await viewOf(section, row, wt, head, env, counts);
      m.set(row, { path: v.path, branch: v.branch, base: v.base, exists: v.exists, ahead: v.ahead, behind: v.behind, changed: v.changed });
    }),
  );
  return m;
}

/** the newest job per session (agent_session), when the row names none */
function latestJobs(ws: string): Map<string, JobRef> {
  const m = new Map<string, JobRef>();
  const { effectiveStatus, jobsDir, listJobIds, readJournal, readRecord } = require("../../jobs/store.ts") as typeof import("../../jobs/store.ts");
  if (!existsSync(jobsDir(ws))) return m;
  const recs = listJobIds(ws)
    .map((id) => {
      try {
        return readRecord(ws, id);
      } catch {
        return undefined;
      }
    })
    .filter((r) => r !== undefined)
    .sort((a, b) => (a!.created_at < b!.created_at ? -1 : 1));
  for (const r of recs) m.set(r!.agent_session, { id: r!.job_id, status: effectiveStatus(r!, readJournal(ws, r!.job_id)) });
  return m;
}

/**
 * The status use case. `counts`: also each worktree's ahead/behind/changed (status --json).
 * `jobOf` replaces reading the job records for the JOB column (mam ui has them in memory); by
 * default a row's delegate_job_id, else its newest job.
 */
export async function sessionStatus(ws: string, env: Env, counts = true, jobOf?: (row: Row) => JobRef | null): Promise<{ doc: StatusDoc; text: (color: boolean) => string }> {
  const path = registryPath(ws, env);
  const data = readRegistry(path);
  const [obs, wts] = await Promise.all([observe(data, ws, (b, s) => muxFor(b, s, env), env, epochNow()), worktreeStatuses(ws, data, env, counts)]);
  const own = jobReader(ws);
  let latest: Map<string, JobRef> | undefined;
  const doc = statusDoc(ws, path, obs, jobOf ?? ((row) => own(row) ?? (latest ??= latestJobs(ws)).get(row.name) ?? null), (row) => wts.get(row));
  return { doc, text: (color) => renderStatus(doc, color) };
}

export async function watchStatus(ws: string, env: Env, everyMs: number): Promise<number> {
  const ac = new AbortController();
  let code = 0;
  const stop = (c: number) => {
    code = c;
    ac.abort();
  };
  process.on("SIGINT", () => stop(130));
  process.on("SIGTERM", () => stop(143));
  const tty = process.stdout.isTTY;
  while (!ac.signal.aborted) {
    const { text } = await sessionStatus(ws, env, false);
    const stamp = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    const { useColor, out } = await import("../../sys/io.ts");
    out(`${tty ? "\u001b[H\u001b[2J" : ""}mam status — ${ws} — ${stamp} (every ${everyMs / 1000} s, Ctrl-C to stop)\n${text(useColor())}`);
    await new Promise<void>((r) => {
      const t = setTimeout(r, everyMs);
      ac.signal.addEventListener("abort", () => (clearTimeout(t), r()), { once: true });
    });
  }
  return code;
}
