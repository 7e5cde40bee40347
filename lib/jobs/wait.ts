// Waiting on jobs (SPEC §7.4 `job wait`, `job logs --follow`): from the journals, woken by a
// directory watch with a ≤ 250 ms polling fallback, plus the broker when one answers. Read-only:
// it never writes a journal (the daemon appends what the broker carries).
import { type FSWatcher, statSync, watch } from "node:fs";
import type { BrokerConfig } from "./broker-config.ts";
import { EXIT } from "../sys/errors.ts";
import { finalEvent, foldStatus, type JobEvent, unsigned, verifyEvent } from "./event.ts";
import { isFinal, type JobStatus } from "./statuses.ts";
import { EventIndex, eventKey } from "./identity.ts";
import { type JobRecord, jobsDir, journalPath, readJournal } from "./store.ts";

export const POLL_MS = 250;

/** wakes a waiter when .mam/jobs changes, else every POLL_MS */
export class JournalWatch {
  private watcher?: FSWatcher;
  private wakeUp?: () => void;
  private pending = false;

  constructor(ws: string) {
    try {
      this.watcher = watch(jobsDir(ws), { persistent: false }, () => this.wake());
      this.watcher.on("error", () => {});
    } catch {
      this.watcher = undefined; // polling only
    }
  }

  wake(): void {
    this.pending = true;
    this.wakeUp?.();
  }

  /** resolves on a change, a wake(), the signal, or after ms (at most POLL_MS) */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        signal?.removeEventListener("abort", done);
        this.wakeUp = undefined;
        this.pending = false;
        resolve();
      };
      const t = setTimeout(done, Math.max(0, Math.min(ms, POLL_MS)));
      this.wakeUp = done;
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  close(): void {
    this.watcher?.close();
  }
}

/** re-reads a journal only when its size or mtime changed */
export class JournalReader {
  private sig = "";
  events: JobEvent[] = [];

  constructor(
    private ws: string,
    private id: string,
  ) {}

  /** true when new content was read */
  refresh(): boolean {
    let s = "none";
    try {
      const st = statSync(journalPath(this.ws, this.id));
      s = `${st.size}:${st.mtimeMs}:${st.ino}`;
    } catch {}
    if (s === this.sig) return false;
    this.sig = s;
    this.events = readJournal(this.ws, this.id);
    return true;
  }
}

export interface WaitJob {
  job_id: string;
  status: JobStatus;
  last_event: JobEvent | null;
}

export interface WaitResult {
  /** attention: an event that `stopOn` picked arrived (e.g. permission_required) */
  outcome: "done" | "timeout" | "interrupted" | "attention";
  jobs: WaitJob[];
  /** with outcome attention: the event that ended the wait */
  event?: JobEvent;
}

export interface WaitOptions {
  any: boolean;
  /** undefined = no limit */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** listen on the broker too (undefined = journals only) */
  broker?: BrokerConfig;
  /** called once for each event that arrives during the wait (not for those journalled before) */
  onEvent?: (ev: JobEvent, jobs: WaitJob[]) => void;
  /** an arriving event for which this is true ends the wait at once (outcome attention) */
  stopOn?: (ev: JobEvent) => boolean;
}

