// MQTT broker configuration from the environment (SPEC §7.3). No public default broker.
//
// MQTT_BROKER is a host (`broker.internal`, `10.0.0.5`, `::1`), a host and port (`host:1884`,
// `[::1]:1884`) or a URL (`mqtt://host:1884`, `mqtts://host`: TLS); anything else is refused,
// never taken as a host name that cannot resolve (live delivery would quietly be off). A port or
// TLS given twice (MQTT_PORT, MQTT_TLS) must agree. Several addresses, comma-separated, are the
// nodes of one clustered broker (docs/machines.md#a-clustered-broker-rabbitmq): every connection
// takes the first that answers, the daemon goes on to the next when one is lost; they share TLS,
// credentials and client ids (one broker to mam). The password comes from MQTT_PASSWORD, else
// from the file MQTT_PASSWORD_FILE (read when mam connects; a path can pass on to agents, the
// password itself never does: lib/sys/secrets.ts).
import { readFileSync } from "node:fs";
import { sha256Hex } from "../sys/digest.ts";
import { isIP } from "node:net";
import { EXIT, MamError, usageError } from "../sys/errors.ts";
import type { Env } from "../sys/paths.ts";
import { readSecretFile } from "../sys/secrets.ts";

export interface BrokerEndpoint {
  host: string;
  port: number;
}

export interface BrokerConfig {
  /** the address connections go to (endpoints[0] unless onEndpoint picked another) */
  host: string;
  port: number;
  /** every address MQTT_BROKER names, in its order (one, unless it names a cluster's nodes) */
  endpoints: BrokerEndpoint[];
  tls: boolean;
  username?: string;
  password?: string;
  /** MQTT_PASSWORD_FILE, when MQTT_PASSWORD is not set: read at connect time */
  passwordFile?: string;
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  clientIdPrefix: string;
  topicPrefix: string;
}

const portNumber = (p: string) => /^\d{1,5}$/.test(p) && Number(p) >= 1 && Number(p) <= 65535;
const HOST_NAME = /^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?$/;

/** MQTT_BROKER taken apart (see the header); a usage error when it is none of the accepted forms */
export function parseBrokerAddress(raw: string): { host: string; port?: number; tls?: boolean } {
  const bad = (why?: string) =>
    usageError(`MQTT_BROKER must be a host, host:port or mqtt://host:port (got '${raw}')`, why ?? "for example MQTT_BROKER=broker.internal:1883, or mqtts://broker.internal for TLS");
  let rest = raw;
  let tls: boolean | undefined;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(rest);
  if (scheme) {
    const name = scheme[1]!.toLowerCase();
    if (name !== "mqtt" && name !== "mqtts") throw bad("the URL forms are mqtt:// and mqtts:// (TLS)");
    tls = name === "mqtts";
    rest = rest.slice(scheme[0].length).replace(/\/$/, "");
  }
  if (rest.includes("@")) throw bad("give the username and password in MQTT_USERNAME and MQTT_PASSWORD_FILE (or MQTT_PASSWORD), not in the address");
  if (isIP(rest) === 6 && !scheme) return { host: rest };
  let host = rest;
  let port: string | undefined;
  const v6 = /^\[([^\]]+)\](?::(.*))?$/.exec(rest);
  if (v6) {
    if (isIP(v6[1]!) !== 6) throw bad();
    host = v6[1]!;
    port = v6[2];
  } else if (rest.includes(":")) {
    const i = rest.lastIndexOf(":");
    host = rest.slice(0, i);
    port = rest.slice(i + 1);
  }
  if (!v6 && isIP(host) === 0 && !HOST_NAME.test(host)) throw bad();
  if (port !== undefined && !portNumber(port)) throw bad();
  return { host, ...(port !== undefined ? { port: Number(port) } : {}), ...(tls !== undefined ? { tls } : {}) };
}

