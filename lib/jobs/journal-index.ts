// What a long-lived reader (the subscriber daemon) keeps of each job's journal, so that an event
// costs what it adds, not what the journal already holds: the events in journal order, their
// identities (EventIndex), the fold of the status so far and where the job ended. refresh() reads
// only the bytes appended since the last call (everything again when the file was replaced), and
// only whole lines: a line still being written is read next time. An ended job the daemon has
// reacted to is put to rest (JournalCache.rest): its index goes, and until its journal changes
// (another file, another size) quiet() says so with one stat, so that the daemon's rounds over
// every job cost a stat per ended job, not a read of its record and journal. While the daemon
// watches the jobs folder (lib/daemon/clocks.ts), a resting journal the watch names is looked at
// again and the others are trusted without a stat for WATCHED_TRUST_MS: an idle daemon of a
// workspace with 1000 ended jobs made 1,500 stats a second before.
import { closeSync, fstatSync, openSync, readFileSync, readSync, statSync } from "node:fs";
import { errCode, EXIT, MamError } from "../sys/errors.ts";
import { endsJob, foldStep, type JobEvent, type LoopRoles } from "./event.ts";
import { type JobStatus } from "./statuses.ts";
import { EventIndex, ORIGIN_RE } from "./identity.ts";
import { type JobRecord, journalPath, originPath, parseEventLine } from "./store.ts";

export class JournalIndex {
  events: JobEvent[] = [];
  index = new EventIndex();
  /** the fold of `events` (pending when there are none) */
  status: JobStatus = "pending";
  /** the position in `events` of the event that ended the job, if one did */
  endAt: number | undefined;
  /** the job's record as last read under the jobs lock (its token and roles do not change) */
  record: JobRecord | undefined;
  private ino = -1;
  private offset = 0;
  private own: string | null | undefined;

  constructor(
    readonly ws: string,
    readonly id: string,
    private roles?: LoopRoles,
  ) {}

  /** this journal's own origin (the events written on this machine), once read; undefined if none */
  ownOrigin(): string | undefined {
    if (this.own === undefined || this.own === null) {
      try {
        const o = readFileSync(originPath(this.ws, this.id), "utf8").trim();
        this.own = ORIGIN_RE.test(o) ? o : null;
      } catch {
        this.own = null;
      }
    }
    return this.own ?? undefined;
  }

  private reset(): void {
    this.events = [];
    this.index = new EventIndex();
    this.status = "pending";
    this.endAt = undefined;
    this.offset = 0;
    this.own = undefined; // a journal started again has a new origin
  }

  /** read what was appended since the last call; `roles` are the record's (loop jobs fold differently) */
  refresh(roles?: LoopRoles): this {
    if (roles && (roles.type !== this.roles?.type || roles.reviewer_session !== this.roles?.reviewer_session)) {
      this.roles = { type: roles.type, reviewer_session: roles.reviewer_session };
      this.ino = -1; // fold again with the right roles
    }
    const path = journalPath(this.ws, this.id);
    let fd: number;
    try {
      fd = openSync(path, "r");
    } catch (e) {
      if (errCode(e) !== "ENOENT") throw new MamError(`cannot read job journal ${path} (${(e as Error).message})`, EXIT.FAIL);
      this.reset();
      this.ino = -1;
      return this;
    }
    try {
      const st = fstatSync(fd);
      if (st.ino !== this.ino || st.size < this.offset) {
        this.reset();
        this.ino = st.ino;
      }
      if (st.size === this.offset) return this;
      const buf = Buffer.alloc(st.size - this.offset);
      let got = 0;
      while (got < buf.length) {
        const n = readSync(fd, buf, got, buf.length - got, this.offset + got);
        if (n === 0) break;
        got += n;
      }
      const cut = buf.subarray(0, got).lastIndexOf(0x0a);
      if (cut < 0) return this;
      for (const line of buf.subarray(0, cut).toString("utf8").split("\n")) {
        const ev = line === "" ? undefined : parseEventLine(line);
        if (ev) this.add(ev);
      }
      this.offset += cut + 1;
      return this;
    } finally {
      closeSync(fd);
    }
  }

