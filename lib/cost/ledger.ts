// The usage ledger, <ws>/.mam/usage.json (docs/cost.md): what the daemon's meter has read of each
// session's conversation files (where it stopped in each, whose turn was going on) and the totals
// it counted, per session (all time, per UTC day, per 10 minutes of the last two hours) and per job
// (per session, per loop iteration). One writer: the daemon (lib/ops/react/meter.ts), replacing the
// file atomically after each poll that read something. Everything in it is a count of what the
// agents' own files say, so a ledger that is gone is counted again from them; readers take no
// lock and create nothing.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Tokens } from "../agents/usage.ts";
import { errCode } from "../sys/errors.ts";
import { mamDir } from "../sys/paths.ts";
import { asByModel, asTokens, type ByModel } from "./tokens.ts";

export const ledgerPath = (ws: string) => join(mamDir(ws), "usage.json");

/** whose turn a conversation is in: the job a mam text gave it, and the loop iteration */
export interface Turn {
  job: string | null;
  iteration: number | null;
}

/** how far the meter has read one conversation file, and what it knows there */
export interface FileCursor {
  session: string;
  kind: string;
  /** the file's inode and the byte after the last whole line read */
  ino: number;
  offset: number;
  turn: Turn;
  /** claude: the last answer counted (its lines repeat id and usage per content block) */
  last?: { id: string; model: string; tokens: Tokens };
  /** codex: the conversation's running total at the last token_count, and the current model */
  total?: Tokens;
  model?: string;
}

export interface SessionUsage {
  kind: string;
  total: ByModel;
  /** per UTC day, YYYY-MM-DD (the last 62 days) */
  days: Record<string, ByModel>;
  /** per 10 minutes, YYYY-MM-DDTHH:M0 (the last two hours): the team's $/hour */
  recent: Record<string, ByModel>;
}

export interface JobUsage {
  by_session: Record<string, ByModel>;
  /** loop jobs: per iteration (1, 2, …) */
  by_iteration: Record<string, ByModel>;
}

export interface Ledger {
  version: 1;
  files: Record<string, FileCursor>;
  sessions: Record<string, SessionUsage>;
  jobs: Record<string, JobUsage>;
  /** the UTC day a session was last told it went over its daily cap */
  capped: Record<string, string>;
}

export const emptyLedger = (): Ledger => ({ version: 1, files: {}, sessions: {}, jobs: {}, capped: {} });

const obj = (v: unknown): Record<string, unknown> => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

const byKey = <T>(v: unknown, f: (x: unknown) => T | undefined): Record<string, T> => {
  const out: Record<string, T> = {};
  for (const [k, x] of Object.entries(obj(v))) {
    const y = f(x);
    if (y !== undefined) out[k] = y;
  }
  return out;
};

function asCursor(v: unknown): FileCursor | undefined {
  const o = obj(v);
  if (typeof o.session !== "string" || typeof o.kind !== "string" || !Number.isSafeInteger(o.ino) || !Number.isSafeInteger(o.offset)) return undefined;
  const t = obj(o.turn);
  const turn: Turn = { job: typeof t.job === "string" ? t.job : null, iteration: Number.isSafeInteger(t.iteration) ? (t.iteration as number) : null };
  const c: FileCursor = { session: o.session, kind: o.kind, ino: o.ino as number, offset: o.offset as number, turn };
  const l = obj(o.last);
  const lt = asTokens(l.tokens);
  if (typeof l.id === "string" && typeof l.model === "string" && lt) c.last = { id: l.id, model: l.model, tokens: lt };
  const total = asTokens(o.total);
  if (total) c.total = total;
  if (typeof o.model === "string") c.model = o.model;
  return c;
}

const asSession = (v: unknown): SessionUsage | undefined => {
  const o = obj(v);
  return typeof o.kind === "string" ? { kind: o.kind, total: asByModel(o.total), days: byKey(o.days, asByModel), recent: byKey(o.recent, asByModel) } : undefined;
};

const asJob = (v: unknown): JobUsage => {
  const o = obj(v);
  return { by_session: byKey(o.by_session, asByModel), by_iteration: byKey(o.by_iteration, asByModel) };
};

/** a ledger's text, checked field by field (what does not fit is left out) */
export function parseLedger(text: string): Ledger | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  const o = obj(v);
  if (o.version !== 1) return undefined;
  return {
    version: 1,
    files: byKey(o.files, asCursor),
    sessions: byKey(o.sessions, asSession),
    jobs: byKey(o.jobs, asJob),
    capped: byKey(o.capped, (x) => (typeof x === "string" ? x : undefined)),
  };
}

/** the ledger, "none" when there is none yet, "broken" when it is not one */
export function readLedger(ws: string): Ledger | "none" | "broken" {
  let text: string;
  try {
    text = readFileSync(ledgerPath(ws), "utf8");
  } catch (e) {
    return errCode(e) === "ENOENT" || errCode(e) === "ENOTDIR" ? "none" : "broken";
  }
  return parseLedger(text) ?? "broken";
}

/** UTC day of a time in ms: YYYY-MM-DD */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** the 10-minute bucket of a time in ms: YYYY-MM-DDTHH:M0 */
export const bucketOf = (ms: number): string => new Date(ms).toISOString().slice(0, 15) + "0";
