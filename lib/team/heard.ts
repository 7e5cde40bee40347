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
import { newer, type RosterEntry, rosterEntry } from "./roster-entry.ts";

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
  /** the kept messages opened, by topic: each is checked once */
  private opened = new Map<string, RosterEntry | undefined>();
  private dirty = false;
  private lastWrite = 0;

  constructor(
    private readonly ws: string,
    private readonly team: Team,
    private readonly tp: string,
  ) {
    this.kept = readHeard(ws);
  }

  /**
   * a message on a presence or online topic (an empty one clears it): the entry it opens to
   * (undefined: none), kept when it is newer than what was
   */
  note(topic: string, payload: string): { entry?: RosterEntry; kept: boolean } {
    if (payload === "") {
      this.opened.delete(topic);
      this.dirty = this.kept.delete(topic) || this.dirty;
      return { kept: false };
    }
    const entry = rosterEntry(this.team, this.tp, topic, payload);
    if (!entry) return { kept: false };
    const old = this.entryOf(topic);
    if (old && !newer(entry, old)) return { entry, kept: false };
    this.kept.set(topic, payload);
    this.opened.set(topic, entry);
    this.dirty = true;
    return { entry, kept: true };
  }

  private entryOf(topic: string): RosterEntry | undefined {
    if (!this.opened.has(topic)) {
      const had = this.kept.get(topic);
      this.opened.set(topic, had === undefined ? undefined : rosterEntry(this.team, this.tp, topic, had));
    }
    return this.opened.get(topic);
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
