// docs/troubleshooting.md names every ERROR a user can meet: each error message written in lib/
// (the first argument of usageError, notFound, conflict, timeoutError, new MamError, new
// HerdrError, new TmuxError) must appear in it — its longest fixed part, with the interpolated
// parts written as … in the doc.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Glob } from "bun";

const ROOT = join(import.meta.dir, "..", "..");
const CALL = /(?:usageError|notFound|conflict|timeoutError|new MamError|new HerdrError|new TmuxError)\(\s*(`(?:[^`\\]|\\.|\$\{(?:[^{}]|\{[^{}]*\})*\})*`|"(?:[^"\\]|\\.)*")/g;

/** the longest fixed part of each error message in a source text */
function errorFragments(src: string): string[] {
  const out: string[] = [];
  for (const m of src.matchAll(CALL)) {
    const parts = m[1]!.slice(1, -1).split(/\$\{(?:[^{}]|\{[^{}]*\})*\}/).map((s) => s.trim());
    const best = parts.sort((a, b) => b.length - a.length)[0]!;
    if (best.length >= 8) out.push(best);
  }
  return out;
}

test("the extraction finds the fixed parts of messages", () => {
  const src = 'throw usageError(`invalid role \'${role.slice(0, 40)}\'`, "hint"); throw new MamError("tmux not found on PATH", 1);';
  expect(errorFragments(src)).toEqual(["invalid role '", "tmux not found on PATH"]);
});

test("every error message in lib/ is in docs/troubleshooting.md (if this fails: add a row there)", () => {
  const doc = readFileSync(join(ROOT, "docs", "troubleshooting.md"), "utf8");
  const missing: string[] = [];
  let n = 0;
  for (const f of new Glob("lib/**/*.ts").scanSync(ROOT)) {
    for (const frag of errorFragments(readFileSync(join(ROOT, f), "utf8"))) {
      n++;
      if (!doc.includes(frag)) missing.push(`${f}: ${frag}`);
    }
  }
  expect(missing).toEqual([]);
  expect(n).toBeGreaterThan(100);
});
