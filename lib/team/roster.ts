// The team's roster (users call it the fleet: `mam status --fleet`) as its brokers keep it (docs/machines.md): every workspace's last presence
// and whether its daemon is online, read from the retained messages and what this workspace's
// daemon heard (never from any host directly), and finding the agent `NAME@HOST` names in it.
import type { BrokerConfig } from "../jobs/broker-config.ts";
import { isFinal, type JobStatus } from "../jobs/statuses.ts";
import { EXIT, MamError, notFound } from "../sys/errors.ts";
import type { Env } from "../sys/paths.ts";
import type { Team } from "./config.ts";
import { onlineNow, type Presence, protocolOf, syncTopic, TEAM_PROTOCOL, teamPrefix } from "./messages.ts";
import { newer, type RosterEntry, rosterEntry } from "./roster-entry.ts";

export interface RosterWorkspace extends Presence {
  online: boolean;
  /** epoch ms: the newest of its presence and its online state */
  seen: number;
}

export interface Roster {
  team: string;
  /** false: no broker answered (nothing is known of the other hosts) */
  reachable: boolean;
  workspaces: RosterWorkspace[];
  /** messages that did not open (another team, a forgery, damage) */
  dropped: number;
}

/**
 * a workspace not heard of for this long counts as offline, whatever its last online state says:
 * a host that went down with its broker's node leaves no last will (docs/machines.md)
 */
export const SILENT_MS = 3 * 60_000;

/**
 * the roster: the broker's retained messages, and what the workspace `ws`'s daemon heard live
 * (lib/team/heard.ts: a broker that keeps retained messages per node, or serves none to a
 * wildcard, gives a reader nothing), the newest of each
 */
export async function readRoster(cfg: BrokerConfig, t: Team, env: Env, ws?: string): Promise<Roster> {
  const { readRetained } = await import("../jobs/transport.ts");
  const tp = teamPrefix(t, env);
  const got = await readRetained(cfg, [`${tp}/presence/#`, `${tp}/online/#`], { marker: syncTopic(tp) });
  if (!got) return { team: t.team, reachable: false, workspaces: [], dropped: 0 };
  const heard = ws === undefined ? new Map<string, string>() : (await import("./heard.ts")).readHeard(ws);
  return rosterOf(t, tp, got, heard, Date.now());
}

/** the roster of what the broker kept and what was heard (pure) */
export function rosterOf(t: Team, tp: string, retained: Map<string, Buffer | string>, heard: Map<string, string>, now: number): Roster {
  const newest = new Map<string, RosterEntry>();
  let dropped = 0;
  const take = (topic: string, payload: Buffer | string, counted: boolean) => {
    const e = rosterEntry(t, tp, topic, payload);
    if (!e) {
      if (counted) dropped++;
      return;
    }
    const k = `${e.what} ${e.key}`;
    const had = newest.get(k);
    if (!had || newer(e, had)) newest.set(k, e);
  };
  for (const [topic, payload] of retained) take(topic, payload, true);
  for (const [topic, payload] of heard) take(topic, payload, false);
  const workspaces: RosterWorkspace[] = [];
  for (const e of newest.values()) {
    if (e.what !== "presence") continue;
    const p = e.presence;
    const o = newest.get(`online ${e.key}`);
    const on = o?.what === "online" ? o.online : undefined;
    const seen = Math.max(p.at, on?.at ?? 0);
    workspaces.push({ ...p, online: onlineNow(on, p) && now - seen < SILENT_MS, seen });
  }
  workspaces.sort((a, b) => (a.host === b.host ? a.workspace.localeCompare(b.workspace) : a.host.localeCompare(b.host)));
  return { team: t.team, reachable: true, workspaces, dropped };
}

export interface RemoteAgent {
  host: string;
  ws_id: string;
  workspace: string;
  agent: string | null;
  online: boolean;
}

/** the workspace on `host` that has a running session `name`; clear errors that list what exists */
export function findRemote(f: Roster, name: string, host: string): RemoteAgent {
  if (!f.reachable) throw new MamError(`cannot reach ${name}@${host}: the team's broker does not answer`, EXIT.FAIL, "check MQTT_BROKER (or the broker mam team init named) and that it runs");
  const onHost = f.workspaces.filter((w) => w.host === host);
  if (onHost.length === 0) {
    const hosts = [...new Set(f.workspaces.map((w) => w.host))];
    throw notFound(`no host '${host}' in team ${f.team}`, hosts.length ? `its hosts: ${hosts.join(", ")}` : "no host of the team has a daemon running yet (mam create starts one)");
  }
  const hits = onHost.filter((w) => w.agents.some((a) => a.name === name && a.status === "running"));
  if (hits.length === 0) {
    const names = [...new Set(onHost.flatMap((w) => w.agents.filter((a) => a.status === "running").map((a) => a.name)))];
    throw notFound(`no running session '${name}' on ${host}`, names.length ? `its running sessions: ${names.map((n) => `${n}@${host}`).join(", ")}` : `${host} runs no session`);
  }
  if (hits.length > 1) throw new MamError(`'${name}' runs in ${hits.length} workspaces on ${host}: ${hits.map((w) => w.workspace).join(", ")}`, EXIT.CONFLICT, "give the sessions different names");
  const w = hits[0]!;
  if (protocolOf(w) < TEAM_PROTOCOL) throw olderMam(`${name}@${host}`, w);
  const a = w.agents.find((x) => x.name === name)!;
  return { host, ws_id: w.ws_id, workspace: w.workspace, agent: a.agent, online: w.online };
}

/** a workspace whose mam is older than this one's team protocol: it would miss this host's events on its jobs */
function olderMam(what: string, w: Presence): MamError {
  return new MamError(
    `${what} runs an older mam (team protocol ${protocolOf(w)}; this one speaks ${TEAM_PROTOCOL}): it would not hear this host's events on its jobs (a cancel, a review's verdict); nothing was sent`,
    EXIT.FAIL,
    `upgrade mam on ${w.host}, or submit from a host that runs the same version`,
  );
}

/** a pool's agent on another host: NAME@HOST, and whether its presence said it was free */
export interface PoolPick {
  to: string;
  free: boolean;
}

/**
 * A pool's agent on another host of the team (docs/jobs.md#the-queue), from what the hosts last
 * announced: the first (by host, then name) running session of `role` on an online workspace of
 * a host other than `selfHost` (whose mam speaks this one's team protocol) that was idle with no unfinished job; else, unless the job can wait
 * here (`waitHere`: this workspace has sessions of the role), the first running one of the role
 * busy or not (its host queues the job). Undefined when there is none.
 */
export function poolAgentElsewhere(f: Roster, role: string, selfHost: string, waitHere: boolean): PoolPick | undefined {
  const of = f.workspaces
    .filter((w) => w.online && w.host !== selfHost && protocolOf(w) >= TEAM_PROTOCOL)
    .flatMap((w) => w.agents.filter((a) => a.role === role && a.status === "running").map((a) => ({ a, host: w.host })))
    .sort((x, y) => (x.host === y.host ? x.a.name.localeCompare(y.a.name) : x.host.localeCompare(y.host)));
  const free = of.find(({ a }) => a.live === "idle" && (a.job === null || isFinal(a.job.status as JobStatus)));
  if (free) return { to: `${free.a.name}@${free.host}`, free: true };
  if (waitHere || of.length === 0) return undefined;
  return { to: `${of[0]!.a.name}@${of[0]!.host}`, free: false };
}
