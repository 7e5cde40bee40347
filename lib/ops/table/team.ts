// The operations on this machine's team (docs/machines.md): make it, join it, leave it, print its
// join code, see its hosts. The join code carries the team's secret: only `team init` and `team
// code` print it, on the command line (as text, or with --json as `code`, for a script to carry it
// on); never into a log, no MCP tool, no dashboard action.
import { usageError } from "../../sys/errors.ts";
import { table } from "../../sys/io.ts";
import { visible } from "../../sys/sanitize.ts";
import { flag, optional, text, withDefault, name } from "../input.ts";
import * as z from "zod/mini";
import { type CommandGroup, defineOp } from "../op.ts";
import { rosterOut, str, strOrNull, teamBrokerOut, warnings } from "../results.ts";
import type { RosterDoc, TeamJoined, TeamLeft, TeamMade } from "../team.ts";

const team = () => require("../team.ts") as typeof import("../team.ts");

/** `mam team …`: its help (the commands come from the entries below) */
const TEAM: CommandGroup = {
  name: "team",
  description: "a team across machines: agents addressable as NAME@HOST, jobs delivered by their host (docs/machines.md)",
  examples: ["mam team init lab --broker broker.lan", "mam team join mamteam1.…", "mam team show"],
  group: "team across machines",
  listed: "each",
};

const brokerLine = (b: TeamMade["broker"]) => (b ? `${b.host}:${b.port}${b.tls ? " (TLS)" : ""}` : "the one MQTT_BROKER names on each machine");

export const teamInit = defineOp({
  name: "team.init",
  summary: "make a team of machines that share a broker: a new secret (0600), and the join code for the other machines",
  readOnly: false,
  input: () => ({
    name: name("team name", "the team's name (part of its topics)"),
    broker: optional(text("the broker every machine of the team reaches, as HOST[:PORT] (default: each machine's MQTT_BROKER)", { max: 300, oneLine: true })),
    tls: withDefault(flag("the broker speaks TLS (port 8883 by default)"), false),
    force: withDefault(flag("replace the team this machine is in"), false),
  }),
  async run(deps, i) {
    return team().initTeam(deps, i);
  },
  text: (r: TeamMade) =>
    [
      `team ${r.team} made on ${r.host} (${r.path}, 0600); its broker: ${brokerLine(r.broker)}`,
      "on each other machine, run (the code is the team's secret: carry it as you would a password):",
      `  mam team join ${r.code}`,
      "(better, out of ps and the shell's history: mam team join - , then paste the code and press Ctrl-D)",
    ].join("\n"),
  result: () => z.looseObject({ team: str(), host: str(), path: str(), broker: teamBrokerOut(), code: str(), warnings: warnings() }),
  cli: { path: "team init", under: TEAM, positionals: ["name"], examples: ["mam team init lab --broker broker.lan:1883", "mam team init lab --broker broker.example.com --tls", "mam team init lab --json     # {team, host, path, broker, code, warnings}"] },
  mcp: false,
});

export const teamJoin = defineOp({
  name: "team.join",
  summary: "join the team a join code names (printed by mam team init or mam team code on a machine of the team)",
  readOnly: false,
  input: () => ({
    code: optional(text("the join code (mamteam1.…); - reads it from stdin (preferred: out of ps and shell history), as --code-file does from a file", { max: 4000, oneLine: true })),
    force: withDefault(flag("replace the team this machine is in"), false),
  }),
  async run(deps, i) {
    if (i.code === undefined) throw usageError("give the join code: mam team join - reads it from stdin (paste it, then Ctrl-D), --code-file F from a file", "mam team code prints it on a machine of the team");
    return team().joinTeam(deps, i.code, i.force);
  },
  text: (r: TeamJoined) => `${r.host} is in team ${r.team} (${r.path}); its broker: ${brokerLine(r.broker)}\nsee its hosts with: mam team show`,
  result: () => z.looseObject({ team: str(), host: str(), path: str(), broker: teamBrokerOut(), warnings: warnings() }),
  cli: { path: "team join", extra: "join-code", under: TEAM, positionals: ["code"], examples: ["mam team join -            # paste the code, then Ctrl-D", "mam team join --code-file ~/lab.code", "mam team join mamteam1.eyJ2Ijox…", "mam team join - --json     # {team, host, path, broker, warnings}"] },
  mcp: false,
});

export const teamLeave = defineOp({
  name: "team.leave",
  summary: "leave this machine's team (its secret is deleted here; the other machines stay in it)",
  readOnly: false,
  input: () => ({}),
  async run(deps) {
    return team().leaveTeam(deps);
  },
  text: (r: TeamLeft) => (r.team ? `left team ${r.team}` : "this machine is in no team"),
  result: () => z.looseObject({ team: strOrNull(), warnings: warnings() }),
  cli: { path: "team leave", under: TEAM, examples: ["mam team leave"] },
  mcp: false,
});

export const teamCode = defineOp({
  name: "team.code",
  summary: "print the team's join code again, for another machine (it carries the team's secret)",
  readOnly: true,
  input: () => ({}),
  async run(deps) {
    return team().teamCode(deps);
  },
  text: (r: { team: string; code: string }) => `mam team join ${r.code}`,
  result: () => z.looseObject({ team: str(), code: str() }),
  cli: { path: "team code", under: TEAM, examples: ["mam team code", 'code=$(mam team code --json | jq -r .code)     # {team, code}'] },
  mcp: false,
});

/** the fleet as a table: one row per agent, a line for a workspace with none or offline */
export function rosterText(d: RosterDoc): string {
  const { ago } = team();
  const head = `team ${d.team} on ${d.broker}; this host: ${d.host}`;
  const rows: string[][] = [];
  for (const w of d.workspaces) {
    const state = w.online ? "online" : `offline (last seen ${ago(w.last_seen)} ago)`;
    if (w.agents.length === 0) rows.push([w.host, w.workspace, "-", "-", "-", w.online ? "-" : "offline", "-", state]);
    for (const a of w.agents) rows.push([w.host, w.workspace, a.address, a.agent ?? "-", a.role ?? "-", a.live, a.job ? `${a.job.id} ${a.job.status}` : "-", state]);
  }
  // what other hosts announce (names, roles, folders) shown with control characters escaped (sanitize.ts)
  const shown = rows.map((r) => r.map(visible));
  return rows.length ? `${visible(head)}\n${table(["HOST", "WORKSPACE", "SESSION", "AGENT", "ROLE", "LIVE", "JOB", "HOST STATE"], shown)}` : `${visible(head)}\nno workspace has announced itself yet (a daemon announces its workspace: mam daemon ensure)`;
}

export const teamShow = defineOp({
  name: "team.show",
  summary: "the team: every host and workspace its daemons announce, with their agents, live state and jobs; hosts that went away as offline",
  readOnly: true,
  input: () => ({}),
  async run(deps) {
    return team().rosterStatus(deps);
  },
  text: (d: RosterDoc) => rosterText(d),
  result: rosterOut,
  cli: { path: "team show", under: TEAM, examples: ["mam team show", "mam team show --json"] },
  mcp: { description: "The team across machines: every host and workspace with its agents (address NAME@HOST, live state, job); offline hosts with when they were last seen." },
});
