// limits.watch (docs/unattended.md): is each running agent of a kind whose limits mam knows (its
// `limits` aspect) at a usage or rate limit? From its own records first (the files its kind's
// `usage` aspect names, read as the usage meter finds them: ./meter.ts sessionFiles), its screen
// second (the rules file's limit lines: only when it has no records yet, and only at the poll).
// On a transition only: the row's `limit` field is written (through the registry's one writer),
// the job the agent works on journals `limited` (data: resets_at, reason) or `unlimited`, and the
// user's sinks get one "limited" notification. The row holds the state, so a daemon that starts
// again journals nothing twice. Every watch tick (before queue.dispatch: a job waiting for an
// agent that just hit its limit stays queued) a file that did not change costs one stat; at the
// poll too. The decision (decideLimit) is pure.
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import type { LimitFact, LimitsKind, LimitVerdict } from "../../agents/limits.ts";
import type { LimitBlock, Row, Section } from "../../registry/types.ts";
import type { Deps } from "../deps.ts";
import type { HookContext } from "./context.ts";
import { defineReaction } from "./reaction.ts";
import type { Shared } from "./shared.ts";

/** what the agent's screen says, when it was read: its state, and the limit line it shows */
export interface ScreenSays {
  state: string;
  limit?: { reason: string; resets_at: number | null };
}

export type LimitChange =
  /** it went to a limit */
  | { to: "limited"; limit: LimitBlock }
  /** it is still at one, and what mam knows of it changed (its reset time, its reason) */
  | { to: "update"; limit: LimitBlock }
  /** it is back; `why` says what ended it */
  | { to: "unlimited"; why: string };

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/**
 * pure: what changes for an agent whose row says `current` (undefined: not limited), given what
 * its records say (undefined: nothing either way), else its screen (undefined: not read), at `now`
 * (ms). A screen shows a limit when the agent is not at work and a limit line is in view. Nothing
 * known either way: a limit whose reset time has passed is over, any other stays.
 */
export function decideLimit(current: LimitBlock | undefined, records: LimitVerdict | undefined, screen: ScreenSays | undefined, now: number): LimitChange | undefined {
  let next: LimitBlock | null | undefined;
  let why = "";
  if (records) {
    next = records.limited ? { since: iso(records.since), resets_at: records.resets_at === null ? null : iso(records.resets_at), reason: records.reason, source: "records", ...(records.used_percent !== undefined ? { used_percent: records.used_percent } : {}) } : null;
    why = "its records show a turn answered since";
  } else if (screen) {
    const l = screen.limit;
    const on = l !== undefined && screen.state !== "working" && (l.resets_at === null || now < l.resets_at);
    next = on ? { since: iso(now), resets_at: l.resets_at === null ? null : iso(l.resets_at), reason: l.reason, source: "screen" } : null;
    why = screen.state === "working" ? "it is at work again" : "its screen no longer shows the limit";
  }
  if (current && current.resets_at !== null && now >= Date.parse(current.resets_at) && (next === undefined || next === null)) return { to: "unlimited", why: `its reset time (${current.resets_at}) has passed` };
  if (next === undefined) return undefined;
  if (next === null) return current ? { to: "unlimited", why } : undefined;
  if (!current) return { to: "limited", limit: next };
  const same = (a: LimitBlock, b: LimitBlock) => a.resets_at === b.resets_at && a.reason === b.reason && a.source === b.source && a.used_percent === b.used_percent;
  // the same limit seen again keeps its start
  const kept = { ...next, since: current.since };
  return same(current, kept) ? undefined : { to: "update", limit: kept };
}

/** in the journal and the log: "limited until 2026-12-02T02:53:00Z" or "limited (reset unknown)" */
const limitedWords = (l: Pick<LimitBlock, "resets_at">) => (l.resets_at === null ? "limited (reset unknown)" : `limited until ${l.resets_at}`);

// ---- the agent's records: what was appended since the last look, whole lines only -----------

/** how much of a file's end a first look reads (a long conversation's start says nothing of now) */
const TAIL = 256 << 10;
/** the facts kept per file (the fold needs the last few) */
const KEEP = 64;

interface FileState {
  ino: number;
  offset: number;
  /** the read begins in the middle of a line (a first look at a long file's end): that piece is no line */
  partial: boolean;
  facts: LimitFact[];
}

