// mam (multi-agent-mux): the command tree, and the one place that maps errors to exit codes.
import { type Lazy, type MamCommand, defineCommand } from "./lib/cli/command.ts";
import { parseCommandArgs } from "./lib/cli/parse.ts";
import { versionLine } from "./lib/cli/version.ts";
import { EXIT, MamError, usageError } from "./lib/sys/errors.ts";
import { err, out } from "./lib/sys/io.ts";

const lazy = <T>(load: () => Promise<{ default: T }>) => () => load().then((m) => m.default);

export const root: MamCommand = defineCommand({
  meta: {
    name: "mam",
    description: "multi-agent-mux: run a team of AI coding agents in terminal-multiplexer panes",
    examples: ["mam pane-lock path --session mam", "mam --version"],
  },
  subCommands: {
    create: lazy(() => import("./lib/cli/sessions.ts").then((m) => ({ default: m.create }))),
    stop: lazy(() => import("./lib/cli/sessions.ts").then((m) => ({ default: m.stop }))),
    resume: lazy(() => import("./lib/cli/sessions.ts").then((m) => ({ default: m.resume }))),
    status: lazy(() => import("./lib/cli/sessions.ts").then((m) => ({ default: m.status }))),
    "pane-lock": lazy(() => import("./lib/cli/pane-lock.ts")),
    broker: lazy(() => import("./lib/cli/broker.ts")),
    shim: lazy(() => import("./lib/cli/shim.ts")),
    skills: lazy(() => import("./lib/cli/skills.ts")),
    job: lazy(() => import("./lib/cli/job.ts")),
    demo: lazy(() => import("./lib/cli/demo.ts")),
    "demo-agent": lazy(() => import("./lib/cli/demo-agent.ts")),
    reconcile: lazy(() => import("./lib/cli/reconcile.ts")),
    daemon: lazy(() => import("./lib/cli/daemon.ts")),
    registry: lazy(() => import("./lib/cli/registry.ts")),
    hooks: lazy(() => import("./lib/cli/hooks.ts")),
    "agent-report": lazy(() => import("./lib/cli/agent-report.ts")),
  },
});

async function resolve(c: Lazy<MamCommand>): Promise<MamCommand> {
  return typeof c === "function" ? await c() : c;
}

/** aliases of top-level commands, so that `mam ls` does not load every command to find one */
const ALIASES: Record<string, string> = { ls: "status" };

async function findSub(cmd: MamCommand, name: string): Promise<[string, MamCommand] | undefined> {
  const subs = cmd.subCommands ?? {};
  if (Object.hasOwn(subs, name)) return [name, await resolve(subs[name]!)];
  const alias = cmd === root ? ALIASES[name] : undefined;
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
  // citty reads NO_COLOR once, when it is loaded: decide colour before loading it
  const { useColor } = await import("./lib/sys/io.ts");
  if (!useColor()) process.env.NO_COLOR = "1";
  const { renderUsage } = await import("citty");
  const parent = path.length > 0 ? { meta: { name: ["mam", ...path.slice(0, -1)].join(" ") } } : undefined;
  const shown = path.length === 0 ? { ...cmd, meta: { ...cmd.meta, version: versionLine().slice(4) } } : cmd;
  let text = await renderUsage(shown as never, parent as never);
  if (cmd.meta.examples?.length) text += `\nEXAMPLES\n\n${cmd.meta.examples.map((e) => `  ${e}`).join("\n")}\n`;
  return text;
}

export async function main(argv: string[]): Promise<number> {
  const dd = argv.indexOf("--");
  const own = dd >= 0 ? argv.slice(0, dd) : argv;
  const wantsHelp = own.includes("--help") || own.includes("-h");
  if (argv[0] === "--version" || argv[0] === "-V" || (argv[0] === "version" && argv.length === 1)) {
    out(versionLine());
    return EXIT.OK;
  }
  let cmd = root;
  const path: string[] = [];
  let i = 0;
  while (cmd.subCommands && i < argv.length) {
    const tok = argv[i]!;
    if (tok.startsWith("-")) break;
    const found = await findSub(cmd, tok);
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
  if (e instanceof MamError) {
    (e.toStdout ? out : err)(e.render());
    if (process.env.MAM_DEBUG === "1" && e.stack) err(e.stack);
    return e.exitCode;
  }
  const msg = e instanceof Error ? e.message : String(e);
  err(`ERROR: internal error: ${msg}; run with MAM_DEBUG=1 for details`);
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
