// Deliveries kept until they are received (docs/machines.md#deliveries-kept-until-received). A
// delivery is a retained message, and a broker may lose one silently: restarted without
// persistence, a cluster node that held it lost, a client queue that overflowed. So the host that
// offers one keeps what it sealed in `.mam/offers/<delivery id>` (0600, in a 0700 folder: it holds
// the job's token, as the record does), and its daemon publishes it again, the same sealed message
// on the same topic, on each new connection and every REOFFER_MS while the job's journal has no
// `received` for it. The receiver takes a delivery once (by its id), so a second copy types
// nothing. The file goes once the delivery is received, or its job has ended.
//
// What is published again is checked first, as a cloned workspace could ship `.mam/offers/`: the
// job must be this user's (its record written by this user's mam), unfinished, with an `offered`
// of that delivery in its journal; the topic is made again from that event, never read from the
// file; and the message must open with the team's key as a delivery this host sealed for that
// topic.
import { lstatSync, readdirSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import type { JobEvent } from "../jobs/event.ts";
import { atomicWriteFile } from "../sys/atomic.ts";
import { isValidName } from "../sys/names.ts";
import { ensureMamSubdir } from "../sys/mam-dir.ts";
import { mamDir } from "../sys/paths.ts";
import type { Team } from "./config.ts";
import { checkDelivery, deliveryTopic } from "./messages.ts";
import { open } from "./seal.ts";

/** how often a delivery not received yet is published again */
export const REOFFER_MS = 60_000;
/** on a new connection, what was sent (or kept) longer ago than this goes again at once */
export const REOFFER_FRESH_MS = 2_000;
/** a kept delivery whose `offered` is not journalled yet is being offered (kept first), for this long at most */
export const OFFERING_MS = 60_000;

const ID = /^[0-9a-f]{8}\.[0-9a-f]{8}$/;

const offersDir = (ws: string) => join(mamDir(ws), "offers");

/** keep what was sealed for this delivery (before it is published: a crash after that still has it) */
export function keepOffer(ws: string, deliveryId: string, sealed: string): void {
  if (!ID.test(deliveryId)) return;
  const dir = ensureMamSubdir(ws, "offers");
  atomicWriteFile(join(dir, deliveryId), sealed, { mode: 0o600, regularOnly: true });
}

/** the deliveries kept, by id (a name that is not a delivery's, or not a file, is passed over) */
export function keptOffers(ws: string): string[] {
  try {
    return readdirSync(offersDir(ws)).filter((n) => ID.test(n));
  } catch {
    return [];
  }
}

export function forgetOffer(ws: string, deliveryId: string): void {
  if (!ID.test(deliveryId)) return;
  try {
    unlinkSync(join(offersDir(ws), deliveryId));
  } catch {}
}

/** when the delivery was kept (epoch ms; 0 when the file is gone) */
export function keptAt(ws: string, deliveryId: string): number {
  try {
    return lstatSync(join(offersDir(ws), deliveryId)).mtimeMs;
  } catch {
    return 0;
  }
}

/** the kept message, when it is a regular file of reasonable size */
export function readKept(ws: string, deliveryId: string): string | undefined {
  const p = join(offersDir(ws), deliveryId);
  try {
    const st = lstatSync(p);
    if (!st.isFile() || st.size > 512 * 1024) return undefined;
    return readFileSync(p, "utf8");
  } catch {
    return undefined;
  }
}

export type KeptVerdict = { do: "forget"; why: string } | { do: "wait" } | { do: "send"; topic: string };

export interface KeptJob {
  /** undefined: no record of the job here */
  final?: boolean;
  /** why the record was not written by this user's mam; undefined: it was */
  notOwn?: string;
  events: readonly JobEvent[];
}

/**
 * (pure) what to do with a kept delivery (`kept`: when it was kept; `lastSent`: when this daemon
 * last sent it again): forget it (its job is gone, ended, not ours, or it was received), leave it
 * (being offered; sent or kept less than REOFFER_MS ago, on a new connection REOFFER_FRESH_MS), or
 * send it again on the topic its `offered` names as this host made it
 */
export function keptVerdict(deliveryId: string, job: KeptJob | undefined, tp: string, kept: number, lastSent: number | undefined, now: number, fresh: boolean): KeptVerdict {
  if (!job) return { do: "forget", why: "no record of its job" };
  if (job.notOwn) return { do: "forget", why: job.notOwn };
  if (job.final) return { do: "forget", why: "its job has ended" };
  const delivery = (e: JobEvent) => (typeof e.data?.delivery === "string" ? e.data.delivery : undefined);
  if (job.events.some((e) => e.event === "received" && delivery(e) === deliveryId)) return { do: "forget", why: "received" };
  const offered = job.events.find((e) => e.event === "offered" && e.source === "mam" && delivery(e) === deliveryId);
  // kept before it is journalled: an offer under way
  if (!offered && now - kept < OFFERING_MS) return { do: "wait" };
  const host = offered?.data?.host;
  const wsId = offered?.data?.ws_id;
  if (typeof host !== "string" || !isValidName(host) || typeof wsId !== "string" || !/^[0-9a-f]{12}$/.test(wsId)) return { do: "forget", why: "its job's journal has no offer of it" };
  if (now - (lastSent ?? kept) < (fresh ? REOFFER_FRESH_MS : REOFFER_MS)) return { do: "wait" };
  return { do: "send", topic: deliveryTopic(tp, host, wsId, deliveryId) };
}

/** (pure) the kept message is a delivery this host sealed, with this team's key, for this topic */
export function keptOpens(team: Team, me: string, deliveryId: string, topic: string, sealed: string): boolean {
  const o = open(team, sealed);
  if (!o.ok || o.envelope.from !== me || o.envelope.kind !== "deliver") return false;
  const d = checkDelivery(o.body);
  return d !== undefined && d.id === deliveryId && d.topic === topic && d.from_host === me;
}
