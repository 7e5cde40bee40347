// The one renderer of help text: `mam --help`, `mam <command> --help` and docs/cli.md
// (scripts/gen-cli-docs.ts) all come from helpText(). A command's help is citty's usage of its
// definition plus its examples; the root's lists the commands in the groups its meta names
// (everyday ones first), a visible command in no group under "MORE" (tests/unit/help.test.ts
// fails then, so that a new command gets a group). Lines carry no trailing blanks.
import type { Lazy, MamCommand } from "./command.ts";

export interface HelpOptions {
  /** the version shown in the root's title; false: none (docs/cli.md must not change per commit) */
  version?: string | false;
  /** ANSI colour; default: off (the caller decides, e.g. useColor()) */
  color?: boolean;
}

const resolve = async (c: Lazy<MamCommand>): Promise<MamCommand> => (typeof c === "function" ? await c() : c);

const aliasesOf = (c: MamCommand): string[] => (c.meta.alias === undefined ? [] : Array.isArray(c.meta.alias) ? c.meta.alias : [c.meta.alias]);

/** the command a path of names leads to from cmd (no aliases), or undefined */
export async function commandAt(cmd: MamCommand, names: string[]): Promise<MamCommand | undefined> {
  let c: MamCommand | undefined = cmd;
  for (const n of names) {
    const subs: Record<string, Lazy<MamCommand>> = c?.subCommands ?? {};
    if (!Object.hasOwn(subs, n)) return undefined;
    c = await resolve(subs[n]!);
  }
  return c;
}

/** two columns, the first padded to width w (default: its widest entry) */
function columns(rows: [string, string][], w = Math.max(...rows.map(([a]) => a.length))): string[] {
  return rows.map(([a, b]) => `  ${a.padEnd(w)}    ${b}`.trimEnd());
}

function examplesBlock(examples: string[] | undefined, heading: string): string {
  return examples?.length ? `\n${heading}\n\n${examples.map((e) => `  ${e}`).join("\n")}\n` : "";
}

async function rootHelp(root: MamCommand, opts: HelpOptions, h: (s: string) => string): Promise<string> {
  const subs = root.subCommands ?? {};
  const lines: string[] = [];
  const title = opts.version ? `${root.meta.description} (mam v${opts.version})` : root.meta.description;
  lines.push(title, "", `${h("USAGE")} mam <command> [OPTIONS]        mam <command> --help: its flags and examples`, "");
  const groups = [...(root.meta.groups ?? [])];
  const ungrouped: string[] = [];
  for (const [name, sub] of Object.entries(subs)) {
    const c = await resolve(sub);
    if (c.meta.hidden) continue;
    const inGroup = groups.some((g) => g.commands.some((p) => p.split(" ")[0] === name));
    if (!inGroup) ungrouped.push(name);
  }
  if (ungrouped.length) groups.push({ title: "more", commands: ungrouped });
  const sections: [string, [string, string][]][] = [];
  for (const g of groups) {
    const rows: [string, string][] = [];
    for (const p of g.commands) {
      const names = p.split(" ");
      const c = await commandAt(root, names);
      if (!c) throw new Error(`help group '${g.title}' names '${p}', which is not a command`);
      rows.push([[p, ...aliasesOf(c)].join(", "), c.meta.description]);
    }
    sections.push([g.title.toUpperCase(), rows]);
  }
  sections.push(["GLOBAL", [
    ["--help, -h", "help of mam or of a command (never runs the command)"],
    ["--version, -V", "print mam <version> (<commit>); with --json also the Bun version and the build target"],
  ]]);
  const w = Math.max(...sections.flatMap(([, rows]) => rows.map(([a]) => a.length)));
  for (const [title, rows] of sections) lines.push(h(title), "", ...columns(rows, w), "");
  lines.push(`Exit codes: 0 ok · 1 failure · 2 usage error · 3 not found · 4 conflict · 5 timeout · 6 over budget (job wait) · 128+N signal N.`);
  lines.push(`Errors are one line on stderr: ERROR: <what>; <fix>. MAM_DEBUG=1 adds stack traces.`);
  return `${lines.join("\n")}\n${examplesBlock(root.meta.examples, h("EXAMPLES"))}`;
}

/** the help of cmd, reached from root by path (names, no aliases) */
export async function helpText(cmd: MamCommand, path: string[], opts: HelpOptions = {}): Promise<string> {
  const color = opts.color ?? false;
  const h = (s: string) => (color ? `\u001b[1m\u001b[4m${s}\u001b[24m\u001b[22m` : s);
  if (path.length === 0) return rootHelp(cmd, opts, h);
  // citty reads NO_COLOR once, when it is loaded: decide colour before loading it
  if (!color) process.env.NO_COLOR = "1";
  const { renderUsage } = await import("citty");
  const parent = { meta: { name: ["mam", ...path.slice(0, -1)].join(" ") } };
  const text = (await renderUsage(cmd as never, parent as never)).split("\n").map((l) => l.trimEnd()).join("\n").replace(/\n+$/, "");
  return `${text}\n${examplesBlock(cmd.meta.examples, h("EXAMPLES"))}`;
}
