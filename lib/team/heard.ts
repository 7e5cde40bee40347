// What this workspace's daemon heard of its team as it happened (docs/machines.md): the newest
// presence and online state of each workspace, kept as the sealed messages that said them, in
// `.mam/team-heard.json` (the daemon is its one writer). A broker that keeps retained messages per
// node, or serves none to a wildcard subscription (RabbitMQ's MQTT plugin does both), hands a
// command that reads the roster nothing; what the daemon heard live, with each host's heartbeat,
// fills that in (lib/team/roster.ts). The messages are kept sealed: a file that a cloned
// workspace ships opens only with the team's secret, and an older message never wins over a
// newer one (rosterEntry's order).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile } from "../sys/atomic.ts";
import type { Team } from "./config.ts";
import { newer, rosterEntry } from "./roster-entry.ts";

export const heardPath = (ws: string) => join(ws, ".mam", "team-heard.json");

/** the sealed messages heard, by topic; none when the file is missing or does not read */
export function readHeard(ws: string): Map<string, string> {
  const out = new Map<string, string>();
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(heardPath(ws), "utf8"));
  } catch {
    return out;
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return out;
  for (const [topic, payload] of Object.entries(doc as Record<string, unknown>)) if (typeof payload === "string") out.set(topic, payload);
  return out;
}

/** the daemon's side: note each presence and online state heard, write the file when it changed (at most once a second) */
export class HeardRoster {
  private kept: Map<string, string>;
  private dirty = false;
  private lastWrite = 0;

  constructor(
    private readonly ws: string,
    private readonly team: Team,
    private readonly tp: string,
  ) {
    this.kept = readHeard(ws);
  }

  /** a message on a presence or online topic (an empty one clears it); true when it is newer than what was kept */
  note(topic: string, payload: string): boolean {
    if (payload === "") {
      this.dirty = this.kept.delete(topic) || this.dirty;
      return false;
    }
    const e = rosterEntry(this.team, this.tp, topic, payload);
    if (!e) return false;
    const had = this.kept.get(topic);
    const old = had === undefined ? undefined : rosterEntry(this.team, this.tp, topic, had);
    if (old && !newer(e, old)) return false;
    this.kept.set(topic, payload);
    this.dirty = true;
    return true;
  }

  /** write what changed; `force`: whatever the last write's time (the daemon stops) */
  flush(force = false): void {
    if (!this.dirty || (!force && Date.now() - this.lastWrite < 1000)) return;
    try {
      atomicWriteFile(heardPath(this.ws), `${JSON.stringify(Object.fromEntries(this.kept))}\n`);
      this.dirty = false;
      this.lastWrite = Date.now();
    } catch {
      // .mam/ not writable: the next flush tries again; the roster reads the broker meanwhile
    }
  }
}
