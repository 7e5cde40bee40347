// npm test: build the binary once, run bun test against it (MAM_BIN), then print one summary line
//   N passed, N failed, N skipped
// Extra arguments go to bun test (a file filter, -t NAME, …). MAM_TEST_NO_BUILD=1 reuses dist/mam.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { build } from "./build.ts";

const root = join(import.meta.dir, "..");
const bin = join(root, "dist", "mam");
if (process.env.MAM_TEST_NO_BUILD !== "1" || !existsSync(bin)) {
  const t0 = performance.now();
  await build({ outfile: bin });
  console.error(`built ${bin} in ${Math.round(performance.now() - t0)} ms`);
}

const proc = Bun.spawn([process.execPath, "test", "--timeout=60000", ...process.argv.slice(2)], {
  cwd: root,
  stdin: "ignore",
  stdout: "inherit",
  stderr: "pipe",
  env: { ...process.env, MAM_BIN: bin, NO_COLOR: "1" },
});
let text = "";
const dec = new TextDecoder();
for await (const chunk of proc.stderr) {
  process.stderr.write(chunk);
  text += dec.decode(chunk, { stream: true });
}
const code = await proc.exited;
const n = (w: string) => Number(new RegExp(`^\\s*(\\d+) ${w}$`, "m").exec(text)?.[1] ?? 0);
const passed = n("pass");
const skipped = n("skip") + n("todo");
let failed = n("fail") + n("errors?");
if (code !== 0 && failed === 0) failed = 1; // crashed before the summary
console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(code === 0 && failed === 0 ? 0 : code || 1);
