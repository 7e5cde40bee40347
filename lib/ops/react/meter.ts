// The daemon's usage meter (docs/cost.md): every poll it reads what the conversation files of the
// workspace's sessions gained since the last one (their kind's `usage` aspect: which files, what a
// line says), folds it into the ledger (lib/cost/meter.ts: whose job, which loop iteration), writes
// the ledger (.mam/usage.json, its one writer) and the jobs' counts into their records, then checks
// the budgets of the jobs whose counts moved and the daily caps of the sessions that used tokens.
// A file is read from where the last poll stopped (its inode and offset are in the ledger), whole
// lines only: a line still being written is read next time. A poll with nothing new costs a stat
// per file. The meter reads files; it never calls a model.
import { closeSync, fstatSync, openSync, readSync, renameSync, statSync } from "node:fs";
import { KINDS, ownId } from "../../agents/kinds/index.ts";
import { storeEnv, type UsageSource } from "../../agents/usage.ts";
import { processEnviron } from "../../mux/procfs.ts";
import { type Check, checkLimits, dailyCapCheck, dailyLimits, hasLimits, type Limits, PRICE_HINT } from "../../cost/budget.ts";
import { dayOf, emptyLedger, type FileCursor, type JobUsage, type Ledger, ledgerPath, readLedger } from "../../cost/ledger.ts";
import { applyFact, book, type JobFacts, type MeterContext, noteJob, prune } from "../../cost/meter.ts";
import { loadPrices, type PriceTable, shippedPrices } from "../../cost/prices.ts";
import { jobUsageView } from "../../cost/summary.ts";
import { endsJob, finalEvent } from "../../jobs/event.ts";
import type { JobRuntime } from "../../jobs/runtime.ts";
import { busySession } from "../../jobs/loop.ts";
import { isFinal } from "../../jobs/statuses.ts";
import { effectiveStatus, type JobRecord, type JobStore } from "../../jobs/store.ts";
import type { RegistryStore } from "../deps.ts";
import type { Row } from "../../registry/types.ts";
import { atomicWriteFile } from "../../sys/atomic.ts";
import { isValidJobId } from "../../sys/names.ts";
import type { Env } from "../../sys/paths.ts";
import { localPart } from "../../team/host.ts";
import { allRows } from "../../registry/rows.ts";

/** how much of a file one read takes at most */
const CHUNK = 4 << 20;
/** how much one poll reads at most (a first read of long conversations goes on in the next polls) */
const POLL_BYTES = 128 << 20;

/** a copy of another host's job reports its counts to the delegator at most this often (and when they settle) */
export const REPORT_MS = 30_000;


export interface MeterOptions {
  ws: string;
  /** the workspace's jobs (deps.jobs) */
  jobs: JobStore;
  env: Env;
  registry: RegistryStore;
  /** this machine's name in its team: `name@<host>` on a copy of another host's job is this host's session */
  host?: string;
  log(line: string): void;
  /** publish what the meter journalled (budget_exceeded) on the daemon's connection */
  publish?(topic: string, payload: string): Promise<boolean>;
  /** tell a session that went over its daily cap (with no job to end) */
  runtime?: JobRuntime;
  now?: () => number;
  /** bytes one poll reads at most (default 128 MiB) */
  pollBytes?: number;
}

/** what one poll did */
export interface MeterPass {
  /** lines read with something to say */
  facts: number;
  /** the jobs and sessions whose counts moved */
  jobs: string[];
  sessions: string[];
  /** jobs ended with budget_exceeded */
  stopped: string[];
  /** the poll stopped at its byte budget: more is there to read (poll again soon) */
  behind: boolean;
}

/**
 * the files a running session writes its records to now (its kind's `usage` aspect says which;
 * some may not exist yet), looked for where the agent keeps them: its own CLAUDE_CONFIG_DIR,
 * CODEX_HOME … (`environ`: its process's environment), not the daemon's. The usage meter and the
 * limits' watch (./limits-watch.ts) read the same files.
 */
export function sessionFiles(row: Row, kind: string, usage: UsageSource, ws: string, env: Env, environ: (pid: number) => Record<string, string> | undefined): string[] {
  const wt = row.worktree;
  const cwd = wt && !wt.removed_at && typeof wt.path === "string" ? wt.path : ws;
  const pid = typeof row.pane?.pid === "number" ? row.pane.pid : undefined;
  const own = pid === undefined ? env : storeEnv(env, environ(pid), row.name);
  return usage.files({ cwd, ws, name: row.name, id: ownId(row, kind), pid, env: own });
}

interface Tracked {
  row: Row;
  kind: string;
  usage: UsageSource;
}

