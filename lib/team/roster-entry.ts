// One retained (or heard) message of the team's roster, opened and checked (pure): a workspace's
// presence or its online state, sealed by the host it names, for the topic it came on. The roster
// keeps the newest of each (`newer`): a presence by its time, an online state by onlineOrder.
import type { Team } from "./config.ts";
import { checkOnline, checkPresence, type Online, onlineOrder, onlineTopic, type Presence, presenceTopic, sameTopic } from "./messages.ts";
import { open } from "./seal.ts";

export type RosterEntry = { what: "presence"; key: string; presence: Presence } | { what: "online"; key: string; online: Online };

/** the message on `topic` as a roster entry, or undefined when it is not one (another team's, a forgery, a copy from another topic) */
export function rosterEntry(t: Team, tp: string, topic: string, payload: string | Uint8Array): RosterEntry | undefined {
  const o = open(t, payload);
  if (!o.ok) return undefined;
  // the workspace it speaks for is in the sealed body; the topic must be that workspace's (read
  // as sameTopic reads it: RabbitMQ hands back a host name's '.' as '/')
  const b = o.body as { host?: unknown; ws_id?: unknown } | null;
  const host = b?.host;
  const wsId = b?.ws_id;
  if (typeof host !== "string" || typeof wsId !== "string" || o.envelope.from !== host) return undefined;
  const key = `${host}/${wsId}`;
  if (o.envelope.kind === "online" && sameTopic(topic, onlineTopic(tp, host, wsId))) {
    // bound to its topic: a copy from another workspace's (or an older mam's) is not counted
    const on = checkOnline(o.body, host, wsId);
    return on ? { what: "online", key, online: on } : undefined;
  }
  if (o.envelope.kind === "presence" && sameTopic(topic, presenceTopic(tp, host, wsId))) {
    const p = checkPresence(o.body);
    return p && p.host === host && p.ws_id === wsId ? { what: "presence", key, presence: p } : undefined;
  }
  return undefined;
}

/** is `a` newer than `b` (the same topic's)? */
export function newer(a: RosterEntry, b: RosterEntry): boolean {
  if (a.what === "presence" && b.what === "presence") return a.presence.at > b.presence.at;
  if (a.what === "online" && b.what === "online") return onlineOrder(a.online) > onlineOrder(b.online);
  return false;
}
