// An agent at a usage limit (lib/fleet/limit.ts): the row's `limit` read strictly, and the pure
// decisions of a resume at reset: the jitter's bounds, when "continue" is due (known reset, the
// kind's auto-continue margin, unknown reset on the 1 m / 5 m / 15 m / 1 h backoff), the per-day cap.
import { describe, expect, test } from "bun:test";
import { DEFAULT_JITTER_S, jitterMax, jitterS, type Limit, limitOf, logAttempt, onLimitOf, RESUME_BACKOFF_S, resumeDueAt, resumeLogOf, resumeNow, RESUMES_PER_DAY, resumesLeftToday, resumeTarget } from "../../lib/fleet/limit.ts";

const T0 = Date.parse("2026-12-02T10:00:00Z") / 1000;
const iso = (s: number) => new Date(s * 1000).toISOString();
const lim = (o: Partial<Limit> = {}): Limit => ({ since: iso(T0), resets_at: iso(T0 + 3600), reason: "5-hour limit", source: "records", ...o });

describe("limitOf", () => {
  test("the row's limit when well-formed, else none", () => {
    expect(limitOf({ limit: lim() })).toEqual(lim());
    expect(limitOf({ limit: { ...lim(), resets_at: null, used_percent: 100 } })).toEqual({ ...lim(), resets_at: null, used_percent: 100 });
    expect(limitOf({})).toBeUndefined();
    for (const bad of [null, "x", [], { ...lim(), since: "yesterday" }, { ...lim(), resets_at: "soon" }, { ...lim(), source: "guess" }, { ...lim(), reason: 3 }, { ...lim(), used_percent: "73" }]) expect(limitOf({ limit: bad })).toBeUndefined();
  });
  test("on_limit: resume, failover, else wait", () => {
    expect(onLimitOf({ on_limit: "resume" })).toBe("resume");
    expect(onLimitOf({ on_limit: "failover" })).toBe("failover");
    expect(onLimitOf({ on_limit: "x" })).toBe("wait");
    expect(onLimitOf({})).toBe("wait");
  });
});

describe("jitter", () => {
  test("within [max/3, max], the same for the same agent and limit, spread over agents", () => {
    const seen = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const j = jitterS(`agent-${i}\u0000${iso(T0)}`);
      expect(j).toBeGreaterThanOrEqual(30);
      expect(j).toBeLessThanOrEqual(90);
      seen.add(j);
    }
    expect(seen.size).toBeGreaterThan(20);
    expect(jitterS("a\u0000x")).toBe(jitterS("a\u0000x"));
    expect(jitterS("a", 0)).toBe(0);
    expect(jitterS("a", 9)).toBeGreaterThanOrEqual(3);
    expect(jitterS("a", 9)).toBeLessThanOrEqual(9);
  });
  test("MAM_LIMIT_JITTER_S: whole seconds, else the default", () => {
    expect(jitterMax(undefined)).toBe(DEFAULT_JITTER_S);
    expect(jitterMax("0")).toBe(0);
    expect(jitterMax("20")).toBe(20);
    expect(jitterMax("-1")).toBe(DEFAULT_JITTER_S);
    expect(jitterMax("1.5")).toBe(DEFAULT_JITTER_S);
  });
});

