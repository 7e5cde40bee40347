// mam (multi-agent-mux): the command tree, and the one place that maps errors to exit codes.
import { defineCommand, type Lazy, type MamCommand } from "./lib/cli/command.ts";
import { parseCommandArgs } from "./lib/cli/parse.ts";
import { versionLine } from "./lib/cli/version.ts";
import { EXIT, MamError, usageError, writeRefused } from "./lib/sys/errors.ts";
import { applyTeamBroker } from "./lib/team/config.ts";
import { err, out } from "./lib/sys/io.ts";
import { visible } from "./lib/sys/sanitize.ts";

const lazy = <T>(load: () => Promise<{ default: T }>) => () => load().then((m) => m.default);

/** the commands that are not operations (lib/ops): each loads only when it runs */
const PLUMBING: Record<string, Lazy<MamCommand>> = {
  "pane-lock": lazy(() => import("./lib/cli/pane-lock.ts")),
  broker: lazy(() => import("./lib/cli/broker.ts")),
  shim: lazy(() => import("./lib/cli/shim.ts")),
  skills: lazy(() => import("./lib/cli/skills.ts")),
  demo: lazy(() => import("./lib/cli/demo.ts")),
  "demo-agent": lazy(() => import("./lib/cli/demo-agent.ts")),
  ui: lazy(() => import("./lib/cli/ui.ts")),
  hooks: lazy(() => import("./lib/cli/hooks.ts")),
  "agent-report": lazy(() => import("./lib/cli/agent-report.ts")),
  "shell-job": lazy(() => import("./lib/cli/shell-job.ts")),
  mcp: lazy(() => import("./lib/cli/mcp.ts")),
};

const META: MamCommand["meta"] = {
  name: "mam",
  description: "multi-agent-mux: run a team of AI coding agents in terminal-multiplexer panes",
  groups: [
    { title: "agents", commands: ["create", "stop", "resume", "status", "prune", "worktree", "hooks"] },
    { title: "jobs", commands: ["job submit", "job wait", "job status", "job logs", "job list", "job cancel", "job event"] },
    { title: "team across machines", commands: ["team show", "team init", "team join", "team code", "team leave"] },
    { title: "from your agent (MCP)", commands: ["mcp", "mcp install", "mcp uninstall"] },
    { title: "monitoring", commands: ["ui", "reconcile", "daemon", "registry"] },
    { title: "plumbing", commands: ["skills", "shim", "pane-lock", "broker", "agent-report", "shell-job"] },
    { title: "try it", commands: ["demo"] },
  ],
  examples: [
    "mam demo                                            # try it: two demo agents, a loop job, then all cleaned up",
    "mam create --agent claude --role worker --session api-worker",
    'id=$(mam job submit --to api-worker --from lead --prompt "Add --json to status")',
    'mam job wait "$id" --timeout 3600                   # exit 0 once the worker reports completed',
    "mam status                                          # every session: status, live state, its job",
  ],
};

/** the whole command tree: the plumbing and every operation's command (lib/cli/ops.ts) */
export async function rootCommand(): Promise<MamCommand> {
  const { opCommands, opGroups } = await import("./lib/cli/ops.ts");
  const ops = opCommands();
  // a command of the table in no group of META lands in the group its op names
  const groups = (META.groups ?? []).map((g) => ({ ...g, commands: [...g.commands] }));
  const listed = new Set(groups.flatMap((g) => g.commands));
  for (const [path, group] of opGroups()) {
    if (listed.has(path) || listed.has(path.split(" ")[0]!)) continue;
    (groups.find((g) => g.title === group) ?? groups[groups.length - 1]!).commands.push(path);
  }
  // in the order of the help's groups (docs/cli.md walks them so), then the hidden ones
  const all: Record<string, Lazy<MamCommand>> = { ...PLUMBING, ...ops };
  const subCommands: Record<string, Lazy<MamCommand>> = {};
  for (const name of [...groups.flatMap((g) => g.commands.map((c) => c.split(" ")[0]!)), ...Object.keys(all)]) if (all[name] && !subCommands[name]) subCommands[name] = all[name];
  return defineCommand({ meta: { ...META, groups }, subCommands });
}

/** a tree of the plumbing alone: what a plumbing command needs (`mam pane-lock` loads no operation) */
const plumbingRoot: MamCommand = defineCommand({ meta: META, subCommands: PLUMBING });

async function resolve(c: Lazy<MamCommand>): Promise<MamCommand> {
  return typeof c === "function" ? await c() : c;
}

