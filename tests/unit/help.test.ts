// The help renderer (lib/cli/help.ts) and the docs it generates (docs/cli.md).
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { rootCommand } from "../../mam.ts";

const root = await rootCommand();
import { commandAt, helpText } from "../../lib/cli/help.ts";
import { CLI_DOCS, renderCliDocs } from "../../scripts/gen-cli-docs.ts";

test("every visible top-level command is in a help group (add a new one to a group in mam.ts)", async () => {
  const grouped = new Set((root.meta.groups ?? []).flatMap((g) => g.commands.map((c) => c.split(" ")[0])));
  for (const [name, sub] of Object.entries(root.subCommands ?? {})) {
    const c = typeof sub === "function" ? await sub() : sub;
    if (!c.meta.hidden) expect(grouped.has(name), `'${name}' is in no group of mam.ts's meta.groups`).toBe(true);
  }
  for (const g of root.meta.groups ?? []) for (const p of g.commands) expect(await commandAt(root, p.split(" ")), p).toBeDefined();
});

test("mam --help: the everyday groups first, in order, then the main job's examples", async () => {
  const t = await helpText(root, [], { version: "1.2.3 (abc)" });
  expect(t.split("\n")[0]).toEndWith("(mam v1.2.3 (abc))");
  const at = ["AGENTS", "JOBS", "MONITORING", "PLUMBING", "EXAMPLES"].map((h) => t.indexOf(`\n${h}\n`));
  expect(at.every((i) => i > 0)).toBe(true);
  expect([...at].sort((a, b) => a - b)).toEqual(at);
  const ex = t.slice(t.indexOf("\nEXAMPLES\n"));
  for (const s of ["mam create --agent", "mam job submit --to", "mam job wait", "mam status"]) expect(ex).toContain(s);
  expect(t).not.toMatch(/[ \t]$/m);
  expect(t).not.toContain("\u001b[");
});

test("a command's help: citty's usage plus its examples, no trailing blanks", async () => {
  const wait = (await commandAt(root, ["job", "wait"]))!;
  const t = await helpText(wait, ["job", "wait"]);
  expect(t).toContain("USAGE mam job wait [OPTIONS] <JOB_IDS>");
  expect(t).toContain("--timeout=<S>");
  expect(t).toContain("\n\nEXAMPLES\n\n  mam job wait abc12345\n");
  expect(t).not.toMatch(/[ \t]$/m);
});

test("docs/cli.md is the generated reference (if this fails, run: npm run docs:cli)", async () => {
  const want = await renderCliDocs();
  let have = "";
  try {
    have = readFileSync(CLI_DOCS, "utf8");
  } catch {}
  expect(have === want, "docs/cli.md is out of date; run: npm run docs:cli").toBe(true);
  for (const p of ["create", "job submit", "pane-lock acquire", "registry restore"]) expect(have).toContain(`## mam ${p}\n`);
});