  /** the journal as read so far: its file and the bytes read (undefined before a file was read) */
  readSoFar(): { ino: number; size: number } | undefined {
    return this.ino >= 0 ? { ino: this.ino, size: this.offset } : undefined;
  }

  private add(ev: JobEvent): void {
    if (this.endAt === undefined && endsJob(ev, this.roles)) this.endAt = this.events.length;
    this.status = foldStep(this.status, ev, this.roles);
    this.events.push(ev);
    this.index.add(ev);
  }
}

/**
 * How long a resting journal's last look is trusted without a stat while the jobs folder is
 * watched: the longest a change the watch missed (an overflowed inotify queue, a folder replaced
 * under it) waits to be seen.
 */
export const WATCHED_TRUST_MS = 10_000;

/** the job a file of the jobs folder belongs to ("<id>.events.ndjson", "<id>.json", …) */
const JOB_FILE_RE = /^([0-9a-f]{8})\./;

/** the daemon's JournalIndex per job, made on first use */
export class JournalCache {
  private byId = new Map<string, JournalIndex>();
  /** jobs put to rest: their journal's file and size when they were, and when that was last seen so */
  private resting = new Map<string, { ws: string; ino: number; size: number; seenAt: number }>();
  /** how long a look is trusted (0: each quiet() looks; WATCHED_TRUST_MS while the folder is watched) */
  private trustMs = 0;

  constructor(private now: () => number = () => performance.now()) {}

  /** the jobs folder is watched (a change to a journal will be named by fileChanged), or no longer (each quiet() looks) */
  watched(on: boolean): void {
    this.trustMs = on ? WATCHED_TRUST_MS : 0;
  }

  /** a file of the jobs folder changed (undefined: some file, not named): its job is looked at again */
  fileChanged(name: string | undefined): void {
    if (name === undefined) {
      for (const r of this.resting.values()) r.seenAt = -Infinity;
      return;
    }
    const id = JOB_FILE_RE.exec(name)?.[1];
    const r = id === undefined ? undefined : this.resting.get(id);
    if (r) r.seenAt = -Infinity;
  }

  get(ws: string, id: string, roles?: LoopRoles): JournalIndex {
    let j = this.byId.get(id);
    if (!j || j.ws !== ws) {
      j = new JournalIndex(ws, id, roles);
      this.byId.set(id, j);
      this.resting.delete(id);
    }
    return j.refresh(roles);
  }

  /**
   * let the index of an ended job go (its memory back) and remember its journal as it was read:
   * the caller has reacted to every event of it. A journal with a line being written is not
   * put to rest (its size is not what was read): it is only forgotten.
   */
  rest(id: string): void {
    const j = this.byId.get(id);
    this.byId.delete(id);
    const read = j?.readSoFar();
    if (!j || !read) return;
    try {
      const st = statSync(journalPath(j.ws, id));
      if (st.ino === read.ino && st.size === read.size) this.resting.set(id, { ws: j.ws, ...read, seenAt: this.now() });
    } catch {}
  }

  /**
   * the job was put to rest and its journal is still the file and size it was then: one stat, or
   * none while the folder is watched and the last look is recent and no change was named since
   */
  quiet(ws: string, id: string): boolean {
    const r = this.resting.get(id);
    if (!r || r.ws !== ws) return false;
    const now = this.now();
    if (now - r.seenAt < this.trustMs) return true;
    try {
      const st = statSync(journalPath(ws, id));
      if (st.ino === r.ino && st.size === r.size) {
        r.seenAt = now;
        return true;
      }
    } catch {}
    this.resting.delete(id);
    return false;
  }

  /** keep resting only these jobs (the others are gone from the folder) */
  keepResting(ids: ReadonlySet<string>): void {
    for (const id of this.resting.keys()) if (!ids.has(id)) this.resting.delete(id);
  }

  /** the index as it is, without reading the journal (undefined: not loaded) */
  peek(ws: string, id: string): JournalIndex | undefined {
    const j = this.byId.get(id);
    return j && j.ws === ws ? j : undefined;
  }

  /** drop a job's index (its journal is read again on next use) */
  forget(id: string): void {
    this.byId.delete(id);
    this.resting.delete(id);
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }
}
