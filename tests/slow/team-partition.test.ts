// A team across machines when the network fails (docs/machines.md, issue 24): hosts A and B each
// in a network namespace of their own (tests/helpers/netlab.ts), with their own MAM_HOST, HOME,
// workspace, tmux server, demo agents and daemon all running inside it, the real Mosquitto in the
// broker's namespace. A cut pulls a host's cable at the switch: its processes keep running and
// reach nobody, in silence, as when a laptop leaves the Wi-Fi.
//
//   * B cut off mid-job: its worker reports while cut off (each `mam job event` fails to publish
//     and keeps the event in B's journal); once B is back every event reaches A, once, in B's
//     order, whether the worker reports again after the link is back (its report sends what A
//     misses first: shown with B's daemon stopped) or finished while cut off (then only B's
//     daemon can send them);
//   * A cut off while B's worker finishes: A gets every stage when it is back, and its lead hears
//     the end once;
//   * a job offered while B is cut off long enough for the broker to drop it (its keepalive:
//     1.5 × 30 s) is delivered when B's daemon reconnects, every stage once, in order.
//
// Needs root (network namespaces), iproute2, Mosquitto and tmux: without them the tests are
// skipped with the reason. Reconnection is quick (MAM_BROKER_RETRY_S=1, RECONCILE_POLL_INTERVAL=1,
// set by makeHost); everything else is what a cut really does, with mam's own keepalive.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { MAM_CMD } from "../helpers/mam.ts";
import { cleanupNetLabs, makeNetLab, type NetLab, netLabSkip } from "../helpers/netlab.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";
import { expectWhole, formTeam, hasStage, type Host, journalText, labRunner, makeHost, occurrences as count, stages, until as waitUntil, untilAnnounced } from "../helpers/team.ts";
import { TMUX_BIN } from "../helpers/tmux.ts";

const SKIP = (await netLabSkip({ broker: true })) ?? (TMUX_BIN ? undefined : "tmux is not installed (apt-get install tmux)");
if (SKIP) console.log(`team partition tests skipped: ${SKIP}`);
const named = (name: string) => (SKIP ? `${name} [skipped: ${SKIP}]` : name);

let sb: Sandbox;
let lab: NetLab;
let A: Host;
let B: Host;

/** everything a failure needs to be understood */
function story(id?: string): string {
  const brokerLog = (() => {
    try {
      return readFileSync(lab.broker!.log, "utf8").split("\n").slice(-40).join("\n");
    } catch {
      return "";
    }
  })();
  return `A's journal:\n${journalText(A, id)}\nB's journal:\n${journalText(B, id)}\nB's pane:\n${B.screen("w")}\nA's daemon:\n${A.log()}\nB's daemon:\n${B.log()}\nbroker:\n${brokerLog}`;
}

const has = hasStage;
const until = (what: string, cond: () => boolean | Promise<boolean>, timeoutMs: number, id?: string) => waitUntil(what, cond, timeoutMs, () => story(id));
const assertWhole = (id: string) => expectWhole(A, B, id, "w", story(id));

async function submit(h: Host, args: string[]): Promise<{ id: string; stderr: string }> {
  const r = await h.mam(["job", "submit", ...args]);
  expect(r.code, `${r.stdout}${r.stderr}`).toBe(0);
  expect(r.stdout).toMatch(/^[0-9a-f]{8}\n$/);
  return { id: r.stdout.trim(), stderr: r.stderr };
}

const WHOLE = ["offered mam", "received mam@b", "delivered mam@b", "started w@b", "progress w@b", "completed w@b"];

/** a job for w@b, once A has journalled that it was typed */
async function delivered(prompt: string): Promise<string> {
  const { id } = await submit(A, ["--to", "w@b", "--from", "lead", "--prompt", prompt]);
  await until("A sees the job delivered", () => has(A, id, "delivered mam@b"), 20_000, id);
  return id;
}

/** once the link is back: A gets every stage, once, in order, and nothing more arrives after */
async function expectComplete(id: string): Promise<void> {
  await until("A has every stage", () => has(A, id, "completed w@b"), 60_000, id);
  await Bun.sleep(2500); // room for a late copy to show
  expect(stages(A.journal(id)), story(id)).toEqual(WHOLE);
  assertWhole(id);
}

