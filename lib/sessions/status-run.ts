// Running `mam status` once or with --watch.
import { existsSync } from "node:fs";
import { muxFor } from "../mux/index.ts";
import { readRegistry, registryPath } from "../registry/index.ts";
import type { Row } from "../registry/types.ts";
import { isValidJobId } from "../sys/names.ts";
import type { Env } from "../sys/paths.ts";
import { epochNow } from "../sys/time.ts";
import { observe } from "./observe.ts";
import { type JobRef, renderStatus, type StatusDoc, statusDoc } from "./status.ts";

/** the job of a row: its delegate_job_id, when that job record exists */
function jobReader(ws: string) {
  return (row: Row): JobRef | null => {
    const id = row.delegate_job_id;
    if (typeof id !== "string" || !isValidJobId(id)) return null;
    const { effectiveStatus, readJournal, readRecord } = require("../jobs/store.ts") as typeof import("../jobs/store.ts");
    try {
      const rec = readRecord(ws, id);
      // the journal is the truth; the record's status is a cache
      return rec ? { id, status: effectiveStatus(rec, readJournal(ws, id)) } : { id, status: "unknown" };
    } catch {
      return { id, status: "unreadable" };
    }
  };
}

/** the newest job per session (agent_session), when the row names none */
function latestJobs(ws: string): Map<string, JobRef> {
  const m = new Map<string, JobRef>();
  const { effectiveStatus, jobsDir, listJobIds, readJournal, readRecord } = require("../jobs/store.ts") as typeof import("../jobs/store.ts");
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
 * The status use case. `jobOf` replaces reading the job records for the JOB column (mam ui has
 * them in memory already); by default a row's delegate_job_id, else its newest job.
 */
export async function sessionStatus(ws: string, env: Env, jobOf?: (row: Row) => JobRef | null): Promise<{ doc: StatusDoc; text: (color: boolean) => string }> {
  const path = registryPath(ws, env);
  const data = readRegistry(path);
  const obs = await observe(data, ws, (b, s) => muxFor(b, s, env), env, epochNow());
  const own = jobReader(ws);
  let latest: Map<string, JobRef> | undefined;
  const doc = statusDoc(ws, path, obs, jobOf ?? ((row) => own(row) ?? (latest ??= latestJobs(ws)).get(row.name) ?? null));
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
    const { text } = await sessionStatus(ws, env);
    const stamp = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    const { useColor, out } = await import("../sys/io.ts");
    out(`${tty ? "\u001b[H\u001b[2J" : ""}mam status — ${ws} — ${stamp} (every ${everyMs / 1000} s, Ctrl-C to stop)\n${text(useColor())}`);
    await new Promise<void>((r) => {
      const t = setTimeout(r, everyMs);
      ac.signal.addEventListener("abort", () => (clearTimeout(t), r()), { once: true });
    });
  }
  return code;
}
