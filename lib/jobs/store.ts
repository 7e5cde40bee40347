// The jobs of one workspace behind one interface, JobStore: what use cases, the daemon's reactions,
// the dashboard and the CLI read and write jobs and journals through (deps.jobs; lib/ops/wiring.ts
// builds it). The files themselves: lib/jobs/record-file.ts (records, locks) and
// lib/jobs/journal-file.ts (journals); both are re-exported here for lib/jobs and tests.
import { readFileSync, statSync } from "node:fs";
import type { JobUsage } from "../cost/ledger.ts";
import type { Json } from "./canonical.ts";
import type { JobEvent } from "./event.ts";
import { recordKey } from "../sys/record-key.ts";
import type { Env } from "../sys/paths.ts";
import { type JobRecord, type JobSpec, importJob, jobsDir, journalPath, listJobIds, mutateRecord, notOwnJob, originPath, readRecord, recordPath, registerJob, requireRecord, setJobUsages, withDispatchLock } from "./record-file.ts";
import { type Appended, appendEvent, type EventDecision, readJournal, settleLastSeq } from "./journal-file.ts";

export * from "./record-file.ts";
export * from "./journal-file.ts";

/** the jobs of one workspace, as use cases get them (lib/ops/wiring.ts binds the workspace) */
export interface JobStore {
  /** the workspace */
  readonly ws: string;
  /** the jobs folder, .mam/jobs (for messages, and the queue's marker beside the files) */
  readonly dir: string;
  /** the record, or undefined when the job has no record here */
  read(id: string): JobRecord | undefined;
  /** the record, or exit 3 */
  require(id: string): JobRecord;
  journal(id: string): JobEvent[];
  ids(): string[];
  register(spec: JobSpec): Promise<JobRecord>;
  /** append an event of ours (appendEvent); `vouch`: the daemon's attestation (lib/team/attest.ts) */
  append(id: string, decide: EventDecision, opts?: { token?: string; vouch?: (ev: JobEvent) => { [k: string]: Json } }): Promise<Appended | undefined>;
  /** bring the record's last_seq up to the journal's highest seq, after lazy appends (settleLastSeq) */
  settle(id: string, maxSeq: () => number): Promise<void>;
  /** write the meter's counts into the records that have them (setJobUsages) */
  setUsages(usages: ReadonlyMap<string, JobUsage>): Promise<void>;
  /** this journal's origin id (<id>.origin), undefined when none was written here */
  origin(id: string): string | undefined;
  /** run fn under the dispatch lock (docs/jobs.md#the-queue; withDispatchLock) */
  dispatchLock<T>(fn: () => T | Promise<T>): Promise<T>;
  mutate(id: string, fn: (r: JobRecord) => JobRecord | undefined): Promise<JobRecord>;
  /** keep a copy of another machine's job (importJob), marked as this user's */
  importCopy(r: JobRecord, from: string): Promise<boolean>;
  /** why a record was not written by this user's mam (undefined: it was) */
  notOwn(r: JobRecord): string | undefined;
  /** a signature of the job's record and journal as they are now (undefined: no record): it changes whenever either does */
  stamp(id: string): string | undefined;
}

/** inode, size and modification time of a file ("-" when there is none) */
function fileStamp(path: string): string {
  try {
    const st = statSync(path);
    return `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return "-";
  }
}

/** the jobs of a workspace; `env` locates this user's record key (none: records are not marked) */
export function jobStore(ws: string, env?: Env): JobStore {
  let key: string | undefined;
  // made on the first write; once there it never changes
  const keyFor = (create: boolean) => (key ??= env ? recordKey(env, create) : undefined);
  return {
    ws,
    dir: jobsDir(ws),
    read: (id) => readRecord(ws, id),
    require: (id) => requireRecord(ws, id),
    journal: (id) => readJournal(ws, id),
    ids: () => listJobIds(ws),
    register: (spec) => registerJob(ws, spec, undefined, keyFor(true)),
    importCopy: (r, from) => importJob(ws, r, from, keyFor(true)),
    notOwn: (r) => notOwnJob(r, keyFor(false)),
    stamp: (id) => {
      const r = fileStamp(recordPath(ws, id));
      return r === "-" ? undefined : `${r}/${fileStamp(journalPath(ws, id))}`;
    },
    append: (id, decide, opts) => appendEvent(ws, id, decide, opts),
    mutate: (id, fn) => mutateRecord(ws, id, fn, keyFor(false)),
    settle: (id, maxSeq) => settleLastSeq(ws, id, maxSeq),
    setUsages: (usages) => setJobUsages(ws, usages),
    origin: (id) => {
      try {
        return readFileSync(originPath(ws, id), "utf8").trim();
      } catch {
        return undefined;
      }
    },
    dispatchLock: (fn) => withDispatchLock(ws, fn),
  };
}
