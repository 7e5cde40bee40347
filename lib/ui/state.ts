// Gathering the dashboard's inputs from disk and the multiplexers, with caches so that a change
// costs only what changed: a job is re-read only when its record or journal changed (size, mtime),
// the daemon's log only from where it was last read, the team's fleet from the broker at most
// every few seconds and one read at a time. Read-only: nothing here writes a file or publishes.
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { daemonStatus } from "../sys/daemon-proc.ts";
import { monitorLogPath } from "../sys/daemon-files.ts";
import type { JobStore } from "../jobs/store.ts";
import type { Row } from "../registry/types.ts";
import type { JobRef, StatusLine } from "../ops/session/status.ts";
import type { NeedItem } from "../ops/session/why.ts";
import type { Deps } from "../ops/deps.ts";
import { type RosterSelf, rosterDoc } from "../ops/team.ts";
import type { Roster } from "../team/roster.ts";
import { MamError } from "../sys/errors.ts";
import type { Env } from "../sys/paths.ts";
import { isoUtc } from "../sys/time.ts";
import type { JobEvent } from "../jobs/event.ts";
import type { JobRecord } from "../jobs/store.ts";
import { boardCard, DROPPED, daemonView, rosterView, jobViewModel, teamView, type UiDaemon, type UiRoster, type UiJob, type UiSession } from "./model.ts";
import { loadPrices, type PriceTable, shippedPrices, userPriceFiles } from "../cost/prices.ts";
import { teamRate, type TeamRate } from "../cost/summary.ts";
import { readLedger } from "../cost/ledger.ts";

const sig = (p: string): string => {
  try {
    const s = statSync(p);
    return `${s.size}:${s.mtimeMs}:${s.ino}`;
  } catch {
    return "-";
  }
};

export interface JobsDelta {
  changed: UiJob[];
  removed: string[];
  problems: string[];
}

/**
 * one job as the cache keeps it; a waiting one keeps its record and journal too, since its card
 * changes when what it runs after moves on (their files change, not its own)
 */
interface Seen {
  sig: string;
  job: UiJob;
  queued?: { rec: JobRecord; events: JobEvent[] };
  /** what its card says it waits for (undefined: nothing, or not told yet) */
  held?: string;
}

/** the jobs of a workspace, re-read per job only when its files (or the user's prices) changed */
export class JobCache {
  private seen = new Map<string, Seen>();
  /** localHost: this host's name when this machine is in a team (each job then says its host) */
  constructor(
    private jobs: JobStore,
    private localHost?: string,
    private env: Env = process.env,
  ) {}

  /** every job now (after refresh) */
  all(): UiJob[] {
    return [...this.seen.values()].map((v) => v.job);
  }

  get(id: string): UiJob | undefined {
    return this.seen.get(id)?.job;
  }

  /** re-scan .mam/jobs; what changed since the last call */
  refresh(): JobsDelta {
    const d: JobsDelta = { changed: [], removed: [], problems: [] };
    let ids: string[];
    try {
      ids = this.jobs.ids();
    } catch (e) {
      d.problems.push((e as Error).message);
      return d;
    }
    const now = new Set(ids);
    let prices: PriceTable;
    let pricesSig = "";
    try {
      pricesSig = userPriceFiles(this.env).map(sig).join("|");
      prices = loadPrices(this.env);
    } catch (e) {
      d.problems.push((e as Error).message);
      prices = shippedPrices();
    }
    for (const id of [...this.seen.keys()]) {
      if (!now.has(id)) {
        this.seen.delete(id);
        d.removed.push(id);
      }
    }
    for (const id of ids) {
      const s = `${this.jobs.stamp(id) ?? "-"}|${pricesSig}`;
      if (this.seen.get(id)?.sig === s) continue;
      try {
        const rec = this.jobs.read(id);
        if (!rec) continue;
        const events = this.jobs.journal(id);
        const job = jobViewModel(rec, events, this.localHost, prices);
        this.seen.set(id, { sig: s, job, ...(job.status === "queued" ? { queued: { rec, events } } : {}) });
        d.changed.push(job);
      } catch (e) {
        d.problems.push((e as Error).message);
      }
    }
    return d;
  }

