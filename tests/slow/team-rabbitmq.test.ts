// A team on a clustered broker (docs/machines.md#a-clustered-broker-rabbitmq, issue 36): three
// RabbitMQ nodes with the MQTT plugin (tests/helpers/brokers.ts startRabbitCluster), host A on the
// first, B on the second, C on the third, each with MQTT_BROKER naming every node (its own first),
// its own MAM_HOST, HOME, workspace, tmux server, demo agents and daemon. RabbitMQ 3.10 keeps
// retained messages per node and serves none to a wildcard subscription, so the roster comes from
// what each daemon heard (lib/team/heard.ts); durable sessions are quorum queues.
//
//   * the fleet: every host sees the others' agents, although the broker hands a reader no
//     retained presence at all;
//   * a loop job, lead on A, worker on B, reviewer on C, and B's node killed (kill -9) while B's
//     worker is busy: B goes on to the next node within seconds, nothing is lost or doubled, every
//     stage arrives once and in order, and A's fleet shows B online with its agents again.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { type RabbitCluster, rabbitMissing, retainedTopics, startRabbitCluster } from "../helpers/brokers.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";
import { doubled, expectWhole, formTeam, hasStage, type Host, loopStages, makeHost, occurrences as count, ofOrigin, stages, threeHostStory, until as waitUntil, untilAnnounced } from "../helpers/team.ts";
import { TMUX_BIN } from "../helpers/tmux.ts";

const SKIP = rabbitMissing() ?? (!TMUX_BIN ? "tmux is not installed (apt-get install tmux)" : undefined);
if (SKIP) console.log(`RabbitMQ cluster tests skipped: ${SKIP}`);

let sb: Sandbox;
let rc: RabbitCluster;
let A: Host;
let B: Host;
let C: Host;

const story = (id?: string) => threeHostStory(A, B, C, id);

const has = hasStage;
const until = (what: string, cond: () => boolean | Promise<boolean>, timeoutMs: number, id?: string) => waitUntil(what, cond, timeoutMs, () => story(id));

describe.skipIf(!!SKIP)("a team on a three-node RabbitMQ cluster", () => {
  beforeAll(async () => {
    sb = makeSandbox("mam-rmq-");
    rc = await startRabbitCluster(join(sb.root, "rabbit"));
    A = makeHost(sb.root, "hostA", rc.env([0, 1, 2]));
    B = makeHost(sb.root, "hostB", rc.env([1, 2, 0]));
    C = makeHost(sb.root, "hostC", rc.env([2, 0, 1]));
    await formTeam([A, B, C]);
    await A.demo("lead", "lead");
    await B.demo("w", "worker", ["--think-ms", "4000"]);
    await C.demo("r", "reviewer", ["--pass-on", "2", "--think-ms", "50"]);
  }, 240_000);

  afterAll(async () => {
    for (const h of [A, B, C]) await h?.stop();
    await rc?.stop();
    // what outlived the hosts and the nodes, named (cleanup gives only the pids)
    const left = Bun.spawnSync(["sh", "-c", `ps -eo pid,ppid,args | grep -F '${sb?.root}' | grep -v grep`]).stdout.toString();
    if (left.trim()) console.log(`left running:\n${left}`);
    await sb?.cleanup();
  }, 60_000);

  test("every host sees the others' agents, from what its daemon heard: the nodes hand a reader no retained presence", async () => {
    await untilAnnounced(A, ["w@hostB", "r@hostC", "lead@hostA"], 30_000);
    await untilAnnounced(B, ["lead@hostA", "r@hostC"], 30_000);
    await untilAnnounced(C, ["lead@hostA", "w@hostB"], 30_000);
    for (const port of rc.ports) expect(await retainedTopics(port, "mam/team/lab/presence/#", { username: "mam", password: "mam-test-secret" })).toEqual([]);
    expect(B.log()).toContain(`on node 127.0.0.1:${rc.ports[1]}`);
    for (const h of [A, B, C]) expect(h.log()).toContain("team: the broker serves no retained presence to a wildcard (a cluster's node?): every presence is heard as it is published");
  }, 120_000);

  test("a loop job across the nodes, and the worker's node killed mid-job: B moves to another node, nothing lost or doubled, every stage once and in order", async () => {
    const out = await A.ok(["job", "submit", "--to", "w@hostB", "--from", "lead", "--type", "loop", "--reviewer", "r@hostC", "--prompt", "add a greeting"]);
    const id = out.trim();
    expect(id).toMatch(/^[0-9a-f]{8}$/);
    await until("B's worker starts", () => has(B, id, "started w@hostB"), 30_000, id);
    const killedAt = Date.now();
    await rc.kill(1);
    await until("B is on another node", () => B.log().includes(`lost the broker's node 127.0.0.1:${rc.ports[1]}`) && new RegExp(`subscribed to .* on node 127\\.0\\.0\\.1:(${rc.ports[2]}|${rc.ports[0]})`).test(B.log()), 15_000, id);
    const movedMs = Date.now() - killedAt;
    const waited = await A.mam(["job", "wait", id, "--timeout", "90"], {}, 120_000);
    expect(waited.code, `${waited.stdout}${waited.stderr}\n${story(id)}`).toBe(0);
    await until("A journals the reviewer's PASS", () => A.journal(id).some((e) => e.event === "completed" && e.detail.includes("PASS")), 10_000, id);
    await Bun.sleep(2000); // room for a late copy to show
    const evs = A.journal(id);
    expect(doubled(evs), story(id)).toEqual([]);
    expect(stages(evs), story(id)).toEqual(loopStages("w@hostB", "r@hostC"));
    expect(ofOrigin(evs, B.origin(id)), story(id)).toEqual(ofOrigin(B.journal(id), B.origin(id)));
    expectWhole(A, B, id, "w", story(id));
    expect(count(C.screen("r"), `[mam] Review for job ${id}`)).toBe(2);
    // A's fleet: B online, with its agent, after its move (its presence went out on the new node)
    await untilAnnounced(A, ["w@hostB"], 10_000);
    console.log(`B on another node ${movedMs} ms after its node was killed`);
  }, 240_000);
});
