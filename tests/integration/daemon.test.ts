// mam daemon ensure|status|stop and mam reconcile --subscribe beyond the seed (SPEC §6.2, §6.3):
// concurrent ensure, a workspace deleted under the daemon, a broker that comes and goes, kill -9,
// status/stop, SIGINT, idle timeout, a second daemon, events and the persistent session.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import mqtt from "mqtt";
import { existsSync, mkdirSync, readFileSync, readlinkSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { canonicalJson } from "../../lib/jobs/canonical.ts";
import { signEvent } from "../../lib/jobs/event.ts";
import { readJournal, readRecord, registerJob } from "../../lib/jobs/store.ts";
import { freePort, startMosquitto } from "../helpers/brokers.ts";
import { alive, daemonPids, killAndWait, logText, startSubscriber, unreachableBrokerEnv, waitForLog } from "../helpers/daemon.ts";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";

let sb: Sandbox;
beforeEach(() => {
  sb = makeSandbox("mam-dmn-");
});
afterEach(async () => {
  await sb.cleanup();
});

/** a single job of a claude session registered in the sandbox's workspace (its events come from outside) */
const singleJob = (agent_session: string) =>
  registerJob(sb.ws, {
    agent_session, agent: "claude", prompt: "p", delegator: null, type: "single", reviewer_session: null,
    max_iterations: null, timeout_sec: 0, idle_timeout_sec: 0, expected_artifacts: [], topic_prefix_base: "mam/jobs",
  });
const noOptOut = (extra: Record<string, string> = {}) => sb.with({ MAM_NO_SUBSCRIBER_DAEMON: undefined, ...extra });
const daemon = (sub: string, env: Record<string, string> = sb.env, ...more: string[]) =>
  runMam(["daemon", sub, "--workspace", sb.ws, ...more], { env, cwd: sb.ws });

async function statusJson(env = sb.env): Promise<{ pid: number; mode: string; since: string; log: string | null }> {
  const r = await daemon("status", env, "--json");
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

async function stopAll(): Promise<void> {
  if (existsSync(join(sb.ws, ".mam", "monitor.lock"))) await daemon("stop");
}

describe("mam daemon ensure", () => {
  test("10 concurrent calls leave one daemon and all print its PID", async () => {
    try {
      const rs = await Promise.all(Array.from({ length: 10 }, () => daemon("ensure", noOptOut())));
      for (const r of rs) expect({ code: r.code, err: r.code === 0 ? "" : r.stderr }).toEqual({ code: 0, err: "" });
      const pids = new Set(rs.map((r) => r.stdout.trim()));
      expect(pids.size).toBe(1);
      const pid = Number([...pids][0]);
      expect(pid).toBeGreaterThan(0);
      expect(daemonPids(sb.ws)).toEqual([pid]);
      expect(rs.filter((r) => r.stderr.includes("started the subscriber daemon")).length).toBe(1);
    } finally {
      await stopAll();
    }
  });

  test("starts it detached: own session, stdin /dev/null, log in .mam/monitor.log, the documented argv", async () => {
    try {
      const r = await daemon("ensure", noOptOut());
      expect(r.code).toBe(0);
      const pid = Number(r.stdout.trim());
      const args = Bun.spawnSync(["ps", "-o", "args=", "-p", String(pid)]).stdout.toString();
      expect(args).toContain(`reconcile --subscribe --idle-timeout 0 --workspace ${sb.ws}`);
      const sid = Bun.spawnSync(["ps", "-o", "sid=", "-p", String(pid)]).stdout.toString().trim();
      expect(Number(sid)).toBe(pid);
      expect(readlinkSync(`/proc/${pid}/fd/0`)).toBe("/dev/null");
      const log = join(sb.ws, ".mam", "monitor.log");
      expect(readlinkSync(`/proc/${pid}/fd/1`)).toBe(log);
      expect(readlinkSync(`/proc/${pid}/cwd`)).toBe(sb.ws);
      expect(statSync(join(sb.ws, ".mam")).mode & 0o777).toBe(0o700);
      expect(readFileSync(join(sb.ws, ".mam", "monitor.lock"), "utf8").trim()).toBe(String(pid));
      expect(await waitForLog(log, /falling back to polling/, 15_000)).toBe(true);
      // a second ensure finds it at once
      const again = await daemon("ensure", noOptOut());
      expect(again.stdout.trim()).toBe(String(pid));
      expect(again.stderr).toBe("");
    } finally {
      await stopAll();
    }
  });

  test("after kill -9 the next ensure starts a fresh daemon at once (no stale lock)", async () => {
    try {
      const first = Number((await daemon("ensure", noOptOut())).stdout.trim());
      process.kill(first, "SIGKILL");
      // the lock is free once the process is dead (its fds close before it turns zombie)
      expect(await waitFor(() => !alive(first), 5000)).toBe(true);
      const r = await daemon("ensure", noOptOut());
      expect(r.code).toBe(0);
      const second = Number(r.stdout.trim());
      expect(second).not.toBe(first);
      expect(alive(second)).toBe(true);
      expect(daemonPids(sb.ws)).toEqual([second]);
    } finally {
      await stopAll();
    }
  });

  test("a daemon that exits at start is reported with its log", async () => {
    const r = await daemon("ensure", noOptOut({ MQTT_PORT: "not-a-port" }));
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/^ERROR: the subscriber daemon exited at start \(status 2\): .*MQTT_PORT must be a port number/);
    expect(daemonPids(sb.ws)).toEqual([]);
  });
});

describe("mam daemon status and stop", () => {
  test("no daemon: status and stop exit 3 and create nothing", async () => {
    for (const args of [["status"], ["status", "--json"], ["stop"]]) {
      const r = await runMam(["daemon", ...args, "--workspace", sb.ws], { env: sb.env });
      expect(r.code).toBe(3);
      // --json: the error is the one document on stdout (issue 23 item 17)
      if (args.includes("--json")) expect(JSON.parse(r.stdout)).toEqual({ error: `no subscriber daemon runs for ${sb.ws}`, hint: "start one with: mam daemon ensure", exit_code: 3 });
      else expect(r.stdout).toBe("");
      expect(r.stderr).toStartWith(`ERROR: no subscriber daemon runs for ${sb.ws}`);
    }
    expect(existsSync(join(sb.ws, ".mam"))).toBe(false);
  });

  test("status shows pid, mode, since and log; stop ends it; then exit 3", async () => {
    const pid = Number((await daemon("ensure", noOptOut())).stdout.trim());
    try {
      expect(await waitForLog(join(sb.ws, ".mam", "monitor.log"), /falling back to polling/, 15_000)).toBe(true);
      const s = await statusJson();
      expect(s).toEqual({ pid, mode: "polling", since: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/), log: join(sb.ws, ".mam", "monitor.log"), broker: "127.0.0.1:9" } as never);
      const human = await daemon("status");
      expect(human.code).toBe(0);
      expect(human.stdout).toMatch(new RegExp(`pid\\s+${pid}\\n`));
      expect(human.stdout).toMatch(/mode\s+polling\n/);
      expect(human.stdout).toContain(join(sb.ws, ".mam", "monitor.log"));

      const stop = await daemon("stop");
      expect(stop.code).toBe(0);
      expect(stop.stdout.trim()).toBe(`stopped the subscriber daemon (pid ${pid})`);
      expect(await waitFor(() => !alive(pid), 5000)).toBe(true);
      expect(logText(join(sb.ws, ".mam", "monitor.log"))).toContain("signal 15 received, exiting");
      expect((await daemon("status")).code).toBe(3);
      expect((await daemon("stop")).code).toBe(3);
      expect(existsSync(join(sb.ws, ".mam", "monitor.state.json"))).toBe(false);
    } finally {
      await killAndWait([pid]);
    }
  });

  test("stop kills a holder that ignores SIGTERM, and says so", async () => {
    // a stand-in daemon: holds the lock, wrote its PID, ignores SIGTERM
    const lock = join(sb.ws, ".mam", "monitor.lock");
    // (cwd / and short sleeps without fd 9: nothing of it outlives the SIGKILL in the sandbox)
    const script = `mkdir -p "${sb.ws}/.mam"; exec 9>>"${lock}"; flock -n 9 || exit 9; echo $$ > "${lock}"; trap '' TERM; echo ready; while :; do sleep 0.05 9>&-; done`;
    const h = Bun.spawn(["bash", "-c", script], { cwd: "/", env: sb.env, stdout: "pipe" });
    try {
      const reader = h.stdout.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toBe("ready\n");
      const t0 = Date.now();
      const r = await daemon("stop");
      expect(r.code).toBe(0);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(4500);
      expect(r.stderr).toContain(`the subscriber daemon (pid ${h.pid}) did not stop within 5 s of SIGTERM; killed it (SIGKILL)`);
      expect(await h.exited).toBe(137);
    } finally {
      h.kill("SIGKILL");
    }
  }, 30_000);
});

