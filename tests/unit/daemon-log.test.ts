// What the daemon writes to its log, bounded: dropped events limited per topic (DropLog), a
// failure that repeats at every poll logged once (LogOnce), the rotation size from the environment.
import { describe, expect, test } from "bun:test";
import { logMaxBytes } from "../../lib/daemon/log-file.ts";
import { DropLog } from "../../lib/jobs/ingest.ts";
import { LogOnce } from "../../lib/sys/log-once.ts";

describe("DropLog (review R5: 5000 bad events wrote 5000 lines)", () => {
  test("per topic and reason: the first three in full, the rest counted and said in one line when the window ends", () => {
    let now = 0;
    const lines: string[] = [];
    const d = new DropLog((l) => lines.push(l), 60_000, 3, 30, 5, () => now);
    for (let i = 0; i < 5000; i++) d.drop("mam/jobs/aaaaaaaa/events", `HMAC verify failed (job aaaaaaaa seq ${i + 1}): event dropped (on mam/jobs/aaaaaaaa/events)`);
    expect(lines).toHaveLength(3);
    now = 60_000;
    d.drop("mam/jobs/aaaaaaaa/events", "HMAC verify failed (job aaaaaaaa seq 5001): event dropped (on mam/jobs/aaaaaaaa/events)");
    expect(lines.slice(3)).toEqual([
      "dropped 4997 more events on mam/jobs/aaaaaaaa/events in 60 s, not logged one by one (the last: HMAC verify failed (job aaaaaaaa seq 5000): event dropped)",
      "HMAC verify failed (job aaaaaaaa seq 5001): event dropped (on mam/jobs/aaaaaaaa/events)", // a new window
    ]);
    d.flush();
  });

  test("across topics: at most `total` lines a window, then the five busiest topics and one line for the others", () => {
    let now = 0;
    const lines: string[] = [];
    const d = new DropLog((l) => lines.push(l), 60_000, 3, 30, 5, () => now);
    for (let t = 0; t < 200; t++) for (let i = 0; i <= t % 10; i++) d.drop(`mam/jobs/${String(t).padStart(8, "0")}/events`, `dropped event: payload is not JSON (on topic ${t})`);
    expect(lines).toHaveLength(30);
    now = 5_000;
    d.flush();
    const summary = lines.slice(30);
    expect(summary).toHaveLength(6);
    expect(summary[0]).toMatch(/^dropped 10 more events on mam\/jobs\/\d{8}\/events in 5 s, not logged one by one \(the last: dropped event: payload is not JSON\)$/);
    expect(summary[5]).toMatch(/^dropped \d+ more events on 1\d\d other topics in 5 s, not logged one by one$/);
  });

  test("different problems on one job each get their own lines: the limit is per topic and reason", () => {
    const lines: string[] = [];
    const d = new DropLog((l) => lines.push(l), 60_000, 3, 30);
    const t = "mam/jobs/aaaaaaaa/events";
    for (let i = 0; i < 10; i++) d.drop(t, `HMAC verify failed ${i}`, "bad-signature");
    d.drop(t, "schema_version 2 is not 1", "wrong-schema");
    d.drop(t, "payload of 307400 bytes exceeds 262144", "oversized");
    d.drop(t, "seq 1 already seen", "seen-seq");
    expect(lines).toEqual(["HMAC verify failed 0", "HMAC verify failed 1", "HMAC verify failed 2", "schema_version 2 is not 1", "payload of 307400 bytes exceeds 262144", "seq 1 already seen"]);
    d.flush();
  });

  test("the window's end comes by itself (a timer) when no more drops arrive", async () => {
    const lines: string[] = [];
    const d = new DropLog((l) => lines.push(l), 50, 1, 30);
    d.drop("t", "one (on t)");
    d.drop("t", "two (on t)");
    await Bun.sleep(120);
    expect(lines).toEqual(["one (on t)", "dropped 1 more event on t in 1 s, not logged one by one (the last: two)"]);
  });
});

describe("LogOnce", () => {
  test("the same failure once; a changed one again; after ok() again", () => {
    const lines: string[] = [];
    const o = new LogOnce((l) => lines.push(l));
    o.failed("job a", new Error("boom"), "timeout scan failed");
    o.failed("job a", new Error("boom"), "timeout scan failed");
    o.failed("job a", new Error("boom"), "reaction failed"); // another step: its own line
    o.failed("job a", new Error("bang"), "timeout scan failed");
    o.ok("job a", "timeout scan failed");
    o.failed("job a", new Error("bang"), "timeout scan failed");
    expect(lines).toEqual([
      "job a: timeout scan failed: boom (logged once; the daemon goes on with the rest)",
      "job a: reaction failed: boom (logged once; the daemon goes on with the rest)",
      "job a: timeout scan failed: bang (logged once; the daemon goes on with the rest)",
      "job a: timeout scan failed: bang (logged once; the daemon goes on with the rest)",
    ]);
  });
});

test("MAM_DAEMON_LOG_MAX_BYTES: bytes, at least 4096, 0 = never, anything else the default (1 MiB)", () => {
  expect(logMaxBytes({})).toBe(1024 * 1024);
  expect(logMaxBytes({ MAM_DAEMON_LOG_MAX_BYTES: "65536" })).toBe(65536);
  expect(logMaxBytes({ MAM_DAEMON_LOG_MAX_BYTES: "100" })).toBe(4096);
  expect(logMaxBytes({ MAM_DAEMON_LOG_MAX_BYTES: "0" })).toBe(0);
  expect(logMaxBytes({ MAM_DAEMON_LOG_MAX_BYTES: "1M" })).toBe(1024 * 1024);
});
