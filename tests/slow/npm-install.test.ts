// mam installed as a user installs it (issue 38 item 3): the npm packages (scripts/npm.ts) made
// from the binary under test as @multi-agent-mux/linux-x64, packed with `npm pack`, installed with
// `npm i -g --prefix <tmp> --offline` from the tarballs alone (no registry), then: `mam --version`,
// the demo, `mam pane-lock acquire` through the installed `mam` (its time against the bare
// binary is the bench row `bun run bench --only npm`), MAM_BINARY and the launcher's exit status, a missing platform package's
// message, and an uninstall that leaves no file behind. Other targets' packages are not built
// here (cross-compiling downloads Bun's runtimes); which one fits is tests/unit/npm-pick.test.ts.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { makeNpmPackages, npmPack } from "../../scripts/npm.ts";
import { MAM_BIN, run } from "../helpers/mam.ts";
import { makeSandbox } from "../helpers/sandbox.ts";

const sb = makeSandbox("mam-npm-");
afterAll(() => sb.cleanup());
const fits = process.platform === "linux" && process.arch === "x64" && MAM_BIN !== undefined && Bun.which("npm") !== null;
const t = fits ? test : test.skip;
const prefix = join(sb.root, "prefix");
const mam = join(prefix, "bin", "mam");
const tgz = join(sb.root, "tgz");
let main = "";
let platform = "";
/** npm with a cache and config of the sandbox's own, never the registry */
const npm = (args: string[], extra: Record<string, string> = {}) =>
  run(["npm", ...args, "--offline", "--no-audit", "--no-fund", "--loglevel=error"], {
    env: sb.with({ npm_config_cache: join(sb.root, "npm-cache"), npm_config_userconfig: join(sb.root, "npmrc"), npm_config_update_notifier: "false", ...extra }),
    cwd: sb.root,
    timeoutMs: 120_000,
  });

beforeAll(() => {
  if (!fits) return;
  const dirs = makeNpmPackages({ version: pkg.version, binaries: { "linux-x64": MAM_BIN! }, out: join(sb.root, "pkgs") });
  main = npmPack(dirs.main, tgz);
  platform = npmPack(dirs.platforms["linux-x64"]!, tgz);
}, 150_000);

/** every file (not folder) under dir */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...filesUnder(join(dir, e.name)));
    else out.push(join(dir, e.name));
  }
  return out;
}

t("npm i -g from the tarballs: mam on PATH is the native binary itself, --version is the package's", async () => {
  expect(main).toEndWith(`multi-agent-mux-${pkg.version}.tgz`);
  expect(platform).toEndWith(`multi-agent-mux-linux-x64-${pkg.version}.tgz`);
  const r = await npm(["i", "-g", "--prefix", prefix, main, platform]);
  expect(r.code, r.stderr).toBe(0);
  // no Node on the hot path: the bin link leads to the ELF binary, the same file as the platform package's
  const real = realpathSync(mam);
  expect(readFileSync(real).subarray(0, 4).toString("latin1")).toBe("\x7fELF");
  expect(statSync(real).ino).toBe(statSync(join(prefix, "lib", "node_modules", "@multi-agent-mux", "linux-x64", "bin", "mam")).ino);
  const v = await run([mam, "--version"], { env: sb.env });
  expect(v.code).toBe(0);
  expect(v.stdout).toBe((await run([MAM_BIN!, "--version"], { env: sb.env })).stdout);
  expect(v.stdout).toStartWith(`mam ${pkg.version} (`);
}, 150_000);

// Debian's musl package puts a musl loader beside glibc (.ci/run installs it): the mistake other
// tools shipped was to take that for a musl system (peers-2026-12b.md section 4)
const muslLoader = ["/lib/ld-musl-x86_64.so.1", "/lib/ld-musl-aarch64.so.1"].find((f) => existsSync(f));
(fits && muslLoader ? test : test.skip)("a glibc machine with a musl loader installed gets the glibc build", async () => {
  const pickJs = join(prefix, "lib", "node_modules", "multi-agent-mux", "lib", "pick.js");
  const r = await run(["node", "-e", `const p = require(${JSON.stringify(pickJs)}); const m = p.detect(); console.log(p.describe(m), p.candidates(m).list.join(" "))`], { env: sb.env });
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/^linux-x64 \(glibc(, AVX2|, no AVX2)?\) linux-x64/);
  expect(r.stdout).not.toContain("musl");
  // and the postinstall put the glibc build in place (the same file as linux-x64's)
  expect(statSync(realpathSync(mam)).ino).toBe(statSync(join(prefix, "lib", "node_modules", "@multi-agent-mux", "linux-x64", "bin", "mam")).ino);
}, 60_000);

