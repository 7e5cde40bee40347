// A notice said at most once a day per key, however many mam processes run: the keys said today
// are kept in <state>/once-a-day.json ({"<key>": "<local date YYYY-MM-DD>"}), read, decided on
// and written back under an flock of <state>/once-a-day.lock (lib/sys/lock-file.ts), the write
// atomic (lib/sys/atomic.ts). Of two processes that ask at the same moment exactly one is told
// to say it. When the state cannot be read or written (a read-only home, a lock held past the
// budget), the answer is "say it": a repeated warning is better than a lost one.
// Used by the herdr driver: one warning a day per server about a herdr newer than mam knows.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile } from "./atomic.ts";
import { lockFile } from "./lock-file.ts";
import { type Env, stateDir } from "./paths.ts";

/** how long an entry is kept after its day (older ones are dropped on write) */
const KEEP_DAYS = 31;
/** how long a caller waits for the lock before it says the notice anyway */
const LOCK_BUDGET_MS = 2000;

/** the local calendar day of a moment, YYYY-MM-DD */
export function localDay(d: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

/** pure: is `key` due on `day` given what was said; and the entries to keep (this key recorded) */
export function decideToday(said: Record<string, string>, key: string, day: string, now: Date): { due: boolean; next: Record<string, string> } {
  if (said[key] === day) return { due: false, next: said };
  const oldest = localDay(new Date(now.getTime() - KEEP_DAYS * 86_400_000));
  const next: Record<string, string> = {};
  for (const [k, d] of Object.entries(said)) if (typeof d === "string" && d >= oldest && k !== key) next[k] = d;
  next[key] = day;
  return { due: true, next };
}

function readSaid(path: string): Record<string, string> {
  try {
    const v = JSON.parse(readFileSync(path, "utf8"));
    if (v && typeof v === "object" && !Array.isArray(v)) return v as Record<string, string>;
  } catch {}
  return {};
}

/**
 * true when `key` has not been said today (the caller says it now; it is recorded as said), false
 * when some mam process said it earlier today
 */
export async function firstToday(env: Env, key: string, now: Date = new Date()): Promise<boolean> {
  const dir = stateDir(env);
  const path = join(dir, "once-a-day.json");
  let held;
  try {
    held = await lockFile(join(dir, "once-a-day.lock"), { budgetMs: LOCK_BUDGET_MS });
  } catch {
    return true;
  }
  if (held === "timeout") return true;
  try {
    const { due, next } = decideToday(readSaid(path), key, localDay(now), now);
    if (due) atomicWriteFile(path, `${JSON.stringify(next, null, 1)}\n`, { mode: 0o600 });
    return due;
  } catch {
    return true;
  } finally {
    held.close();
  }
}