describe("when to resume", () => {
  test("a known reset: after it, plus the jitter and the kind's auto-continue margin", () => {
    expect(resumeDueAt(lim(), undefined, 40)).toBe(T0 + 3640);
    expect(resumeDueAt(lim(), undefined, 40, 90)).toBe(T0 + 3730);
    expect(resumeNow(lim(), undefined, T0 + 3639, 40)).toMatchObject({ type: false });
    expect(resumeNow(lim(), undefined, T0 + 3640, 40)).toEqual({ type: true });
    expect(resumeNow(undefined, undefined, T0 + 9999, 0)).toEqual({ type: false, why: "not limited" });
  });
  test("an unknown reset: 1 m after the limit began, then 5 m, 15 m, 1 h after each attempt", () => {
    const l = lim({ resets_at: null });
    expect(resumeDueAt(l, undefined, 40)).toBe(T0 + 60);
    let log = logAttempt(undefined, l, T0 + 60);
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      const due = resumeDueAt(l, log, 40);
      waits.push(due - log.last_at);
      log = logAttempt(log, l, due);
    }
    expect(waits).toEqual([300, 900, 3600, 3600, 3600]);
    expect(RESUME_BACKOFF_S).toEqual([60, 300, 900, 3600]);
  });
  test("a known reset that an attempt did not end: the backoff from that attempt; a new limit starts over", () => {
    const log = logAttempt(undefined, lim(), T0 + 3640);
    expect(log).toMatchObject({ attempts: 1, today: 1, last_at: T0 + 3640 });
    expect(resumeDueAt(lim(), log, 40)).toBe(T0 + 3640 + 300);
    const next = lim({ since: iso(T0 + 7200), resets_at: iso(T0 + 9000) });
    expect(resumeDueAt(next, log, 40)).toBe(T0 + 9040);
    expect(logAttempt(log, next, T0 + 9040)).toMatchObject({ attempts: 1, today: 2 });
  });
  test("at most RESUMES_PER_DAY a UTC day, counted again the next day", () => {
    const l = lim({ resets_at: null });
    let log = logAttempt(undefined, l, T0 + 60);
    for (let i = 1; i < RESUMES_PER_DAY; i++) log = logAttempt(log, l, log.last_at + 3600);
    expect(log.today).toBe(RESUMES_PER_DAY);
    const due = resumeDueAt(l, log, 0);
    expect(resumesLeftToday(log, due)).toBe(0);
    expect(resumeNow(l, log, due, 0)).toEqual({ type: false, why: `${RESUMES_PER_DAY} resumes today already` });
    const tomorrow = Date.parse("2026-12-03T00:00:01Z") / 1000;
    expect(resumeNow(l, log, Math.max(due, tomorrow), 0)).toEqual({ type: true });
  });
  test("the row's limit_resume, read strictly", () => {
    const log = logAttempt(undefined, lim(), T0);
    expect(resumeLogOf({ limit_resume: log })).toEqual(log);
    expect(resumeLogOf({ limit_resume: { ...log, attempts: "1" } })).toBeUndefined();
    expect(resumeLogOf({})).toBeUndefined();
  });
});

describe("the limit to resume from", () => {
  test("the row's own, kept on the row; once the daemon lifts it at its reset time, the kept one, until mam typed for it", () => {
    const l = lim();
    const first = resumeTarget(l, undefined, T0 + 10);
    expect(first).toEqual({ limit: l, keep: { since: l.since, attempts: 0, last_at: T0 + 10, day: "2026-12-02", today: 0, limit: l } });
    expect(resumeTarget(l, first.keep, T0 + 20)).toEqual({ limit: l });
    // lifted at the reset (T0 + 3600): resumed from the kept one, due after the jitter
    expect(resumeTarget(undefined, first.keep, T0 + 3601)).toEqual({ limit: l });
    expect(resumeNow(l, first.keep, T0 + 3601, 40)).toMatchObject({ type: false });
    expect(resumeNow(l, first.keep, T0 + 3640, 40)).toEqual({ type: true });
    // typed once: nothing more, the kept limit is dropped
    const typedOnce = logAttempt(first.keep, l, T0 + 3640);
    expect(typedOnce.limit).toEqual(l);
    const after = resumeTarget(undefined, typedOnce, T0 + 3700);
    expect(after.limit).toBeUndefined();
    expect(after.keep).toEqual({ since: l.since, attempts: 1, last_at: T0 + 3640, day: "2026-12-02", today: 1 });
    // lifted before its reset time (a turn was answered): nothing to resume
    expect(resumeTarget(undefined, first.keep, T0 + 100)).toEqual({ keep: { since: l.since, attempts: 0, last_at: T0 + 10, day: "2026-12-02", today: 0 } });
    // an unknown reset is never lifted by time: only its own limit counts
    const u = lim({ resets_at: null });
    expect(resumeTarget(undefined, resumeTarget(u, undefined, T0).keep, T0 + 99999).limit).toBeUndefined();
    // a new limit is kept afresh
    const next = lim({ since: iso(T0 + 7200), resets_at: iso(T0 + 9000) });
    expect(resumeTarget(next, typedOnce, T0 + 7201).keep).toMatchObject({ since: next.since, attempts: 0, today: 1, limit: next });
    expect(resumeTarget(undefined, undefined, T0)).toEqual({});
  });
});