  get dir(): string {
    return this.jobs.dir;
  }

  /** is any job waiting its turn? */
  anyQueued(): boolean {
    for (const v of this.seen.values()) if (v.job.status === "queued") return true;
    return false;
  }

  /**
   * the places in line of the waiting jobs (job id → position) and what those that run after
   * others wait for (job id → lib/ops/job/queue.ts heldFor's words): the jobs whose place or card changed
   */
  place(positions: ReadonlyMap<string, number>, held: ReadonlyMap<string, string> = new Map()): UiJob[] {
    const moved: UiJob[] = [];
    for (const v of this.seen.values()) {
      const p = v.job.status === "queued" ? (positions.get(v.job.id) ?? null) : null;
      const h = v.queued ? held.get(v.job.id) : undefined;
      const recard = v.queued !== undefined && h !== v.held;
      if (p === v.job.position && !recard) continue;
      v.job = { ...v.job, position: p, ...(recard ? { board: boardCard(v.queued!.rec, v.queued!.events, "queued", h) } : {}) };
      v.held = h;
      moved.push(v.job);
    }
    return moved;
  }
}

/** the daemon's status and log, read incrementally */
export class DaemonWatch {
  private offset = 0;
  private ino = -1;
  private dropped = 0;
  private tail: string[] = [];
  private partial = "";
  constructor(private ws: string, private keep = 30) {}

  private readLog(): void {
    const p = monitorLogPath(this.ws);
    let fd: number;
    try {
      fd = openSync(p, "r");
    } catch {
      this.offset = 0;
      return;
    }
    try {
      const st = statSync(p);
      if (st.ino !== this.ino || st.size < this.offset) {
        this.ino = st.ino;
        this.offset = Math.max(0, st.size - 256 * 1024); // a long log: its last 256 KiB
        this.dropped = 0;
        this.tail = [];
        this.partial = "";
      }
      if (st.size === this.offset) return;
      const buf = Buffer.alloc(st.size - this.offset);
      const n = readSync(fd, buf, 0, buf.length, this.offset);
      this.offset += n;
      const lines = (this.partial + buf.subarray(0, n).toString("utf8")).split("\n");
      this.partial = lines.pop() ?? "";
      for (const l of lines) {
        if (l.trim() === "") continue;
        if (DROPPED.test(l)) this.dropped++;
        this.tail.push(l);
      }
      if (this.tail.length > this.keep) this.tail = this.tail.slice(-this.keep);
    } finally {
      closeSync(fd);
    }
  }

  read(): UiDaemon {
    this.readLog();
    let status: ReturnType<typeof daemonStatus>;
    try {
      status = daemonStatus(this.ws);
    } catch {
      status = undefined;
    }
    const v = daemonView(status, "", this.keep);
    return { ...v, recent: [...this.tail], dropped: this.dropped };
  }
}

/**
 * The JOB column from the cache, by `mam status`'s rule: the row's delegate_job_id when that job
 * exists here, else the newest job sent to the session
 */
export function jobColumn(jobs: readonly UiJob[]): (row: Row) => JobRef | null {
  const newest = new Map<string, UiJob>();
  const byId = new Map<string, UiJob>();
  for (const j of jobs) {
    byId.set(j.id, j);
    const n = newest.get(j.to);
    if (!n || n.created_at <= j.created_at) newest.set(j.to, j);
  }
  return (row) => {
    const id = row.delegate_job_id;
    const j = (typeof id === "string" ? byId.get(id) : undefined) ?? newest.get(row.name);
    return j ? { id: j.id, status: j.status } : null;
  };
}

