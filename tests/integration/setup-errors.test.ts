// A new user's dead ends (issue 23 item 18; newcomer trial #4, #5, #7): a read-only folder gives
// mam's own ERROR naming the folder, not an internal error; MQTT_BROKER is taken apart (host:port,
// mqtt://host:port) or refused before anything is journalled; the same session name in two
// workspaces on the shared tmux server names the workspace that owns it and the way out.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import mqtt from "mqtt";
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { readJournal, registerJob } from "../../lib/jobs/store.ts";
import { startMosquitto } from "../helpers/brokers.ts";
import { MAM_CMD, run, runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "../helpers/tmux.ts";

let sb: Sandbox;
beforeEach(() => {
  sb = makeSandbox("mam-setup-");
});
afterEach(async () => {
  await sb.cleanup();
});

/** run argv in a private mount namespace where `dir` is mounted read-only (root: unshare -m; else a user namespace) */
function readOnlyArgv(dir: string, argv: string[]): string[] {
  const ns = process.getuid?.() === 0 ? ["unshare", "-m", "--propagation", "private"] : ["unshare", "-r", "-m"];
  const script = 'd=$1; shift; mount --bind "$d" "$d" && mount -o remount,bind,ro "$d" || exit 99; cd "$d" && exec "$@"';
  return [...ns, "sh", "-c", script, "sh", dir, ...argv];
}

/** can this machine mount a folder read-only in a private namespace (a read-only folder without root)? */
const CAN_MOUNT_RO = (() => {
  const probe = makeSandbox("mam-ro-probe-");
  try {
    const r = Bun.spawnSync(readOnlyArgv(probe.ws, ["sh", "-c", "! touch x 2>/dev/null"]), { stdout: "ignore", stderr: "ignore" });
    return r.exitCode === 0;
  } catch {
    return false;
  } finally {
    Bun.spawnSync(["rm", "-rf", probe.root]);
  }
})();
if (!CAN_MOUNT_RO) console.warn("SKIPPED: the read-only folder tests need `unshare -m` (root) or user namespaces to mount a folder read-only");

describe("a read-only folder", () => {
  test.skipIf(!CAN_MOUNT_RO)("create, mcp install: ERROR naming what could not be written and the way out; reading commands work; nothing changes", async () => {
    const inRo = (args: string[]) => run(readOnlyArgv(sb.ws, [...MAM_CMD, ...args]), { env: sb.with({ TMUX_TMPDIR: sb.root }), timeoutMs: 30_000 });
    const fix = "make it writable, or work in a folder you can write (cd there, or set MAM_WORKSPACE)";
    let r = await inRo(["create", "--agent", "demo", "--mux", "tmux", "--session", "ro1"]);
    expect(r.stderr).toBe(`ERROR: cannot write ${join(sb.ws, ".mam")} (read-only file system); ${fix}\n`);
    expect(r.code).toBe(1);
    r = await inRo(["mcp", "install", "claude"]);
    expect(r.stderr).toBe(`ERROR: cannot write ${join(sb.ws, ".mcp.json")} (read-only file system); ${fix}\n`);
    expect(r.code).toBe(1);
    expect(readdirSync(sb.ws)).toEqual([]);

    // with an existing .mam/ (the registry lock cannot be created in it)
    mkdirSync(join(sb.ws, ".mam"));
    r = await inRo(["create", "--agent", "demo", "--mux", "tmux", "--session", "ro1"]);
    expect(r.stderr).toBe(`ERROR: cannot write ${join(sb.ws, ".mam")} (read-only file system); ${fix}\n`);
    expect(r.code).toBe(1);
    r = await inRo(["status"]);
    expect(r.code).toBe(0);
    expect(readdirSync(join(sb.ws, ".mam"))).toEqual([]);
  }, 60_000);
});

describe("MQTT_BROKER", () => {
  test("host:port and mqtt://host:port reach the broker on that port; anything else is exit 2 before the journal", async () => {
    const mosq = await startMosquitto(join(sb.root, "mosq"));
    const job = await registerJob(sb.ws, {
      agent_session: "wrk", agent: "claude", prompt: "p", delegator: null, type: "single", reviewer_session: null,
      max_iterations: null, timeout_sec: 0, idle_timeout_sec: 0, expected_artifacts: [], topic_prefix_base: "mam/jobs",
    });
    const sub = await mqtt.connectAsync({ protocol: "mqtt", host: "127.0.0.1", port: mosq.port, clientId: "t-sub-addr", reconnectPeriod: 0 } as never);
    const got: string[] = [];
    sub.on("message", (_t, p) => got.push(p.toString()));
    const event = (broker: string, name: string, detail: string) =>
      runMam(["job", "event", job.job_id, name, "--detail", detail], { env: sb.with({ MQTT_BROKER: broker, MQTT_PORT: undefined }), cwd: sb.ws });
    try {
      await sub.subscribeAsync(`mam/jobs/${job.job_id}/events`, { qos: 1 });
      let r = await event(`127.0.0.1:${mosq.port}`, "started", "host and port");
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      r = await event(`mqtt://127.0.0.1:${mosq.port}`, "progress", "as a URL");
      expect(r.stderr).toBe("");
      expect(await waitFor(() => got.some((m) => m.includes("host and port")) && got.some((m) => m.includes("as a URL")), 5000)).toBe(true);

      for (const bad of [`127.0.0.1:${mosq.port}/x`, "tcp://127.0.0.1", "127.0.0.1:"]) {
        r = await event(bad, "progress", "never");
        expect(r.code).toBe(2);
        expect(r.stderr).toStartWith(`ERROR: MQTT_BROKER must be a host, host:port or mqtt://host:port (got '${bad}')`);
      }
      expect(readJournal(sb.ws, job.job_id).map((e) => e.detail)).toEqual(["host and port", "as a URL"]);
    } finally {
      await sub.endAsync();
      await mosq.stop();
    }
  }, 30_000);
});

describe("one session name in two workspaces on the shared tmux server", () => {
  test("the error names the workspace that owns it and --tmux-server; another server works; a session mam did not tag says where it started", async () => {
    if (!TMUX_BIN) throw new Error("tmux is not installed: this test needs a real tmux (apt install tmux)");
    const server = tmuxServerName("mamclash");
    const other = tmuxServerName("mamclash2");
    const ws2 = join(sb.root, "ws2");
    mkdirSync(ws2);
    const env = sb.with({ TMUX_TMPDIR: sb.root, MAM_AGENT_SETTLE_S: "0.3" });
    const create = (ws: string, name: string, srv: string) =>
      runMam(["create", "--agent", "demo", "--role", "worker", "--mux", "tmux", "--tmux-server", srv, "--session", name, "--no-onboard", "--workspace", ws], { env, cwd: ws, timeoutMs: 60_000 });
    try {
      expect((await create(sb.ws, "worker", server)).code).toBe(0);
      let r = await create(ws2, "worker", server);
      expect(r.code).toBe(4);
      expect(r.stderr).toBe(
        `ERROR: tmux session 'worker' already exists on tmux server '${server}': it belongs to workspace ${sb.ws}; pick another --session, or give this workspace a tmux server of its own with --tmux-server\n`,
      );
      expect((await create(ws2, "worker", other)).code).toBe(0);

      // a session something else made on the server
      expect((await run([TMUX_BIN, "-L", server, "new-session", "-d", "-s", "plain", "-c", sb.root, "sleep 600"], { env, timeoutMs: 10_000 })).code).toBe(0);
      r = await create(ws2, "plain", server);
      expect(r.code).toBe(4);
      expect(r.stderr).toBe(
        `ERROR: tmux session 'plain' already exists on tmux server '${server}' (not known as this workspace's; it started in ${sb.root}); pick another --session, or another tmux server with --tmux-server; or end it: tmux -L ${server} kill-session -t '=plain'\n`,
      );
    } finally {
      await killTmuxServer(server, env);
      await killTmuxServer(other, env, sb.root);
    }
  }, 90_000);
});