export function brokerConfigFromEnv(env: Env = process.env): BrokerConfig {
  const raw = env.MQTT_BROKER ?? "";
  const parts = raw === "" ? [] : raw.split(",").map((p) => p.trim());
  if (parts.some((p) => p === "")) throw usageError(`MQTT_BROKER lists an empty address (got '${raw}')`, "separate the nodes' addresses with commas: host1:1883,host2:1883");
  const addresses = parts.length > 0 ? parts.map(parseBrokerAddress) : [{ host: "127.0.0.1" } as ReturnType<typeof parseBrokerAddress>];
  const tlsRaw = env.MQTT_TLS ?? "";
  if (tlsRaw !== "0" && tlsRaw !== "1" && tlsRaw !== "") throw usageError(`MQTT_TLS must be 1 or 0 (got '${tlsRaw}')`);
  const schemes = new Set(addresses.map((a) => a.tls).filter((t) => t !== undefined));
  if (schemes.size > 1) throw usageError(`MQTT_BROKER '${raw}' mixes mqtt:// and mqtts://`, "the nodes of one broker take the same scheme");
  const said = [...schemes][0];
  if (said !== undefined && tlsRaw !== "" && said !== (tlsRaw === "1")) {
    throw usageError(`MQTT_BROKER '${raw}' and MQTT_TLS=${tlsRaw} disagree about TLS`, "unset MQTT_TLS (mqtts:// means TLS, mqtt:// means none)");
  }
  const tls = said ?? tlsRaw === "1";
  const portRaw = env.MQTT_PORT;
  let common = tls ? 8883 : 1883;
  if (portRaw !== undefined && portRaw !== "") {
    if (!portNumber(portRaw)) {
      throw usageError(`MQTT_PORT must be a port number (got '${portRaw}')`);
    }
    const other = addresses.find((a) => a.port !== undefined && a.port !== Number(portRaw));
    if (other) {
      throw usageError(`MQTT_BROKER '${raw}' and MQTT_PORT=${portRaw} name different ports`, "give the port in one of them");
    }
    common = Number(portRaw);
  }
  const endpoints = addresses.map((a) => ({ host: a.host, port: a.port ?? common }));
  const seen = new Set<string>();
  for (const e of endpoints) {
    const k = describeEndpoint(e);
    if (seen.has(k)) throw usageError(`MQTT_BROKER names ${k} twice (got '${raw}')`);
    seen.add(k);
  }
  const topicPrefix = (env.MAM_MQTT_TOPIC_PREFIX || "mam/jobs").replace(/\/+$/, "");
  if (/[#+]/.test(topicPrefix)) throw usageError(`MAM_MQTT_TOPIC_PREFIX must not contain MQTT wildcards (got '${topicPrefix}')`);
  return {
    host: endpoints[0]!.host,
    port: endpoints[0]!.port,
    endpoints,
    tls,
    username: env.MQTT_USERNAME || undefined,
    password: env.MQTT_PASSWORD || undefined,
    passwordFile: env.MQTT_PASSWORD || !env.MQTT_PASSWORD_FILE ? undefined : env.MQTT_PASSWORD_FILE,
    caFile: env.MQTT_CA_CERTS || undefined,
    certFile: env.MQTT_CERTFILE || undefined,
    keyFile: env.MQTT_KEYFILE || undefined,
    clientIdPrefix: env.MQTT_CLIENT_ID_PREFIX || "mam",
    topicPrefix,
  };
}

// Job topics. A job's record names its topic (`topic_prefix`, then `/events` and `/acks`), and
// everyone who publishes on a job uses the record's, so the format is the submitter's to choose:
//   <prefix>/<host>/<ws id>/<id>   since 0.4: the workspace that submitted it (host name, 12 hex
//                                  digits of its path's hash), so that a daemon subscribes to its
//                                  own jobs' events, not to every job's on the broker
//   <prefix>/<id>                  before 0.4, and what `mam job event --token` uses where no
//                                  record of the job is (it cannot know the workspace)
// The daemon subscribes to both wildcards below, and to the topic of each copy of another host's
// job it holds (lib/ops/react/team.ts).

/** the topic of a job's events for a reporter with no record of it (`mam job event --token`) */
export const eventsTopic = (cfg: BrokerConfig, jobId: string) => `${cfg.topicPrefix}/${jobId}/events`;
/** every job's events in the pre-0.4 format (and reports by token) */
export const wildcardTopic = (cfg: BrokerConfig) => `${cfg.topicPrefix}/+/events`;

/**
 * where the workspace's new jobs' topics go: `<prefix>/<host>/<ws id>` (a record's topic_prefix
 * adds `/<id>`); `host` is a valid name (lib/team/host.ts topicHost), so never a wildcard
 */
export const jobsBase = (cfg: BrokerConfig, ws: string, host: string) => `${cfg.topicPrefix}/${host}/${sha256Hex(ws).slice(0, 12)}`;
/** the events of every job the workspace submitted since 0.4 */
export const workspaceEvents = (cfg: BrokerConfig, ws: string, host: string) => `${jobsBase(cfg, ws, host)}/+/events`;

/** a client id of at most 23 characters (strict MQTT 3.1.1 brokers): prefix-role-hash */
export function clientId(cfg: BrokerConfig, role: string, stableKey?: string): string {
  const key = stableKey ?? `${process.pid}-${Date.now()}-${Math.random()}`;
  const h = sha256Hex(key);
  const head = `${cfg.clientIdPrefix}-${role}-`.slice(0, 15);
  return (head + h).slice(0, 23);
}

function readPem(path: string, what: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    throw new MamError(`cannot read ${what} '${path}' (${(e as Error).message})`, EXIT.FAIL, `check ${what === "CA bundle" ? "MQTT_CA_CERTS" : what === "client certificate" ? "MQTT_CERTFILE" : "MQTT_KEYFILE"}`);
  }
}

export interface ConnectOptions {
  clientId: string;
  /** false = persistent session (the daemon) */
  clean: boolean;
  connectTimeoutMs: number;
  /** 0 = no automatic reconnect */
  reconnectPeriodMs: number;
}

/** MQTT.js options as an object (a URL string goes through url.parse in the compiled binary) */
export function mqttOptions(cfg: BrokerConfig, o: ConnectOptions): Record<string, unknown> {
  const opts: Record<string, unknown> = {
    protocol: cfg.tls ? "mqtts" : "mqtt",
    host: cfg.host,
    port: cfg.port,
    clientId: o.clientId,
    clean: o.clean,
    connectTimeout: o.connectTimeoutMs,
    reconnectPeriod: o.reconnectPeriodMs,
    protocolVersion: 4,
    keepalive: 30,
  };
  if (cfg.username !== undefined) opts.username = cfg.username;
  if (cfg.password !== undefined) opts.password = cfg.password;
  else if (cfg.passwordFile !== undefined) opts.password = readSecretFile(cfg.passwordFile, "MQTT_PASSWORD_FILE");
  if (cfg.tls) {
    // SNI takes host names only; for an IP the certificate's IP SAN is checked
    if (isIP(cfg.host) === 0) opts.servername = cfg.host;
    opts.rejectUnauthorized = true;
    if (cfg.caFile) opts.ca = readPem(cfg.caFile, "CA bundle");
    if (cfg.certFile) opts.cert = readPem(cfg.certFile, "client certificate");
    if (cfg.keyFile) opts.key = readPem(cfg.keyFile, "client key");
  }
  return opts;
}

export const describeEndpoint = (e: BrokerEndpoint) => `${isIP(e.host) === 6 ? `[${e.host}]` : e.host}:${e.port}`;

/** the broker as logs and errors name it: its address, or its nodes' (comma-separated) */
export const describeBroker = (cfg: BrokerConfig) => (cfg.endpoints.length > 1 ? cfg.endpoints.map(describeEndpoint).join(",") : describeEndpoint(cfg));

/** the same broker, connecting to its endpoint i (modulo their number) */
export function onEndpoint(cfg: BrokerConfig, i: number): BrokerConfig {
  const e = cfg.endpoints[((i % cfg.endpoints.length) + cfg.endpoints.length) % cfg.endpoints.length]!;
  return { ...cfg, host: e.host, port: e.port };
}
