// docs/reference.md lists every environment variable mam reads: each `env.NAME` /
// `env["NAME"]` in lib/ and mam.ts, and each variable the herdr shim script reads.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Glob } from "bun";

const ROOT = join(import.meta.dir, "..", "..");
/** not configuration: the shell's own, and the shim's internal variables */
const NOT_CONFIG = new Set(["PATH", "BASH_SOURCE", "IFS", "MAM_SHIM_MAM"]);

test("every environment variable mam reads is in docs/reference.md (if this fails: add a row there)", () => {
  const names = new Set<string>();
  const files = [...new Glob("lib/**/*.ts").scanSync(ROOT), "mam.ts"];
  for (const f of files) {
    for (const m of readFileSync(join(ROOT, f), "utf8").matchAll(/\benv(?:\.|\?\.|\[")([A-Z_][A-Z0-9_]+)/g)) names.add(m[1]!);
  }
  for (const m of readFileSync(join(ROOT, "lib", "assets", "herdr-shim.sh"), "utf8").matchAll(/\$\{?([A-Z_][A-Z0-9_]+)/g)) names.add(m[1]!);
  const doc = readFileSync(join(ROOT, "docs", "reference.md"), "utf8");
  const missing = [...names].filter((n) => !NOT_CONFIG.has(n) && !doc.includes(`\`${n}\``)).sort();
  expect(missing).toEqual([]);
  expect(names.size).toBeGreaterThan(25);
});
