// A workspace's journals as they grow, for the bench areas that time a job's stages (team,
// queue): the first time the bench saw each stage of each job, on the bench's clock (journal
// timestamps are whole seconds). An inotify watch of .mam/jobs reads each journal's new bytes as
// it grows; sweeps back the watch up: every 20 ms the journals of jobs not completed yet, every
// 250 ms the whole folder; byWatch/bySweep say how many lines each saw.
import { readdirSync, readFileSync, statSync, watch } from "node:fs";
import { join } from "node:path";
import type { JobEvent } from "../lib/jobs/event.ts";

/** a jobs folder's journals as they grow: the first time the bench saw each stage of each job */
export class JournalWatch {
  /** job id → event → when first read (bench clock), and how many times */
  readonly seen = new Map<string, Map<string, { at: number; n: number }>>();
  byWatch = 0;
  bySweep = 0;
  private offsets = new Map<string, number>();
  private w;
  private timers: ReturnType<typeof setInterval>[] = [];
  constructor(private dir: string) {
    this.w = watch(dir, { persistent: false }, (_e, f) => f && this.read(String(f), false));
    this.timers.push(
      setInterval(() => {
        for (const f of readdirSync(dir)) this.read(f, true);
      }, 250),
      setInterval(() => {
        for (const f of this.offsets.keys()) if (!this.at(f.slice(0, 8), "completed")) this.read(f, true);
      }, 20),
    );
  }
  private read(file: string, sweep: boolean) {
    if (!/^[0-9a-f]{8}\.events\.ndjson$/.test(file)) return;
    const path = join(this.dir, file);
    const from = this.offsets.get(file) ?? 0;
    let buf: Buffer;
    try {
      if (statSync(path).size <= from) return;
      buf = readFileSync(path);
    } catch {
      return;
    }
    const end = buf.lastIndexOf(10) + 1; // whole lines only
    if (end <= from) return;
    const at = performance.now();
    const id = file.slice(0, 8);
    const stages = this.seen.get(id) ?? new Map<string, { at: number; n: number }>();
    for (const l of buf.subarray(from, end).toString("utf8").split("\n")) {
      if (!l.trim()) continue;
      const e = JSON.parse(l) as JobEvent;
      const s = stages.get(e.event);
      if (s) s.n++;
      else stages.set(e.event, { at, n: 1 });
      if (sweep) this.bySweep++;
      else this.byWatch++;
    }
    this.seen.set(id, stages);
    this.offsets.set(file, end);
  }
  /** when the bench first saw that stage of the job */
  at(id: string, event: string): number | undefined {
    return this.seen.get(id)?.get(event)?.at;
  }
  count(id: string, event: string): number {
    return this.seen.get(id)?.get(event)?.n ?? 0;
  }
  close() {
    this.w.close();
    for (const t of this.timers) clearInterval(t);
  }
}