export class UsageMeter {
  private ledger: Ledger | undefined;
  private regSig = "";
  private tracked: Tracked[] = [];
  /** jobs that have ended: their facts no longer change */
  private ended = new Map<string, JobFacts>();
  private chain: Promise<unknown> = Promise.resolve();
  /** copies of other hosts' jobs whose counts their delegators have not been sent yet, and when each was last sent */
  private readonly unreported = new Set<string>();
  private readonly reportedAt = new Map<string, number>();
  private pricesBroken: string | undefined;
  private readonly markers = new Map<string, Buffer[]>();
  /** each agent process's environment, read once per pid (what it started with does not change) */
  private readonly environs = new Map<number, Record<string, string> | undefined>();

  private readonly o: MeterOptions;

  constructor(o: MeterOptions) {
    this.o = { ...o };
  }

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  /** one poll, never two at once; `io`: the hook's log and connection for this one */
  poll(io?: Pick<MeterOptions, "log" | "publish">): Promise<MeterPass> {
    const next = this.chain.then(() => {
      if (io) {
        this.o.log = io.log;
        this.o.publish = io.publish;
      }
      return this.pass();
    });
    this.chain = next.catch(() => {});
    return next;
  }

  /** the ledger in memory (loaded on first use; a broken file is moved aside and counted again) */
  current(): Ledger {
    if (this.ledger) return this.ledger;
    const r = readLedger(this.o.ws);
    if (r === "broken") {
      const aside = `${ledgerPath(this.o.ws)}.broken`;
      try {
        renameSync(ledgerPath(this.o.ws), aside);
        this.o.log(`usage: ${ledgerPath(this.o.ws)} was not readable; moved to ${aside}, counting again from the agents' files`);
      } catch {}
    }
    this.ledger = r === "none" || r === "broken" ? emptyLedger() : r;
    return this.ledger;
  }

  /** the price table: the shipped one when the user's file is broken (logged once) */
  prices(): PriceTable {
    try {
      const t = loadPrices(this.o.env);
      this.pricesBroken = undefined;
      return t;
    } catch (e) {
      const why = (e as Error).message;
      if (why !== this.pricesBroken) this.o.log(`usage: ${why}; using the prices shipped with mam`);
      this.pricesBroken = why;
      return shippedPrices();
    }
  }

  /** the registry's rows of kinds mam can meter, read again only when the file changed */
  private sessions(): Tracked[] {
    let sig = "none";
    try {
      const st = statSync(this.o.registry.path);
      sig = `${st.size}:${st.mtimeMs}:${st.ino}`;
    } catch {}
    if (sig === this.regSig) return this.tracked;
    const data = this.o.registry.read();
    this.tracked = allRows(data).flatMap((row) => {
      const kind = typeof row.agent === "string" ? row.agent : "";
      const usage = Object.hasOwn(KINDS, kind) ? KINDS[kind]!.usage : null;
      return usage ? [{ row, kind, usage }] : [];
    });
    this.regSig = sig;
    return this.tracked;
  }

  private environOf(pid: number): Record<string, string> | undefined {
    if (!this.environs.has(pid)) {
      const e = processEnviron(pid);
      // not read (gone, no /proc): ask again next poll
      if (e === undefined) return undefined;
      this.environs.set(pid, e);
    }
    return this.environs.get(pid);
  }

  private isSession(field: string, session: string): boolean {
    return field === session || (this.o.host !== undefined && localPart(field, this.o.host) === session);
  }

  private jobFacts(cache: Map<string, JobFacts | undefined>, id: string): JobFacts | undefined {
    if (!isValidJobId(id)) return undefined;
    const done = this.ended.get(id);
    if (done) return done;
    if (cache.has(id)) return cache.get(id);
    let f: JobFacts | undefined;
    try {
      const rec = this.o.jobs.read(id);
      if (rec) {
        const fin = finalEvent(this.o.jobs.journal(id), rec);
        f = { agent_session: rec.agent_session, reviewer_session: rec.reviewer_session, ended_ms: fin ? Date.parse(fin.timestamp) + 1000 : null };
        if (fin) this.ended.set(id, f);
      }
    } catch {}
    cache.set(id, f);
    return f;
  }

