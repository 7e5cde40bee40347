// mam (multi-agent-mux): the command tree, and the one place that maps errors to exit codes.
// Start-up is what every mam call pays (bash shims call it many times a minute): this module
// imports only what `mam --version` needs; the argument parser, the team's broker and every
// command load when they are used, and `mam pane-lock acquire --fd N` loads the lock alone.
import { defineCommand, type Lazy, type MamCommand } from "./lib/cli/command.ts";
import { versionInfo, versionLine } from "./lib/cli/version.ts";
import { EXIT, MamError, usageError, writeRefused } from "./lib/sys/errors.ts";
import { err, out, outJson } from "./lib/sys/io.ts";
import { visible } from "./lib/sys/sanitize.ts";
import { cliSpelling, spellFields } from "./lib/sys/fields.ts";
import type { HelpGroup } from "./lib/ops/op.ts";

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
  doctor: lazy(() => import("./lib/cli/doctor.ts")),
  "agent-report": lazy(() => import("./lib/cli/agent-report.ts")),
  "shell-job": lazy(() => import("./lib/cli/shell-job.ts")),
  mcp: lazy(() => import("./lib/cli/mcp.ts")),
  sandbox: lazy(() => import("./lib/cli/sandbox.ts")),
};

const META: MamCommand["meta"] = {
  name: "mam",
  description: "multi-agent-mux: run a team of AI coding agents in terminal-multiplexer panes",
  // the sections of `mam --help`, in order, with the commands that are not operations; each
  // operation's command comes first in the section its entry names (cli.group, cli.under.group)
  groups: [
    { title: "agents", commands: ["hooks", "sandbox explain", "sandbox default"] },
    { title: "jobs", commands: [] },
    { title: "team across machines", commands: [] },
    { title: "notifications", commands: [] },
    { title: "from your agent (MCP)", commands: ["mcp", "mcp install", "mcp uninstall"] },
    { title: "monitoring", commands: ["ui", "doctor"] },
    { title: "plumbing", commands: ["skills", "shim", "pane-lock", "broker", "agent-report", "shell-job"] },
    { title: "try it", commands: ["demo"] },
  ] satisfies { title: HelpGroup; commands: string[] }[],
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
  // each command of the table in the section its op names, before the section's plumbing
  const mine = opGroups();
  const groups = (META.groups ?? []).map((g) => ({ ...g, commands: [...mine.filter(([, group]) => group === g.title).map(([path]) => path), ...g.commands] }));
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

/** the words a command takes as its next one (not hidden ones), for a "did you mean" */
async function subNames(cmd: MamCommand, top: boolean): Promise<string[]> {
  const names: string[] = top ? Object.keys(ALIASES) : [];
  for (const [key, sub] of Object.entries(cmd.subCommands ?? {})) {
    const c = await resolve(sub);
    if (c.meta.hidden) continue;
    names.push(key);
    if (c.meta.alias !== undefined) names.push(...(Array.isArray(c.meta.alias) ? c.meta.alias : [c.meta.alias]));
  }
  return names;
}

async function helpText(cmd: MamCommand, path: string[]): Promise<string> {
  const [{ useColor }, { helpText: render }] = await Promise.all([import("./lib/sys/io.ts"), import("./lib/cli/help.ts")]);
  return render(cmd, path, { version: versionLine().slice(4), color: useColor() });
}

/** what main() learnt about the run that the error report needs */
interface RunFacts {
  /** the caller asked for JSON: an error is then one JSON document on stdout too */
  json: boolean;
}

/** before the command's flags are parsed: is `--json` among mam's own words (before a `--`) */
const jsonAsked = (argv: string[]): boolean => {
  const dd = argv.indexOf("--");
  return (dd >= 0 ? argv.slice(0, dd) : argv).includes("--json");
};

/**
 * the descriptor of `mam pane-lock acquire --fd N` (or `--fd=N`) spelt exactly as the herdr shim
 * spells it, else undefined: any other spelling (help, a mistake) takes the usual way
 */
export function shimAcquireFd(argv: string[]): string | undefined {
  if (argv[0] !== "pane-lock" || argv[1] !== "acquire") return undefined;
  if (argv.length === 4 && argv[2] === "--fd") return argv[3];
  if (argv.length === 3 && argv[2]!.startsWith("--fd=")) return argv[2]!.slice(5);
  return undefined;
}

export async function main(argv: string[], facts: RunFacts = { json: jsonAsked(argv) }): Promise<number> {
  const dd = argv.indexOf("--");
  const own = dd >= 0 ? argv.slice(0, dd) : argv;
  const wantsHelp = own.includes("--help") || own.includes("-h");
  // `mam help [COMMAND…]` is `mam [COMMAND…] --help`
  if (argv[0] === "help") return main([...argv.slice(1), "--help"], facts);
  const versionJson = argv.length === 2 && argv[1] === "--json";
  if (argv[0] === "--version" || argv[0] === "-V" || ((argv[0] === "-v" || argv[0] === "version") && (argv.length === 1 || versionJson))) {
    if (versionJson) outJson(versionInfo());
    else out(versionLine());
    return EXIT.OK;
  }
  // the herdr shim's lock: what `pane-lock acquire` does (lib/cli/pane-lock.ts), with nothing else loaded
  const fd = shimAcquireFd(argv);
  if (fd !== undefined && fd !== "") {
    const { acquireOnFd } = await import("./lib/sys/pane-lock.ts");
    const r = await acquireOnFd(fd);
    out(r);
    return r === "locked" ? EXIT.OK : EXIT.TIMEOUT;
  }
  // inside an agent's sandbox the workspace is hidden: its few commands go to its supervisor
  if (process.env.MAM_SANDBOX_SOCKET && !RUNS_INSIDE.has(argv[0] ?? "") && !wantsHelp) return fromSandbox(argv, process.env.MAM_SANDBOX_SOCKET);
  // a machine in a team uses the team's broker unless MQTT_BROKER names one (docs/machines.md)
  if (argv[0] !== "pane-lock") (await import("./lib/team/config.ts")).applyTeamBroker(process.env);
  const [{ parseCommandArgs }, { didYouMean }] = await Promise.all([import("./lib/cli/parse.ts"), import("./lib/sys/near.ts")]);
  // a plumbing command (`mam pane-lock acquire`, called many times a minute) loads no operation
  let cmd = argv[0] !== undefined && Object.hasOwn(PLUMBING, argv[0]) && !wantsHelp ? plumbingRoot : await rootCommand();
  const path: string[] = [];
  let i = 0;
  while (cmd.subCommands && i < argv.length) {
    const tok = argv[i]!;
    if (tok.startsWith("-")) break;
    const found = await findSub(cmd, tok, path.length === 0);
    if (!found) {
      // `mam merge --help` too: the help of a command that does not exist is an unknown command
      const guess = didYouMean(tok, await subNames(cmd, path.length === 0), path.length ? `${path.join(" ")} ` : "");
      throw usageError(`unknown command '${[...path, tok].join(" ")}'`, `${guess}see: mam ${path.length ? `${path.join(" ")} ` : ""}--help`);
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
    const at = path.length ? `mam ${path.join(" ")}` : "mam";
    if (i < argv.length) {
      const guess = argv[i]!.startsWith("-") ? didYouMean(argv[i]!, ["--help", ...(path.length ? [] : ["--version"])]) : "";
      throw usageError(`${at}: unknown flag or argument '${argv[i]}'`, `${guess}see: ${at} --help`);
    }
    throw usageError(`${at}: missing subcommand (one of: ${names})`, `see: ${at} --help`);
  }
  const name = path.join(" ");
  const { args, rest } = parseCommandArgs(cmd, argv.slice(i), name);
  // parsed: `--json` is the flag only when the command took it as one (`--detail --json` is a detail)
  facts.json = args.json === true;
  const code = await cmd.run({ args, rest, path });
  return typeof code === "number" ? code : EXIT.OK;
}

/** what runs inside a sandbox as itself: the relays, and the demo agent (an agent, not a report) */
const RUNS_INSIDE = new Set(["sandbox", "demo-agent"]);

/** a command run inside a sandbox (lib/sandbox/forward.ts): through the supervisor, or refused */
async function fromSandbox(argv: string[], socket: string): Promise<number> {
  const { forwardedCommand, forwardToSupervisor } = await import("./lib/sandbox/forward.ts");
  const cmd = forwardedCommand(argv);
  if (!cmd) throw new MamError(`\`mam ${visible(argv.slice(0, 2).join(" "))}\` does not run inside a sandbox: the workspace's .mam/ is hidden here`, EXIT.USAGE, "inside, mam runs: job event, job status, status, agent-report (docs/sandbox.md#reports)");
  const r = await forwardToSupervisor(socket, argv, cmd[0] === "agent-report");
  process.stdout.write(r.stdout);
  process.stderr.write(r.stderr);
  return r.code;
}

/**
 * an error as the user sees it: the ERROR line (on stdout where the error says so: create's
 * conflict), or with --json the error as one JSON document on stdout ({error, hint, exit_code})
 * and the ERROR line on stderr (`hint` only when there is a fix); the exit code. A write the file system refused (read-only folder,
 * no permission) is the user's to fix, not a bug.
 */
export function reportError(e: unknown, json = false): number {
  const refused = e instanceof MamError ? undefined : writeRefused(e);
  const made = e instanceof MamError ? e : (refused ?? new MamError(`internal error: ${visible(e instanceof Error ? e.message : String(e))}`, EXIT.FAIL, "run with MAM_DEBUG=1 for details"));
  // a {{field}} no command spelled (a plumbing command's) reads as its flag, in the JSON too
  const m = made.spelled((t) => spellFields(t, cliSpelling));
  if (json) {
    // a fix when there is one; no `hint: null` for a script to test for
    outJson({ error: m.message, ...(m.hint ? { hint: m.hint } : {}), exit_code: m.exitCode });
    err(m.render());
  } else (m.toStdout ? out : err)(m.render());
  const stack = e instanceof Error ? e.stack : undefined;
  if (process.env.MAM_DEBUG === "1" && stack) err(stack);
  return m.exitCode;
}

if (import.meta.main) {
  const argv = process.argv.slice(2);
  const facts: RunFacts = { json: jsonAsked(argv) };
  let code: number;
  try {
    code = await main(argv, facts);
  } catch (e) {
    code = reportError(e, facts.json);
  }
  process.exit(code);
}
