// Module headers and comments point to files that exist: a `lib/….ts` path named in lib/ (or mam.ts)
// is a file of the tree. A file that moves leaves no stale pointer behind (issue 33, part 5).
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../helpers/mam.ts";

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => join(e.parentPath, e.name));
}

/** the lib/ paths a text names (a path in an example command line is the user's, not ours: skipped) */
export function namedPaths(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    if (/['"`]mam /.test(line)) continue; // an example command's argument
    for (const m of line.matchAll(/\blib\/[A-Za-z0-9_/.-]+\.(?:ts|json|md|sh)\b/g)) out.push(m[0]);
  }
  return out;
}

test("the checker finds a path and skips example commands", () => {
  expect(namedPaths("// see lib/jobs/store.ts and lib/sys/x.json\nconst ex = 'mam job submit --expect lib/cli/status.ts';")).toEqual(["lib/jobs/store.ts", "lib/sys/x.json"]);
});

test("every lib/ path named in lib/ and mam.ts exists", () => {
  const missing: string[] = [];
  for (const f of [...sources("lib"), join(ROOT, "mam.ts")]) {
    for (const p of namedPaths(readFileSync(f, "utf8"))) if (!existsSync(join(ROOT, p))) missing.push(`${f.slice(ROOT.length + 1)}: ${p}`);
  }
  expect(missing).toEqual([]);
});
