// Job topics per workspace (lib/jobs/broker-config.ts) and the team protocol a presence announces
// (lib/team/messages.ts): who is sent jobs, who is told to upgrade.
import { describe, expect, test } from "bun:test";
import { brokerConfigFromEnv, eventsTopic, jobsBase, wildcardTopic, workspaceEvents } from "../../lib/jobs/broker-config.ts";
import { protocolWarnings } from "../../lib/ops/team.ts";
import { checkPresence, protocolOf, TEAM_PROTOCOL, workspaceId } from "../../lib/team/messages.ts";
import { findRemote, poolAgentElsewhere, type Roster } from "../../lib/team/roster.ts";
import { MamError } from "../../lib/sys/errors.ts";
import { topicHost } from "../../lib/team/host.ts";

describe("job topics", () => {
  const cfg = brokerConfigFromEnv({});
  test("a workspace's jobs are under <prefix>/<host>/<ws id>; the old topic stays for reports by token", () => {
    expect(jobsBase(cfg, "/w/a", "hostA")).toBe(`mam/jobs/hostA/${workspaceId("/w/a")}`);
    expect(workspaceEvents(cfg, "/w/a", "hostA")).toBe(`mam/jobs/hostA/${workspaceId("/w/a")}/+/events`);
    // two workspaces of one host, one path on two hosts: four scopes
    const scopes = new Set([["/w/a", "h1"], ["/w/b", "h1"], ["/w/a", "h2"], ["/w/b", "h2"]].map(([ws, h]) => jobsBase(cfg, ws!, h!)));
    expect(scopes.size).toBe(4);
    expect(eventsTopic(cfg, "0badc0de")).toBe("mam/jobs/0badc0de/events");
    expect(wildcardTopic(cfg)).toBe("mam/jobs/+/events");
    // the old wildcard (one level) never matches a new topic (three levels)
    expect(`${jobsBase(cfg, "/w/a", "h")}/0badc0de/events`.split("/")).toHaveLength(6);
  });
  test("MAM_MQTT_TOPIC_PREFIX comes first; an invalid MAM_HOST falls back to the hostname's name, never a wildcard", () => {
    const c = brokerConfigFromEnv({ MAM_MQTT_TOPIC_PREFIX: "org/x/" });
    expect(jobsBase(c, "/w", "h")).toBe(`org/x/h/${workspaceId("/w")}`);
    expect(topicHost({ MAM_HOST: "build-1" })).toBe("build-1");
    expect(topicHost({ MAM_HOST: "bad/host+#" })).toMatch(/^[A-Za-z0-9][A-Za-z0-9._-]*$/);
    expect(topicHost({ MAM_HOST: "bad/host+#" })).toBe(topicHost({}));
  });
});

describe("the team protocol in a presence", () => {
  const base = { host: "hostB", workspace: "/w/b", ws_id: "0123456789ab", at: 1, agents: [] };
  test("kept when it is a whole number ≥ 1; none (an older mam) is 1", () => {
    expect(checkPresence({ ...base, protocol: 2 })?.protocol).toBe(2);
    for (const bad of [0, -1, 1.5, "2", null]) expect(checkPresence({ ...base, protocol: bad })?.protocol).toBeUndefined();
    expect(protocolOf(checkPresence(base)!)).toBe(1);
    expect(TEAM_PROTOCOL).toBe(2);
  });

  const agent = (name: string) => ({ name, agent: "claude", role: "builder", status: "running", live: "idle", job: null });
  const ws = (host: string, protocol?: number) => ({ host, workspace: `/w/${host}`, ws_id: `id-${host}`, at: 0, seen: 0, online: true, ...(protocol ? { protocol } : {}), agents: [agent("w")] });
  const fleet = (...w: ReturnType<typeof ws>[]): Roster => ({ team: "t", reachable: true, dropped: 0, workspaces: w });

  test("a job for an agent of an older mam is refused, saying which host to upgrade; the same or a newer one is found", () => {
    let err: unknown;
    try {
      findRemote(fleet(ws("hostB")), "w", "hostB");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MamError);
    expect((err as MamError).message).toBe("w@hostB runs an older mam (team protocol 1; this one speaks 2): it would not hear this host's events on its jobs (a cancel, a review's verdict); nothing was sent");
    expect((err as MamError).hint).toBe("upgrade mam on hostB, or submit from a host that runs the same version");
    expect(findRemote(fleet(ws("hostB", 2)), "w", "hostB")).toMatchObject({ host: "hostB", ws_id: "id-hostB" });
    expect(findRemote(fleet(ws("hostB", 3)), "w", "hostB")).toMatchObject({ host: "hostB" });
  });

  test("a pool's job goes to no agent of an older mam", () => {
    expect(poolAgentElsewhere(fleet(ws("hostB"), ws("hostC", 2)), "builder", "hostA", false)).toEqual({ to: "w@hostC", free: true });
    expect(poolAgentElsewhere(fleet(ws("hostB")), "builder", "hostA", false)).toBeUndefined();
  });

  test("the fleet view names each host that speaks another protocol, once, and who to upgrade", () => {
    const f = fleet(ws("hostB"), { ...ws("hostB"), workspace: "/w/b2", ws_id: "id-b2" }, ws("hostC", 2), ws("hostD", 3), ws("hostA"));
    expect(protocolWarnings(f, "hostA").map((n) => `${n.level}: ${n.text}`)).toEqual([
      "warning: hostB runs an older mam (team protocol 1; this one speaks 2): jobs from here are not sent to it; upgrade mam on hostB",
      "warning: hostD runs a newer mam (team protocol 3; this one speaks 2): upgrade mam here",
    ]);
  });
});