/** aliases of top-level commands, so that `mam ls` does not load every command to find one */
const ALIASES: Record<string, string> = { ls: "status" };

async function findSub(cmd: MamCommand, name: string, top: boolean): Promise<[string, MamCommand] | undefined> {
  const subs = cmd.subCommands ?? {};
  if (Object.hasOwn(subs, name)) return [name, await resolve(subs[name]!)];
  const alias = top ? ALIASES[name] : undefined;
  if (alias && Object.hasOwn(subs, alias)) return [alias, await resolve(subs[alias]!)];
  // an unknown word: look for a declared alias (this loads every subcommand)
  for (const [key, sub] of Object.entries(subs)) {
    const c = await resolve(sub);
    const al = c.meta.alias === undefined ? [] : Array.isArray(c.meta.alias) ? c.meta.alias : [c.meta.alias];
    if (al.includes(name)) return [key, c];
  }
  return undefined;
}

async function helpText(cmd: MamCommand, path: string[]): Promise<string> {
  const [{ useColor }, { helpText: render }] = await Promise.all([import("./lib/sys/io.ts"), import("./lib/cli/help.ts")]);
  return render(cmd, path, { version: versionLine().slice(4), color: useColor() });
}

export async function main(argv: string[]): Promise<number> {
  const dd = argv.indexOf("--");
  const own = dd >= 0 ? argv.slice(0, dd) : argv;
  const wantsHelp = own.includes("--help") || own.includes("-h");
  if (argv[0] === "--version" || argv[0] === "-V" || (argv[0] === "version" && argv.length === 1)) {
    out(versionLine());
    return EXIT.OK;
  }
  // a machine in a team uses the team's broker unless MQTT_BROKER names one (docs/machines.md)
  if (argv[0] !== "pane-lock") applyTeamBroker(process.env);
  // a plumbing command (`mam pane-lock acquire`, called many times a minute) loads no operation
  let cmd = argv[0] !== undefined && Object.hasOwn(PLUMBING, argv[0]) && !wantsHelp ? plumbingRoot : await rootCommand();
  const path: string[] = [];
  let i = 0;
  while (cmd.subCommands && i < argv.length) {
    const tok = argv[i]!;
    if (tok.startsWith("-")) break;
    const found = await findSub(cmd, tok, path.length === 0);
    if (!found) {
      if (wantsHelp) break;
      throw usageError(`unknown command '${[...path, tok].join(" ")}'`, `see: mam ${path.length ? `${path.join(" ")} ` : ""}--help`);
    }
    path.push(found[0]);
    cmd = found[1];
    i++;
  }
  if (wantsHelp) {
    out(await helpText(cmd, path));
    return EXIT.OK;
  }
  if (!cmd.run) {
    if (path.length === 0 && argv.length === 0) {
      err(await helpText(cmd, path));
      return EXIT.USAGE;
    }
    const names = Object.keys(cmd.subCommands ?? {}).join(", ");
    if (i < argv.length) throw usageError(`mam ${path.join(" ")}: unknown flag or argument '${argv[i]}'`, `see: mam ${path.join(" ")} --help`);
    throw usageError(`mam ${path.join(" ")}: missing subcommand (one of: ${names})`, `see: mam ${path.join(" ")} --help`);
  }
  const name = path.join(" ");
  const { args, rest } = parseCommandArgs(cmd, argv.slice(i), name);
  const code = await cmd.run({ args, rest, path });
  return typeof code === "number" ? code : EXIT.OK;
}

export function reportError(e: unknown): number {
  // a write the file system refused (read-only folder, no permission) is the user's to fix, not a bug
  const refused = e instanceof MamError ? undefined : writeRefused(e);
  if (refused) return reportError(refused);
  if (e instanceof MamError) {
    (e.toStdout ? out : err)(e.render());
    if (process.env.MAM_DEBUG === "1" && e.stack) err(e.stack);
    return e.exitCode;
  }
  const msg = e instanceof Error ? e.message : String(e);
  err(visible(`ERROR: internal error: ${msg}; run with MAM_DEBUG=1 for details`));
  if (process.env.MAM_DEBUG === "1" && e instanceof Error && e.stack) err(e.stack);
  return EXIT.FAIL;
}

if (import.meta.main) {
  let code: number;
  try {
    code = await main(process.argv.slice(2));
  } catch (e) {
    code = reportError(e);
  }
  process.exit(code);
}