/** the team: `mam status`'s use case, ordered for the page, and what it spends per hour; problems are returned, not thrown */
export async function readTeam(deps: Deps, jobs: readonly UiJob[]): Promise<{ sessions: UiSession[]; registry: string; rate: TeamRate; needs: NeedItem[]; problem?: string }> {
  const [{ sessionStatus }, { needsMe, waitsMatter }, { readStuck }] = await Promise.all([import("../ops/session/status-run.ts"), import("../ops/session/why.ts"), import("../ops/job/stuck.ts")]);
  let rate: TeamRate = { usd_per_hour: 0, tokens_per_hour: 0, minutes: 0 };
  try {
    rate = teamRate(readLedger(deps.ws), loadPrices(deps.env), deps.clock.ms());
    const doc = await sessionStatus(deps, false, jobColumn(jobs));
    // what needs a person, as mam status --needs-me lists it
    const needs = needsMe({ sessions: doc.sessions, ...readStuck(deps, waitsMatter(doc.sessions)) });
    return { sessions: teamView(doc.sessions), registry: doc.registry, rate, needs };
  } catch (e) {
    return { sessions: [], registry: deps.registry.path, rate, needs: [], problem: (e as Error).message };
  }
}

/**
 * The team's fleet for the dashboard: the broker's retained announcements, read by `read` (one
 * connection, its retained messages, gone) at most once every `everyMs` and never twice at once,
 * kept between reads. A broker that does not answer makes a read come back unreachable; it never
 * holds up anything else (callers do not wait for a read).
 */
export class RosterCache {
  private fleet: Roster;
  private readAt: number | null = null;
  private started = 0;
  private busy: Promise<boolean> | undefined;
  private readonly born = Date.now();
  constructor(readonly self: RosterSelf, private read: () => Promise<Roster>, private everyMs: number) {
    this.fleet = { team: self.team.team, reachable: true, workspaces: [], dropped: 0 };
  }

  /** is a read due (none under way, the last one started everyMs ago or more)? */
  due(now = Date.now()): boolean {
    return this.busy === undefined && now - this.started >= this.everyMs;
  }

  /** read the broker now, unless a read is under way (then: that one); true when it came back */
  refresh(): Promise<boolean> {
    if (this.busy) return this.busy;
    this.started = Date.now();
    this.busy = this.read()
      .catch((): Roster => ({ team: this.self.team.team, reachable: false, workspaces: [], dropped: 0 }))
      .then((f) => {
        this.fleet = f;
        this.readAt = Date.now();
        return true;
      })
      .finally(() => (this.busy = undefined));
    return this.busy;
  }

  /** the fleet with this workspace's sessions as they are now */
  view(sessions: readonly StatusLine[]): UiRoster {
    const at = this.readAt;
    return rosterView(rosterDoc(this.self, this.fleet, sessions, at ?? this.born), at === null ? null : isoUtc(Math.floor(at / 1000)));
  }
}

/**
 * this machine's team, read once when `mam ui` starts (as the daemon does): its fleet's cache, or
 * nothing in no team; a team or broker setting that does not read is a problem line, not a throw
 */
export async function openRoster(ws: string, env: Env, everyMs: number): Promise<{ cache?: RosterCache; problem?: string }> {
  const [{ loadTeam }, { hostName }, { teamPrefix }, { brokerConfigFromEnv, describeBroker }, { readRoster }] = await Promise.all([
    import("../team/config.ts"),
    import("../team/host.ts"),
    import("../team/messages.ts"),
    import("../jobs/broker-config.ts"),
    import("../team/roster.ts"),
  ]);
  try {
    const team = loadTeam(env);
    if (!team) return {};
    const cfg = brokerConfigFromEnv(env);
    const self = { team, host: hostName(env), ws, broker: describeBroker(cfg), prefix: teamPrefix(team, env) };
    return { cache: new RosterCache(self, () => readRoster(cfg, team, env, ws), everyMs) };
  } catch (e) {
    return { problem: `the team's fleet is not shown: ${e instanceof MamError ? e.render().replace(/^ERROR: /, "") : (e as Error).message}` };
  }
}