  private async pass(): Promise<MeterPass> {
    const ws = this.o.ws;
    const l = this.current();
    const now = this.now();
    const cache = new Map<string, JobFacts | undefined>();
    const ctx: MeterContext = { job: (id) => this.jobFacts(cache, id), isSession: (f, s) => this.isSession(f, s), now };
    const jobs = new Set<string>();
    const sessions = new Set<string>();
    let facts = 0;
    let dirty = false;
    const budget = { left: this.o.pollBytes ?? POLL_BYTES };
    const tracked = this.sessions();
    const names = new Map(tracked.map((t) => [t.row.name, t]));
    for (const t of tracked) {
      if (!l.sessions[t.row.name]) {
        l.sessions[t.row.name] = { kind: t.kind, total: {}, days: {}, recent: {} };
        dirty = true;
      }
      if (t.row.status !== "running") continue;
      for (const path of sessionFiles(t.row, t.kind, t.usage, ws, this.o.env, (pid) => this.environOf(pid))) {
        const c = l.files[path];
        if (c && c.session === t.row.name) continue;
        l.files[path] = { session: t.row.name, kind: t.kind, ino: -1, offset: 0, turn: c?.turn ?? { job: null, iteration: null } };
        dirty = true;
      }
    }
    for (const [path, c] of Object.entries(l.files)) {
      const t = names.get(c.session);
      if (!t || t.kind !== c.kind) continue;
      const before = `${c.ino}:${c.offset}`;
      facts += this.readFile(path, c, t.usage, budget, (f) => {
        const a = applyFact(c, f, ctx);
        if (a.began) {
          noteJob(l, a.began, c.session);
          jobs.add(a.began);
        }
        if (a.delta) {
          book(l, c.kind, a.delta);
          sessions.add(c.session);
          if (a.delta.job) jobs.add(a.delta.job);
        }
      });
      if (`${c.ino}:${c.offset}` !== before) dirty = true;
    }
    const pass: MeterPass = { facts, jobs: [...jobs], sessions: [...sessions], stopped: [], behind: budget.left <= 0 };
    if (!dirty && jobs.size === 0 && sessions.size === 0) {
      if (this.unreported.size) await this.report(now);
      return pass;
    }
    prune(l, now);
    this.save();
    const usages = new Map<string, JobUsage>();
    for (const id of jobs) if (l.jobs[id]) usages.set(id, l.jobs[id]!);
    await this.o.jobs.setUsages(usages);
    if (jobs.size || sessions.size) {
      const prices = this.prices();
      for (const id of jobs) if (await this.checkJob(id, prices)) pass.stopped.push(id);
      for (const s of sessions) pass.stopped.push(...(await this.checkCap(names.get(s)!.row, prices, now)));
    }
    for (const id of jobs) this.unreported.add(id);
    await this.report(now);
    return pass;
  }

  /**
   * the counts of copies of other hosts' jobs (docs/machines.md) go to their delegators as a `usage`
   * event (names as the team writes them, NAME@HOST), at most every REPORT_MS per job
   */
  private async report(now: number): Promise<void> {
    for (const id of [...this.unreported]) {
      let rec: JobRecord | undefined;
      try {
        rec = this.o.jobs.read(id);
      } catch {}
      const u = rec?.remote_of ? this.current().jobs[id] : undefined;
      if (!rec || !u) {
        this.unreported.delete(id);
        continue;
      }
      if (now - (this.reportedAt.get(id) ?? 0) < REPORT_MS) continue;
      const host = this.o.host;
      const global = (name: string) => (host && !name.includes("@") ? `${name}@${host}` : name);
      const bySession = Object.fromEntries(Object.entries(u.by_session).map(([s, m]) => [global(s), m]));
      const total = Object.values(bySession).reduce((n, m) => n + Object.values(m).reduce((k, t) => k + t.input + t.output + t.cache_write + t.cache_read, 0), 0);
      const a = await this.o.jobs.append(id, {
        event: "usage",
        detail: `${total.toLocaleString("en-US")} tokens on ${host ?? "this host"}`,
        source: "mam",
        data: { usage: { by_session: bySession, by_iteration: u.by_iteration } as never },
      });
      this.unreported.delete(id);
      this.reportedAt.set(id, now);
      if (a?.record) await this.o.publish?.(`${a.record.topic_prefix}/events`, a.line);
    }
  }

  save(): void {
    atomicWriteFile(ledgerPath(this.o.ws), `${JSON.stringify(this.current())}\n`, { mode: 0o600, regularOnly: true });
  }

  private markersOf(u: UsageSource, kind: string): Buffer[] {
    let m = this.markers.get(kind);
    if (!m) this.markers.set(kind, (m = u.markers.map((s) => Buffer.from(s, "utf8"))));
    return m;
  }

