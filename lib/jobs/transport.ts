// MQTT transport for job events (SPEC §7.3): one-shot QoS 1 publishes (not retained, no
// automatic reconnect, short connect timeout) and a per-job subscription for `job wait`.
// mqtt is imported inside the functions: light commands never load it.
import type { MqttClient } from "mqtt";
import { type BrokerConfig, clientId, describeBroker, mqttOptions, onEndpoint } from "./broker-config.ts";

export const PUBLISH_CONNECT_TIMEOUT_MS = 3000;

export type PublishResult = { ok: true } | { ok: false; reason: string };

function reasonOf(e: unknown): string {
  const o = e as { code?: unknown; message?: unknown };
  if (typeof o?.code === "string") return o.code;
  return String(o?.message ?? e).split("\n")[0]!.slice(0, 200);
}

/**
 * connect once, without retries, to the first of the broker's addresses that answers (each within
 * timeoutMs; a cluster's nodes in MQTT_BROKER's order); rejects with the last one's reason
 */
export async function connectOnce(cfg: BrokerConfig, role: string, timeoutMs: number, opts: { clean?: boolean; stableKey?: string } = {}): Promise<MqttClient> {
  let last: unknown;
  for (let i = 0; i < cfg.endpoints.length; i++) {
    try {
      return await connectTo(onEndpoint(cfg, i), role, timeoutMs, opts);
    } catch (e) {
      last = e;
    }
  }
  throw last;
}

async function connectTo(cfg: BrokerConfig, role: string, timeoutMs: number, opts: { clean?: boolean; stableKey?: string }): Promise<MqttClient> {
  const [mqtt, { guardIncoming }] = await Promise.all([import("mqtt"), import("./packet-guard.ts")]);
  const o = mqttOptions(cfg, { clientId: clientId(cfg, role, opts.stableKey), clean: opts.clean ?? true, connectTimeoutMs: timeoutMs, reconnectPeriodMs: 0 });
  // a message above the event size limit is never held in memory (packet-guard.ts)
  const client = mqtt.connect({ ...o, manualConnect: true } as never);
  guardIncoming(client);
  client.connect();
  return await new Promise<MqttClient>((resolve, reject) => {
    let done = false;
    const fail = (e: unknown) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      client.end(true);
      reject(e);
    };
    // mqtt.js's own connectTimeout does not always fire for TLS handshakes that stall
    const timer = setTimeout(() => fail(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs + 500);
    client.once("connect", () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(client);
    });
    client.once("error", fail);
    client.once("close", () => fail(new Error("connection closed")));
  });
}

/** a message to publish (QoS 1); retained only when asked (team presence and deliveries) */
export interface Outgoing {
  topic: string;
  payload: string;
  retain?: boolean;
}

/** publish payloads to their topics over one connection (QoS 1), in order */
export async function publishAll(cfg: BrokerConfig, items: Outgoing[], timeoutMs = PUBLISH_CONNECT_TIMEOUT_MS): Promise<PublishResult> {
  if (items.length === 0) return { ok: true };
  let client: MqttClient;
  try {
    client = await connectOnce(cfg, "pub", timeoutMs);
  } catch (e) {
    return { ok: false, reason: `broker ${describeBroker(cfg)} unreachable (${reasonOf(e)})` };
  }
  return sendAndEnd(cfg, client, items, timeoutMs);
}

/**
 * how long a report waits, after the SUBACK, for the retained ack of its job. Mosquitto writes the
 * retained message right after the SUBACK, but Nagle holds it until our delayed TCP ACK (~40 ms).
 */
export const ACK_GRACE_MS = 100;

/**
 * A report from a worker without the job's record (another machine): connect, read the job's
 * retained ack (subscribe to ackTopic; it comes right after the SUBACK, or there is none), then
 * publish on `topic` the payloads `pick` chooses for that ack (undefined: none arrived), in order.
 */
export async function publishReport(
  cfg: BrokerConfig,
  topic: string,
  ackTopic: string,
  pick: (ack: Buffer | undefined) => string[],
  timeoutMs = PUBLISH_CONNECT_TIMEOUT_MS,
): Promise<PublishResult> {
  let client: MqttClient;
  try {
    client = await connectOnce(cfg, "pub", timeoutMs);
  } catch (e) {
    return { ok: false, reason: `broker ${describeBroker(cfg)} unreachable (${reasonOf(e)})` };
  }
  let ack: Buffer | undefined;
  let arrived: () => void = () => {};
  const got = new Promise<void>((r) => (arrived = r));
  client.on("message", (t, p) => {
    if (t !== ackTopic) return;
    ack = p;
    arrived();
  });
  try {
    await withTimeout(client.subscribeAsync(ackTopic, { qos: 1 }), timeoutMs, "no SUBACK");
    // at the deadline, one more turn for I/O already received (a busy machine runs the timer first)
    await Promise.race([got, new Promise((r) => setTimeout(() => setImmediate(r), ACK_GRACE_MS))]);
  } catch {
    // a broker that refuses the subscription (ACLs) still takes the events: resend as without acks
  }
  return sendAndEnd(cfg, client, pick(ack).map((payload) => ({ topic, payload })), timeoutMs);
}

