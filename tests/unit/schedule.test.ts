// Scheduled jobs' times (lib/jobs/schedule.ts): durations, times, and what is due when.
import { describe, expect, test } from "bun:test";
import { due, parseDuration, parseTime } from "../../lib/jobs/schedule.ts";
import { MamError } from "../../lib/sys/errors.ts";

const usage = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return e instanceof MamError ? e.exitCode : -1;
  }
  return 0;
};

test("durations", () => {
  expect(parseDuration("90s")).toBe(90);
  expect(parseDuration("5m")).toBe(300);
  expect(parseDuration("1h30m")).toBe(5400);
  expect(parseDuration("2d")).toBe(172800);
  for (const bad of ["", "5", "m", "5x", "1h 30", "0s", "-5m", "400d"]) expect(usage(() => parseDuration(bad))).toBe(2);
});

describe("times", () => {
  const now = Date.parse("2026-12-01T10:00:00Z") / 1000;
  const utc = () => 0;
  const plus2 = () => 120;
  test("relative, ISO with a zone, local", () => {
    expect(parseTime("+5m", now)).toBe(now + 300);
    expect(parseTime("2026-12-24T09:00:00Z", now)).toBe(Date.parse("2026-12-24T09:00:00Z") / 1000);
    expect(parseTime("2026-12-24T09:00:00+02:00", now)).toBe(Date.parse("2026-12-24T07:00:00Z") / 1000);
    expect(parseTime("2026-12-24 09:00", now, plus2)).toBe(Date.parse("2026-12-24T07:00:00Z") / 1000);
  });
  test("a time of day is its next occurrence, local", () => {
    expect(parseTime("10:30", now, utc)).toBe(now + 1800);
    expect(parseTime("09:30", now, utc)).toBe(now + 86400 - 1800);
    // 13:00 at UTC+2 is 11:00 UTC
    expect(parseTime("13:00", now, plus2)).toBe(now + 3600);
  });
  test("nonsense is a usage error", () => {
    for (const bad of ["tomorrow", "25:00", "10:61", "2026-13-01 10:00", "2026-12-01T10:00:00+5"]) expect(usage(() => parseTime(bad, now))).toBe(2);
  });
});

describe("what is due", () => {
  test("nothing before its time; on time within a minute; the next time after now", () => {
    expect(due({ next_at: 100, missed: "once" }, 99)).toEqual({ kind: "wait" });
    expect(due({ next_at: 100, missed: "once" }, 100)).toEqual({ kind: "run", late: false, missedRuns: 1, next: undefined });
    expect(due({ next_at: 100, every_s: 10, missed: "once" }, 101)).toEqual({ kind: "run", late: false, missedRuns: 1, next: 110 });
  });
  test("missed while no daemon ran: once runs one, skip runs none; both go on at the next time", () => {
    expect(due({ next_at: 100, every_s: 60, missed: "once" }, 100 + 300)).toEqual({ kind: "run", late: true, missedRuns: 6, next: 460 });
    expect(due({ next_at: 100, every_s: 60, missed: "skip" }, 100 + 300)).toEqual({ kind: "skip", missedRuns: 6, next: 460 });
    expect(due({ next_at: 100, missed: "skip" }, 1000)).toEqual({ kind: "skip", missedRuns: 1, next: undefined });
  });
});