/** the facts of `path` (undefined: no such file), read from where the last look stopped */
function factsOf(path: string, lk: LimitsKind, files: Map<string, FileState>): { facts: LimitFact[]; mtime: number } | undefined {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    files.delete(path);
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    let f = files.get(path);
    if (!f || f.ino !== st.ino || st.size < f.offset) {
      f = { ino: st.ino, offset: Math.max(0, st.size - TAIL), partial: st.size > TAIL, facts: [] };
      files.set(path, f);
    }
    if (st.size > f.offset) {
      const buf = Buffer.alloc(st.size - f.offset);
      const got = readSync(fd, buf, 0, buf.length, f.offset);
      const text = buf.subarray(0, got).toString("utf8");
      const end = text.lastIndexOf("\n");
      if (end >= 0) {
        const lines = text.slice(0, end).split("\n");
        if (f.partial) lines.shift();
        f.partial = false;
        for (const line of lines) {
          if (!lk.markers.some((m) => line.includes(m))) continue;
          const fact = lk.parse(line);
          if (fact) f.facts.push(fact);
        }
        if (f.facts.length > KEEP) f.facts.splice(0, f.facts.length - KEEP);
        f.offset += Buffer.byteLength(text.slice(0, end + 1), "utf8");
      }
    }
    return { facts: f.facts, mtime: st.mtimeMs };
  } finally {
    closeSync(fd);
  }
}

// ---- the reaction ---------------------------------------------------------------------------

interface LimitsState {
  files: Map<string, FileState>;
  environs: Map<number, Record<string, string> | undefined>;
  regSig: string;
  rows: { section: Section; row: Row }[];
}

export const limitsWatch = defineReaction({
  name: "limits.watch",
  on: ["poll", "watch"],
  alone: { poll: "limits watch failed", watch: "limits watch failed" },
  state: (): LimitsState => ({ files: new Map(), environs: new Map(), regSig: "", rows: [] }),
  async run(deps, st, tick, shared) {
    const rows = await limitedKinds(deps, st);
    if (rows.length === 0) return;
    const [{ KINDS }, { foldLimit, parseResetTime }, { sessionFiles }, { processEnviron }] = await Promise.all([
      import("../../agents/kinds/index.ts"),
      import("../../agents/limits.ts"),
      import("./meter.ts"),
      import("../../mux/procfs.ts"),
    ]);
    const environ = (pid: number) => {
      if (!st.environs.has(pid)) {
        const e = processEnviron(pid);
        if (e === undefined) return undefined;
        st.environs.set(pid, e);
      }
      return st.environs.get(pid);
    };
    const now = deps.clock.ms();
    for (const { section, row } of rows) {
      const kind = String(row.agent);
      const k = KINDS[kind]!;
      // the newest of its files that exists
      let newest: { facts: LimitFact[]; mtime: number } | undefined;
      for (const p of sessionFiles(row, kind, k.usage!, deps.ws, deps.env, environ)) {
        const f = factsOf(p, k.limits!, st.files);
        if (f && (!newest || f.mtime > newest.mtime)) newest = f;
      }
      // records there say it all: a limit would be in them (its screen is read only when it keeps none yet)
      const records = newest ? (foldLimit(newest.facts, now) ?? { limited: false as const }) : undefined;
      let screen: ScreenSays | undefined;
      if (!records && tick.on === "poll") screen = await screenOf(deps, section, row, now, parseResetTime);
      const change = decideLimit(row.limit, records, screen, now);
      if (change) await apply(deps, tick.ctx, shared, section, row, change);
    }
  },
});

/** the running rows of kinds whose limits mam knows, read again only when the registry changed */
async function limitedKinds(deps: Deps, st: LimitsState): Promise<{ section: Section; row: Row }[]> {
  let sig = "none";
  try {
    const s = statSync(deps.registry.path);
    sig = `${s.size}:${s.mtimeMs}:${s.ino}`;
  } catch {}
  if (sig === st.regSig) return st.rows;
  const [{ KINDS }, { SECTIONS }] = await Promise.all([import("../../agents/kinds/index.ts"), import("../../registry/types.ts")]);
  const data = deps.registry.read();
  st.rows = SECTIONS.flatMap((section) =>
    data[section].filter((r) => r.status === "running" && typeof r.agent === "string" && Object.hasOwn(KINDS, r.agent) && KINDS[r.agent]!.limits !== null && KINDS[r.agent]!.usage !== null).map((row) => ({ section, row })),
  );
  st.regSig = sig;
  return st.rows;
}

