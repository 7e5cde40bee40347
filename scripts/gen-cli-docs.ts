// docs/cli.md: every command's help exactly as `mam … --help` prints it (lib/cli/help.ts, the one
// renderer), without the version, so the file changes only when a command definition does.
//   bun scripts/gen-cli-docs.ts           write docs/cli.md   (npm run docs:cli)
//   bun scripts/gen-cli-docs.ts --check   exit 1 when docs/cli.md is out of date
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rootCommand } from "../mam.ts";
import type { Lazy, MamCommand } from "../lib/cli/command.ts";
import { helpText } from "../lib/cli/help.ts";

export const CLI_DOCS = join(import.meta.dir, "..", "docs", "cli.md");

const resolve = async (c: Lazy<MamCommand>): Promise<MamCommand> => (typeof c === "function" ? await c() : c);

/** every visible command, depth first in definition order: [path, command] */
async function walk(cmd: MamCommand, path: string[] = []): Promise<[string[], MamCommand][]> {
  const all: [string[], MamCommand][] = [[path, cmd]];
  for (const [name, sub] of Object.entries(cmd.subCommands ?? {})) {
    const c = await resolve(sub);
    if (!c.meta.hidden) all.push(...(await walk(c, [...path, name])));
  }
  return all;
}

const anchor = (title: string) => title.toLowerCase().replace(/[^a-z0-9 -]/g, "").replace(/ /g, "-");

export async function renderCliDocs(): Promise<string> {
  const root = await rootCommand();
  const cmds = await walk(root);
  const title = (p: string[]) => ["mam", ...p].join(" ");
  const parts = [
    "# mam command reference",
    "",
    "<!-- Generated from the command definitions by `npm run docs:cli` (scripts/gen-cli-docs.ts).",
    "     Do not edit: change the operation in lib/ops/table/, the command in lib/cli/ or mam.ts, and run `npm run docs:cli`. -->",
    "",
    "Every command's `--help`, as the binary prints it. Conventions (exit codes, `--json`, errors,",
    "the workspace) are in [the README](../README.md#conventions); topics in [docs/](README.md).",
    "",
    ...cmds.map(([p]) => `${"  ".repeat(Math.max(0, p.length - 1))}- [${title(p)}](#${anchor(title(p))})`),
    "",
  ];
  for (const [p, c] of cmds) {
    const text = await helpText(c, p, { version: false, color: false });
    parts.push(`## ${title(p)}`, "", "```text", text.replace(/\n+$/, ""), "```", "");
  }
  return parts.join("\n");
}

if (import.meta.main) {
  const text = await renderCliDocs();
  if (process.argv.includes("--check")) {
    let cur = "";
    try {
      cur = readFileSync(CLI_DOCS, "utf8");
    } catch {}
    if (cur !== text) {
      console.error("docs/cli.md is out of date; run: npm run docs:cli");
      process.exit(1);
    }
  } else {
    writeFileSync(CLI_DOCS, text);
    console.log(`wrote ${CLI_DOCS}`);
  }
}
