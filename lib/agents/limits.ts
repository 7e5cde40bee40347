// What an agent's own records and screen say about a usage or rate limit (docs/unattended.md):
// the facts one line of its conversation file holds, their fold into "limited until T" or not, and
// the reset times the CLIs print, parsed. A kind whose limits mam knows states how (its `limits`
// aspect, kinds/<kind>.ts, from shared/reference/real-limits.md: what claude 2.1.197/2.1.332 and
// codex 0.171.0 write and show); a kind that was not checked has `limits: null`. Pure: the daemon's
// reaction (lib/ops/react/limits-watch.ts) reads the files and the screen, and writes the row.
//
// A reset time is what the agent said, or unknown (null): never guessed.

/** what one line of an agent's records says about its limits */
export type LimitFact =
  /**
   * a turn refused at a limit: since `at` (ms, NaN when the line has no time); `resets_at` (ms) when
   * the line says it exactly, else `resets_text` when it says it in words ("2:53am (UTC)")
   */
  | { kind: "hit"; at: number; resets_at: number | null; resets_text?: string; reason: string }
  /** a turn that got a model's answer: whatever limit came before is over */
  | { kind: "ok"; at: number }
  /** how much of a window is used (codex token_count.rate_limits), `resets_at` ms or null */
  | { kind: "window"; at: number; used_percent: number; window_minutes: number | null; resets_at: number | null };

/** how a kind's limits show (its `limits` aspect) */
export interface LimitsKind {
  /** a line that holds none of these strings says nothing (not even decoded) */
  markers: string[];
  /** the fact one whole line of its records says, if any */
  parse(line: string): LimitFact | undefined;
}

/** a verdict: limited (since, until, why) or not; `used_percent`: the window's, when known */
export type LimitVerdict =
  | { limited: true; since: number; resets_at: number | null; reason: string; used_percent?: number }
  | { limited: false; used_percent?: number; window_minutes?: number | null };

/**
 * pure: the limit the facts (in file order) say the agent is at, `now` (ms): the last `hit` with
 * no `ok` after it, unless its reset time has passed. A hit without its own reset time takes the
 * reset of the window that was full at it (codex: the token_count at 100 % before task_complete).
 * undefined: the facts say nothing either way.
 */
export function foldLimit(facts: readonly LimitFact[], now: number): LimitVerdict | undefined {
  let verdict: LimitVerdict | undefined;
  let window: Extract<LimitFact, { kind: "window" }> | undefined;
  let full: Extract<LimitFact, { kind: "window" }> | undefined;
  for (const f of facts) {
    if (f.kind === "window") {
      window = f;
      if (f.used_percent >= 100) full = f;
      else full = undefined;
      continue;
    }
    if (f.kind === "ok") {
      verdict = { limited: false };
      full = undefined;
      continue;
    }
    const at = Number.isFinite(f.at) ? f.at : now;
    const resets = f.resets_at ?? full?.resets_at ?? (f.resets_text !== undefined ? parseResetTime(f.resets_text, at) : null);
    verdict = { limited: true, since: at, resets_at: resets, reason: f.reason, ...(full ? { used_percent: full.used_percent } : {}) };
  }
  if (verdict?.limited && verdict.resets_at !== null && now >= verdict.resets_at) verdict = { limited: false };
  if (!verdict && !window) return undefined;
  if (!verdict || !verdict.limited) return { limited: false, ...(window ? { used_percent: window.used_percent, window_minutes: window.window_minutes } : {}) };
  return verdict;
}

// ---- reset times as the CLIs print them ------------------------------------------------------

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/** the offset (ms) of time zone `zone` at instant `t`, or undefined for a zone Intl does not know */
function zoneOffset(t: number, zone: string): number | undefined {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat("en-US", { timeZone: zone, hourCycle: "h23", year: "numeric", month: "numeric", day: "numeric", hour: "numeric", minute: "numeric", second: "numeric" }).formatToParts(new Date(t));
  } catch {
    return undefined;
  }
  const n = (k: string) => Number(parts.find((p) => p.type === k)?.value);
  const wall = Date.UTC(n("year"), n("month") - 1, n("day"), n("hour") % 24, n("minute"), n("second"));
  return wall - Math.floor(t / 1000) * 1000;
}

/** the instant of a wall-clock time in `zone` (undefined: the process's own zone) */
function wallTime(y: number, mo: number, d: number, h: number, mi: number, zone: string | undefined): number | undefined {
  if (zone === undefined) {
    const t = new Date(y, mo, d, h, mi).getTime();
    return Number.isFinite(t) ? t : undefined;
  }
  const guess = Date.UTC(y, mo, d, h, mi);
  const o1 = zoneOffset(guess, zone);
  if (o1 === undefined) return undefined;
  const o2 = zoneOffset(guess - o1, zone) ?? o1;
  return guess - o2;
}

