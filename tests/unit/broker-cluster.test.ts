// A broker of several nodes (docs/machines.md#a-clustered-broker-rabbitmq, issue 36): MQTT_BROKER
// naming the nodes, topics as RabbitMQ hands them back ('.' as '/'), and the roster from the
// broker's retained messages and what the daemon heard (lib/team/roster.ts, lib/team/heard.ts).
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brokerConfigFromEnv, describeBroker, onEndpoint } from "../../lib/jobs/broker-config.ts";
import type { Team } from "../../lib/team/config.ts";
import { gapsPath, noteGap, readGaps, recentGaps } from "../../lib/team/gaps.ts";
import { HeardRoster, heardPath, readHeard } from "../../lib/team/heard.ts";
import { deliveriesOf, onlineTopic, type Presence, presenceTopic, sameTopic, underTopic } from "../../lib/team/messages.ts";
import { rosterEntry } from "../../lib/team/roster-entry.ts";
import { rosterOf, SILENT_MS } from "../../lib/team/roster.ts";
import { seal } from "../../lib/team/seal.ts";
import { EXIT, MamError } from "../../lib/sys/errors.ts";

const refused = (env: Record<string, string>): string => {
  try {
    brokerConfigFromEnv(env);
  } catch (e) {
    expect(e).toBeInstanceOf(MamError);
    expect((e as MamError).exitCode).toBe(EXIT.USAGE);
    return (e as MamError).render();
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
};

describe("MQTT_BROKER naming a cluster's nodes", () => {
  test("each node with its port or the common one; connections go to the first unless told", () => {
    const c = brokerConfigFromEnv({ MQTT_BROKER: "n1:1883, n2 ,[::1]:1999" });
    expect(c.endpoints).toEqual([
      { host: "n1", port: 1883 },
      { host: "n2", port: 1883 },
      { host: "::1", port: 1999 },
    ]);
    expect([c.host, c.port]).toEqual(["n1", 1883]);
    expect(describeBroker(c)).toBe("n1:1883,n2:1883,[::1]:1999");
    expect([onEndpoint(c, 2).host, onEndpoint(c, 2).port]).toEqual(["::1", 1999]);
    expect(onEndpoint(c, 4).host).toBe("n2"); // modulo their number
    expect(onEndpoint(c, 1).endpoints).toBe(c.endpoints);
    expect(brokerConfigFromEnv({ MQTT_BROKER: "a,b", MQTT_PORT: "1884" }).endpoints).toEqual([
      { host: "a", port: 1884 },
      { host: "b", port: 1884 },
    ]);
    expect(brokerConfigFromEnv({ MQTT_BROKER: "mqtts://a,mqtts://b:9000" }).endpoints).toEqual([
      { host: "a", port: 8883 },
      { host: "b", port: 9000 },
    ]);
  });

  test("a single address is one endpoint, as before", () => {
    const c = brokerConfigFromEnv({ MQTT_BROKER: "h:1884" });
    expect(c.endpoints).toEqual([{ host: "h", port: 1884 }]);
    expect(describeBroker(c)).toBe("h:1884");
    expect(brokerConfigFromEnv({}).endpoints).toEqual([{ host: "127.0.0.1", port: 1883 }]);
  });

  test("refused: an empty entry, mixed schemes, a port MQTT_PORT contradicts, a node named twice, a bad entry", () => {
    expect(refused({ MQTT_BROKER: "a,,b" })).toBe("ERROR: MQTT_BROKER lists an empty address (got 'a,,b'); separate the nodes' addresses with commas: host1:1883,host2:1883");
    expect(refused({ MQTT_BROKER: "a," })).toContain("lists an empty address");
    expect(refused({ MQTT_BROKER: "mqtt://a,mqtts://b" })).toBe("ERROR: MQTT_BROKER 'mqtt://a,mqtts://b' mixes mqtt:// and mqtts://; the nodes of one broker take the same scheme");
    expect(refused({ MQTT_BROKER: "mqtts://a,b", MQTT_TLS: "0" })).toContain("disagree about TLS");
    expect(refused({ MQTT_BROKER: "a:1884,b", MQTT_PORT: "1885" })).toContain("name different ports");
    expect(refused({ MQTT_BROKER: "a:1883,a" })).toBe("ERROR: MQTT_BROKER names a:1883 twice (got 'a:1883,a')");
    expect(refused({ MQTT_BROKER: "a,my host" })).toStartWith("ERROR: MQTT_BROKER must be a host, host:port or mqtt://host:port (got 'my host')");
  });
});

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
    expect(h.note(t, b)).toBe(true);
    expect(h.note(t, a)).toBe(false); // older: a replay
    expect(h.note(t, seal(other, "presence", "hostB", presence("hostB", 9000)))).toBe(false);
    h.flush();
    expect(readHeard(ws).get(t)).toBe(b);
    expect(h.note(onlineTopic(TP, "hostB", W), seal(team, "online", "hostB", online("hostB", true, 100)))).toBe(true);
    h.flush(); // within the second: not yet
    expect(readHeard(ws).size).toBe(1);
    h.flush(true);
    expect(readHeard(ws).size).toBe(2);
    h.note(t, "");
    h.flush(true);
    expect([...readHeard(ws).keys()]).toEqual([onlineTopic(TP, "hostB", W)]);
    // a new daemon starts from what the last one kept
    expect(new HeardRoster(ws, team, TP).note(onlineTopic(TP, "hostB", W), seal(team, "online", "hostB", online("hostB", true, 100)))).toBe(false);
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
