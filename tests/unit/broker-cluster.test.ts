// A clustered broker (docs/machines.md#a-clustered-broker-rabbitmq, issue 36): topics as RabbitMQ
// hands them back ('.' as '/'), the roster from the broker's retained messages and what the
// daemon heard (lib/team/roster.ts, lib/team/heard.ts), and the gaps it notes (lib/team/gaps.ts).
// MQTT_BROKER naming the nodes: tests/unit/broker-config.test.ts.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Team } from "../../lib/team/config.ts";
import { gapsPath, noteGap, readGaps, recentGaps } from "../../lib/team/gaps.ts";
import { HeardRoster, heardPath, readHeard } from "../../lib/team/heard.ts";
import { deliveriesOf, onlineTopic, type Presence, presenceTopic, sameTopic, underTopic } from "../../lib/team/messages.ts";
import { rosterEntry } from "../../lib/team/roster-entry.ts";
import { rosterOf, SILENT_MS } from "../../lib/team/roster.ts";
import { seal } from "../../lib/team/seal.ts";

describe("topics as RabbitMQ hands them back", () => {
  test("'.' read as '/', nothing else", () => {
    expect(sameTopic("mam/team/lab/deliver/hostB/aaaaaaaaaaaa/0123abcd/00000000", "mam/team/lab/deliver/hostB/aaaaaaaaaaaa/0123abcd.00000000")).toBe(true);
    expect(sameTopic("t/box/lan/w", "t/box.lan/w")).toBe(true);
    expect(sameTopic("t/box.lan/w", "t/box.lan/w")).toBe(true);
    expect(sameTopic("t/box/lan/w", "t/box.lan/x")).toBe(false);
    expect(sameTopic("t/boxlan/w", "t/box.lan/w")).toBe(false);
    expect(underTopic("mam/team/lab/online/box/lan/w", "mam/team/lab/online/")).toBe(true);
    expect(underTopic("mam/team/my/lab/online/h/w", "mam/team/my.lab/online/")).toBe(true);
    expect(underTopic("mam/team/lab/presence/h/w", "mam/team/lab/online/")).toBe(false);
  });

  test("a workspace's deliveries are subscribed to with '#': RabbitMQ's '+' matches no id with a '.'", () => {
    expect(deliveriesOf("mam/team/lab", "hostB", "aaaaaaaaaaaa")).toBe("mam/team/lab/deliver/hostB/aaaaaaaaaaaa/#");
  });
});

const team: Team = { schema_version: 1, team: "lab", secret: "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA", since: "" };
const other: Team = { ...team, secret: "b3RoZXItb3RoZXItb3RoZXItb3RoZXItb3RoZXItb3RoZXI" };
const TP = "mam/team/lab";
const W = "aaaaaaaaaaaa";
const presence = (host: string, at: number, agents: Presence["agents"] = []): Presence => ({ host, workspace: `/w/${host}`, ws_id: W, at, since: at - 1000, protocol: 2, agents });
const agent = (name: string) => ({ name, agent: "demo", role: "worker", status: "running", live: "idle", job: null });
const online = (host: string, on: boolean, since: number) => ({ online: on, at: since + 10, host, ws_id: W, since });

describe("roster entries", () => {
  test("the workspace comes from the sealed body; the topic must be its own, '.' read as '/'", () => {
    const p = seal(team, "presence", "box.lan", presence("box.lan", 5000));
    expect(rosterEntry(team, TP, presenceTopic(TP, "box.lan", W), p)?.what).toBe("presence");
    expect(rosterEntry(team, TP, `${TP}/presence/box/lan/${W}`, p)?.key).toBe(`box.lan/${W}`);
    expect(rosterEntry(team, TP, presenceTopic(TP, "other", W), p)).toBeUndefined(); // moved
    expect(rosterEntry(team, TP, onlineTopic(TP, "box.lan", W), p)).toBeUndefined(); // a presence on the online topic
    expect(rosterEntry(other, TP, presenceTopic(TP, "box.lan", W), p)).toBeUndefined(); // another team's
    const forged = seal(team, "presence", "hostC", presence("box.lan", 5000));
    expect(rosterEntry(team, TP, presenceTopic(TP, "box.lan", W), forged)).toBeUndefined(); // sealed by another host
  });
});