describe.skipIf(!!SKIP)("a team when the network fails (hosts in network namespaces, one Mosquitto)", () => {
  beforeAll(async () => {
    sb = makeSandbox("mam-tnet-");
    const l = await makeNetLab({ hosts: ["a", "b"], broker: true, dir: sb.root });
    if ("skip" in l) throw new Error(l.skip);
    lab = l;
    A = makeHost(sb.root, "a", lab.broker!.env, {}, MAM_CMD, labRunner(lab, "a"));
    B = makeHost(sb.root, "b", lab.broker!.env, {}, MAM_CMD, labRunner(lab, "b"));
    await formTeam([A, B]);
    await A.demo("lead", "lead");
    // room between the worker's events for a cut: 1.5 s before each
    await B.demo("w", "worker", ["--think-ms", "1500"]);
    await untilAnnounced(A, ["w@b", "lead@a"], 30_000);
    // the daemons and the agents run inside the hosts' namespaces
    const inLab = new Set(lab.pids());
    const daemonPid = (h: Host) => Number(JSON.parse(readFileSync(`${h.ws}/.mam/monitor.state.json`, "utf8")).pid);
    expect(inLab.has(daemonPid(A))).toBe(true);
    expect(inLab.has(daemonPid(B))).toBe(true);
  }, 120_000);

  // a test that failed half-way leaves the next one a whole team
  afterEach(async () => {
    if (!lab) return;
    for (const h of ["a", "b"]) await lab.restore(h);
    for (const h of [A, B]) await h.ok(["daemon", "ensure"]);
  }, 30_000);

  afterAll(async () => {
    for (const h of [A, B]) await h?.stop();
    await lab?.cleanup();
    await cleanupNetLabs();
    await sb?.cleanup();
  }, 60_000);

  test(
    named("B cut off mid-job: its worker's reports wait in B's journal; its next report after the link is back carries them to A first, once, in B's order"),
    async () => {
      const id = await delivered("work through a cut");
      await lab.cut("b");
      // the worker reports while cut off: `mam job event` keeps each event in B's journal
      await until("B's worker reports started and progress while cut off", () => has(B, id, "started w@b") && has(B, id, "progress w@b"), 30_000, id);
      await until("the worker is told its report is kept", () => B.screen("w").includes(`NOTE: job ${id} event #3 is saved in the journal`), 10_000, id);
      expect(stages(A.journal(id)), story(id)).toEqual(["offered mam", "received mam@b", "delivered mam@b"]);
      // B's daemon stops meanwhile: only the worker's own reports can carry what A misses
      await B.ok(["daemon", "stop"]);
      await lab.restore("b");
      await expectComplete(id);
      expect(JSON.parse(await A.ok(["job", "status", id, "--json"])).status).toBe("completed");
    },
    120_000,
  );

  test(
    named("B's worker finishes while B is cut off: B's daemon sends what A misses when the link is back"),
    async () => {
      const id = await delivered("finish while cut off");
      await lab.cut("b");
      await until("B's worker completes while cut off", () => has(B, id, "completed w@b"), 40_000, id);
      // and its last report has given up (else it could still connect once the link is back, and
      // carry the others itself): only B's daemon can send them now
      await until("the worker is told its last report is kept", () => B.screen("w").includes(`NOTE: job ${id} event #5 is saved in the journal`), 15_000, id);
      // B's daemon cannot read A's acks nor reach A meanwhile
      await Bun.sleep(1500);
      expect(stages(A.journal(id)), story(id)).toEqual(["offered mam", "received mam@b", "delivered mam@b"]);
      await lab.restore("b");
      await expectComplete(id);
      expect(B.log()).toContain(`job ${id}: sent `);
    },
    120_000,
  );

  test(
    named("A cut off while B's worker finishes: A gets every stage when it is back, and its lead hears the end once"),
    async () => {
      const id = await delivered("report to a lead that went away");
      await lab.cut("a");
      await until("B's worker completes", () => has(B, id, "completed w@b"), 30_000, id);
      await Bun.sleep(1500);
      expect(has(A, id, "completed w@b"), story(id)).toBe(false);
      await lab.restore("a");
      await expectComplete(id);
      await until("A's lead hears the end", () => A.screen("lead").includes(`[mam] job ${id} completed`), 15_000, id);
      await Bun.sleep(1000);
      expect(count(A.screen("lead"), `[mam] job ${id} completed`)).toBe(1);
    },
    120_000,
  );

  test(
    named("a job offered while B is cut off (the broker has dropped it: offline) is delivered when B's daemon reconnects, every stage once, in order"),
    async () => {
      await lab.cut("b");
      // the broker drops B after 1.5 × its keepalive (30 s) and publishes its will: offline
      await until(
        "A sees B offline",
        async () => {
          const r = await A.mam(["status", "--fleet", "--json"]);
          return r.code === 0 && JSON.parse(r.stdout).workspaces.some((w: { host: string; online: boolean }) => w.host === "b" && !w.online);
        },
        75_000,
      );
      const { id, stderr } = await submit(A, ["--to", "w@b", "--from", "lead", "--prompt", "while you were cut off"]);
      expect(stderr).toContain("NOTE: w@b: b is offline; it gets the job when it returns");
      await Bun.sleep(2000);
      expect(stages(A.journal(id))).toEqual(["offered mam"]);
      expect(B.journal(id)).toEqual([]);
      await lab.restore("b");
      // the broker holds the delivery twice for B (its session's queue, and retained): typed once
      await expectComplete(id);
      // B's daemon noticed the cut by itself (its keepalive), and connected again
      expect(B.log()).toMatch(/lost the broker .*falling back to polling/);
    },
    150_000,
  );
});
