// Broker fixtures: a real Mosquitto on a free loopback port, and the embedded `mam broker`.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { MAM_CMD } from "./mam.ts";
import { reap } from "./sandbox.ts";
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
  /**
   * the configuration as a user writes it (its listener, TLS, password_file, acl_file …),
   * instead of the lines made from the options above; the fixture adds only logging to stderr,
   * persistence in memory and, as root, `user root`. `port` is the listener's port to put in it.
   */
  config?: (port: number) => string[];
}

/** the mosquitto_passwd next to mosquitto (Debian ships mosquitto in /usr/sbin but mosquitto_passwd in /usr/bin) */
function passwdBin(bin: string): string {
  return [bin.replace(/mosquitto$/, "mosquitto_passwd"), "/usr/bin/mosquitto_passwd", "/usr/local/bin/mosquitto_passwd"].find((p) => existsSync(p)) ?? Bun.which("mosquitto_passwd") ?? "mosquitto_passwd";
}

/** a Mosquitto password file with these users (mosquitto_passwd -b) */
export function writeMosquittoPasswords(file: string, users: Record<string, string>): void {
  const bin = mosquittoPath();
  if (!bin) throw new Error("mosquitto is not installed (apt-get install mosquitto)");
  writeFileSync(file, "");
  for (const [u, pw] of Object.entries(users)) {
    const r = Bun.spawnSync([passwdBin(bin), "-b", file, u, pw]);
    if (r.exitCode !== 0) throw new Error(`mosquitto_passwd failed: ${r.stderr}`);
  }
}

