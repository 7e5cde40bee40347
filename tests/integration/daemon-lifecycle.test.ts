// Port of seeds/test_issue19_subscriber_daemon_lifecycle.py (same assertions and time bounds).
// Mapping: start_watchdog / ensure_subscriber_daemon → `mam daemon ensure`; find_running and
// _daemons_for → pgrep -f "reconcile --subscribe" + ps args naming the workspace (daemonPids);
// _reap_subscriber_daemons → reap() of the sandbox; reconcile.sh --subscribe → `mam reconcile
// --subscribe`. The DELEGATION_MODES parametrisation (bash vs python helper body) collapses to one
// mode: there is one implementation. The MQTT-loop cases run against a real Mosquitto and against
// the embedded `mam broker`, both started here; they are never skipped.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { daemonDisabled } from "../../lib/sys/daemon-proc.ts";
import { startMamBroker, startMosquitto, type TestBroker } from "../helpers/brokers.ts";
import { alive, daemonPids, killAndWait, logText, startSubscriber, unreachableBrokerEnv, waitForLog } from "../helpers/daemon.ts";
import { installFakeAgents, startFakeHerdr } from "../helpers/herdr.ts";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox, reap, type Sandbox } from "../helpers/sandbox.ts";

let sb: Sandbox;
beforeEach(() => {
  sb = makeSandbox("mam-d19-");
});
afterEach(async () => {
  await sb.cleanup();
});

const noOptOut = () => sb.with({ MAM_NO_SUBSCRIBER_DAEMON: undefined });
const ensure = (env: Record<string, string>) => runMam(["daemon", "ensure", "--workspace", sb.ws], { env, cwd: sb.ws });

async function waitDead(pids: number[], ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline && pids.some(alive)) await Bun.sleep(100);
  return !pids.some(alive);
}

// ---------------------------------------------------------------------------------------------
// 1. the sandbox opt-out
// ---------------------------------------------------------------------------------------------

