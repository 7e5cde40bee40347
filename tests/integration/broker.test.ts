// mam broker (SPEC §8): the embedded broker carries QoS 1 messages, enforces a password, serves
// TLS, and exits 143 on SIGTERM.
import { afterAll, describe, expect, test } from "bun:test";
import mqtt from "mqtt";
import { join } from "node:path";
import { makeCerts, mosquittoPath, startMamBroker, startMosquitto } from "../helpers/brokers.ts";
import { MAM_CMD } from "../helpers/mam.ts";
import { makeSandbox } from "../helpers/sandbox.ts";

const sb = makeSandbox("mam-brk-");
afterAll(() => sb.cleanup());

async function roundTrip(opts: Record<string, unknown>): Promise<string> {
  const sub = await mqtt.connectAsync({ ...opts, clientId: `t-sub-${Math.random()}`.slice(0, 20), reconnectPeriod: 0, connectTimeout: 5000 } as never);
  const pub = await mqtt.connectAsync({ ...opts, clientId: `t-pub-${Math.random()}`.slice(0, 20), reconnectPeriod: 0, connectTimeout: 5000 } as never);
  try {
    await sub.subscribeAsync("mam/jobs/+/events", { qos: 1 });
    const got = new Promise<string>((r) => sub.on("message", (_t, p) => r(p.toString())));
    await pub.publishAsync("mam/jobs/deadbeef/events", "hello", { qos: 1 });
    return await got;
  } finally {
    await pub.endAsync();
    await sub.endAsync();
  }
}

describe("mam broker", () => {
  test("carries a QoS 1 message and stops with 143 on SIGTERM", async () => {
    const b = await startMamBroker(sb.env, sb.ws);
    try {
      expect(await roundTrip({ protocol: "mqtt", host: "127.0.0.1", port: b.port })).toBe("hello");
    } finally {
      await b.stop();
    }
  });

  test("with --username/--password refuses a wrong password", async () => {
    const b = await startMamBroker(sb.env, sb.ws, ["--username", "team", "--password", "s3cret"]);
    try {
      expect(await roundTrip({ protocol: "mqtt", host: "127.0.0.1", port: b.port, username: "team", password: "s3cret" })).toBe("hello");
      await expect(
        mqtt.connectAsync({ protocol: "mqtt", host: "127.0.0.1", port: b.port, username: "team", password: "nope", reconnectPeriod: 0, connectTimeout: 3000 } as never),
      ).rejects.toThrow();
    } finally {
      await b.stop();
    }
  });

  test("serves TLS with a certificate", async () => {
    const c = makeCerts(join(sb.root, "certs"));
    const b = await startMamBroker(sb.env, sb.ws, ["--tls-cert", c.cert, "--tls-key", c.key]);
    try {
      const ca = await Bun.file(c.ca).text();
      expect(await roundTrip({ protocol: "mqtts", host: "127.0.0.1", port: b.port, ca })).toBe("hello");
    } finally {
      await b.stop();
    }
  });

  test("exit code on SIGTERM is 143", async () => {
    const p = Bun.spawn([...MAM_CMD, "broker", "--port", "0"], { env: sb.env, stdout: "pipe", stderr: "pipe" });
    const reader = p.stdout.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toContain("listening on mqtt://127.0.0.1:");
    p.kill("SIGTERM");
    expect(await p.exited).toBe(143);
  });

  test("bad flags are usage errors", async () => {
    for (const args of [["--port", "99999"], ["--username", "x"], ["--tls-cert", "a"]]) {
      const p = Bun.spawnSync([...MAM_CMD, "broker", ...args], { env: sb.env });
      expect(p.exitCode).toBe(2);
      expect(p.stderr.toString()).toMatch(/^ERROR: /);
    }
  });
});

describe("the Mosquitto fixture", () => {
  test("is installed (CI installs it; never skipped silently)", () => {
    expect(mosquittoPath()).toBeDefined();
  });

  test("starts on a free port and carries a message", async () => {
    const m = await startMosquitto(join(sb.root, "mosq"));
    try {
      expect(await roundTrip({ protocol: "mqtt", host: "127.0.0.1", port: m.port })).toBe("hello");
    } finally {
      await m.stop();
    }
  });
});