/** start Mosquitto in dir on a free (or given) loopback port */
export async function startMosquitto(dir: string, o: MosquittoOptions = {}): Promise<TestBroker> {
  const bin = mosquittoPath();
  if (!bin) throw new Error("mosquitto is not installed (apt-get install mosquitto); .ci/run installs it");
  mkdirSync(dir, { recursive: true });
  const port = o.port ?? (await freePort());
  const lines = ["persistence false", "log_dest stderr", "log_type error", "log_type warning"];
  // started as root, mosquitto drops to the `mosquitto` user, who cannot read files in a 0700 temp dir
  if (process.getuid?.() === 0) lines.push("user root");
  if (o.config) lines.push(...o.config(port));
  else {
    lines.push(`listener ${port} 127.0.0.1`);
    if (o.username) {
      const pw = join(dir, "passwd");
      writeMosquittoPasswords(pw, { [o.username]: o.password ?? "" });
      lines.push("allow_anonymous false", `password_file ${pw}`);
    } else {
      lines.push("allow_anonymous true");
    }
    if (o.tls) lines.push(`cafile ${o.tls.ca}`, `certfile ${o.tls.cert}`, `keyfile ${o.tls.key}`);
  }
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

// ---------------------------------------------------------------------------------------------
// Two Mosquittos bridged ("A on one broker, B on the other")
//
// `first` is a plain broker. `second` holds the bridge: `connection … topic <prefix>/# both 1`,
// cleansession false, try_private true (the default: each side knows the other is a bridge),
// reconnecting within 2 s. The bridge does not dial `first` directly but a TCP relay on
// loopback in this test process, so that a test can cut the link between the brokers while
// both keep running (`cut()` closes the bridge's connection and turns away new ones until
// `restore()`).
//
// What Mosquitto 2.0.11's bridge does (observed; tests/integration/netlab.test.ts holds the
// first three to it):
//   - a QoS 1 message on the prefix, published on either broker, reaches the other broker's
//     live subscribers once, at QoS 1 (no echo back across the bridge, no duplicate);
//   - a retained message keeps its retain flag across the bridge (try_private): the other
//     broker stores it too, and a client that subscribes there later gets it as retained (an
//     empty retained message clears it on both);
//   - while the bridge is cut, QoS 1 messages published on `first` wait in the bridge's
//     persistent session on `first` (cleansession false), those published on `second` in
//     `second`'s queue for the bridge; each is delivered once after `restore()`. QoS 0
//     messages published during the cut never cross;
//   - after each reconnection both sides subscribe again, so each broker sends the other every
//     retained message of the prefix once more; live subscribers get them again as plain
//     (retain 0) messages: per reconnection, a subscriber of `second` got each one once, a
//     subscriber of `first` twice, or more after a longer cut (one more copy, it seems, per
//     failed reconnection attempt during the cut). Whatever reads retained state must take
//     repeats.
//   - `restart_timeout 1` (one value, "constant") was not honoured: the bridge came back after
//     about 5 s; `restart_timeout 1 2` (backoff from 1 s, capped at 2 s) is, hence below.
// ---------------------------------------------------------------------------------------------

export interface BridgedMosquittos {
  /** the broker the bridge connects to */
  first: TestBroker;
  /** the broker that holds the bridge */
  second: TestBroker;
  /** the bridged topics are `${prefix}/#` */
  prefix: string;
  /** true while the bridge is connected and its subscription acknowledged */
  bridged(): boolean;
  /** close the bridge's connection and refuse new ones until restore(); resolves when it is down */
  cut(): Promise<void>;
  /** let the bridge reconnect; resolves once it is connected and subscribed again (bounded: throws after timeoutMs) */
  restore(timeoutMs?: number): Promise<void>;
  /** stop both brokers and the relay */
  stop(): Promise<void>;
}

export interface BridgeOptions {
  /** topic prefix bridged both ways (default "mam") */
  prefix?: string;
  /** bridge keepalive in seconds (Mosquitto's minimum is 5) */
  keepalive?: number;
}

/** the relay between the bridge and `first`: counts MQTT packets from `first` to see CONNACK and SUBACK */
function bridgeRelay(target: number) {
  const net = require("node:net") as typeof import("node:net");
  const pairs = new Set<{ a: import("node:net").Socket; b: import("node:net").Socket }>();
  let open = true;
  let subscribed = false;
  const server = net.createServer((a) => {
    if (!open) {
      a.destroy();
      return;
    }
    const b = net.connect(target, "127.0.0.1");
    const pair = { a, b };
    pairs.add(pair);
    let buf = Buffer.alloc(0);
    b.on("data", (chunk: Buffer) => {
      a.write(chunk);
      buf = Buffer.concat([buf, chunk]);
      // MQTT fixed header: a type byte, then the remaining length in 1-4 bytes of 7 bits
      for (;;) {
        let len = 0;
        let i = 1;
        let mul = 1;
        for (; i < buf.length && i <= 4; i++) {
          len += (buf[i]! & 0x7f) * mul;
          mul *= 128;
          if (!(buf[i]! & 0x80)) break;
        }
        if (i >= buf.length || buf.length < i + 1 + len) break;
        if (buf[0]! >> 4 === 9) subscribed = true; // SUBACK
        buf = buf.subarray(i + 1 + len);
      }
    });
    a.on("data", (chunk: Buffer) => b.write(chunk));
    const drop = () => {
      a.destroy();
      b.destroy();
      if (pairs.delete(pair) && pairs.size === 0) subscribed = false;
    };
    for (const s of [a, b]) {
      s.on("error", drop);
      s.on("close", drop);
    }
  });
  return {
    server,
    subscribed: () => subscribed && pairs.size > 0,
    live: () => pairs.size,
    cut() {
      open = false;
      for (const p of [...pairs]) {
        p.a.destroy();
        p.b.destroy();
      }
      pairs.clear();
      subscribed = false;
    },
    restore() {
      open = true;
    },
  };
}

async function spawnMosquittoConf(bin: string, dir: string, port: number, lines: string[]): Promise<() => Promise<void>> {
  const conf = join(dir, `mosquitto-${port}.conf`);
  writeFileSync(conf, `${lines.join("\n")}\n`);
  const log = join(dir, `mosquitto-${port}.log`);
  const proc = Bun.spawn([bin, "-c", conf], { stdin: "ignore", stdout: "ignore", stderr: Bun.file(log), cwd: dir });
  if (!(await waitListening(port, 10_000))) {
    proc.kill("SIGKILL");
    await proc.exited;
    throw new Error(`mosquitto did not start on ${port}: ${await Bun.file(log).text()}`);
  }
  return async () => {
    proc.kill("SIGTERM");
    const t = setTimeout(() => proc.kill("SIGKILL"), 3000);
    await proc.exited;
    clearTimeout(t);
  };
}

/** two Mosquittos on free loopback ports in dir, the second bridging `${prefix}/#` both ways (QoS 1) to the first; resolves once the bridge is subscribed */
export async function startBridgedMosquittos(dir: string, o: BridgeOptions = {}): Promise<BridgedMosquittos> {
  const bin = mosquittoPath();
  if (!bin) throw new Error("mosquitto is not installed (apt-get install mosquitto); .ci/run installs it");
  mkdirSync(dir, { recursive: true });
  const prefix = o.prefix ?? "mam";
  const base = (port: number) => {
    const l = [`listener ${port} 127.0.0.1`, "allow_anonymous true", "persistence false", "log_dest stderr", "log_type error", "log_type warning"];
    if (process.getuid?.() === 0) l.push("user root");
    return l;
  };
  const p1 = await freePort();
  const stop1 = await spawnMosquittoConf(bin, dir, p1, base(p1));
  const relay = bridgeRelay(p1);
  const relayPort = await new Promise<number>((resolve, reject) => {
    relay.server.once("error", reject);
    relay.server.listen(0, "127.0.0.1", () => resolve((relay.server.address() as { port: number }).port));
  });
  const p2 = await freePort();
  const name = `mam-bridge-${p2}`;
  let stop2: () => Promise<void>;
  try {
    stop2 = await spawnMosquittoConf(bin, dir, p2, [
      ...base(p2),
      `connection ${name}`,
      `address 127.0.0.1:${relayPort}`,
      `remote_clientid ${name}`,
      `local_clientid ${name}-local`,
      `topic ${prefix}/# both 1`,
      "cleansession false",
      "try_private true",
      "notifications false",
      "start_type automatic",
      "restart_timeout 1 2",
      `keepalive_interval ${Math.max(5, o.keepalive ?? 5)}`,
    ]);
  } catch (e) {
    relay.server.close();
    await stop1();
    throw e;
  }
  const env = (port: number) => ({ MQTT_BROKER: "127.0.0.1", MQTT_PORT: String(port), MQTT_TLS: "0" });
  let stopped = false;
  const stopAll = async () => {
    if (stopped) return;
    stopped = true;
    relay.cut();
    relay.server.close();
    await Promise.all([stop1(), stop2()]);
  };
  const waitBridged = async (timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline && !relay.subscribed()) await Bun.sleep(25);
    if (!relay.subscribed()) throw new Error(`the bridge ${name} did not connect to 127.0.0.1:${p1} within ${timeoutMs} ms`);
  };
  try {
    await waitBridged(15_000);
  } catch (e) {
    await stopAll();
    throw e;
  }
  return {
    first: { host: "127.0.0.1", port: p1, env: env(p1), stop: stop1 },
    second: { host: "127.0.0.1", port: p2, env: env(p2), stop: stop2 },
    prefix,
    bridged: () => relay.subscribed(),
    async cut() {
      relay.cut();
    },
    async restore(timeoutMs = 15_000) {
      relay.restore();
      await waitBridged(timeoutMs);
    },
    stop: stopAll,
  };
}

