// The gaps this workspace's daemon saw in another host's numbering of its events on our jobs
// (docs/machines.md#what-a-broker-may-drop): an event seq N+2 where N+1 had not come. A broker that
// drops messages silently (a client queue past its limit, a node lost with what it held) shows
// so, as does a host that was cut off; either way mam's acks have the missing events sent again.
// Kept per host in `.mam/team-gaps.json` (the daemon is its one writer) for `mam status --fleet`
// and `mam doctor`; a host's entry goes a week after its last gap.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile } from "../sys/atomic.ts";
import { isoUtc } from "../sys/time.ts";

export interface HostGaps {
  /** gaps seen since `first_at` */
  count: number;
  first_at: string;
  last_at: string;
  /** the last one, as the daemon logged it */
  last: string;
}

export const gapsPath = (ws: string) => join(ws, ".mam", "team-gaps.json");
const KEEP_MS = 7 * 86_400_000;
/** gaps this recent are reported */
export const RECENT_MS = 86_400_000;

/** the gaps by host; none when the file is missing or does not read */
export function readGaps(ws: string): Record<string, HostGaps> {
  try {
    const doc = JSON.parse(readFileSync(gapsPath(ws), "utf8")) as unknown;
    if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return {};
    const out: Record<string, HostGaps> = {};
    for (const [h, g] of Object.entries(doc as Record<string, Partial<HostGaps>>)) {
      if (typeof g?.count === "number" && typeof g.first_at === "string" && typeof g.last_at === "string" && typeof g.last === "string") out[h] = g as HostGaps;
    }
    return out;
  } catch {
    return {};
  }
}

/** note one gap in `host`'s events (the daemon); entries older than a week go */
export function noteGap(ws: string, host: string, line: string, nowMs = Date.now()): void {
  const all = readGaps(ws);
  for (const [h, g] of Object.entries(all)) if (nowMs - Date.parse(g.last_at) > KEEP_MS) delete all[h];
  const at = isoUtc(Math.floor(nowMs / 1000));
  const had = all[host];
  all[host] = { count: (had?.count ?? 0) + 1, first_at: had?.first_at ?? at, last_at: at, last: line.slice(0, 300) };
  try {
    atomicWriteFile(gapsPath(ws), `${JSON.stringify(all)}\n`);
  } catch {
    // .mam/ not writable: the log line stays
  }
}

/** (pure) the hosts with a gap in the last day, as one sentence each */
export function recentGaps(all: Record<string, HostGaps>, nowMs: number): string[] {
  return Object.entries(all)
    .filter(([, g]) => nowMs - Date.parse(g.last_at) <= RECENT_MS)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([h, g]) => `events from ${h} arrived with a gap in their numbering ${g.count === 1 ? "once" : `${g.count} times`} since ${g.first_at} (last at ${g.last_at}: ${g.last}); mam's acks had the missing ones sent again. A broker that drops messages (a client queue past its limit, a lost node) or a host cut off for a while does this`);
}