t("the installed mam runs the demo", async () => {
  const r = await run([mam, "demo"], { env: sb.with({ TMPDIR: sb.root, TMUX_TMPDIR: sb.root, MAM_NO_SUBSCRIBER_DAEMON: "1" }), cwd: sb.ws, timeoutMs: 120_000 });
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
  expect(r.stdout).toContain("completed");
}, 130_000);

t("mam pane-lock acquire through the installed mam: the same binary, answering as the bare one does", () => {
  // no Node on the hot path: the first test showed the bin link leads to the platform package's
  // binary itself. Its time against the bare binary's is the bench row `bun run bench --only npm`
  // (≤ 1.1 ×): under the load of a whole CI run a ratio of medians was too noisy for a test (the
  // same binary measured 1.31 × against itself at load 35).
  const fd = openSync(join(sb.root, "free.lock"), "a");
  const stdio = ["ignore", "pipe", "inherit", "ignore", "ignore", "ignore", "ignore", "ignore", "ignore", fd] as never;
  const r = Bun.spawnSync([mam, "pane-lock", "acquire", "--fd", "9"], { stdio, env: sb.env });
  expect([r.exitCode, r.stdout.toString()]).toEqual([0, "locked\n"]);
}, 60_000);

t("MAM_BINARY: the launcher runs that binary, with its exit status, and 128+N when it dies of signal N", async () => {
  const launch = join(prefix, "lib", "node_modules", "multi-agent-mux", "lib", "launch.js");
  const fake = join(sb.root, "fake-mam");
  writeFileSync(fake, `#!/bin/sh\necho "fake mam $*"\ncase "$1" in exit7) exit 7 ;; segv) kill -SEGV $$ ;; ill) kill -ILL $$ ;; esac\n`);
  chmodSync(fake, 0o755);
  const go = (arg: string) => run(["node", launch, arg], { env: sb.with({ MAM_BINARY: fake }) });
  const a = await go("--version");
  expect([a.code, a.stdout]).toEqual([0, "fake mam --version\n"]);
  expect((await go("exit7")).code).toBe(7);
  expect((await go("segv")).code).toBe(128 + 11);
  const ill = await go("ill");
  expect(ill.code).toBe(128 + 4);
  expect(ill.stderr).toContain("died of SIGILL");
  const none = await run(["node", launch, "--version"], { env: sb.with({ MAM_BINARY: join(sb.root, "nothing-here") }) });
  expect(none.code).toBe(1);
  expect(none.stderr).toStartWith(`ERROR: mam: cannot run ${join(sb.root, "nothing-here")} (ENOENT); set MAM_BINARY to a mam binary that runs here, or unset it`);
}, 60_000);

t("without its platform package, mam says what to do (and exits 1)", async () => {
  const p2 = join(sb.root, "prefix2");
  mkdirSync(p2);
  const r = await npm(["i", "-g", "--prefix", p2, main]);
  expect(r.code, r.stderr).toBe(0);
  const v = await run([join(p2, "bin", "mam"), "--version"], { env: sb.env });
  expect(v.code).toBe(1);
  expect(v.stdout).toBe("");
  expect(v.stderr).toMatch(
    /^ERROR: mam: no mam binary for linux-x64 \(glibc(, AVX2|, no AVX2)?\) is installed: the optional package @multi-agent-mux\/linux-x64(-baseline| or @multi-agent-mux\/linux-x64-baseline) is missing .*reinstall without --omit=optional \(npm i -g multi-agent-mux\), or set MAM_BINARY=\/path\/to\/mam, or install the binary without Node: https:\/\/github.com\/multi-agent-mux\/mam#install\n$/,
  );
  expect((await npm(["rm", "-g", "--prefix", p2, "multi-agent-mux"])).code).toBe(0);
}, 150_000);

t("npm rm -g leaves no file behind", async () => {
  const r = await npm(["rm", "-g", "--prefix", prefix, "multi-agent-mux", "@multi-agent-mux/linux-x64"]);
  expect(r.code, r.stderr).toBe(0);
  expect(filesUnder(prefix)).toEqual([]);
}, 60_000);