async function sendAndEnd(cfg: BrokerConfig, client: MqttClient, items: Outgoing[], timeoutMs: number): Promise<PublishResult> {
  try {
    // pipelined: all in flight at once over the one connection (sent, and delivered, in order),
    // so a batch costs one round trip, not one per item
    await withTimeout(Promise.all(items.map((it) => client.publishAsync(it.topic, it.payload, { qos: 1, retain: it.retain === true }))), timeoutMs, "no PUBACK");
    return { ok: true };
  } catch (e) {
    return { ok: false, reason: `publish to ${describeBroker(cfg)} failed (${reasonOf(e)})` };
  } finally {
    await withTimeout(client.endAsync(), 1000, "end").catch(() => client.end(true));
  }
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

export interface Subscription {
  close(): Promise<void>;
}

/**
 * Subscribe to topics (QoS 1) and hand every message to onMessage. Resolves undefined when no
 * broker answers (the caller carries on from the journals); never throws for broker trouble.
 */
export async function subscribeTopics(
  cfg: BrokerConfig,
  topics: string[],
  onMessage: (topic: string, payload: Buffer) => void,
  timeoutMs = PUBLISH_CONNECT_TIMEOUT_MS,
): Promise<Subscription | undefined> {
  let client: MqttClient;
  try {
    client = await connectOnce(cfg, "wait", timeoutMs);
  } catch {
    return undefined;
  }
  // whatever a message does to the handler, the subscription stays (a throw here would end it)
  client.on("message", (t, p) => {
    try {
      onMessage(t, p);
    } catch {}
  });
  client.on("error", () => {});
  try {
    await withTimeout(client.subscribeAsync(topics, { qos: 1 }), timeoutMs, "no SUBACK");
  } catch {
    client.end(true);
    return undefined;
  }
  return {
    async close() {
      await withTimeout(client.endAsync(), 1000, "end").catch(() => client.end(true));
    },
  };
}

/**
 * The retained messages under `topics` (wildcards allowed), read once. The broker sends a
 * subscription's retained messages before anything published after the SUBACK, so with `marker`
 * (a topic of our own, not retained) the end is known exactly: we publish on it and stop when it
 * comes back. Without one, or when it never comes back (an ACL), we stop once the broker has been
 * quiet for `quietMs`, at most `maxMs`. undefined when no broker answers.
 */
export async function readRetained(
  cfg: BrokerConfig,
  topics: string[],
  o: RetainedOptions = {},
): Promise<Map<string, Buffer> | undefined> {
  return (await readThen(cfg, topics, o))?.got;
}

/**
 * readRetained, then publish on the same connection what `reply` makes of what was read (QoS 1, in
 * order, PUBACKs awaited): a path to the broker that has just worked, not an older connection that
 * a cut network may have left stalled. undefined when no broker answers; `sent` says whether the
 * replies went out.
 */
export async function readRetainedAndReply(
  cfg: BrokerConfig,
  topics: string[],
  reply: (got: Map<string, Buffer>) => Outgoing[],
  o: RetainedOptions = {},
): Promise<{ got: Map<string, Buffer>; sent: PublishResult } | undefined> {
  return readThen(cfg, topics, o, reply);
}

interface RetainedOptions {
  marker?: string;
  quietMs?: number;
  maxMs?: number;
  timeoutMs?: number;
}

async function readThen(
  cfg: BrokerConfig,
  topics: string[],
  o: RetainedOptions,
  reply?: (got: Map<string, Buffer>) => Outgoing[],
): Promise<{ got: Map<string, Buffer>; sent: PublishResult } | undefined> {
  const quietMs = o.quietMs ?? 150;
  const maxMs = o.maxMs ?? 2000;
  const timeoutMs = o.timeoutMs ?? PUBLISH_CONNECT_TIMEOUT_MS;
  let client: MqttClient;
  try {
    client = await connectOnce(cfg, "read", timeoutMs);
  } catch {
    return undefined;
  }
  const got = new Map<string, Buffer>();
  let last = Date.now();
  let markerBack = false;
  client.on("message", (t, p, packet) => {
    if (o.marker !== undefined && t === o.marker) {
      markerBack = true;
      return;
    }
    if (!(packet as { retain?: boolean }).retain) return;
    last = Date.now();
    if (p.length === 0) got.delete(t);
    else got.set(t, p);
  });
  client.on("error", () => {});
  try {
    await withTimeout(client.subscribeAsync(o.marker !== undefined ? [...topics, o.marker] : topics, { qos: 1 }), timeoutMs, "no SUBACK");
    last = Date.now();
    if (o.marker !== undefined) void client.publishAsync(o.marker, "sync", { qos: 0, retain: false }).catch(() => {});
    const end = Date.now() + maxMs;
    while (Date.now() < end && !markerBack && (o.marker !== undefined || Date.now() - last < quietMs)) {
      await new Promise((r) => setTimeout(r, 5));
      // a marker that does not come back within quietMs of the last message: fall back to quiet
      if (o.marker !== undefined && Date.now() - last >= Math.max(quietMs, 500)) break;
    }
  } catch {
    await withTimeout(client.endAsync(), 1000, "end").catch(() => client.end(true));
    return undefined;
  }
  if (!reply) {
    await withTimeout(client.endAsync(), 1000, "end").catch(() => client.end(true));
    return { got, sent: { ok: true } };
  }
  let items: Outgoing[];
  try {
    items = reply(got);
  } catch (e) {
    await withTimeout(client.endAsync(), 1000, "end").catch(() => client.end(true));
    throw e;
  }
  return { got, sent: await sendAndEnd(cfg, client, items, timeoutMs) };
}