describe("the roster: what the broker kept and what was heard, the newest of each", () => {
  const now = 1_000_000;
  test("heard only (a broker that serves no retained message to a wildcard): the workspace is there and online", () => {
    const heard = new Map([
      [presenceTopic(TP, "hostB", W), seal(team, "presence", "hostB", presence("hostB", now - 1000, [agent("w")]))],
      [onlineTopic(TP, "hostB", W), seal(team, "online", "hostB", online("hostB", true, now - 2000))],
    ]);
    const r = rosterOf(team, TP, new Map(), heard, now);
    expect(r.workspaces.map((w) => [w.host, w.online, w.agents.map((a) => a.name)])).toEqual([["hostB", true, ["w"]]]);
    expect(r.dropped).toBe(0);
  });

  test("a newer presence wins whichever side has it; a newer offline wins over an older online", () => {
    const older = seal(team, "presence", "hostB", presence("hostB", now - 5000, [agent("old")]));
    const newer = seal(team, "presence", "hostB", presence("hostB", now - 1000, [agent("new")]));
    const on = seal(team, "online", "hostB", online("hostB", true, now - 9000));
    const off = seal(team, "online", "hostB", online("hostB", false, now - 1500)); // a later connection's will
    const t1 = rosterOf(team, TP, new Map([[presenceTopic(TP, "hostB", W), Buffer.from(newer)], [onlineTopic(TP, "hostB", W), Buffer.from(on)]]), new Map([[presenceTopic(TP, "hostB", W), older]]), now);
    expect(t1.workspaces[0]!.agents.map((a) => a.name)).toEqual(["new"]);
    const t2 = rosterOf(team, TP, new Map([[presenceTopic(TP, "hostB", W), Buffer.from(older)], [onlineTopic(TP, "hostB", W), Buffer.from(on)]]), new Map([[presenceTopic(TP, "hostB", W), newer], [onlineTopic(TP, "hostB", W), off]]), now);
    expect(t2.workspaces[0]!.agents.map((a) => a.name)).toEqual(["new"]);
    expect(t2.workspaces[0]!.online).toBe(false);
  });

  test(`a workspace not heard of for ${SILENT_MS / 60_000} minutes is offline (its node died with it: no last will)`, () => {
    const keep = (at: number) => new Map([[presenceTopic(TP, "hostB", W), seal(team, "presence", "hostB", presence("hostB", at))], [onlineTopic(TP, "hostB", W), seal(team, "online", "hostB", online("hostB", true, at - 10))]]);
    expect(rosterOf(team, TP, new Map(), keep(now - SILENT_MS + 1000), now).workspaces[0]!.online).toBe(true);
    expect(rosterOf(team, TP, new Map(), keep(now - SILENT_MS - 1000), now).workspaces[0]!.online).toBe(false);
  });

  test("what does not open is dropped: counted when the broker kept it, skipped when heard", () => {
    const bad = seal(other, "presence", "hostB", presence("hostB", now));
    expect(rosterOf(team, TP, new Map([[presenceTopic(TP, "hostB", W), Buffer.from(bad)]]), new Map(), now)).toMatchObject({ workspaces: [], dropped: 1 });
    expect(rosterOf(team, TP, new Map(), new Map([[presenceTopic(TP, "hostB", W), bad]]), now)).toMatchObject({ workspaces: [], dropped: 0 });
  });
});

