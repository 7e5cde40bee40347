// Secrets off the command line and out of reach (issue 23; security review attempts 13 and 42, R4
// and R7): `mam broker` takes its password from a file or MAM_BROKER_PASSWORD (and says that
// --password shows in ps), `mam ui --open` hands the opener a file instead of the token URL, and
// the daemon's MQTT client id cannot be computed from the workspace's path (a client using the
// old id no longer pushes it off).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import mqtt from "mqtt";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { daemonKeyPath } from "../../lib/daemon/broker-link.ts";
import { brokerConfigFromEnv, clientId } from "../../lib/jobs/broker-config.ts";
import { freePort, startMosquitto } from "../helpers/brokers.ts";
import { logText, startSubscriber, waitForLog } from "../helpers/daemon.ts";
import { MAM_CMD, runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";

let sb: Sandbox;
beforeEach(() => {
  sb = makeSandbox("mam-sarg-");
});
afterEach(async () => {
  await sb.cleanup();
});

async function canConnect(port: number, username?: string, password?: string): Promise<boolean> {
  try {
    const c = await mqtt.connectAsync({ protocol: "mqtt", host: "127.0.0.1", port, username, password, clientId: `t-${Math.random().toString(16).slice(2, 10)}`, reconnectPeriod: 0, connectTimeout: 3000 } as never);
    await c.endAsync();
    return true;
  } catch {
    return false;
  }
}

/** `mam broker` in the background; resolves once it listens */
async function broker(args: string[], env = sb.env) {
  const port = await freePort();
  const p = Bun.spawn([...MAM_CMD, "broker", "--port", String(port), ...args], { env, cwd: sb.ws, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const listening = () =>
    new Promise<boolean>((resolve) => {
      const c = connect(port, "127.0.0.1");
      c.once("connect", () => (c.destroy(), resolve(true)));
      c.once("error", () => resolve(false));
    });
  const up = await waitFor(listening, 10_000, 100);
  return {
    port,
    pid: p.pid,
    up,
    argv: () => readFileSync(`/proc/${p.pid}/cmdline`, "utf8").split("\0"),
    async stop(): Promise<string> {
      p.kill("SIGTERM");
      await p.exited;
      return await new Response(p.stderr).text();
    },
  };
}

describe("mam broker: the password off the command line (R7)", () => {
  test("--password-file: required, not in argv, no warning", async () => {
    const file = join(sb.root, "broker.pw");
    writeFileSync(file, "file-s3cret\n", { mode: 0o600 });
    const b = await broker(["--username", "team", "--password-file", file]);
    try {
      expect(b.up).toBe(true);
      expect(b.argv().join(" ")).not.toContain("file-s3cret");
      expect(await canConnect(b.port, "team", "file-s3cret")).toBe(true);
      expect(await canConnect(b.port, "team", "nope")).toBe(false);
    } finally {
      expect(await b.stop()).not.toContain("WARNING");
    }
  });

  test("MAM_BROKER_PASSWORD: required, not in argv", async () => {
    const b = await broker(["--username", "team"], sb.with({ MAM_BROKER_PASSWORD: "env-s3cret" }));
    try {
      expect(b.argv().join(" ")).not.toContain("env-s3cret");
      expect(await canConnect(b.port, "team", "env-s3cret")).toBe(true);
      expect(await canConnect(b.port, "team", "nope")).toBe(false);
    } finally {
      await b.stop();
    }
  });

  test("--password still works and says that ps shows it", async () => {
    const b = await broker(["--username", "team", "--password", "argv-s3cret"]);
    try {
      expect(await canConnect(b.port, "team", "argv-s3cret")).toBe(true);
    } finally {
      expect(await b.stop()).toContain("WARNING: --password is visible to every user of this machine (ps, /proc); use --password-file FILE or MAM_BROKER_PASSWORD");
    }
  });

  test("a username without a password, a password without a username, two passwords, an empty file: usage errors", async () => {
    const empty = join(sb.root, "empty.pw");
    writeFileSync(empty, "\n");
    const cases: [string[], Record<string, string>, string][] = [
      [["--username", "team"], {}, "ERROR: --username needs a password; put it in a file and pass --password-file FILE, or set MAM_BROKER_PASSWORD"],
      [[], { MAM_BROKER_PASSWORD: "x" }, "ERROR: MAM_BROKER_PASSWORD is set but --username is not given"],
      [["--password-file", empty, "--username", "t"], {}, `ERROR: the password file ${empty} (--password-file) is empty`],
      [["--password", "a", "--password-file", empty, "--username", "t"], {}, "ERROR: give one of --password and --password-file"],
      [["--password", "a"], {}, "ERROR: a password needs --username"],
    ];
    for (const [args, env, message] of cases) {
      const r = await runMam(["broker", "--port", "0", ...args], { env: sb.with(env), timeoutMs: 10_000 });
      expect(r.code).toBe(2);
      expect(r.stderr).toStartWith(message);
    }
  });
});

describe("mam ui --open (R7)", () => {
  test("the opener gets a 0600 page, not the token; it forwards to the URL and goes when mam ui stops", async () => {
    const log = join(sb.root, "opener.log");
    // a stand-in xdg-open: records its arguments, what the page holds, and its environment
    writeFileSync(join(sb.bin, "xdg-open"), `#!/bin/sh\nprintf '%s\\n' "$@" > '${log}.argv'\ncat "$1" > '${log}.page'\nstat -c %a "$1" > '${log}.mode'\nenv > '${log}.env'\n`, { mode: 0o755 });
    const p = Bun.spawn([...MAM_CMD, "ui", "--open", "--port", "0", "--workspace", sb.ws], { env: sb.with({ MQTT_PASSWORD: "pw-for-mam-only" }), stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    try {
      const reader = p.stdout.getReader();
      const url = new TextDecoder().decode((await reader.read()).value).split("\n")[0]!;
      const token = new URL(url).searchParams.get("token")!;
      expect(token.length).toBeGreaterThan(20);
      expect(await waitFor(() => existsSync(`${log}.env`), 10_000)).toBe(true);
      const argv = readFileSync(`${log}.argv`, "utf8").trim().split("\n");
      expect(argv).toHaveLength(1);
      expect(argv[0]).not.toContain(token);
      expect(argv[0]).toBe(join(sb.home, ".local", "state", "mam", "ui", `open-${new URL(url).port}.html`));
      expect(readFileSync(`${log}.page`, "utf8")).toContain(`<meta http-equiv="refresh" content="0;url=${url}">`);
      expect(readFileSync(`${log}.mode`, "utf8").trim()).toBe("600");
      expect(readFileSync(`${log}.env`, "utf8")).not.toContain("pw-for-mam-only");
      expect(existsSync(argv[0]!)).toBe(true);
      p.kill("SIGTERM");
      expect(await p.exited).toBe(143);
      expect(existsSync(argv[0]!)).toBe(false);
    } finally {
      p.kill("SIGKILL");
      await p.exited;
    }
  }, 30_000);
});

describe("the daemon's MQTT client id (R4)", () => {
  test("a client that takes the id 0.2 derived from the workspace's path does not push the daemon off; the key is kept 0600", async () => {
    const mosq = await startMosquitto(join(sb.root, "mosq"));
    const log = join(sb.root, "sub.log");
    const env = sb.with({ ...mosq.env, MAM_NO_SUBSCRIBER_DAEMON: undefined });
    const d = startSubscriber(sb, log, env);
    let thief: mqtt.MqttClient | undefined;
    try {
      expect(await waitForLog(log, /MQTT Monitor: subscribed to /, 15_000)).toBe(true);
      const guessed = clientId(brokerConfigFromEnv(env), "mon", `monitor:${sb.ws}`);
      thief = await mqtt.connectAsync({ protocol: "mqtt", host: "127.0.0.1", port: mosq.port, clientId: guessed, clean: false, reconnectPeriod: 0 } as never);
      await Bun.sleep(1500);
      expect(logText(log)).not.toContain("lost the broker");
      const status = await runMam(["daemon", "status", "--json", "--workspace", sb.ws], { env });
      expect(JSON.parse(status.stdout).mode).toBe("mqtt");
      const key = daemonKeyPath(sb.ws, env);
      expect(statSync(key).mode & 0o777).toBe(0o600);
      // a restart keeps the same key (so the same id, and the broker's session)
      const before = readFileSync(key, "utf8");
      d.proc.kill("SIGTERM");
      expect(await d.waitExit(5000)).toBe(143);
      const again = startSubscriber(sb, log, env);
      try {
        expect(await waitFor(() => (logText(log).match(/MQTT Monitor: subscribed to /g) ?? []).length >= 2, 15_000)).toBe(true);
        expect(readFileSync(key, "utf8")).toBe(before);
        again.proc.kill("SIGTERM");
        expect(await again.waitExit(5000)).toBe(143);
      } finally {
        await again.kill();
      }
    } finally {
      await thief?.endAsync();
      await d.kill();
      await mosq.stop();
    }
  }, 60_000);
});
