// The daemon loop in-process with stand-in hooks: when hooks run (serially, with a deadline), what
// they put aside (beside them, one at a time per lane), the idle timeout and busy(), an outside stop while a hook hangs, events from a real broker; and the
// pure helpers (env seconds, PIDs, lock identity, the read-only probe).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import mqtt from "mqtt";
import { closeSync, existsSync, mkdirSync, openSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lockFileState } from "../../lib/daemon/lock.ts";
import { runDaemon } from "../../lib/daemon/loop.ts";
import { type DaemonHooks, daemonTimings, envSeconds } from "../../lib/daemon/options.ts";
import { monitorLockPath, parsePid, probeDaemon, readState } from "../../lib/sys/daemon-files.ts";
import { daemonArgv, daemonDisabled } from "../../lib/sys/daemon-proc.ts";
import { tryFlock } from "../../lib/sys/flock.ts";
import { startMosquitto } from "../helpers/brokers.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";

let sb: Sandbox;
beforeEach(() => {
  sb = makeSandbox("mam-dun-");
});
afterEach(async () => {
  await sb.cleanup();
});

const UNREACHABLE = { MQTT_BROKER: "127.0.0.1", MQTT_PORT: "9", MQTT_TLS: "0" };

function recorder(over: Partial<DaemonHooks> = {}) {
  const calls: string[] = [];
  let running = 0;
  let overlap = false;
  const wrap = <A extends unknown[], R>(name: string, fn: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      running++;
      if (running > 1) overlap = true;
      calls.push(name);
      try {
        return await fn(...a);
      } finally {
        running--;
      }
    };
  const hooks: DaemonHooks = {
    reconcile: wrap("reconcile", over.reconcile ?? (async () => {})),
    onEvent: wrap("event", over.onEvent ?? (async () => {})),
    poll: wrap("poll", over.poll ?? (async () => {})),
    busy: over.busy ?? (async () => false),
  };
  return { hooks, calls, overlapped: () => overlap };
}

function lines() {
  const got: string[] = [];
  return { got, write: (l: string) => void got.push(l), text: () => got.join("\n") };
}

describe("pure helpers", () => {
  test("envSeconds: positive decimals, else the default; daemonTimings defaults 15 s / 60 s", () => {
    expect(envSeconds("2", 15)).toBe(2);
    expect(envSeconds("0.5", 15)).toBe(0.5);
    for (const bad of [undefined, "", "0", "-1", "abc", "1e3", " "]) expect(envSeconds(bad, 15)).toBe(15);
    const t = daemonTimings({});
    expect([t.pollMs, t.retryMs, t.connectTimeoutMs]).toEqual([15_000, 60_000, 5000]);
    expect(t.watchMs).toBeLessThanOrEqual(1000);
    const u = daemonTimings({ RECONCILE_POLL_INTERVAL: "1", MAM_BROKER_RETRY_S: "2" });
    expect([u.pollMs, u.retryMs]).toEqual([1000, 2000]);
  });

  test("parsePid", () => {
    expect(parsePid("123\n")).toBe(123);
    for (const bad of ["", "0", "-5", "12a", "99999999999", " \n"]) expect(parsePid(bad)).toBeUndefined();
  });

  test("daemonDisabled: only the literal 1", () => {
    for (const v of ["0", "", "yes", "true", " 1", "1 "]) expect(daemonDisabled({ MAM_NO_SUBSCRIBER_DAEMON: v })).toBe(false);
    expect(daemonDisabled({ MAM_NO_SUBSCRIBER_DAEMON: "1" })).toBe(true);
  });

  test("daemonArgv from source names mam.ts and the workspace", () => {
    const a = daemonArgv("/w s");
    expect(a[0]).toBe(process.execPath);
    expect(a[1]).toEndWith("/mam.ts");
    expect(a.slice(2)).toEqual(["reconcile", "--subscribe", "--idle-timeout", "0", "--workspace", "/w s"]);
  });

  test("lockFileState: ok, gone, replaced", () => {
    const p = join(sb.root, "x.lock");
    writeFileSync(p, "");
    const fd = openSync(p, "r");
    try {
      const { fstatSync } = require("node:fs") as typeof import("node:fs");
      const st = fstatSync(fd);
      const id = { dev: st.dev, ino: st.ino };
      expect(lockFileState(p, id, fd)).toBe("ok");
      renameSync(p, `${p}.old`);
      writeFileSync(p, "");
      expect(lockFileState(p, id, fd)).toBe("replaced");
      unlinkSync(p);
      expect(lockFileState(p, id, fd)).toBe("gone");
    } finally {
      closeSync(fd);
    }
  });

  test("probeDaemon is read-only and follows the exclusive flock", () => {
    expect(probeDaemon(sb.ws)).toEqual({ running: false });
    expect(existsSync(join(sb.ws, ".mam"))).toBe(false);
    mkdirSync(join(sb.ws, ".mam"));
    writeFileSync(monitorLockPath(sb.ws), "4242\n");
    expect(probeDaemon(sb.ws)).toEqual({ running: false });
    const fd = openSync(monitorLockPath(sb.ws), "r+");
    try {
      expect(tryFlock(fd, true)).toBe(true);
      expect(probeDaemon(sb.ws)).toEqual({ running: true, pid: 4242 });
    } finally {
      closeSync(fd);
    }
    expect(probeDaemon(sb.ws)).toEqual({ running: false });
  });
});

