// The usage meter's fold (docs/cost.md): what the facts of a conversation file (lib/agents/usage.ts)
// add to the ledger, and whose they are. A model answer belongs to the job whose turn it answers: a
// turn begins with a message typed into the agent, and mam's own texts about a job (its header, a
// loop's review request or feedback, a notice about it) begin that job's turn when the job has this
// session as its worker or reviewer; any other message continues the turn of the job that was
// running, unless that job had ended before the message (to the second of its final event), and
// then belongs to no job. So a job's cost runs from its header's delivery to its end, including the
// answers of the turn that was going on when it ended. Pure: the runner (lib/ops/react/meter.ts)
// reads the files and the jobs.
import { TOKEN_KINDS, type Tokens, type UsageFact } from "../agents/usage.ts";
import { bucketOf, dayOf, type FileCursor, type JobUsage, type Ledger, type Turn } from "./ledger.ts";
import { addTo, totalOf } from "./tokens.ts";

/** what the meter needs of a job a mam text names */
export interface JobFacts {
  agent_session: string;
  reviewer_session: string | null;
  /** the end of the second of its final event (ms), null while it runs */
  ended_ms: number | null;
}

export interface MeterContext {
  job(id: string): JobFacts | undefined;
  /** does a job's session field (NAME, or NAME@HOST on a copy of another host's job) name this session? */
  isSession(field: string, session: string): boolean;
  /** now (ms): the time of a fact whose record has none */
  now: number;
}

/** tokens one session used, whose job and iteration they were, and when */
export interface Delta {
  session: string;
  job: string | null;
  iteration: number | null;
  model: string;
  at: number;
  tokens: Tokens;
}

/** the job (and loop iteration) a text mam typed into an agent is about; null iteration: a notice */
export function deliveryOf(text: string): { job: string; iteration: number | null } | undefined {
  const t = text.trimStart();
  const review = /^\[mam\] Review for job ([0-9a-f]{8}) \(iteration (\d+)/.exec(t);
  if (review) return { job: review[1]!, iteration: Number(review[2]) };
  const m = /^\[mam\] Job ([0-9a-f]{8})\b(?: (?:iteration (\d+) of|(delegated to you)))?/.exec(t);
  if (!m) return undefined;
  return { job: m[1]!, iteration: m[3] ? 1 : m[2] ? Number(m[2]) : null };
}

/** the turn a message typed into `session` at `at` begins */
export function nextTurn(cur: Turn, session: string, text: string, at: number, ctx: MeterContext): Turn {
  const d = deliveryOf(text);
  if (d) {
    const j = ctx.job(d.job);
    if (j && (ctx.isSession(j.agent_session, session) || (j.reviewer_session !== null && ctx.isSession(j.reviewer_session, session)))) {
      return { job: d.job, iteration: d.iteration ?? (cur.job === d.job ? cur.iteration : null) };
    }
  }
  if (cur.job === null) return cur;
  const ended = ctx.job(cur.job)?.ended_ms ?? null;
  return ended !== null && at >= ended ? { job: null, iteration: null } : cur;
}

const grown = (had: Tokens, now: Tokens): Tokens => ({
  input: Math.max(0, now.input - had.input),
  output: Math.max(0, now.output - had.output),
  cache_write: Math.max(0, now.cache_write - had.cache_write),
  cache_read: Math.max(0, now.cache_read - had.cache_read),
});

const most = (a: Tokens, b: Tokens): Tokens => ({
  input: Math.max(a.input, b.input),
  output: Math.max(a.output, b.output),
  cache_write: Math.max(a.cache_write, b.cache_write),
  cache_read: Math.max(a.cache_read, b.cache_read),
});

export interface Applied {
  delta?: Delta;
  /** a mam text began a job's turn in this session */
  began?: string;
}

/**
 * Apply one fact of a file to its cursor (in place): a turn moves whose turn it is; an answer
 * counts once per id (what a repeated line adds beyond the first is counted, nothing else); a
 * running total counts what it grew by (all of it after a total that went down: a new count).
 */
export function applyFact(c: FileCursor, f: UsageFact, ctx: MeterContext): Applied {
  const at = (ms: number) => (Number.isFinite(ms) ? ms : ctx.now);
  const delta = (model: string, when: number, tokens: Tokens): Applied =>
    totalOf(tokens) > 0 ? { delta: { session: c.session, job: c.turn.job, iteration: c.turn.iteration, model, at: at(when), tokens } } : {};
  switch (f.kind) {
    case "turn": {
      c.turn = nextTurn(c.turn, c.session, f.text, at(f.at), ctx);
      const d = deliveryOf(f.text);
      return d && c.turn.job === d.job ? { began: d.job } : {};
    }
    case "model":
      c.model = f.model;
      return {};
    case "answer": {
      if (f.id !== undefined && c.last?.id === f.id) {
        const t = grown(c.last.tokens, f.tokens);
        c.last = { id: f.id, model: f.model, tokens: most(c.last.tokens, f.tokens) };
        return delta(f.model, f.at, t);
      }
      if (f.id !== undefined) c.last = { id: f.id, model: f.model, tokens: f.tokens };
      return delta(f.model, f.at, f.tokens);
    }
    case "total": {
      const prev = c.total;
      const restarted = prev === undefined || TOKEN_KINDS.some((k) => f.tokens[k] < prev[k]);
      c.total = f.tokens;
      return delta(c.model ?? "unknown", f.at, restarted ? f.tokens : grown(prev, f.tokens));
    }
  }
}

const jobEntry = (l: Ledger, id: string): JobUsage => (l.jobs[id] ??= { by_session: {}, by_iteration: {} });

/** a job's turn began in a session: the job has a count (0 so far) for it */
export function noteJob(l: Ledger, job: string, session: string): void {
  jobEntry(l, job).by_session[session] ??= {};
}

/** book a delta into the ledger: the session's total, day and 10 minutes; the job's session and iteration */
export function book(l: Ledger, kind: string, d: Delta): void {
  const s = (l.sessions[d.session] ??= { kind, total: {}, days: {}, recent: {} });
  s.kind = kind;
  addTo(s.total, d.model, d.tokens);
  addTo((s.days[dayOf(d.at)] ??= {}), d.model, d.tokens);
  addTo((s.recent[bucketOf(d.at)] ??= {}), d.model, d.tokens);
  if (d.job === null) return;
  const j = jobEntry(l, d.job);
  addTo((j.by_session[d.session] ??= {}), d.model, d.tokens);
  if (d.iteration !== null) addTo((j.by_iteration[String(d.iteration)] ??= {}), d.model, d.tokens);
}

export const KEEP_DAYS = 62;
export const KEEP_RECENT_MS = 2 * 3600_000;

/** forget days older than KEEP_DAYS and 10-minute buckets older than two hours */
export function prune(l: Ledger, now: number): void {
  const firstDay = dayOf(now - KEEP_DAYS * 86400_000);
  const firstBucket = bucketOf(now - KEEP_RECENT_MS);
  for (const s of Object.values(l.sessions)) {
    for (const d of Object.keys(s.days)) if (d < firstDay) delete s.days[d];
    for (const b of Object.keys(s.recent)) if (b < firstBucket) delete s.recent[b];
  }
}