describe("HeardRoster: the daemon's record of what it heard", () => {
  let ws = "";
  afterEach(() => rmSync(ws, { recursive: true, force: true }));
  const fresh = () => {
    ws = mkdtempSync(join(tmpdir(), "mam-heard-"));
    mkdirSync(join(ws, ".mam"));
    return ws;
  };

  test("keeps the newest of each topic, drops a cleared one, and writes at most once a second unless forced", () => {
    fresh();
    const h = new HeardRoster(ws, team, TP);
    const t = presenceTopic(TP, "hostB", W);
    const a = seal(team, "presence", "hostB", presence("hostB", 2000));
    const b = seal(team, "presence", "hostB", presence("hostB", 3000));
    expect(h.note(t, b).kept).toBe(true);
    expect(h.note(t, a).kept).toBe(false); // older: a replay
    expect(h.note(t, seal(other, "presence", "hostB", presence("hostB", 9000))).kept).toBe(false);
    h.flush();
    expect(readHeard(ws).get(t)).toBe(b);
    expect(h.note(onlineTopic(TP, "hostB", W), seal(team, "online", "hostB", online("hostB", true, 100))).kept).toBe(true);
    h.flush(); // within the second: not yet
    expect(readHeard(ws).size).toBe(1);
    h.flush(true);
    expect(readHeard(ws).size).toBe(2);
    h.note(t, "");
    h.flush(true);
    expect([...readHeard(ws).keys()]).toEqual([onlineTopic(TP, "hostB", W)]);
    // a new daemon starts from what the last one kept
    expect(new HeardRoster(ws, team, TP).note(onlineTopic(TP, "hostB", W), seal(team, "online", "hostB", online("hostB", true, 100))).kept).toBe(false);
  });

  test("a file that does not read is nothing heard, and is replaced by the next write", () => {
    fresh();
    writeFileSync(heardPath(ws), "{not json");
    expect(readHeard(ws).size).toBe(0);
    writeFileSync(heardPath(ws), JSON.stringify({ a: 1, b: "x" }));
    expect([...readHeard(ws)]).toEqual([["b", "x"]]);
    const h = new HeardRoster(ws, team, TP);
    h.note(presenceTopic(TP, "hostB", W), seal(team, "presence", "hostB", presence("hostB", 2000)));
    h.flush(true);
    expect(JSON.parse(readFileSync(heardPath(ws), "utf8"))).toHaveProperty([presenceTopic(TP, "hostB", W)]);
  });
});

describe("gaps in another host's numbering (lib/team/gaps.ts)", () => {
  let ws = "";
  afterEach(() => rmSync(ws, { recursive: true, force: true }));
  test("counted per host since the first; reported for a day; an entry goes a week after its last gap", () => {
    ws = mkdtempSync(join(tmpdir(), "mam-gaps-"));
    mkdirSync(join(ws, ".mam"));
    const t0 = Date.parse("2026-12-01T00:00:00Z");
    noteGap(ws, "hostB", "gap in job 0123abcd from origin o: expected seq 2, got 3", t0);
    noteGap(ws, "hostB", "gap in job 0123abcd from origin o: expected seq 5, got 7", t0 + 60_000);
    noteGap(ws, "hostC", "gap in job 89abcdef: expected seq 1, got 2", t0 - 2 * 86_400_000);
    expect(readGaps(ws).hostB).toEqual({ count: 2, first_at: "2026-12-01T00:00:00Z", last_at: "2026-12-01T00:01:00Z", last: "gap in job 0123abcd from origin o: expected seq 5, got 7" });
    const said = recentGaps(readGaps(ws), t0 + 120_000);
    expect(said).toEqual([
      "events from hostB arrived with a gap in their numbering 2 times since 2026-12-01T00:00:00Z (last at 2026-12-01T00:01:00Z: gap in job 0123abcd from origin o: expected seq 5, got 7); mam's acks had the missing ones sent again. A broker that drops messages (a client queue past its limit, a lost node) or a host cut off for a while does this",
    ]);
    noteGap(ws, "hostD", "x", t0 + 8 * 86_400_000);
    expect(Object.keys(readGaps(ws))).toEqual(["hostD"]);
    writeFileSync(gapsPath(ws), "[broken");
    expect(readGaps(ws)).toEqual({});
  });
});
