// Broker fixtures: a real Mosquitto on a free loopback port, and the embedded `mam broker`.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MAM_CMD } from "./mam.ts";
import { freePort } from "../../lib/sys/net.ts";

export interface TestBroker {
  host: string;
  port: number;
  /** MQTT_* variables that point mam at this broker */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export { freePort };

export function mosquittoPath(): string | undefined {
  for (const p of ["/usr/sbin/mosquitto", "/usr/bin/mosquitto", "/usr/local/sbin/mosquitto", "/usr/local/bin/mosquitto"]) {
    if (existsSync(p)) return p;
  }
  return Bun.which("mosquitto") ?? undefined;
}

async function waitListening(port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const { connect } = require("node:net") as typeof import("node:net");
      const c = connect(port, "127.0.0.1");
      c.once("connect", () => {
        c.destroy();
        resolve(true);
      });
      c.once("error", () => resolve(false));
    });
    if (ok) return true;
    await Bun.sleep(50);
  }
  return false;
}

export interface MosquittoOptions {
  port?: number;
  username?: string;
  password?: string;
  /** TLS listener: PEM files */
  tls?: { ca: string; cert: string; key: string };
}

/** start Mosquitto in dir on a free (or given) loopback port */
export async function startMosquitto(dir: string, o: MosquittoOptions = {}): Promise<TestBroker> {
  const bin = mosquittoPath();
  if (!bin) throw new Error("mosquitto is not installed (apt-get install mosquitto); .ci/run installs it");
  mkdirSync(dir, { recursive: true });
  const port = o.port ?? (await freePort());
  const lines = [`listener ${port} 127.0.0.1`, "persistence false", "log_dest stderr", "log_type error", "log_type warning"];
  // started as root, mosquitto drops to the `mosquitto` user, who cannot read files in a 0700 temp dir
  if (process.getuid?.() === 0) lines.push("user root");
  if (o.username) {
    const pw = join(dir, "passwd");
    writeFileSync(pw, "");
    // Debian ships mosquitto in /usr/sbin but mosquitto_passwd in /usr/bin
    const pwBin = [bin.replace(/mosquitto$/, "mosquitto_passwd"), "/usr/bin/mosquitto_passwd", "/usr/local/bin/mosquitto_passwd"].find((p) => existsSync(p)) ?? Bun.which("mosquitto_passwd") ?? "mosquitto_passwd";
    const r = Bun.spawnSync([pwBin, "-b", pw, o.username, o.password ?? ""]);
    if (r.exitCode !== 0) throw new Error(`mosquitto_passwd failed: ${r.stderr}`);
    lines.push("allow_anonymous false", `password_file ${pw}`);
  } else {
    lines.push("allow_anonymous true");
  }
  if (o.tls) lines.push(`cafile ${o.tls.ca}`, `certfile ${o.tls.cert}`, `keyfile ${o.tls.key}`);
  const conf = join(dir, `mosquitto-${port}.conf`);
  writeFileSync(conf, `${lines.join("\n")}\n`);
  const proc = Bun.spawn([bin, "-c", conf], { stdin: "ignore", stdout: "ignore", stderr: "pipe", cwd: dir });
  if (!(await waitListening(port, 10_000))) {
    proc.kill("SIGKILL");
    throw new Error(`mosquitto did not start on ${port}: ${await new Response(proc.stderr).text()}`);
  }
  return {
    host: "127.0.0.1",
    port,
    env: {
      MQTT_BROKER: "127.0.0.1",
      MQTT_PORT: String(port),
      MQTT_TLS: o.tls ? "1" : "0",
      ...(o.username ? { MQTT_USERNAME: o.username, MQTT_PASSWORD: o.password ?? "" } : {}),
      ...(o.tls ? { MQTT_CA_CERTS: o.tls.ca } : {}),
    },
    async stop() {
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 3000);
      await proc.exited;
      clearTimeout(t);
    },
  };
}

/** start the embedded `mam broker` on a free loopback port (extra args: --username …) */
export async function startMamBroker(env: Record<string, string>, cwd: string, extra: string[] = [], port?: number): Promise<TestBroker> {
  const p = port ?? (await freePort());
  const proc = Bun.spawn([...MAM_CMD, "broker", "--port", String(p), ...extra], { env, cwd, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  if (!(await waitListening(p, 10_000))) {
    proc.kill("SIGKILL");
    throw new Error(`mam broker did not start: ${await new Response(proc.stderr).text()}`);
  }
  return {
    host: "127.0.0.1",
    port: p,
    env: { MQTT_BROKER: "127.0.0.1", MQTT_PORT: String(p), MQTT_TLS: extra.includes("--tls-cert") ? "1" : "0" },
    async stop() {
      proc.kill("SIGTERM");
      const t = setTimeout(() => proc.kill("SIGKILL"), 3000);
      await proc.exited;
      clearTimeout(t);
    },
  };
}

/** a throw-away CA and a server certificate for 127.0.0.1 (openssl) */
export function makeCerts(dir: string): { ca: string; cert: string; key: string; clientCert: string; clientKey: string } {
  mkdirSync(dir, { recursive: true });
  const f = (n: string) => join(dir, n);
  const sh = (cmd: string) => {
    const r = Bun.spawnSync(["bash", "-c", cmd], { cwd: dir });
    if (r.exitCode !== 0) throw new Error(`${cmd}: ${r.stderr}`);
  };
  sh(`openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=mam-test-ca" -keyout ca.key -out ca.crt 2>/dev/null`);
  writeFileSync(f("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  sh(`openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout server.key -out server.csr 2>/dev/null`);
  sh(`openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out server.crt 2>/dev/null`);
  sh(`openssl req -newkey rsa:2048 -nodes -subj "/CN=mam-client" -keyout client.key -out client.csr 2>/dev/null`);
  sh(`openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out client.crt 2>/dev/null`);
  return { ca: f("ca.crt"), cert: f("server.crt"), key: f("server.key"), clientCert: f("client.crt"), clientKey: f("client.key") };
}
