// What the machines of a team tell each other (docs/machines.md), always sealed with the team key
// (seal.ts), on topics under the team's prefix:
//
//   <tp>/presence/<host>/<ws id>      retained: a workspace's agents (name, kind, role, LIVE, job)
//   <tp>/online/<host>/<ws id>        retained: online, or offline (the daemon's last will)
//   <tp>/deliver/<host>/<ws id>/<id>  retained until received: a job (or a loop's review or
//                                     feedback) for an agent of that workspace, with the job's
//                                     record and token, so that its agent reports with it
//
// <tp> is MAM_TEAM_TOPIC_PREFIX, else mam/team/<team>. A workspace is known by an id made from
// its path (it appears in topics; the path itself only inside sealed messages). Session names in
// a shipped job record are global: `name@host` for every session (the receiving host strips its
// own name when it looks one up).
import { randomBytes, sha256Hex } from "../sys/digest.ts";
import type { JobRecord } from "../jobs/store.ts";
import { usageError } from "../sys/errors.ts";
import { isValidJobId, isValidName } from "../sys/names.ts";
import type { Env } from "../sys/paths.ts";
import type { Team } from "./config.ts";

export function teamPrefix(t: Team, env: Env): string {
  const p = (env.MAM_TEAM_TOPIC_PREFIX || `mam/team/${t.team}`).replace(/\/+$/, "");
  if (/[#+]/.test(p)) throw usageError(`MAM_TEAM_TOPIC_PREFIX must not contain MQTT wildcards (got '${p}')`);
  return p;
}

/** a workspace's id in topics: 12 hex digits of the hash of its path */
export const workspaceId = (ws: string): string => sha256Hex(ws).slice(0, 12);

export const presenceTopic = (tp: string, host: string, wsId: string) => `${tp}/presence/${host}/${wsId}`;
export const onlineTopic = (tp: string, host: string, wsId: string) => `${tp}/online/${host}/${wsId}`;
export const deliveryTopic = (tp: string, host: string, wsId: string, id: string) => `${tp}/deliver/${host}/${wsId}/${id}`;
/** a topic of one reader's own (not retained): the end of the retained messages it subscribed to */
export const syncTopic = (tp: string) => `${tp}/sync/${randomBytes(6).toString("hex")}`;
/** a workspace's deliveries: `#`, not `+`, for RabbitMQ, where a delivery id's '.' makes two levels (sameTopic) */
export const deliveriesOf = (tp: string, host: string, wsId: string) => `${tp}/deliver/${host}/${wsId}/#`;

/**
 * is `got` (a topic a message came on) the topic `want`? RabbitMQ's MQTT plugin (3.x) routes on
 * AMQP routing keys, whose separator is '.': it hands a topic back with each '.' turned into
 * '/' (and a '+' in a subscription matches no '.'-separated part). mam puts '.' in delivery ids
 * and allows it in host names, so a topic is compared with '.' read as '/'. `want` is always made
 * from trusted parts of a fixed shape; no two of those differ only there.
 */
export const sameTopic = (got: string, want: string): boolean => got === want || got.replaceAll(".", "/") === want.replaceAll(".", "/");
/** is `got` under `prefix` (which ends with '/'), read as sameTopic reads it? */
export const underTopic = (got: string, prefix: string): boolean => got.startsWith(prefix) || got.replaceAll(".", "/").startsWith(prefix.replaceAll(".", "/"));

/**
 * what this mam speaks to the team, in its presence: 2 since job topics are per workspace (an
 * older mam, which says none, is 1: it hears only <prefix>/+/events, so the events this host
 * publishes on its jobs would not reach it). A workspace that speaks less is not sent jobs
 * (findRemote); `mam status --fleet` says who to upgrade
 */
export const TEAM_PROTOCOL = 2;
/** the protocol a presence says, 1 when it says none */
export const protocolOf = (p: Pick<Presence, "protocol">): number => p.protocol ?? 1;

export interface PresenceAgent {
  name: string;
  agent: string | null;
  role: string | null;
  status: string;
  live: string;
  job: { id: string; status: string } | null;
}

export interface Presence {
  host: string;
  workspace: string;
  ws_id: string;
  /** epoch ms of this snapshot */
  at: number;
  /** epoch ms: when the connection that announced it began (Online.since) */
  since?: number;
  /** TEAM_PROTOCOL of the mam that announced it; none before 0.4 */
  protocol?: number;
  agents: PresenceAgent[];
}

export interface Online {
  online: boolean;
  /** epoch ms: when it was sealed */
  at: number;
  /** the host and workspace it speaks for: a copy on another workspace's topic is ignored (review T6) */
  host: string;
  ws_id: string;
  /**
   * epoch ms: when the daemon's connection that says it began (the will, sealed at connect, names
   * it too). Orders a workspace's online states: a later connection's win, and of one connection
   * the offline; a replayed older one changes nothing (onlineOrder)
   */
  since: number;
}

/** the online state of a message on `<tp>/online/<host>/<wsId>`, when it is one and speaks for that topic */
export function checkOnline(v: unknown, host: string, wsId: string): Online | undefined {
  if (!isObj(v) || typeof v.online !== "boolean" || typeof v.at !== "number" || typeof v.since !== "number" || !Number.isFinite(v.since)) return undefined;
  if (v.host !== host || v.ws_id !== wsId) return undefined;
  return { online: v.online, at: v.at, host, ws_id: wsId, since: v.since };
}

/** the order of a workspace's online states: a larger one is newer (see Online.since) */
export const onlineOrder = (o: Pick<Online, "since" | "online">): number => o.since * 2 + (o.online ? 0 : 1);

/**
 * a workspace's online state as a reader of the retained messages judges it (pure): an online
 * state older than its presence's connection (a replayed `offline`, review T6) says nothing, the
 * presence does: that connection announced it and its will has not fired
 */
export function onlineNow(on: Online | undefined, p: Pick<Presence, "since">): boolean {
  if (!on) return false;
  if (p.since !== undefined && on.since < p.since) return true;
  return on.online;
}

export type Purpose = "job" | "review" | "feedback";

/** a text for an agent on another host, with the job it is about */
export interface Delivery {
  /** unique: `<job id>.<n>` */
  id: string;
  /** the job's record, token included, names global (name@host) */
  job: JobRecord;
  /** the session it is for, as the sender names it (name@host) */
  to: string;
  purpose: Purpose;
  /** review: the worker's detail; feedback: the reviewer's */
  detail?: string;
  iteration?: number;
  /** the host that sends it (the job's delegator) */
  from_host: string;
  /** epoch seconds after which it is not delivered any more (the job has timed out) */
  deadline: number;
  /**
   * the workspace it is for (workspaceId) and the topic it is published on: sealed in, so that a
   * broker user cannot move it to another workspace of its host (security review T4). A delivery
   * without them (an older mam) is refused: the team runs one version.
   */
  ws_id: string;
  topic: string;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export function checkPresence(v: unknown): Presence | undefined {
  if (!isObj(v) || typeof v.host !== "string" || !isValidName(v.host) || typeof v.workspace !== "string" || typeof v.ws_id !== "string") return undefined;
  if (typeof v.at !== "number" || !Array.isArray(v.agents)) return undefined;
  const agents = v.agents.filter((a): a is PresenceAgent => isObj(a) && typeof a.name === "string" && typeof a.status === "string" && typeof a.live === "string");
  const protocol = typeof v.protocol === "number" && Number.isSafeInteger(v.protocol) && v.protocol >= 1 ? { protocol: v.protocol } : {};
  return { host: v.host, workspace: v.workspace, ws_id: v.ws_id, at: v.at, ...(typeof v.since === "number" ? { since: v.since } : {}), ...protocol, agents };
}

export function checkDelivery(v: unknown): Delivery | undefined {
  if (!isObj(v) || typeof v.id !== "string" || typeof v.to !== "string" || typeof v.from_host !== "string" || typeof v.deadline !== "number") return undefined;
  if (v.purpose !== "job" && v.purpose !== "review" && v.purpose !== "feedback") return undefined;
  const job = v.job as JobRecord | undefined;
  if (!isObj(job) || typeof job.job_id !== "string" || !isValidJobId(job.job_id) || typeof job.auth_token !== "string" || typeof job.agent_session !== "string") return undefined;
  if (!v.id.startsWith(`${job.job_id}.`)) return undefined;
  return v as unknown as Delivery;
}

/** a session name as the other hosts see it: `name@host` (already global names stay) */
export const globalName = (name: string, host: string): string => (name.includes("@") ? name : `${name}@${host}`);

/** the record as it is shipped: every session name global */
export function globalRecord(r: JobRecord, host: string): JobRecord {
  return {
    ...r,
    agent_session: globalName(r.agent_session, host),
    reviewer_session: r.reviewer_session === null ? null : globalName(r.reviewer_session, host),
    delegator: r.delegator === null ? null : globalName(r.delegator, host),
  };
}
