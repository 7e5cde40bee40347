// npm test: build the binary once, run bun test against it (MAM_BIN), then print one summary line
//   N passed, N failed, N skipped
// Extra arguments go to bun test (a file filter, -t NAME, …). MAM_TEST_NO_BUILD=1 reuses dist/mam
// and dist/fake-herdr. The fake herdr (tests/fakes/herdr) is compiled to dist/fake-herdr too.
// tests/real-agents (the real claude and codex CLIs), tests/browser (mam ui in chromium) and
// tests/slow (the queue at scale, the team across network namespaces and bridged brokers: minutes
// each) are left out unless an argument names them: `npm run test:agents` installs those CLIs and
// runs the first, `npm run test:browser` the second, `npm run test:slow` the third.
import { chmodSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { build } from "./build.ts";

const root = join(import.meta.dir, "..");
const bin = join(root, "dist", "mam");
export const FAKE_HERDR_BIN = join(root, "dist", "fake-herdr");

/** compile the fake herdr (server + CLI in one executable) to dist/fake-herdr */
export async function buildFakeHerdr(outfile = FAKE_HERDR_BIN): Promise<void> {
  mkdirSync(join(outfile, ".."), { recursive: true });
  const result = await Bun.build({
    entrypoints: [join(root, "tests", "fakes", "herdr", "main.ts")],
    bytecode: true,
    format: "esm",
    minify: false,
    sourcemap: "none",
    compile: { outfile, autoloadDotenv: false, autoloadBunfig: false },
    throw: false,
  } as never);
  const r = result as unknown as { success: boolean; logs: unknown[] };
  if (!r.success) {
    for (const log of r.logs) console.error(log);
    throw new Error("fake herdr build failed");
  }
  chmodSync(outfile, 0o755);
}

/** a result line of bun test, or a file's header: what ends the error lines of a test before it */
const RESULT = /^\((pass|fail|skip|todo)\) |^\S.*\.test\.[jt]s:$/;

/**
 * pure: the errors of the failed tests and of those that passed only on a retry, repeated at the
 * end, each with its result line; bun prints them inline, far above the summary, where a CI log
 * that keeps only its tail loses them (at most `max` tests, `lines` lines of each)
 */
export function failuresAgain(out: string, max = 12, lines = 24): string {
  const shown: string[] = [];
  let block: string[] = [];
  for (const line of out.split("\n")) {
    if (!RESULT.test(line)) {
      block.push(line);
      continue;
    }
    if ((line.startsWith("(fail) ") || line.includes("(attempt 2)")) && shown.length < max) {
      const at = block.findIndex((l) => /^(error|\w*Error)\b/.test(l));
      // from its first error line to the source excerpt of a second attempt's error
      const from = at >= 0 ? block.slice(at) : block;
      const end = from.findIndex((l) => /^\s*\d+ \| /.test(l));
      const err = (end >= 0 ? from.slice(0, end) : from).filter((l) => l.trim() !== "").slice(0, lines);
      shown.push([line, ...err.map((l) => `    ${l}`)].join("\n"));
    }
    block = [];
  }
  return shown.length ? `\n---- failed, or passed only on a retry (their errors, again) ----\n${shown.join("\n\n")}\n` : "";
}

if (import.meta.main) {
  if (process.env.MAM_TEST_NO_BUILD !== "1" || !existsSync(bin)) {
    const t0 = performance.now();
    await build({ outfile: bin });
    console.error(`built ${bin} in ${Math.round(performance.now() - t0)} ms`);
  }
  if (process.env.MAM_TEST_NO_BUILD !== "1" || !existsSync(FAKE_HERDR_BIN)) {
    const t0 = performance.now();
    await buildFakeHerdr();
    console.error(`built ${FAKE_HERDR_BIN} in ${Math.round(performance.now() - t0)} ms`);
  }

  // --retry=1: the integration tests run real processes, tmux and brokers on a busy 2-core CI
  // machine; a test that passed only on its second attempt is marked "(attempt 2)" in the log,
  // and a broken one still fails (twice)
  // tests/real-agents, tests/browser and tests/slow run only by their npm scripts or when named
  const args = process.argv.slice(2);
  const ignore = ["real-agents", "browser", "slow"].filter((d) => !args.some((a) => a.includes(d))).map((d) => `--path-ignore-patterns=tests/${d}/**`);
  // test files run in MAM_TEST_PARALLEL worker processes (default 2): the integration tests mostly
  // wait on processes, panes and brokers, each in its own sandbox, tmux server and ports
  // (the real agents, the browser and the slow suites run one file at a time: they load the machine)
  const heavy = ignore.length < 3;
  const workers = /^\d+$/.test(process.env.MAM_TEST_PARALLEL ?? "") ? Number(process.env.MAM_TEST_PARALLEL) : heavy ? 1 : 2;
  const parallel = workers > 1 ? [`--parallel=${workers}`] : [];
  const proc = Bun.spawn([process.execPath, "test", "--timeout=60000", "--retry=1", ...parallel, ...ignore, ...args], {
    cwd: root,
    stdin: "ignore",
    stdout: "inherit",
    stderr: "pipe",
    env: { ...process.env, MAM_BIN: bin, MAM_FAKE_HERDR: FAKE_HERDR_BIN, NO_COLOR: "1" },
  });
  let text = "";
  const dec = new TextDecoder();
  for await (const chunk of proc.stderr) {
    process.stderr.write(chunk);
    text += dec.decode(chunk, { stream: true });
  }
  const code = await proc.exited;
  const again = failuresAgain(text);
  if (again) console.error(again);
  const n = (w: string) => Number(new RegExp(`^\\s*(\\d+) ${w}$`, "m").exec(text)?.[1] ?? 0);
  const passed = n("pass");
  const skipped = n("skip") + n("todo");
  let failed = n("fail") + n("errors?");
  if (code !== 0 && failed === 0) failed = 1; // crashed before the summary
  console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
  process.exit(code === 0 && failed === 0 ? 0 : code || 1);
}