/** wait until all (or any) of the jobs reach a final status */
export async function waitJobs(ws: string, records: JobRecord[], o: WaitOptions): Promise<WaitResult> {
  const deadline = o.timeoutMs === undefined ? Infinity : Date.now() + o.timeoutMs;
  const readers = new Map(records.map((r) => [r.job_id, new JournalReader(ws, r.job_id)]));
  const fromBroker = new Map<string, JobEvent[]>(records.map((r) => [r.job_id, []]));
  const byId = new Map(records.map((r) => [r.job_id, r]));
  const w = new JournalWatch(ws);

  const merged = (id: string): JobEvent[] => {
    const j = readers.get(id)!.events;
    const have = EventIndex.of(j);
    return [...j, ...fromBroker.get(id)!.filter((e) => !have.has(e))];
  };
  const snapshot = (): WaitJob[] =>
    records.map((r) => {
      const evs = merged(r.job_id);
      const status = evs.length ? foldStatus(evs, r) : r.status;
      const last = (isFinal(status) ? finalEvent(evs, r) : undefined) ?? evs[evs.length - 1] ?? null;
      return { job_id: r.job_id, status, last_event: last };
    });

  let sub: { close(): Promise<void> } | undefined;
  let subPromise: Promise<void> | undefined;
  if (o.broker) {
    const cfg = o.broker;
    const { subscribeTopics } = await import("./transport.ts");
    subPromise = subscribeTopics(
      cfg,
      records.map((r) => `${r.topic_prefix}/events`),
      (_topic, payload) => {
        const v = verifyEvent(
          payload,
          (id) => byId.get(id)?.auth_token,
          (id) => EventIndex.of(merged(id)),
        );
        if (v.ok) {
          fromBroker.get(v.event.job_id)?.push(v.event);
          w.wake();
        }
      },
    ).then((s) => {
      sub = s;
    });
  }

  // the events already there when the wait began are not news; an event is known by its identity
  // (origin, seq): a remote's seq 1 is news even when this machine's own seq 1 is not
  const seen = new Map<string, Set<string>>();
  const news = (): JobEvent[] => {
    const fresh: JobEvent[] = [];
    for (const r of records) {
      const evs = merged(r.job_id);
      let s = seen.get(r.job_id);
      if (!s) {
        seen.set(r.job_id, new Set(evs.map(eventKey)));
        continue;
      }
      for (const e of evs) {
        const k = eventKey(e);
        if (!s.has(k)) (s.add(k), fresh.push(e));
      }
    }
    return fresh;
  };

  try {
    for (;;) {
      for (const r of readers.values()) r.refresh();
      const snap = snapshot();
      for (const ev of news()) {
        o.onEvent?.(ev, snap);
        if (o.stopOn?.(ev)) return { outcome: "attention", jobs: snap, event: ev };
      }
      const ended = snap.filter((j) => isFinal(j.status));
      if (o.any ? ended.length > 0 : ended.length === snap.length) return { outcome: "done", jobs: snap };
      if (o.signal?.aborted) return { outcome: "interrupted", jobs: snap };
      const left = deadline - Date.now();
      if (left <= 0) return { outcome: "timeout", jobs: snap };
      await w.sleep(left, o.signal);
    }
  } finally {
    w.close();
    if (subPromise) {
      // do not hang on a broker that is still being dialled
      await Promise.race([subPromise, new Promise((r) => setTimeout(r, 100))]);
      await sub?.close();
      if (!sub) subPromise.then(() => sub?.close());
    }
  }
}

/** a wait's result as `job wait --json` prints it and the MCP tool returns it: no signatures */
export function publicWait(r: WaitResult): WaitResult {
  const jobs = r.jobs.map((j) => ({ ...j, last_event: j.last_event && unsigned(j.last_event) }));
  return { outcome: r.outcome, jobs, ...(r.event ? { event: unsigned(r.event) } : {}) };
}

/**
 * exit code of a finished wait: 0 all (or, with --any, the ended ones) completed, 6 the others
 * ended over their budget (budget_exceeded), 1 one ended otherwise, 5 timeout
 */
export function waitExitCode(r: WaitResult, any: boolean): number {
  if (r.outcome === "timeout") return EXIT.TIMEOUT;
  const considered = any ? r.jobs.filter((j) => isFinal(j.status)) : r.jobs;
  const others = considered.filter((j) => j.status !== "completed");
  if (others.length === 0) return EXIT.OK;
  return others.every((j) => j.status === "budget_exceeded") ? EXIT.BUDGET : EXIT.FAIL;
}
