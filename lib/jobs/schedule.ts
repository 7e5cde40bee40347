// Scheduled jobs (docs/jobs.md#schedules): `job submit --at TIME` (once) and `--every DURATION`
// (again and again, from its first time). The daemon submits each run when it is due. Two
// documented choices, each with a flag:
//   missed   a run whose time passed while no daemon ran (the machine slept, mam was stopped):
//            once (default) runs it once as soon as a daemon runs, however many were missed;
//            skip drops what was missed and waits for the next time
//   overlap  a run that comes while the previous run's job has not ended: skip (default) does not
//            submit it (the schedule says so); queue submits it anyway, to wait its turn
// Pure: times are epoch seconds; no I/O.
import { usageError } from "../sys/errors.ts";

export type Missed = "once" | "skip";
export type Overlap = "skip" | "queue";

/** a run counts as on time within this many seconds of its time */
export const ON_TIME_S = 60;

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** `90s`, `5m`, `1h30m`, `2d`: seconds (at least 1) */
export function parseDuration(text: string): number {
  const t = text.trim();
  const re = /(\d+)\s*([smhd])/gy;
  let total = 0;
  let at = 0;
  for (let m = re.exec(t); m; m = re.exec(t)) {
    total += Number(m[1]) * UNITS[m[2]!]!;
    at = re.lastIndex;
  }
  if (t === "" || at !== t.length || total < 1) throw usageError(`'${text.slice(0, 40)}' is not a duration`, "give it as 90s, 5m, 1h30m or 2d");
  if (total > 366 * 86400) throw usageError(`a duration of more than a year ('${text.slice(0, 40)}')`);
  return total;
}

/**
 * A time, as epoch seconds: `+5m` (from now), `HH:MM[:SS]` (the next such local time), a local
 * `YYYY-MM-DD HH:MM[:SS]` or `…T…`, or an ISO time with `Z` or an offset.
 */
export function parseTime(text: string, nowS: number, tzOffsetMin: (epochS: number) => number = (e) => -new Date(e * 1000).getTimezoneOffset()): number {
  const t = text.trim();
  if (t.startsWith("+")) return nowS + parseDuration(t.slice(1));
  const clock = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/.exec(t);
  if (clock) {
    const [h, m, s] = [Number(clock[1]), Number(clock[2]), Number(clock[3] ?? 0)];
    if (h > 23 || m > 59 || s > 59) throw usageError(`'${t}' is not a time of day`, "give it as HH:MM or HH:MM:SS from 00:00 to 23:59:59, e.g. 18:30 (or +5m, 2026-12-24 09:00)");
    const local = nowS + tzOffsetMin(nowS) * 60;
    const day = Math.floor(local / 86400) * 86400;
    let at = day + h * 3600 + m * 60 + s - tzOffsetMin(nowS) * 60;
    if (at <= nowS) at += 86400;
    return at;
  }
  const full = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:?\d{2})?$/.exec(t);
  if (!full) throw usageError(`'${t.slice(0, 40)}' is not a time`, "give it as +5m, 18:30, 2026-12-24 09:00 or 2026-12-24T09:00:00Z");
  const [, y, mo, d, h, mi, s, zone] = full;
  const utc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? 0)) / 1000;
  if (Number.isNaN(utc) || Number(mo) > 12 || Number(d) > 31 || Number(h) > 23 || Number(mi) > 59) throw usageError(`'${t}' is not a time`);
  if (zone === "Z") return utc;
  if (zone) {
    const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
    const off = (Number(z[2]) * 60 + Number(z[3])) * (z[1] === "-" ? -1 : 1);
    return utc - off * 60;
  }
  return utc - tzOffsetMin(utc) * 60;
}

export interface ScheduleTimes {
  /** epoch seconds of the next run */
  next_at: number;
  /** seconds between runs; absent: once */
  every_s?: number;
  missed: Missed;
}

export type Due =
  /** nothing to do yet */
  | { kind: "wait" }
  /** submit a run now; then the next time (undefined: the schedule is done) */
  | { kind: "run"; late: boolean; missedRuns: number; next?: number }
  /** the time(s) passed while no daemon ran and `missed` is skip: no run; the next time */
  | { kind: "skip"; missedRuns: number; next?: number };

/** the first of `first + k × every` after now */
const nextAfter = (first: number, every: number, now: number) => first + (Math.floor((now - first) / every) + 1) * every;

/** what is due now */
export function due(s: ScheduleTimes, now: number): Due {
  if (now < s.next_at) return { kind: "wait" };
  const late = now - s.next_at > ON_TIME_S;
  const next = s.every_s !== undefined ? nextAfter(s.next_at, s.every_s, now) : undefined;
  const missedRuns = s.every_s !== undefined ? Math.floor((now - s.next_at) / s.every_s) + 1 : 1;
  if (late && s.missed === "skip") return { kind: "skip", missedRuns, next };
  return { kind: "run", late, missedRuns, next };
}