// A RabbitMQ cluster (docs/machines.md#a-clustered-broker-rabbitmq): three nodes of Debian's
// rabbitmq-server on this machine, each with its MQTT listener on a free loopback port, clustered
// through their own epmd (on a free port, loopback only) with peer discovery from the config.
// Durable MQTT sessions are quorum queues, so a client's session survives the loss of the node it
// was on. The test owns every process: epmd runs in the foreground, and the nodes' pids come from
// their pid files.

const RABBIT_BIN = "/usr/lib/rabbitmq/bin";

/** why a RabbitMQ cluster cannot be made here, or undefined when it can */
export function rabbitMissing(): string | undefined {
  if (!existsSync(join(RABBIT_BIN, "rabbitmq-server"))) return "rabbitmq-server is not installed (apt-get install rabbitmq-server; .ci/run installs it)";
  if (!Bun.which("epmd")) return "epmd is not installed (it comes with erlang-base)";
  return undefined;
}

export interface RabbitCluster {
  /** each node's MQTT port, in order */
  ports: number[];
  /** MQTT_* variables that point mam at the nodes in this order (indexes into ports) */
  env(order: number[]): Record<string, string>;
  /** kill -9 node i (its MQTT port stops answering at once) */
  kill(i: number): Promise<void>;
  /** a node's log, for failure messages */
  log(i: number): string;
  stop(): Promise<void>;
}

