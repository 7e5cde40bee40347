// A team across machines (docs/machines.md): make one, join one, leave it, see it. The team's
// secret never leaves team.json but inside the join code, which only `team init` and `team code`
// print, as text (never as JSON, never over MCP or the dashboard).
import { rmSync } from "node:fs";
import { brokerConfigFromEnv, describeBroker } from "../jobs/broker-config.ts";
import { EXIT, MamError } from "../sys/errors.ts";
import { field } from "../sys/fields.ts";
import { info, type Notice, note, warning } from "../sys/notice.ts";
import { isoUtc } from "../sys/time.ts";
import { joinCode, loadTeam, newSecret, parseBroker, parseJoinCode, requireTeam, saveTeam, type Team, type TeamBroker, teamPath } from "../team/config.ts";
import { type Roster, readRoster } from "../team/roster.ts";
import { hostName } from "../team/host.ts";
import { onlineTopic, presenceTopic, protocolOf, TEAM_PROTOCOL, teamPrefix, workspaceId } from "../team/messages.ts";
import type { Deps } from "./deps.ts";
import type { StatusLine } from "./session/status.ts";

export interface TeamMade {
  team: string;
  host: string;
  path: string;
  broker: TeamBroker | null;
  /** the join code: shown as text only */
  code: string;
  warnings: Notice[];
}

export interface TeamInit {
  name: string;
  broker?: string;
  tls: boolean;
  force: boolean;
}

function refuseOther(existing: Team | undefined, force: boolean, what: string): void {
  if (existing && !force) {
    throw new MamError(`this machine is in team ${existing.team} already (${what} would replace it)`, EXIT.CONFLICT, "mam team leave first, or pass --force");
  }
}

/** a daemon that runs here without the team learns of it by starting again */
async function restartDaemon(deps: Deps, warnings: Notice[]): Promise<void> {
  if (!deps.daemon.status()) {
    warnings.push(info("this workspace's daemon takes part in the team from its next start (mam create, mam job submit, mam daemon ensure)"));
    return;
  }
  try {
    await deps.daemon.stop();
    await deps.daemon.ensure();
    warnings.push(info("this workspace's daemon was restarted to take part in the team; restart the daemons of other workspaces on this machine (mam daemon stop, then mam daemon ensure)"));
  } catch (e) {
    warnings.push(warning(`could not restart this workspace's daemon (${(e as Error).message}); run mam daemon stop, then mam daemon ensure`));
  }
}

export async function initTeam(deps: Deps, i: TeamInit): Promise<TeamMade> {
  const host = hostName(deps.env);
  refuseOther(loadTeam(deps.env), i.force, "a new team");
  const broker = i.broker !== undefined ? parseBroker(i.broker, i.tls) : undefined;
  const t: Team = { schema_version: 1, team: i.name, secret: newSecret(), ...(broker ? { broker } : {}), since: isoUtc() };
  const path = saveTeam(deps.env, t);
  const warnings: Notice[] = [];
  if (!broker && !deps.env.MQTT_BROKER) warnings.push(note(`the team names no broker: every machine needs MQTT_BROKER set to one they all reach (or make the team again with ${field("broker")} HOST[:PORT])`));
  await restartDaemon(deps, warnings);
  return { team: t.team, host, path, broker: broker ?? null, code: joinCode(t), warnings };
}

export interface TeamJoined {
  team: string;
  host: string;
  path: string;
  broker: TeamBroker | null;
  warnings: Notice[];
}

export async function joinTeam(deps: Deps, code: string, force: boolean): Promise<TeamJoined> {
  const host = hostName(deps.env);
  const t = parseJoinCode(code, isoUtc());
  const existing = loadTeam(deps.env);
  if (existing?.team === t.team && existing.secret === t.secret) {
    return { team: t.team, host, path: teamPath(deps.env), broker: existing.broker ?? null, warnings: [info(`this machine is in team ${t.team} already`)] };
  }
  refuseOther(existing, force, `joining ${t.team}`);
  const path = saveTeam(deps.env, t);
  const warnings: Notice[] = [];
  await restartDaemon(deps, warnings);
  return { team: t.team, host, path, broker: t.broker ?? null, warnings };
}

export interface TeamLeft {
  team: string | null;
  warnings: Notice[];
}

export async function leaveTeam(deps: Deps): Promise<TeamLeft> {
  const t = loadTeam(deps.env);
  if (!t) return { team: null, warnings: [info("this machine is in no team")] };
  const warnings: Notice[] = [];
  // this workspace's announcements go from the broker (its daemon would say "offline" on its way
  // out: stopped first), so that the team does not keep showing it
  const running = deps.daemon.status() !== undefined;
  if (running) await deps.daemon.stop();
  const host = hostName(deps.env);
  const tp = teamPrefix(t, deps.env);
  const wsId = workspaceId(deps.ws);
  const { publishAll } = await import("../jobs/transport.ts");
  const r = await publishAll(brokerConfigFromEnv(deps.env), [
    { topic: presenceTopic(tp, host, wsId), payload: "", retain: true },
    { topic: onlineTopic(tp, host, wsId), payload: "", retain: true },
  ]);
  if (!r.ok) warnings.push(warning(`this workspace's announcement stays on the broker (${r.reason}); the team shows it offline`));
  rmSync(teamPath(deps.env), { force: true });
  if (running) {
    try {
      await deps.daemon.ensure();
    } catch (e) {
      warnings.push(warning(`could not start this workspace's daemon again (${(e as Error).message}); run mam daemon ensure`));
    }
  }
  warnings.push(info("the daemons of other workspaces on this machine leave the team when they restart (mam daemon stop)"));
  return { team: t.team, warnings };
}