describe("1. the sandbox opt-out", () => {
  test("sandbox default never spawns a daemon", async () => {
    expect(sb.env.MAM_NO_SUBSCRIBER_DAEMON).toBe("1");
    const res = await ensure(sb.env);
    expect(res.code).toBe(0);
    expect(res.stdout.trim()).toBe("");
    expect(res.stderr).toContain("MAM_NO_SUBSCRIBER_DAEMON=1");
    expect(res.stderr).toContain("not starting the subscriber daemon (MAM_NO_SUBSCRIBER_DAEMON=1)");
    expect(daemonPids(sb.ws)).toEqual([]);
  });

  test("opt-out still reports a daemon that already runs", async () => {
    const spawned: number[] = [];
    try {
      const first = await ensure(noOptOut());
      expect(first.code).toBe(0);
      const pid = Number(first.stdout.trim());
      spawned.push(pid);
      expect(first.stdout.trim()).toMatch(/^\d+$/);
      expect(alive(pid)).toBe(true);

      expect(daemonDisabled(sb.env)).toBe(true);
      const again = await ensure(sb.env);
      expect(again.code).toBe(0);
      expect(again.stdout.trim()).toBe(String(pid));
      expect(again.stderr).toContain("MAM_NO_SUBSCRIBER_DAEMON=1");
      expect(daemonPids(sb.ws)).toEqual([pid]);
    } finally {
      await killAndWait(spawned);
    }
  });

  test("only the literal one disables the spawn", () => {
    for (const value of ["0", "", "yes", "true"]) {
      expect(daemonDisabled({ MAM_NO_SUBSCRIBER_DAEMON: value })).toBe(false);
    }
    expect(daemonDisabled({})).toBe(false);
    expect(daemonDisabled({ MAM_NO_SUBSCRIBER_DAEMON: "1" })).toBe(true);
  });

  // create_session.sh cases: `mam create` is not built yet; the same conditions on `mam daemon ensure`
  test("ensure under the sandbox default leaves no daemon (create_session.sh case, as ensure)", async () => {
    const res = await runMam(["daemon", "ensure"], { env: sb.env, cwd: sb.ws });
    expect(res.code).toBe(0);
    expect(res.stdout).toBe("");
    expect(daemonPids(sb.ws)).toEqual([]);
    expect(existsSync(join(sb.ws, ".mam", "monitor.lock"))).toBe(false);
  });

  test("ensure without the opt-out detaches a daemon the reaper removes (create_session.sh case, as ensure)", async () => {
    const res = await runMam(["daemon", "ensure"], { env: noOptOut(), cwd: sb.ws });
    expect(res.code).toBe(0);
    const pids = daemonPids(sb.ws);
    try {
      expect(pids.length).toBeGreaterThan(0);
      const reaped = await reap(sb.root);
      for (const p of pids) expect(reaped).toContain(p);
      expect(await waitDead(pids, 5000)).toBe(true);
    } finally {
      await killAndWait(pids);
    }
  });

  // create_session.sh → `mam create` on the fake herdr's default server, fake agents first on PATH
  async function createSession(name: string, env: Record<string, string>) {
    installFakeAgents(sb.bin);
    const herdr = await startFakeHerdr(sb, { session: "default" });
    const res = await runMam(["create", "--workspace", sb.ws, "--agent", "claude", "--role", "Creator", "--session", name], {
      env: { ...env, MAM_AGENT_SETTLE_S: "0.3" },
      cwd: sb.ws,
      timeoutMs: 180_000,
    });
    return { res, herdr };
  }

  test("mam create in a sandbox prints 'watchdog PID:' and leaves no daemon", async () => {
    const { res, herdr } = await createSession("issue19-creator-claude", sb.env);
    try {
      expect(res.code, res.stderr + res.stdout).toBe(0);
      expect(res.stdout).toContain("watchdog PID:");
      expect(res.stdout).toMatch(/^watchdog PID: none \(MAM_NO_SUBSCRIBER_DAEMON=1\)$/m); // no daemon, and it says so
      expect(res.stderr).toContain("not starting the subscriber daemon (MAM_NO_SUBSCRIBER_DAEMON=1)");
      expect(daemonPids(sb.ws)).toEqual([]);
      expect(existsSync(join(sb.ws, ".mam", "monitor.lock"))).toBe(false);
    } finally {
      await herdr.stop();
    }
  });

  test("mam create without the opt-out spawns a daemon that the reaper removes", async () => {
    const { res, herdr } = await createSession("issue19-leaky-creator-claude", noOptOut());
    const pids = daemonPids(sb.ws);
    try {
      expect(res.code, res.stderr + res.stdout).toBe(0);
      expect(pids.length).toBeGreaterThan(0); // expected mam create to detach a subscriber daemon
      expect(res.stdout).toContain(`watchdog PID: ${pids[0]}\n`);
      const args = Bun.spawnSync(["ps", "-o", "args=", "-p", String(pids[0])]).stdout.toString();
      expect(args).toContain("reconcile --subscribe");
      expect(args).toContain(sb.ws);
      const reaped = await reap(sb.root);
      for (const p of pids) expect(reaped).toContain(p);
      expect(await waitDead(pids, 5000)).toBe(true);
    } finally {
      await killAndWait(pids);
      await herdr.stop();
    }
  });
});

// ---------------------------------------------------------------------------------------------
// 2. the sandbox reaper
// ---------------------------------------------------------------------------------------------