export async function startRabbitCluster(dir: string, nodes = 3): Promise<RabbitCluster> {
  const missing = rabbitMissing();
  if (missing) throw new Error(missing);
  mkdirSync(join(dir, "home"), { recursive: true });
  const cookie = join(dir, "home", ".erlang.cookie");
  writeFileSync(cookie, `mamtest${Math.random().toString(36).slice(2)}`, { mode: 0o400 });
  const epmdPort = await freePort();
  const tag = Math.random().toString(36).slice(2, 8);
  const names = Array.from({ length: nodes }, (_, i) => `mam${tag}${i + 1}@localhost`);
  const ports: number[] = [];
  const common = { ...process.env, HOME: join(dir, "home"), ERL_EPMD_PORT: String(epmdPort), ERL_EPMD_ADDRESS: "127.0.0.1" } as Record<string, string>;
  const epmd = Bun.spawn([Bun.which("epmd")!, "-port", String(epmdPort), "-address", "127.0.0.1"], { stdin: "ignore", stdout: "ignore", stderr: "ignore", cwd: dir, env: common });
  const procs: ReturnType<typeof Bun.spawn>[] = [];
  const nodeDir = (i: number) => join(dir, `node${i + 1}`);
  const distPorts: number[] = [];
  for (let i = 0; i < nodes; i++) distPorts.push(await freePort());
  const nodeEnv = (i: number): Record<string, string> => ({
    ...common,
    RABBITMQ_DIST_PORT: String(distPorts[i]),
    RABBITMQ_NODENAME: names[i]!,
    RABBITMQ_CONFIG_FILE: join(nodeDir(i), "rabbitmq"),
    RABBITMQ_ADVANCED_CONFIG_FILE: join(nodeDir(i), "advanced.config"),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(nodeDir(i), "enabled_plugins"),
    RABBITMQ_MNESIA_BASE: join(nodeDir(i), "mnesia"),
    RABBITMQ_LOG_BASE: join(nodeDir(i), "log"),
    RABBITMQ_LOGS: join(nodeDir(i), "rabbit.log"),
    RABBITMQ_PID_FILE: join(nodeDir(i), "pid"),
    RABBITMQ_PLUGINS_EXPAND_DIR: join(nodeDir(i), "plugins"),
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: "-kernel inet_dist_use_interface {127,0,0,1}",
  });
  const pidOf = (i: number): number | undefined => {
    try {
      return Number(readFileSync(join(nodeDir(i), "pid"), "utf8").trim()) || undefined;
    } catch {
      return undefined;
    }
  };
  const log = (i: number) => {
    try {
      return readFileSync(join(nodeDir(i), "rabbit.log"), "utf8");
    } catch {
      return "";
    }
  };
  const stop = async () => {
    for (let i = 0; i < nodes; i++) {
      const pid = pidOf(i);
      if (pid) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
      }
    }
    for (const p of procs) p.kill("SIGKILL");
    await Promise.all(procs.map((p) => p.exited));
    epmd.kill("SIGKILL");
    await epmd.exited;
    await reap(dir); // the nodes' helpers (erl_child_setup, inet_gethost)
  };
  try {
    for (let i = 0; i < nodes; i++) {
      ports.push(await freePort());
      mkdirSync(nodeDir(i), { recursive: true });
      const conf = [
        `listeners.tcp.default = 127.0.0.1:${await freePort()}`,
        `mqtt.listeners.tcp.default = 127.0.0.1:${ports[i]}`,
        "mqtt.allow_anonymous = false",
        // a client's persistent session on a replicated queue: it outlives the node it was on
        "mqtt.durable_queue_type = quorum",
        "cluster_formation.peer_discovery_backend = classic_config",
        ...names.map((n, k) => `cluster_formation.classic_config.nodes.${k + 1} = ${n}`),
        // a node that finds none of the others up would form a cluster of its own: look for a minute
        "cluster_formation.discovery_retry_limit = 60",
        "cluster_formation.discovery_retry_interval = 1000",
        "log.file.level = info",
      ];
      writeFileSync(join(nodeDir(i), "rabbitmq.conf"), `${conf.join("\n")}\n`);
      writeFileSync(join(nodeDir(i), "enabled_plugins"), "[rabbitmq_mqtt].\n");
      procs.push(Bun.spawn([join(RABBIT_BIN, "rabbitmq-server")], { stdin: "ignore", stdout: Bun.file(join(nodeDir(i), "stdout.log")), stderr: Bun.file(join(nodeDir(i), "stderr.log")), cwd: nodeDir(i), env: nodeEnv(i) }));
      // the first node up before the others start: they join it, never a cluster of their own
      if (i === 0 && !(await waitListening(ports[0]!, 120_000))) throw new Error(`RabbitMQ node 1 did not open its MQTT port:\n${log(0).slice(-3000)}`);
    }
    for (let i = 0; i < nodes; i++) {
      if (!(await waitListening(ports[i]!, 120_000))) throw new Error(`RabbitMQ node ${i + 1} did not open its MQTT port:\n${log(i).slice(-3000)}`);
    }
    const ctl = async (args: string[]) => {
      const p = Bun.spawn([join(RABBIT_BIN, "rabbitmqctl"), "-n", names[0]!, ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe", env: nodeEnv(0) });
      const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
      if (code !== 0) throw new Error(`rabbitmqctl ${args.join(" ")} → ${code}\n${out}${err}`);
      return out;
    };
    await ctl(["await_online_nodes", String(nodes), "--timeout", "60"]);
    await ctl(["add_user", "mam", "mam-test-secret"]);
    await ctl(["set_permissions", "-p", "/", "mam", ".*", ".*", ".*"]);
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    ports,
    env: (order) => ({
      MQTT_BROKER: order.map((i) => `127.0.0.1:${ports[i]}`).join(","),
      MQTT_USERNAME: "mam",
      MQTT_PASSWORD: "mam-test-secret",
    }),
    async kill(i) {
      const pid = pidOf(i);
      if (!pid) throw new Error(`no pid for RabbitMQ node ${i + 1}`);
      process.kill(pid, "SIGKILL");
      await procs[i]!.exited;
    },
    log,
    stop,
  };
}

/** the topics under `filter` a broker on loopback `port` hands a new subscriber as retained (non-empty) messages */
export async function retainedTopics(port: number, filter: string, auth: { username: string; password: string } | Record<string, never> = {}): Promise<string[]> {
  const mqtt = await import("mqtt");
  const c = await mqtt.connectAsync({ host: "127.0.0.1", port, protocolVersion: 4, clean: true, reconnectPeriod: 0, ...auth } as never);
  const got: string[] = [];
  c.on("message", (t, p, pk) => pk.retain && p.length && got.push(t));
  await c.subscribeAsync(filter, { qos: 1 });
  await Bun.sleep(500);
  await c.endAsync();
  return got;
}
