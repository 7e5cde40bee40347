// A notice said at most once a day per key (lib/sys/once-a-day.ts): the pure decision, and the
// state file it keeps. Several processes at once: tests/integration/herdr-versions.test.ts.
import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decideToday, firstToday, localDay } from "../../lib/sys/once-a-day.ts";

describe("decideToday", () => {
  const now = new Date(2026, 11, 1, 9, 30); // 1 Dec 2026, local time
  test("due once per key and day; other keys and other days are their own", () => {
    expect(localDay(now)).toBe("2026-12-01");
    const first = decideToday({}, "herdr-newer mam 0.9.1", "2026-12-01", now);
    expect(first).toEqual({ due: true, next: { "herdr-newer mam 0.9.1": "2026-12-01" } });
    expect(decideToday(first.next, "herdr-newer mam 0.9.1", "2026-12-01", now).due).toBe(false);
    expect(decideToday(first.next, "herdr-newer team 0.9.1", "2026-12-01", now).due).toBe(true);
    expect(decideToday(first.next, "herdr-newer mam 0.9.1", "2026-12-02", new Date(2026, 11, 2)).due).toBe(true);
  });

  test("entries older than a month are dropped when a key is recorded", () => {
    const said = { old: "2026-10-01", recent: "2026-11-20", junk: 5 as unknown as string };
    expect(decideToday(said, "k", "2026-12-01", now).next).toEqual({ recent: "2026-11-20", k: "2026-12-01" });
  });
});

describe("firstToday", () => {
  test("true the first time a day, false after; kept in <state>/once-a-day.json (0600)", async () => {
    const home = mkdtempSync(join(tmpdir(), "mam-once-"));
    try {
      const env = { HOME: home };
      const day1 = new Date(2026, 11, 1, 23, 59);
      expect(await firstToday(env, "a", day1)).toBe(true);
      expect(await firstToday(env, "a", day1)).toBe(false);
      expect(await firstToday(env, "b", day1)).toBe(true);
      const file = join(home, ".local", "state", "mam", "once-a-day.json");
      expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ a: "2026-12-01", b: "2026-12-01" });
      expect(statSync(file).mode & 0o777).toBe(0o600);
      // past midnight: due again
      expect(await firstToday(env, "a", new Date(2026, 11, 2, 0, 1))).toBe(true);
      // a file that is not mam's JSON is started afresh, not an error
      writeFileSync(file, "garbage");
      expect(await firstToday(env, "a", new Date(2026, 11, 2, 0, 2))).toBe(true);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
