// The daemon's side of its broker connection: connect (./broker-link.ts), or poll and retry every
// retryMs; hand each message to the event hook (its PUBACK waits for it); and hold the link for
// the hooks' publishes, queueing what they publish while a connection is being set up. A broker
// of several nodes (MQTT_BROKER a comma-separated list): a node that does not answer, or whose
// connection is lost (after retryMs at least), is followed at once by the next; a whole round
// that fails waits retryMs.
import { type BrokerConfig, describeBroker, describeEndpoint, onEndpoint } from "../jobs/broker-config.ts";
import type { Env } from "../sys/paths.ts";
import type { BrokerLink } from "./broker-link.ts";
import type { Activity } from "./clocks.ts";
import type { HookRunner } from "./hook-runner.ts";
import { type Life, pause } from "./life.ts";
import type { ModeFile } from "./lock.ts";
import type { DaemonHooks, DaemonTimings } from "./options.ts";

/** the link while there is one, and what hooks publish while it is being set up */
export interface LinkHolder {
  link?: BrokerLink;
  /** true while a connection is being set up; what is published meanwhile waits in `queued` */
  connecting: boolean;
  queued: { topic: string; payload: string; retain?: boolean }[];
  /** HookContext.publish */
  publish(topic: string, payload: string, po?: { retain?: boolean }): Promise<boolean>;
  /** HookContext.settled */
  settled(): Promise<void>;
  /** HookContext.subscribe, HookContext.unsubscribe */
  subscribe(topics: string[]): void;
  unsubscribe(topics: string[]): void;
}

export function linkHolder(life: Life, connectTimeoutMs: number): LinkHolder {
  const h: LinkHolder = {
    connecting: false,
    queued: [],
    // fire and forget: an event hook runs inside MQTT.js's message handling, so awaiting a
    // PUBACK here would wait behind our own unfinished message (and starve keep-alives)
    publish: async (topic, payload, po) => {
      // a message handled while the connection is being set up (the broker sends what it
      // kept for us before it acknowledges the subscription) publishes once it is
      if (!h.link && h.connecting) {
        h.queued.push({ topic, payload, retain: po?.retain });
        return true;
      }
      if (!h.link) return false;
      void h.link.publish(topic, payload, po?.retain).then((ok) => ok || life.debug(`publish on ${topic} failed`));
      return true;
    },
    settled: async () => {
      const end = Date.now() + connectTimeoutMs + 1000;
      while (h.connecting && !life.signal.aborted && Date.now() < end) await pause(10, life.signal);
    },
    // not awaited either (the SUBACK comes behind the message being handled); without a link, the
    // next connection subscribes to what the hooks' linkExtras name then
    subscribe: (topics) => void h.link?.subscribe(topics).then((ok) => ok || life.log(`MQTT Monitor: could not subscribe to ${topics.join(", ")}`)),
    unsubscribe: (topics) => void h.link?.unsubscribe(topics).then((ok) => ok || life.debug(`unsubscribe from ${topics.join(", ")} failed`)),
  };
  return h;
}

/** what the broker loop needs of the daemon */
interface BrokerParts {
  cfg: BrokerConfig;
  ws: string;
  env: Env;
  hooks: DaemonHooks;
  t: DaemonTimings;
  life: Life;
  runner: HookRunner;
  holder: LinkHolder;
  mode: ModeFile;
  activity: Activity;
}

/** connect, and after each connection lost (or none made) poll and retry every retryMs, until the daemon ends */
export async function brokerLoop(p: BrokerParts): Promise<void> {
  const { openBrokerLink, reasonOf } = await import("./broker-link.ts");
  const { life, holder, mode, t } = p;
  const broker = describeBroker(p.cfg);
  const nodes = p.cfg.endpoints.length;
  const onMessage = (topic: string, payload: Buffer) => handleMessage(p, topic, payload);
  let lastFailure: string | undefined;
  /** the node to try next, and why each one tried since the last connection failed */
  let at = 0;
  let failures: string[] = [];
  while (!life.signal.aborted) {
    const cfg = onEndpoint(p.cfg, at);
    let link: BrokerLink;
    try {
      holder.connecting = true;
      link = holder.link = await openBrokerLink(cfg, p.ws, onMessage, t.connectTimeoutMs, life.signal, p.hooks.linkExtras?.(), p.env);
    } catch (e) {
      holder.connecting = false;
      holder.queued.length = 0; // the events are journalled: the next connection sends them (acks)
      if (life.signal.aborted) return;
      at = (at + 1) % nodes;
      failures.push(nodes > 1 ? `${describeEndpoint(cfg)}: ${reasonOf(e)}` : reasonOf(e));
      if (failures.length < nodes) continue; // the next node, at once
      const why = failures.join("; ");
      failures = [];
      if (mode.current !== "polling") {
        life.log(`MQTT Monitor: broker ${broker} unreachable (${why}); falling back to polling`);
        mode.set("polling");
      } else if (why !== lastFailure) {
        life.log(`MQTT Monitor: broker ${broker} still unreachable (${why}); retrying every ${t.retryMs / 1000} s`);
      }
      lastFailure = why;
      await pause(t.retryMs, life.signal);
      continue;
    }
    failures = [];
    holder.connecting = false;
    if (life.signal.aborted) {
      await link.close(200);
      holder.link = undefined;
      return;
    }
    linkUp(p, link, nodes > 1 ? describeEndpoint(cfg) : undefined);
    const upAt = Date.now();
    lastFailure = undefined;
    const why = await Promise.race([link.closed, life.stopped.then(() => undefined)]);
    if (why === undefined || life.signal.aborted) return;
    holder.link = undefined;
    if (nodes > 1) life.log(`MQTT Monitor: lost the broker's node ${describeEndpoint(cfg)} (${why}); falling back to polling until another node answers`);
    else life.log(`MQTT Monitor: lost the broker ${broker} (${why}); falling back to polling`);
    mode.set("polling");
    lastFailure = why;
    if (nodes > 1) {
      at = (at + 1) % nodes;
      // the next node at once, unless this connection hardly lasted (a node that takes a client
      // and drops it, or another client with our id): never a tight loop
      if (Date.now() - upAt >= t.retryMs) continue;
    }
    await pause(t.retryMs, life.signal);
  }
}

/** a connection is up: what was published meanwhile goes out, the mode is mqtt, and the hooks hear of it */
function linkUp(p: BrokerParts, link: BrokerLink, node?: string): void {
  for (const q of p.holder.queued.splice(0)) void link.publish(q.topic, q.payload, q.retain).then((ok) => ok || p.life.debug(`publish on ${q.topic} failed`));
  const wasPolling = p.mode.current === "polling";
  p.mode.set("mqtt");
  p.life.log(`MQTT Monitor: subscribed to ${link.topic}${node ? ` on node ${node}` : ""}`);
  if (wasPolling) void p.runner.run("reconcile", (ctx) => p.hooks.reconcile(ctx));
  const connected = p.hooks.connected;
  if (connected) void p.runner.run("connected", (ctx) => connected(ctx));
}

/** one message on a subscribed topic: the event hook, the daemon counted busy meanwhile */
async function handleMessage(p: BrokerParts, topic: string, payload: Buffer): Promise<void> {
  const a = p.activity;
  a.last = Date.now();
  a.inFlight++;
  if (topic.endsWith("/events")) a.received.events++;
  else a.received.other++;
  try {
    await p.runner.run("event", (ctx) => p.hooks.onEvent(topic, payload, ctx));
  } finally {
    a.inFlight--;
    a.last = Date.now();
  }
}
