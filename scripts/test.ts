// npm test: build the binary once, run bun test against it (MAM_BIN), then print one summary line
//   N passed, N failed, N skipped
// A failed test runs once more, alone, marked "(attempt 2)" (see below).
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
const HEADER = /^(\S.*\.test\.[jt]s):$/;
/** bun prints a timeout after the test's result line, not before it */
const TIMED_OUT = /^\s+\^ this test timed out/;

/**
 * pure: bun's output without its recap ("2 tests failed:" and the failed tests' result lines again,
 * after the last file's tests), which would read as more failures of the last file
 */
export function withoutRecap(out: string): string {
  const lines = out.split("\n");
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (/^\d+ tests? failed:$/.test(lines[i]!)) {
      while (i + 1 < lines.length && /^\((fail|todo)\) /.test(lines[i + 1]!)) i++;
      continue;
    }
    kept.push(lines[i]!);
  }
  return kept.join("\n");
}

/**
 * pure: the errors of the failed tests and of those that passed only on a retry, repeated at the
 * end, each with its result line; bun prints them inline, far above the summary, where a CI log
 * that keeps only its tail loses them (at most `max` tests, `lines` lines of each)
 */
export function failuresAgain(out: string, max = 12, lines = 24): string {
  const shown: string[] = [];
  let block: string[] = [];
  const all = withoutRecap(out).split("\n");
  all.forEach((line, i) => {
    if (!RESULT.test(line)) {
      if (!TIMED_OUT.test(line)) block.push(line);
      return;
    }
    if ((line.startsWith("(fail) ") || line.includes("(attempt 2)")) && shown.length < max) {
      const at = block.findIndex((l) => /^(error|\w*Error)\b/.test(l));
      // from its first error line to the source excerpt of a second attempt's error
      const from = at >= 0 ? block.slice(at) : block;
      const end = from.findIndex((l) => /^\s*\d+ \| /.test(l));
      const err = (end >= 0 ? from.slice(0, end) : from).filter((l) => l.trim() !== "").slice(0, lines);
      if (TIMED_OUT.test(all[i + 1] ?? "")) err.unshift(all[i + 1]!.trim());
      shown.push([line, ...err.map((l) => `    ${l}`)].join("\n"));
    }
    block = [];
  });
  return shown.length ? `\n---- failed, or passed only on a retry (their errors, again) ----\n${shown.join("\n\n")}\n` : "";
}

export interface FailedTest {
  file: string;
  /** as bun prints it: describe blocks and the test joined by " > " */
  name: string;
}

/** pure: the tests a bun test output reports failed, each with the file whose header came last */
export function failedTests(out: string): FailedTest[] {
  let file = "";
  const failed: FailedTest[] = [];
  for (const line of withoutRecap(out).split("\n")) {
    const h = HEADER.exec(line);
    if (h) file = h[1]!;
    const f = /^\(fail\) (.*?)(?: \[[\d.]+m?s\])?$/.exec(line);
    if (f && file) failed.push({ file, name: f[1]! });
  }
  return failed;
}

/**
 * pure: bun test's -t pattern for exactly this test. bun matches -t against the describe blocks
 * and the test joined by a space, but prints them joined by " > ", which a name may hold too.
 */
export function exactName(name: string): string {
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  return `^${name.split(" > ").map(esc).join("(?: | > )")}$`;
}

/** a bun test count from its summary ("  12 pass") */
const count = (text: string, w: string) => Number(new RegExp(`^\\s*(\\d+) ${w}$`, "m").exec(text)?.[1] ?? 0);

/** at most this many failed tests are run again; more says something broke for all of them */
const MAX_RETRIED = 10;

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

  // tests/real-agents, tests/browser and tests/slow run only by their npm scripts or when named
  const args = process.argv.slice(2);
  const ignore = ["real-agents", "browser", "slow"].filter((d) => !args.some((a) => a.includes(d))).map((d) => `--path-ignore-patterns=tests/${d}/**`);
  // test files run in MAM_TEST_PARALLEL worker processes (default 2): the integration tests mostly
  // wait on processes, panes and brokers, each in its own sandbox, tmux server and ports
  // (the real agents, the browser and the slow suites run one file at a time: they load the machine)
  const heavy = ignore.length < 3;
  const workers = /^\d+$/.test(process.env.MAM_TEST_PARALLEL ?? "") ? Number(process.env.MAM_TEST_PARALLEL) : heavy ? 1 : 2;
  const parallel = workers > 1 ? [`--parallel=${workers}`] : [];
  const env = { ...process.env, MAM_BIN: bin, MAM_FAKE_HERDR: FAKE_HERDR_BIN, NO_COLOR: "1" };

  /**
   * bun test with these arguments, its stderr shown as it comes (rewritten by `shown`) and kept.
   * 120 s a test: two test files at a time on a 2-core machine took a test that needs 20 s alone
   * past 60 s, and what a timed-out test leaves running fails the run as an error between tests
   */
  async function bunTest(argv: string[], shown = (s: string) => s): Promise<{ code: number; text: string }> {
    const proc = Bun.spawn([process.execPath, "test", "--timeout=120000", ...argv], { cwd: root, stdin: "ignore", stdout: "inherit", stderr: "pipe", env });
    let text = "";
    const dec = new TextDecoder();
    for await (const chunk of proc.stderr) {
      const s = shown(dec.decode(chunk, { stream: true }));
      process.stderr.write(s);
      text += s;
    }
    return { code: await proc.exited, text };
  }

  const first = await bunTest([...parallel, ...ignore, ...args]);
  // a failed test runs once more, alone (the integration tests run real processes, tmux and
  // brokers on a busy 2-core CI machine). Its first attempt stays in the log as bun printed it, a
  // timeout included (bun's own --retry prints nothing of an attempt that timed out), and its
  // second is marked "(attempt 2)": a test that passes only then is a race to find, not a pass.
  const failed1 = failedTests(first.text);
  const errors = count(first.text, "errors?");
  let text = first.text;
  let recovered = 0;
  if (failed1.length > 0 && failed1.length <= MAX_RETRIED && errors === 0) {
    console.error(`\n---- ${failed1.length} failed test(s), each run once more alone ----`);
    for (const t of failed1) {
      const marked = (s: string) => s.replace(/^(\((?:pass|fail)\) .*?)( \[[\d.]+m?s\])?$/gm, "$1 (attempt 2)$2");
      const again = await bunTest([t.file, "-t", exactName(t.name)], marked);
      text += again.text;
      if (again.code === 0 && count(again.text, "pass") === 1) recovered++;
    }
  }
  const summary = failuresAgain(text);
  if (summary) console.error(summary);
  const passed = count(first.text, "pass") + recovered;
  const skipped = count(first.text, "skip") + count(first.text, "todo");
  let failed = count(first.text, "fail") - recovered + errors;
  if (first.code !== 0 && failed1.length === 0 && failed === 0) failed = 1; // crashed before the summary
  console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
  process.exit(failed === 0 ? 0 : first.code || 1);
}