/** the wall-clock date of instant `t` in `zone` (undefined: the process's own) */
function dateIn(t: number, zone: string | undefined): { y: number; mo: number; d: number } {
  if (zone === undefined) {
    const x = new Date(t);
    return { y: x.getFullYear(), mo: x.getMonth(), d: x.getDate() };
  }
  const x = new Date(t + (zoneOffset(t, zone) ?? 0));
  return { y: x.getUTCFullYear(), mo: x.getUTCMonth(), d: x.getUTCDate() };
}

const to24 = (h: number, ampm: string) => (h % 12) + (ampm.toLowerCase() === "pm" ? 12 : 0);

/**
 * pure: a reset time as claude or codex prints it, as an instant (ms), placed after `now` (ms):
 *   claude  `2:53am (UTC)`, `3pm (Europe/Paris)`, `Dec 5, 12:14pm (UTC)`, `Dec 5, 2027, 12:14pm (UTC)`, `2:59am`
 *   codex   `3:18 AM`, `Dec 5th, 2026 12:44 PM`
 * A time without a date is its next occurrence after `now` (a limit's reset is ahead of it); a
 * zone in parentheses is that zone, else `zone`, else this process's own. null: no time in the
 * text (codex's `later`), or a zone no one knows: unknown, never guessed.
 */
export function parseResetTime(text: string, now: number, zone?: string): number | null {
  const m = /(?:\b([A-Za-z]{3})[a-z]*\.? (\d{1,2})(?:st|nd|rd|th)?,? (?:(\d{4}),? )?)?\b(\d{1,2})(?::(\d\d))? ?([ap]m)\b(?: \(([^)]+)\))?/i.exec(text);
  if (!m) return null;
  const [, mon, day, year, hh, mm, ampm, tz] = m;
  const h = Number(hh);
  const mi = mm === undefined ? 0 : Number(mm);
  if (h < 1 || h > 12 || mi > 59) return null;
  const z = tz ?? zone;
  if (z !== undefined && zoneOffset(now, z) === undefined) return null;
  const hour = to24(h, ampm!);
  if (mon !== undefined) {
    const mo = MONTHS.indexOf(mon.toLowerCase());
    if (mo < 0) return null;
    const today = dateIn(now, z);
    let y = year !== undefined ? Number(year) : today.y;
    let t = wallTime(y, mo, Number(day), hour, mi, z);
    // a date without its year that is behind us is next year's (Dec 31 → Jan 1)
    if (t !== undefined && year === undefined && t < now - 86_400_000) t = wallTime(++y, mo, Number(day), hour, mi, z);
    return t ?? null;
  }
  const today = dateIn(now, z);
  let t = wallTime(today.y, today.mo, today.d, hour, mi, z);
  if (t === undefined) return null;
  // the next such time: today's when it is still ahead (a minute's slack for a clock read late), else tomorrow's
  if (t < now - 60_000) t = wallTime(today.y, today.mo, today.d + 1, hour, mi, z);
  return t ?? null;
}

/** "5h", "7d", "90m": a window's length as the CLIs name it */
export function windowName(minutes: number | null | undefined): string | undefined {
  if (minutes === null || minutes === undefined || !Number.isFinite(minutes) || minutes <= 0) return undefined;
  if (minutes % 1440 === 0) return `${minutes / 1440}d`;
  if (minutes % 60 === 0) return `${minutes / 60}h`;
  return `${minutes}m`;
}

/** a reason on one line, at most 200 characters */
export function reasonLine(s: string): string {
  const t = s.split("\n")[0]!.replace(/\s+/g, " ").trim();
  return t.length > 200 ? `${t.slice(0, 199)}…` : t;
}

/**
 * "limited until 15:30" (this process's time zone; with the date when not within a day), or
 * "limited (reset unknown)"; `now` ms
 */
export function limitedWords(resets_at: string | null, now: number = Date.now()): string {
  if (resets_at === null) return "limited (reset unknown)";
  const t = Date.parse(resets_at);
  if (!Number.isFinite(t)) return "limited (reset unknown)";
  const d = new Date(t);
  const hm = `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;
  if (t - now < 20 * 3600_000 && t >= now - 3600_000) return `limited until ${hm}`;
  return `limited until ${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")} ${hm}`;
}

/** "73 % of 5h", "100 %": a window's use, when known */
export function usedWords(used_percent: number | undefined, window_minutes?: number | null): string | undefined {
  if (used_percent === undefined) return undefined;
  const w = windowName(window_minutes);
  return `${Math.round(used_percent)} %${w ? ` of ${w}` : ""}`;
}