describe("runDaemon in-process", () => {
  test("reconcile at start, polls in polling mode one at a time, state file follows the mode", async () => {
    const stop = new AbortController();
    const out = lines();
    const r = recorder({ poll: async () => void (await Bun.sleep(250)) });
    const done = runDaemon({ ws: sb.ws, idleTimeoutS: 0, timeoutS: 0, hooks: r.hooks, env: UNREACHABLE, write: out.write, handleSignals: false, stopSignal: stop.signal, timings: { pollMs: 50 } });
    expect(await waitFor(() => r.calls.filter((c) => c === "poll").length >= 4, 10_000)).toBe(true);
    expect(r.calls[0]).toBe("reconcile");
    expect(r.overlapped()).toBe(false);
    expect(out.text()).toContain("MQTT Monitor: broker 127.0.0.1:9 unreachable (");
    expect(out.text()).toContain("); falling back to polling");
    expect(readState(sb.ws)).toMatchObject({ pid: process.pid, mode: "polling", broker: "127.0.0.1:9" });
    stop.abort();
    expect(await done).toBe(0);
    expect(readState(sb.ws)).toBeUndefined();
    expect(probeDaemon(sb.ws)).toEqual({ running: false });
    // log lines are "<ISO time> <message>"
    for (const l of out.got) expect(l).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \S/);
  });

  test("an error a use case raised with {{field}} names is logged with the fields spelled as the command line spells them", async () => {
    const stop = new AbortController();
    const out = lines();
    const r = recorder({ reconcile: async (ctx) => ctx.log(`worktree: invalid {{base}} 'x'; pick another {{name}}`) });
    const done = runDaemon({ ws: sb.ws, idleTimeoutS: 0, timeoutS: 0, hooks: r.hooks, env: UNREACHABLE, write: out.write, handleSignals: false, stopSignal: stop.signal, timings: { pollMs: 50 } });
    expect(await waitFor(() => out.text().includes("worktree: "), 10_000)).toBe(true);
    expect(out.text()).toContain("worktree: invalid --base 'x'; pick another --name");
    stop.abort();
    expect(await done).toBe(0);
  });

  test("a hook that hangs is abandoned after its deadline, and does not hold up a stop", async () => {
    const stop = new AbortController();
    const out = lines();
    let aborted = false;
    const r = recorder({
      reconcile: (ctx) =>
        new Promise<void>(() => {
          ctx.signal.addEventListener("abort", () => (aborted = true));
        }),
      poll: () => new Promise<void>(() => {}),
    });
    const done = runDaemon({ ws: sb.ws, idleTimeoutS: 0, timeoutS: 0, hooks: r.hooks, env: UNREACHABLE, write: out.write, handleSignals: false, stopSignal: stop.signal, timings: { pollMs: 50, hookDeadlineMs: 200 } });
    expect(await waitFor(() => out.text().includes("reconcile did not finish within 0.2 s; moving on"), 5000)).toBe(true);
    expect(aborted).toBe(true);
    expect(await waitFor(() => r.calls.includes("poll"), 5000)).toBe(true);
    const t0 = Date.now();
    stop.abort();
    expect(await done).toBe(0);
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  test("what a hook puts aside runs beside the hooks: they do not wait for it; one lane's work runs one at a time, in order; other lanes at once", async () => {
    const stop = new AbortController();
    const out = lines();
    const log: string[] = [];
    let polls = 0;
    let pollsDuringX1 = -1;
    const work = (name: string, ms: number) => async () => {
      log.push(`${name} start`);
      const before = polls;
      await Bun.sleep(ms);
      if (name === "x1") pollsDuringX1 = polls - before;
      log.push(`${name} end`);
    };
    const r = recorder({
      poll: async (ctx) => {
        if (++polls !== 1) return;
        ctx.aside("x", "x1", work("x1", 400));
        ctx.aside("x", "x2", work("x2", 100));
        ctx.aside("y", "y1", work("y1", 100));
        ctx.aside("z", "hangs", () => new Promise<void>(() => {}));
        ctx.aside("z", "after the hung one", work("z2", 10));
      },
    });
    const done = runDaemon({ ws: sb.ws, idleTimeoutS: 0, timeoutS: 0, hooks: r.hooks, env: UNREACHABLE, write: out.write, handleSignals: false, stopSignal: stop.signal, timings: { pollMs: 50, hookDeadlineMs: 1000 } });
    expect(await waitFor(() => log.includes("x2 end") && log.includes("z2 end"), 5000), log.join(", ")).toBe(true);
    stop.abort();
    expect(await done).toBe(0);
    // the polls went on while x1 waited
    expect(pollsDuringX1).toBeGreaterThanOrEqual(3);
    expect(r.overlapped()).toBe(false);
    // lane x: x2 after x1; lane y beside it
    expect(log.indexOf("x2 start")).toBeGreaterThan(log.indexOf("x1 end"));
    expect(log.indexOf("y1 end")).toBeLessThan(log.indexOf("x1 end"));
    // a hung one is abandoned after the hooks' deadline; its lane goes on
    expect(out.text()).toContain("hangs did not finish within 1 s; moving on");
  });

  test("idle timeout waits while busy() says there is running work", async () => {
    let busyCalls = 0;
    const out = lines();
    const r = recorder({ busy: async () => ++busyCalls <= 2 });
    const t0 = Date.now();
    const code = await runDaemon({ ws: sb.ws, idleTimeoutS: 0.3, timeoutS: 0, hooks: r.hooks, env: UNREACHABLE, write: out.write, handleSignals: false, timings: { watchMs: 50 } });
    expect(code).toBe(0);
    expect(busyCalls).toBe(3);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(out.text()).toContain("idle for 0.3 s (no event, no running work); exiting");
  });

  test("a second runDaemon on the same workspace backs off", async () => {
    const stop = new AbortController();
    const first = runDaemon({ ws: sb.ws, idleTimeoutS: 0, timeoutS: 0, hooks: recorder().hooks, env: UNREACHABLE, write: () => {}, handleSignals: false, stopSignal: stop.signal });
    expect(await waitFor(() => probeDaemon(sb.ws).running, 5000)).toBe(true);
    const out = lines();
    expect(await runDaemon({ ws: sb.ws, idleTimeoutS: 0, timeoutS: 0, hooks: recorder().hooks, env: UNREACHABLE, write: out.write, handleSignals: false })).toBe(0);
    expect(out.text()).toContain(`another monitor is running (pid ${process.pid}); exiting`);
    stop.abort();
    expect(await first).toBe(0);
  });

  test("events from a real broker reach onEvent with topic and payload", async () => {
    const broker = await startMosquitto(join(sb.root, "mosq"));
    const stop = new AbortController();
    const got: [string, string][] = [];
    const out = lines();
    const r = recorder({ onEvent: async (t, p) => void got.push([t, p.toString()]) });
    const done = runDaemon({ ws: sb.ws, idleTimeoutS: 0, timeoutS: 0, hooks: r.hooks, env: broker.env, write: out.write, handleSignals: false, stopSignal: stop.signal });
    const pub = await mqtt.connectAsync({ protocol: "mqtt", host: "127.0.0.1", port: broker.port, clientId: "t-pub-u", reconnectPeriod: 0 } as never);
    try {
      expect(await waitFor(() => out.text().includes("MQTT Monitor: subscribed to mam/jobs/+/events"), 10_000)).toBe(true);
      expect(readState(sb.ws)?.mode).toBe("mqtt");
      await pub.publishAsync("mam/jobs/0123abcd/events", '{"seq":1}', { qos: 1 });
      await pub.publishAsync("mam/other/topic", "ignored", { qos: 1 });
      expect(await waitFor(() => got.length >= 1, 5000)).toBe(true);
      await Bun.sleep(100);
      expect(got).toEqual([["mam/jobs/0123abcd/events", '{"seq":1}']]);
    } finally {
      await pub.endAsync();
      stop.abort();
      expect(await done).toBe(0);
      await broker.stop();
    }
  });
});