describe("2. the sandbox reaper", () => {
  test("terminates daemons anchored in the sandbox", async () => {
    const res = await ensure(noOptOut());
    expect(res.code).toBe(0);
    const pid = Number(res.stdout.trim());
    try {
      expect(daemonPids(sb.ws)).toContain(pid);
      const reaped = await reap(sb.root);
      expect(reaped).toContain(pid);
      expect(await waitDead([pid], 5000)).toBe(true);
      expect(daemonPids(sb.ws)).toEqual([]);
    } finally {
      await killAndWait([pid]);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// 3. self-termination and signals: polling fallback (no broker needed)
// ---------------------------------------------------------------------------------------------

describe("3. polling fallback", () => {
  test("exits when monitor.lock disappears", async () => {
    const log = join(sb.ws, "sub.log");
    const p = startSubscriber(sb, log, sb.with({ MAM_NO_SUBSCRIBER_DAEMON: undefined, ...unreachableBrokerEnv }));
    try {
      expect(await waitForLog(log, /falling back to polling/, 30_000)).toBe(true);
      const lock = join(sb.ws, ".mam", "monitor.lock");
      expect(existsSync(lock)).toBe(true);
      unlinkSync(lock);
      const rc = await p.waitExit(15_000);
      expect({ rc, log: rc === 0 ? "" : logText(log) }).toEqual({ rc: 0, log: "" });
      expect(logText(log)).toContain("monitor.lock is gone");
    } finally {
      await p.kill();
    }
  }, 90_000);

  test("SIGTERM exits promptly even with RECONCILE_POLL_INTERVAL=60", async () => {
    const log = join(sb.ws, "sub.log");
    const p = startSubscriber(sb, log, sb.with({ MAM_NO_SUBSCRIBER_DAEMON: undefined, ...unreachableBrokerEnv, RECONCILE_POLL_INTERVAL: "60" }));
    try {
      expect(await waitForLog(log, /falling back to polling/, 30_000)).toBe(true);
      await Bun.sleep(1000); // let the loop reach its wait
      const t0 = Date.now();
      p.proc.kill("SIGTERM");
      const rc = await p.waitExit(10_000);
      expect(rc).not.toBeNull(); // SIGTERM was deferred: daemon still running after 10 s
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(rc).toBe(143);
    } finally {
      await p.kill();
    }
  }, 90_000);
});

// ---------------------------------------------------------------------------------------------
// 4. self-termination and signals: MQTT loop (a reachable broker, started here)
// ---------------------------------------------------------------------------------------------

const brokerHome = makeSandbox("mam-d19b-");
afterAll(() => brokerHome.cleanup());

const brokers: [string, () => Promise<TestBroker>][] = [
  ["Mosquitto", () => startMosquitto(join(brokerHome.root, "mosquitto"))],
  ["mam broker", () => startMamBroker(brokerHome.env, brokerHome.root)],
];

describe.each(brokers)("4. MQTT loop against %s", (_name, start) => {
  let broker: TestBroker | undefined;
  beforeAll(async () => {
    broker = await start(); // throws (the tests fail) when the broker cannot start: never skipped
  });
  afterAll(async () => {
    await broker?.stop();
  });

  async function startConnected(log: string) {
    if (!broker) throw new Error("the test broker did not start");
    const p = startSubscriber(sb, log, sb.with({ MAM_NO_SUBSCRIBER_DAEMON: undefined, ...broker.env }));
    if (!(await waitForLog(log, /MQTT Monitor: subscribed to /, 45_000))) {
      await p.kill();
      throw new Error(`the daemon did not subscribe to the test broker: ${logText(log).slice(-300)}`);
    }
    return p;
  }

  test("exits when the workspace lock is replaced", async () => {
    const log = join(sb.ws, "sub.log");
    const p = await startConnected(log);
    try {
      const lock = join(sb.ws, ".mam", "monitor.lock");
      unlinkSync(lock);
      writeFileSync(lock, ""); // a re-created .mam/: a fresh daemon could now take this lock
      const rc = await p.waitExit(15_000);
      expect({ rc, log: rc === 0 ? "" : logText(log) }).toEqual({ rc: 0, log: "" });
      expect(logText(log)).toMatch(/monitor\.lock (was replaced|no longer exists); exiting/);
    } finally {
      await p.kill();
    }
  }, 90_000);

  test("SIGTERM exits cleanly", async () => {
    const log = join(sb.ws, "sub.log");
    const p = await startConnected(log);
    try {
      const t0 = Date.now();
      p.proc.kill("SIGTERM");
      const rc = await p.waitExit(10_000);
      expect(rc).not.toBeNull(); // SIGTERM was deferred: daemon still running after 10 s
      expect(Date.now() - t0).toBeLessThan(6000);
      expect({ rc, log: rc === 143 ? "" : logText(log) }).toEqual({ rc: 143, log: "" });
      expect(logText(log)).toContain("signal 15 received, exiting");
    } finally {
      await p.kill();
    }
  }, 90_000);
});
