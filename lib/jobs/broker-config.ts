// MQTT broker configuration from the environment (SPEC §7.3). No public default broker.
import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { isIP } from "node:net";
import { EXIT, MamError, usageError } from "../sys/errors.ts";
import type { Env } from "../sys/paths.ts";

export interface BrokerConfig {
  host: string;
  port: number;
  tls: boolean;
  username?: string;
  password?: string;
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  clientIdPrefix: string;
  topicPrefix: string;
}

export function brokerConfigFromEnv(env: Env = process.env): BrokerConfig {
  const tlsRaw = env.MQTT_TLS ?? "0";
  if (tlsRaw !== "0" && tlsRaw !== "1" && tlsRaw !== "") throw usageError(`MQTT_TLS must be 1 or 0 (got '${tlsRaw}')`);
  const tls = tlsRaw === "1";
  const portRaw = env.MQTT_PORT;
  let port = tls ? 8883 : 1883;
  if (portRaw !== undefined && portRaw !== "") {
    if (!/^\d+$/.test(portRaw) || Number(portRaw) < 1 || Number(portRaw) > 65535) {
      throw usageError(`MQTT_PORT must be a port number (got '${portRaw}')`);
    }
    port = Number(portRaw);
  }
  const topicPrefix = (env.MAM_MQTT_TOPIC_PREFIX || "mam/jobs").replace(/\/+$/, "");
  if (/[#+]/.test(topicPrefix)) throw usageError(`MAM_MQTT_TOPIC_PREFIX must not contain MQTT wildcards (got '${topicPrefix}')`);
  return {
    host: env.MQTT_BROKER || "127.0.0.1",
    port,
    tls,
    username: env.MQTT_USERNAME || undefined,
    password: env.MQTT_PASSWORD || undefined,
    caFile: env.MQTT_CA_CERTS || undefined,
    certFile: env.MQTT_CERTFILE || undefined,
    keyFile: env.MQTT_KEYFILE || undefined,
    clientIdPrefix: env.MQTT_CLIENT_ID_PREFIX || "mam",
    topicPrefix,
  };
}

export const eventsTopic = (cfg: BrokerConfig, jobId: string) => `${cfg.topicPrefix}/${jobId}/events`;
export const wildcardTopic = (cfg: BrokerConfig) => `${cfg.topicPrefix}/+/events`;

/** a client id of at most 23 characters (strict MQTT 3.1.1 brokers): prefix-role-hash */
export function clientId(cfg: BrokerConfig, role: string, stableKey?: string): string {
  const key = stableKey ?? `${process.pid}-${Date.now()}-${Math.random()}`;
  const h = createHash("sha256").update(key).digest("hex");
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

export const describeBroker = (cfg: BrokerConfig) => `${cfg.host}:${cfg.port}`;