describe("mam reconcile --subscribe", () => {
  test("SIGINT exits 130", async () => {
    const log = join(sb.root, "sub.log");
    const p = startSubscriber(sb, log, noOptOut(unreachableBrokerEnv));
    try {
      expect(await waitForLog(log, /falling back to polling/, 30_000)).toBe(true);
      p.proc.kill("SIGINT");
      expect(await p.waitExit(5000)).toBe(130);
      expect(logText(log)).toContain("signal 2 received, exiting");
    } finally {
      await p.kill();
    }
  });

  test("exits when its workspace folder is deleted", async () => {
    const log = join(sb.root, "sub.log");
    const p = startSubscriber(sb, log, noOptOut(unreachableBrokerEnv));
    try {
      expect(await waitForLog(log, /falling back to polling/, 30_000)).toBe(true);
      rmSync(sb.ws, { recursive: true, force: true });
      expect(await p.waitExit(15_000)).toBe(0);
      expect(logText(log)).toContain(`workspace ${sb.ws} is gone; exiting`);
    } finally {
      await p.kill();
    }
  }, 30_000);

  test("--idle-timeout 2 with no event exits 0", async () => {
    const log = join(sb.root, "sub.log");
    const p = startSubscriber(sb, log, noOptOut(unreachableBrokerEnv), ["--idle-timeout", "2"]);
    try {
      expect(await p.waitExit(15_000)).toBe(0);
      expect(logText(log)).toContain("idle for 2 s (no event, no running work); exiting");
    } finally {
      await p.kill();
    }
  }, 30_000);

  test("--timeout 1 exits 0", async () => {
    const log = join(sb.root, "sub.log");
    const p = startSubscriber(sb, log, noOptOut(unreachableBrokerEnv), ["--idle-timeout", "0", "--timeout", "1"]);
    try {
      expect(await p.waitExit(15_000)).toBe(0);
      expect(logText(log)).toContain("timeout of 1 s reached; exiting");
    } finally {
      await p.kill();
    }
  }, 30_000);

  test("a second daemon for the workspace says who runs and exits 0", async () => {
    const pid = Number((await daemon("ensure", noOptOut())).stdout.trim());
    try {
      const log = join(sb.root, "second.log");
      const p = startSubscriber(sb, log, noOptOut(unreachableBrokerEnv));
      expect(await p.waitExit(10_000)).toBe(0);
      expect(logText(log)).toContain(`another monitor is running (pid ${pid}); exiting`);
      expect(daemonPids(sb.ws)).toEqual([pid]);
    } finally {
      await stopAll();
    }
  });

  test("switches from polling to MQTT when the broker comes up, and back when it goes", async () => {
    const port = await freePort();
    const log = join(sb.root, "sub.log");
    const env = noOptOut({ MQTT_BROKER: "127.0.0.1", MQTT_PORT: String(port), MQTT_TLS: "0", MAM_BROKER_RETRY_S: "2", RECONCILE_POLL_INTERVAL: "1" });
    const p = startSubscriber(sb, log, env);
    let broker;
    try {
      expect(await waitForLog(log, /unreachable .*; falling back to polling/, 30_000)).toBe(true);
      expect((await statusJson()).mode).toBe("polling");
      broker = await startMosquitto(join(sb.root, "mosq"), { port });
      expect(await waitForLog(log, /MQTT Monitor: subscribed to mam\/jobs\/\+\/events/, 2000 + 5000)).toBe(true);
      expect((await statusJson()).mode).toBe("mqtt");
      await broker.stop();
      broker = undefined;
      expect(await waitForLog(log, /MQTT Monitor: lost the broker 127\.0\.0\.1:\d+ \(.*\); falling back to polling/, 10_000)).toBe(true);
      expect((await statusJson()).mode).toBe("polling");
      p.proc.kill("SIGTERM");
      expect(await p.waitExit(5000)).toBe(143);
    } finally {
      await p.kill();
      await broker?.stop();
    }
  }, 60_000);

  test("a broker of several nodes (MQTT_BROKER a list): the first that answers; the next at once when that one is lost; polling when none answers", async () => {
    const [dead, p1, p2] = [await freePort(), await freePort(), await freePort()];
    const log = join(sb.root, "sub.log");
    const env = noOptOut({ MQTT_BROKER: `127.0.0.1:${dead},127.0.0.1:${p1},127.0.0.1:${p2}`, MQTT_PORT: "", MQTT_TLS: "0", MAM_BROKER_RETRY_S: "2", RECONCILE_POLL_INTERVAL: "1" });
    const n1 = await startMosquitto(join(sb.root, "mosq1"), { port: p1 });
    let n2 = await startMosquitto(join(sb.root, "mosq2"), { port: p2 });
    const p = startSubscriber(sb, log, env);
    try {
      expect(await waitForLog(log, new RegExp(`MQTT Monitor: subscribed to .* on node 127\\.0\\.0\\.1:${p1}$`, "m"), 10_000), logText(log)).toBe(true);
      expect(logText(log)).not.toContain("unreachable"); // a node that does not answer is passed over without a word
      expect(logText(log)).toContain(`broker 127.0.0.1:${dead},127.0.0.1:${p1},127.0.0.1:${p2})`);
      await n1.stop();
      expect(await waitForLog(log, new RegExp(`lost the broker's node 127\\.0\\.0\\.1:${p1} \\(.*\\); falling back to polling until another node answers`), 10_000)).toBe(true);
      expect(await waitForLog(log, new RegExp(`subscribed to .* on node 127\\.0\\.0\\.1:${p2}$`, "m"), 5000)).toBe(true);
      expect((await statusJson(env)).mode).toBe("mqtt");
      // a short-lived publish takes the first node that answers too: a report by token from another
      // machine (no record there) passes over the two nodes that do not answer
      const job = await singleJob("wrk");
      const far = join(sb.root, "far");
      mkdirSync(far);
      const ev = await runMam(["job", "event", job.job_id, "progress", "--detail", "through the next node", "--source", "far", "--token", job.auth_token, "--workspace", far], { env, cwd: far });
      expect(ev.code, ev.stderr).toBe(0);
      expect(await waitFor(() => readJournal(sb.ws, job.job_id).some((e) => e.detail === "through the next node"), 5000)).toBe(true);
      await n2.stop();
      expect(await waitForLog(log, new RegExp(`lost the broker's node 127\\.0\\.0\\.1:${p2} `), 10_000)).toBe(true);
      expect(await waitForLog(log, new RegExp(`broker 127\\.0\\.0\\.1:${dead},.* still unreachable \\(127\\.0\\.0\\.1:${dead}: .*; 127\\.0\\.0\\.1:${p1}: .*; 127\\.0\\.0\\.1:${p2}: .*\\); retrying every 2 s`), 10_000), logText(log)).toBe(true);
      expect((await statusJson(env)).mode).toBe("polling");
      n2 = await startMosquitto(join(sb.root, "mosq2b"), { port: p2 });
      expect(await waitForLog(log, new RegExp(`subscribed to .* on node 127\\.0\\.0\\.1:${p2}$`, "m"), 10_000)).toBe(true);
      p.proc.kill("SIGTERM");
      expect(await p.waitExit(5000)).toBe(143);
    } finally {
      await p.kill();
      await n1.stop().catch(() => {});
      await n2.stop().catch(() => {});
    }
  }, 60_000);

  test("a broker that accepts but never answers: polling after 5 s; SIGTERM while connecting still exits 143 at once", async () => {
    const { createServer } = await import("node:net");
    const held: import("node:net").Socket[] = [];
    const silent = createServer((c) => void held.push(c));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
    const port = (silent.address() as { port: number }).port;
    const env = noOptOut({ MQTT_BROKER: "127.0.0.1", MQTT_PORT: String(port), MQTT_TLS: "0" });
    try {
      const log = join(sb.root, "a.log");
      const a = startSubscriber(sb, log, env);
      try {
        expect(await waitForLog(log, /daemon started/, 10_000)).toBe(true);
        const t0 = Date.now();
        expect(await waitForLog(log, /unreachable \(.*\); falling back to polling/, 15_000)).toBe(true);
        expect(Date.now() - t0).toBeGreaterThanOrEqual(4000); // it waited for the broker's answer
        a.proc.kill("SIGTERM");
        expect(await a.waitExit(5000)).toBe(143);
      } finally {
        await a.kill();
      }
      const log2 = join(sb.root, "b.log");
      const b = startSubscriber(sb, log2, env);
      try {
        expect(await waitForLog(log2, /daemon started/, 10_000)).toBe(true);
        expect((await statusJson()).mode).toBe("connecting");
        const t0 = Date.now();
        b.proc.kill("SIGTERM");
        expect(await b.waitExit(5000)).toBe(143);
        expect(Date.now() - t0).toBeLessThan(5000);
        expect(logText(log2)).toContain("signal 15 received, exiting");
        expect(logText(log2)).not.toContain("falling back to polling");
      } finally {
        await b.kill();
      }
    } finally {
      for (const c of held) c.destroy();
      silent.close();
    }
  }, 60_000);

  test("a gap in another host's numbering of its events is noted for status --fleet and doctor (a broker that dropped one)", async () => {
    const broker = await startMosquitto(join(sb.root, "mosq"));
    const log = join(sb.root, "sub.log");
    const env = noOptOut(broker.env);
    const job = await singleJob("w@hostB");
    const event = (seq: number) =>
      canonicalJson(signEvent({ schema_version: 1, seq, origin: "hostBorigin0001", job_id: job.job_id, event: "progress", timestamp: "2026-10-11T00:00:00Z", detail: `e${seq}`, source: "w@hostB", data: {} }, job.auth_token));
    const pub = await mqtt.connectAsync({ protocol: "mqtt", host: "127.0.0.1", port: broker.port, clientId: "t-gap", reconnectPeriod: 0 } as never);
    const p = startSubscriber(sb, log, env);
    try {
      expect(await waitForLog(log, /MQTT Monitor: subscribed to /, 15_000)).toBe(true);
      await pub.publishAsync(`${job.topic_prefix}/events`, event(1), { qos: 1 });
      await pub.publishAsync(`${job.topic_prefix}/events`, event(3), { qos: 1 }); // seq 2 never came
      expect(await waitForLog(log, new RegExp(`gap in job ${job.job_id} from origin hostBorigin0001: expected seq 2, got 3`), 5000)).toBe(true);
      expect(await waitFor(() => existsSync(join(sb.ws, ".mam", "team-gaps.json")), 5000)).toBe(true);
      const gaps = JSON.parse(readFileSync(join(sb.ws, ".mam", "team-gaps.json"), "utf8"));
      expect(Object.keys(gaps)).toEqual(["hostB"]);
      expect(gaps.hostB).toMatchObject({ count: 1, last: `gap in job ${job.job_id} from origin hostBorigin0001: expected seq 2, got 3` });
      const d = await runMam(["doctor", "--json"], { env, cwd: sb.ws });
      const check = (JSON.parse(d.stdout) as { checks: { id: string; status: string; detail: string }[] }).checks.find((c) => c.id === "team.gaps");
      expect(check?.status).toBe("warn");
      expect(check?.detail).toStartWith("events from hostB arrived with a gap in their numbering once since ");
    } finally {
      await p.kill();
      await pub.endAsync();
      await broker.stop();
    }
  }, 60_000);

  test("events are journalled, and the persistent session keeps those sent while it was down", async () => {
    const broker = await startMosquitto(join(sb.root, "mosq"));
    const log = join(sb.root, "sub.log");
    const env = noOptOut(broker.env);
    const job = await singleJob("wrk");
    // signed as a worker on another machine would (it writes no journal here)
    const event = (seq: number, name: "started" | "progress") =>
      canonicalJson(signEvent({ schema_version: 1, seq, job_id: job.job_id, event: name, timestamp: "2026-10-11T00:00:00Z", detail: `e${seq}`, source: "remote", data: {} }, job.auth_token));
    const topic = `mam/jobs/${job.job_id}/events`;
    const journal = () => readJournal(sb.ws, job.job_id).map((e) => `${e.seq}:${e.event}`);
    const pub = await mqtt.connectAsync({ protocol: "mqtt", host: "127.0.0.1", port: broker.port, clientId: "t-pub", reconnectPeriod: 0 } as never);
    let p = startSubscriber(sb, log, env);
    try {
      expect(await waitForLog(log, /MQTT Monitor: subscribed to /, 15_000)).toBe(true);
      await pub.publishAsync(topic, event(1, "started"), { qos: 1 });
      expect(await waitFor(() => journal().length === 1, 5000)).toBe(true);
      // garbage on the topic is dropped and logged, nothing written
      await pub.publishAsync("mam/jobs/deadbeef/events", "hello", { qos: 1 });
      expect(await waitForLog(log, /dropped event.*not JSON/, 5000)).toBe(true);
      p.proc.kill("SIGTERM");
      expect(await p.waitExit(5000)).toBe(143);
      await pub.publishAsync(topic, event(2, "progress"), { qos: 1 });
      p = startSubscriber(sb, log, env);
      // the record (a cache, written right after the journal line) follows
      expect(await waitFor(() => readRecord(sb.ws, job.job_id)?.last_seq === 2, 15_000)).toBe(true);
      expect(journal()).toEqual(["1:started", "2:progress"]);
      expect(readRecord(sb.ws, job.job_id)!.status).toBe("running");
      p.proc.kill("SIGTERM");
      expect(await p.waitExit(5000)).toBe(143);
    } finally {
      await p.kill();
      await pub.endAsync();
      await broker.stop();
    }
  }, 60_000);

  test("without --subscribe: one pass (exit 0); bad values are usage errors", async () => {
    const once = await runMam(["reconcile", "--workspace", sb.ws], { env: sb.env });
    expect(once.code).toBe(0);
    expect(once.stdout).toStartWith("nothing to do");
    for (const args of [["--subscribe", "--idle-timeout", "-1"], ["--subscribe", "--timeout", "abc"], ["--idle-timeout", "5"], ["--subscribe", "--bogus"], ["--subscribe", "--dry-run"], ["--subscribe", "--json"]]) {
      const r = await runMam(["reconcile", ...args, "--workspace", sb.ws], { env: sb.env });
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toStartWith("ERROR: ");
    }
    const nows = await runMam(["reconcile", "--subscribe", "--workspace", join(sb.root, "nope")], { env: sb.env });
    expect(nows.code).toBe(2);
    expect(existsSync(join(sb.ws, ".mam"))).toBe(false);
  });

  test("daemon status from the workspace folder (no --workspace) is read-only too", async () => {
    const r = await runMam(["daemon", "status"], { env: sb.env, cwd: sb.ws });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`no subscriber daemon runs for ${sb.ws}`);
    expect(existsSync(join(sb.ws, ".mam"))).toBe(false);
  });
});