/** its screen's state and limit line (undefined: not read) */
async function screenOf(deps: Deps, section: Section, row: Row, now: number, parseResetTime: (t: string, now: number) => number | null): Promise<ScreenSays | undefined> {
  const pane = row.pane?.id;
  if (typeof pane !== "string") return undefined;
  const [{ detectScreen, hasScreenLimits, screenLimit }, { backendOf, serverOf }] = await Promise.all([import("../../agents/screen/detect.ts"), import("../../registry/rows.ts")]);
  const kind = String(row.agent);
  if (!hasScreenLimits(kind)) return undefined;
  let s;
  try {
    s = await deps.muxFor(backendOf(section), serverOf(row, section)).screen(pane);
  } catch {
    return undefined;
  }
  const l = screenLimit(kind, s);
  return { state: detectScreen(kind, s).state, ...(l ? { limit: { reason: l.reason, resets_at: l.resets_text ? parseResetTime(l.resets_text, now) : null } } : {}) };
}

/** write the row, then (on a transition) journal it on the agent's job and tell the user */
async function apply(deps: Deps, ctx: HookContext, shared: Shared, section: Section, row: Row, change: LimitChange): Promise<void> {
  const paneId = row.pane?.id;
  const { changed } = await deps.registry.mutate((data) => {
    const r = data[section].find((x) => x.name === row.name && x.status === "running" && x.pane?.id === paneId);
    if (!r) return;
    if (change.to === "unlimited") delete r.limit;
    else r.limit = change.limit;
  });
  if (!changed) return;
  const was = row.limit;
  if (change.to === "update") return ctx.log(`limits: ${row.name} is still at its limit: now ${limitedWords(change.limit)} (${change.limit.reason})`);
  const words = change.to === "limited" ? `${limitedWords(change.limit)} (${change.limit.reason}; from its ${change.limit.source})` : `no longer limited: ${change.why}`;
  const job = await journalOnJob(deps, ctx, row.name, change, was);
  ctx.log(`limits: ${row.name} is ${words}${job ? `; journalled on job ${job}` : ""}`);
  const n = await shared.notes();
  const lim = change.to === "limited" ? change.limit : was!;
  await n.limited({ session: row.name, since: lim.since, resets_at: lim.resets_at, reason: lim.reason, ...(change.to === "unlimited" ? { lifted: change.why } : {}), ...(job ? { job_id: job } : {}) }, ctx.log);
}

/** journal `limited` / `unlimited` on the job the agent works on (none: nothing); that job's id */
async function journalOnJob(deps: Deps, ctx: HookContext, name: string, change: Exclude<LimitChange, { to: "update" }>, was: LimitBlock | undefined): Promise<string | undefined> {
  const [{ busySession }, { isFinal }, { effectiveStatus }, { endsJob }] = await Promise.all([import("../../jobs/loop.ts"), import("../../jobs/statuses.ts"), import("../../jobs/store.ts"), import("../../jobs/event.ts")]);
  for (const id of deps.jobs.ids()) {
    try {
      const rec = deps.jobs.read(id);
      if (!rec || rec.remote_of) continue;
      const evs = deps.jobs.journal(id);
      const status = effectiveStatus(rec, evs);
      if (isFinal(status) || status === "queued" || busySession(rec, evs) !== name) continue;
      const lim = change.to === "limited" ? change.limit : was;
      const input: { event: "limited" | "unlimited"; detail: string; data: { [k: string]: string | null } } =
        change.to === "limited"
          ? { event: "limited", detail: `${name} is ${limitedWords(change.limit)}: ${change.limit.reason}`, data: { session: name, since: change.limit.since, resets_at: change.limit.resets_at, reason: change.limit.reason, source: change.limit.source } }
          : { event: "unlimited", detail: `${name} is no longer limited: ${change.why}`, data: { session: name, since: lim?.since ?? null, why: change.why } };
      // once per limit: the same transition already journalled (a daemon that started again) is not journalled twice
      const a = await deps.jobs.append(id, (r, es) => {
        if (!r || es.some((e) => endsJob(e, r))) return undefined;
        const last = es.findLast((e) => (e.event === "limited" || e.event === "unlimited") && e.data?.session === name);
        if (last && last.event === input.event && last.data?.since === input.data.since) return undefined;
        return { ...input, source: "mam" };
      });
      if (a?.record) await ctx.publish(`${a.record.topic_prefix}/events`, a.line);
      return a ? id : undefined;
    } catch (e) {
      ctx.log(`limits: job ${id}: could not journal ${change.to} (${(e as Error).message})`);
    }
  }
  return undefined;
}