/** the join code again, for another machine */
export function teamCode(deps: Deps): { team: string; code: string } {
  const t = requireTeam(deps.env);
  return { team: t.team, code: joinCode(t) };
}

export interface RosterHost {
  host: string;
  workspace: string;
  ws_id: string;
  online: boolean;
  /** ISO time of the newest word from it */
  last_seen: string;
  /** this workspace (its sessions as this machine sees them now) */
  here: boolean;
  agents: { name: string; address: string; agent: string | null; role: string | null; live: string; job: { id: string; status: string } | null }[];
}

export interface RosterDoc {
  team: string;
  host: string;
  broker: string;
  topic_prefix: string;
  /** false: the broker did not answer (only this workspace is shown) */
  reachable: boolean;
  workspaces: RosterHost[];
  warnings: Notice[];
}

/** every workspace of the team, from what their daemons announce; this one as it is now */
export async function rosterStatus(deps: Deps): Promise<RosterDoc> {
  const t = requireTeam(deps.env);
  const cfg = brokerConfigFromEnv(deps.env);
  const { sessionStatus } = await import("./session/status-run.ts");
  const [fleet, here] = await Promise.all([readRoster(cfg, t, deps.env, deps.ws), sessionStatus(deps, false)]);
  const doc = rosterDoc({ team: t, host: hostName(deps.env), ws: deps.ws, broker: describeBroker(cfg), prefix: teamPrefix(t, deps.env) }, fleet, here.sessions);
  const { readGaps, recentGaps } = await import("../team/gaps.ts");
  doc.warnings.push(...recentGaps(readGaps(deps.ws), Date.now()).map((g) => note(g)));
  return doc;
}

export interface RosterSelf {
  team: Team;
  /** this host's name */
  host: string;
  /** this workspace */
  ws: string;
  /** the broker, as describeBroker says it */
  broker: string;
  prefix: string;
}

/**
 * The fleet document (pure): what the broker keeps of every workspace of the team, this one
 * replaced by its running sessions as this machine sees them now (`nowMs` is when that was:
 * its last_seen). Shared by `mam status --fleet` and the dashboard.
 */
export function rosterDoc(self: RosterSelf, fleet: Roster, sessions: readonly StatusLine[], nowMs = Date.now()): RosterDoc {
  const { host } = self;
  const wsId = workspaceId(self.ws);
  const warnings: Notice[] = [];
  if (!fleet.reachable) warnings.push(warning(`the team's broker ${self.broker} does not answer: only this workspace is shown`));
  if (fleet.dropped > 0) warnings.push(note(`${fleet.dropped} announcement(s) on the broker did not open with this team's key (another team's, or forged): ignored`));
  warnings.push(...protocolWarnings(fleet, host));
  const mine: RosterHost = {
    host,
    workspace: self.ws,
    ws_id: wsId,
    online: true,
    last_seen: isoUtc(Math.floor(nowMs / 1000)),
    here: true,
    agents: sessions.filter((s) => s.status === "running").map((s) => ({ name: s.name, address: `${s.name}@${host}`, agent: s.agent, role: s.role, live: s.live, job: s.job })),
  };
  const all = [mine, ...rosterRows(fleet).filter((w) => !(w.host === host && w.ws_id === wsId))];
  all.sort((a, b) => (a.host === b.host ? a.workspace.localeCompare(b.workspace) : a.host.localeCompare(b.host)));
  return { team: self.team.team, host, broker: self.broker, topic_prefix: self.prefix, reachable: fleet.reachable, workspaces: all, warnings };
}

/** (pure) the hosts whose mam speaks another team protocol than this one, once each */
export function protocolWarnings(f: Roster, self: string): Notice[] {
  const seen = new Map<string, number>();
  for (const w of f.workspaces) if (w.host !== self && protocolOf(w) !== TEAM_PROTOCOL) seen.set(w.host, protocolOf(w));
  return [...seen].map(([h, p]) =>
    p < TEAM_PROTOCOL
      ? warning(`${h} runs an older mam (team protocol ${p}; this one speaks ${TEAM_PROTOCOL}): jobs from here are not sent to it; upgrade mam on ${h}`)
      : warning(`${h} runs a newer mam (team protocol ${p}; this one speaks ${TEAM_PROTOCOL}): upgrade mam here`),
  );
}

function rosterRows(f: Roster): RosterHost[] {
  return f.workspaces.map((w) => ({
    host: w.host,
    workspace: w.workspace,
    ws_id: w.ws_id,
    online: w.online,
    last_seen: isoUtc(Math.floor(w.seen / 1000)),
    here: false,
    agents: w.agents.map((a) => ({ name: a.name, address: `${a.name}@${w.host}`, agent: a.agent, role: a.role, live: w.online ? a.live : "offline", job: a.job })),
  }));
}

/** how long ago, in a few characters: 12s, 5m, 3h, 2d */
export function ago(iso: string, nowMs = Date.now()): string {
  const s = Math.max(0, Math.round((nowMs - Date.parse(iso)) / 1000));
  return s < 120 ? `${s}s` : s < 7200 ? `${Math.round(s / 60)}m` : s < 172800 ? `${Math.round(s / 3600)}h` : `${Math.round(s / 86400)}d`;
}
