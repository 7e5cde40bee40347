// The daemon's one connection to the broker: connect with a persistent session (clean:false,
// a client id stable per workspace), subscribe at QoS 1 to the events of the workspace's jobs
// (<prefix>/<host>/<ws id>/+/events, and <prefix>/+/events: older jobs and reports by token, see
// lib/jobs/broker-config.ts) and to what the hooks add (a team's), and hand every
// message to a handler before it is acknowledged (PUBACK after the handler returns, so an event
// the daemon had no time to journal is redelivered). No automatic reconnect: the daemon decides
// when to retry (MAM_BROKER_RETRY_S). mqtt is imported here, lazily, never by light commands.
//
// The client id is stable but not guessable (issue 23, R4): a broker closes the older of two
// connections with one id, so anyone who could compute it from the workspace's path could kick the
// daemon off (and, with clean:false, take its queued events). It is derived from a random key made
// on first use and kept 0600 under mam's per-user state (never in .mam/, which a workspace can ship).
import type { MqttClient } from "mqtt";
import { randomBytes, sha256Hex } from "../sys/digest.ts";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type BrokerConfig, clientId, mqttOptions, wildcardTopic, workspaceEvents } from "../jobs/broker-config.ts";
import { atomicWriteFile } from "../sys/atomic.ts";
import { topicHost } from "../team/host.ts";
import { type Env, stateDir } from "../sys/paths.ts";
import type { LinkExtras } from "../ops/react/context.ts";

export interface BrokerLink {
  /** what it subscribed to at connect, for the log */
  topic: string;
  /** the broker kept our session (subscription and queued events) */
  sessionPresent: boolean;
  /** resolves with the reason once the connection is gone */
  closed: Promise<string>;
  /** disconnect; resolves within timeoutMs whatever the broker does */
  close(timeoutMs?: number): Promise<void>;
  /** publish at QoS 1 (not retained unless asked) on this connection; false when it failed */
  publish(topic: string, payload: string, retain?: boolean): Promise<boolean>;
  /** subscribe at QoS 1 to more topics, or drop them; false when the broker refused or did not answer */
  subscribe(topics: string[]): Promise<boolean>;
  unsubscribe(topics: string[]): Promise<boolean>;
}


export type MessageHandler = (topic: string, payload: Buffer) => Promise<void>;

/** where the key of a workspace's daemon client id is kept */
export const daemonKeyPath = (ws: string, env: Env) => join(stateDir(env), "daemon-ids", sha256Hex(ws).slice(0, 16));

/**
 * the random key of the workspace's daemon client id, made on first use (32 hex digits, 0600); a
 * key that cannot be kept (no home, a read-only one) serves this run only (the broker then keeps
 * no session across restarts)
 */
export function daemonClientKey(ws: string, env: Env): string {
  const key = randomBytes(16).toString("hex");
  let path: string;
  try {
    path = daemonKeyPath(ws, env);
  } catch {
    return key; // no home to keep it in
  }
  try {
    const kept = readFileSync(path, "utf8").trim();
    if (/^[0-9a-f]{32}$/.test(kept)) return kept;
  } catch {}
  try {
    mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 });
    atomicWriteFile(path, `${key}\n`, { mode: 0o600 });
  } catch {}
  return key;
}

/** the daemon's client id: the same for every daemon of one workspace and user, ≤ 23 characters, not derivable from the path */
export const daemonClientId = (cfg: BrokerConfig, ws: string, env: Env) => clientId(cfg, "mon", `monitor:${daemonClientKey(ws, env)}`);

export function reasonOf(e: unknown): string {
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    const msg = e.message || String(code ?? "error");
    return typeof code === "string" && !msg.includes(code) ? `${code}: ${msg}` : msg;
  }
  return String(e);
}

function endClient(c: MqttClient, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      try {
        c.end(true);
      } catch {}
      resolve();
    }, timeoutMs);
    try {
      c.end(false, {}, () => {
        clearTimeout(t);
        resolve();
      });
    } catch {
      clearTimeout(t);
      resolve();
    }
  });
}

/**
 * Connect and subscribe within timeoutMs, or reject with the reason. `signal` aborts the attempt
 * at once (the daemon is stopping).
 */
export async function openBrokerLink(
  cfg: BrokerConfig,
  ws: string,
  onMessage: MessageHandler,
  timeoutMs: number,
  signal: AbortSignal,
  extras?: LinkExtras,
  env: Env = process.env,
): Promise<BrokerLink> {
  const own = [wildcardTopic(cfg), workspaceEvents(cfg, ws, topicHost(env))];
  const topics = [...own, ...(extras?.topics ?? [])];
  const opts = mqttOptions(cfg, { clientId: daemonClientId(cfg, ws, env), clean: false, connectTimeoutMs: timeoutMs, reconnectPeriodMs: 0 });
  if (extras?.will) opts.will = { topic: extras.will.topic, payload: Buffer.from(extras.will.payload), qos: 1, retain: true };
  if (signal.aborted) throw new Error("stopping");
  const [mqtt, { guardIncoming }] = await Promise.all([import("mqtt"), import("../jobs/packet-guard.ts")]);
  // a message above the event size limit is never held in memory (packet-guard.ts)
  const client = mqtt.connect({ ...opts, manualConnect: true } as never);
  guardIncoming(client);
  client.connect();
  // PUBACK only once the handler is done; a failing handler is the handler's business to log
  client.handleMessage = (packet, done) => {
    const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
    onMessage(packet.topic, payload).then(
      () => done(),
      () => done(),
    );
  };
  let lastError: unknown;
  let closedResolve: (r: string) => void = () => {};
  const closed = new Promise<string>((r) => (closedResolve = r));
  client.on("error", (e) => {
    lastError = e;
  });
  client.on("close", () => closedResolve(lastError === undefined ? "connection closed" : reasonOf(lastError)));

  let sessionPresent = false;
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
      const onAbort = () => reject(new Error("stopping"));
      signal.addEventListener("abort", onAbort, { once: true });
      const settle = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
      };
      client.once("connect", (connack) => {
        sessionPresent = !!connack.sessionPresent;
        client.subscribeAsync(topics, { qos: 1 }).then(
          (granted) => {
            settle();
            const refused = granted.find((g) => g.qos === 128);
            if (refused) reject(new Error(`the broker refused the subscription to ${refused.topic}`));
            else resolve();
          },
          (e) => {
            settle();
            reject(e);
          },
        );
      });
      closed.then((why) => {
        settle();
        reject(lastError ?? new Error(why));
      });
    });
  } catch (e) {
    await endClient(client, 200);
    throw e;
  }
  return {
    topic: own.join(" and "),
    sessionPresent,
    closed,
    close: (timeoutMs = 500) => endClient(client, timeoutMs),
    publish: (t, payload, retain = false) =>
      client.publishAsync(t, payload, { qos: 1, retain }).then(
        () => true,
        () => false,
      ),
    subscribe: (more) =>
      more.length === 0
        ? Promise.resolve(true)
        : client.subscribeAsync(more, { qos: 1 }).then(
            (granted) => !granted.some((g) => g.qos === 128),
            () => false,
          ),
    unsubscribe: (less) =>
      less.length === 0
        ? Promise.resolve(true)
        : client.unsubscribeAsync(less).then(
            () => true,
            () => false,
          ),
  };
}