  /** read what a file gained since the cursor, whole lines only; the number of facts */
  private readFile(path: string, c: FileCursor, u: UsageSource, budget: { left: number }, each: (f: NonNullable<ReturnType<UsageSource["parse"]>>) => void): number {
    let fd: number;
    try {
      fd = openSync(path, "r");
    } catch {
      return 0; // not there (yet): a new conversation writes its file with its first message
    }
    let n = 0;
    try {
      const st = fstatSync(fd);
      if (st.ino !== c.ino || st.size < c.offset) {
        // a file that is new to us, or another file under that name now: read it from the start
        if (c.ino !== -1) {
          delete c.last;
          delete c.total;
        }
        c.ino = st.ino;
        c.offset = 0;
      }
      const markers = this.markersOf(u, c.kind);
      let pos = c.offset;
      let carry: Buffer | undefined;
      while (pos < st.size && budget.left > 0) {
        const chunk = Buffer.allocUnsafe(Math.min(CHUNK, st.size - pos));
        const got = readSync(fd, chunk, 0, chunk.length, pos);
        if (got <= 0) break;
        pos += got;
        budget.left -= got;
        const buf = carry ? Buffer.concat([carry, chunk.subarray(0, got)]) : chunk.subarray(0, got);
        let start = 0;
        for (let nl = buf.indexOf(0x0a, start); nl >= 0; nl = buf.indexOf(0x0a, start)) {
          const line = buf.subarray(start, nl);
          if (markers.some((m) => line.indexOf(m) >= 0)) {
            const f = u.parse(line.toString("utf8"));
            if (f) {
              each(f);
              n++;
            }
          }
          start = nl + 1;
        }
        c.offset = pos - (buf.length - start);
        carry = start < buf.length ? Buffer.from(buf.subarray(start)) : undefined;
      }
    } finally {
      closeSync(fd);
    }
    return n;
  }

  /** a job whose counts moved: over its budget → budget_exceeded (once); true when it was ended */
  private async checkJob(id: string, prices: PriceTable): Promise<boolean> {
    let rec: JobRecord | undefined;
    try {
      rec = this.o.jobs.read(id);
    } catch {
      return false;
    }
    const lim: Limits = { usd: rec?.budget_usd ?? null, tokens: rec?.max_tokens ?? null };
    if (!rec || !hasLimits(lim)) return false;
    const events = this.o.jobs.journal(id);
    if (isFinal(effectiveStatus(rec, events))) return false;
    const c = checkLimits(jobUsageView(rec, events, prices), lim, "its budget", PRICE_HINT);
    return c.over ? this.stopJob(id, `job ${id} ${c.detail}`, c) : false;
  }

  /** journal budget_exceeded unless the job has ended, and publish it */
  private async stopJob(id: string, detail: string, c: Extract<Check, { over: true }>, extra: Record<string, string> = {}): Promise<boolean> {
    const a = await this.o.jobs.append(id, (r, evs) => (r && !evs.some((e) => endsJob(e, r)) ? { event: "budget_exceeded", detail, source: "mam", data: { ...c.data, ...extra } } : undefined));
    if (!a) return false;
    this.o.log(`job ${id}: budget_exceeded (${detail})`);
    if (a.record) await this.o.publish?.(`${a.record.topic_prefix}/events`, a.line);
    return true;
  }

  /**
   * a session that used tokens: over its daily cap (`create --daily-budget-usd`, `--daily-max-tokens`)
   * → the jobs it works on end with budget_exceeded, or, with none, it is told at its prompt; once
   * per UTC day. The jobs it ended.
   */
  private async checkCap(row: Row, prices: PriceTable, now: number): Promise<string[]> {
    const lim = dailyLimits(row);
    if (!hasLimits(lim)) return [];
    const l = this.current();
    const today = dayOf(now);
    if (l.capped[row.name] === today) return [];
    const c = dailyCapCheck(l, row.name, lim, prices, now);
    if (!c.over) return [];
    l.capped[row.name] = today;
    this.save();
    const stopped: string[] = [];
    for (const id of this.o.jobs.ids()) {
      try {
        const rec = this.o.jobs.read(id);
        if (!rec) continue;
        const evs = this.o.jobs.journal(id);
        if (isFinal(effectiveStatus(rec, evs)) || !this.isSession(busySession(rec, evs), row.name)) continue;
        if (await this.stopJob(id, `${row.name} ${c.detail} (UTC day ${today})`, c, { session: row.name, day: today })) stopped.push(id);
      } catch {}
    }
    this.o.log(`usage: ${row.name} ${c.detail} (UTC day ${today})${stopped.length ? `; ended job ${stopped.join(", ")}` : ""}`);
    if (stopped.length === 0) await this.tellCapped(row.name, `[mam] ${row.name} ${c.detail} (UTC day ${today}): stop working for today; mam gives you no new job until 00:00 UTC.`);
    return stopped;
  }

  private async tellCapped(name: string, text: string): Promise<void> {
    const rt = this.o.runtime;
    if (!rt) return;
    try {
      const s = await rt.findSession(name);
      if (!s || s.gone || s.waiting) {
        this.o.log(`usage: ${name} ${s?.gone ?? (s?.waiting ? `waits at ${s.waiting}` : "is not running")}, not told about its daily cap`);
        return;
      }
      await rt.prompt(s, text);
      this.o.log(`usage: told ${name} about its daily cap`);
    } catch (e) {
      this.o.log(`usage: could not tell ${name} about its daily cap (${(e as Error).message})`);
    }
  }
}
