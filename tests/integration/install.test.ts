// scripts/install.sh against a local release folder (file:// and loopback HTTP).
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { MAM_CMD, ROOT, run } from "../helpers/mam.ts";
import { makeSandbox } from "../helpers/sandbox.ts";

const sb = makeSandbox("mam-inst-");
const bin = MAM_CMD[0]!;
const arch = process.arch === "arm64" ? "arm64" : "x64";
const name = `mam-9.8.7-linux-${arch}`;
const rel = join(sb.root, "release");
mkdirSync(rel);
copyFileSync(bin, join(rel, name));
const sum = createHash("sha256").update(readFileSync(join(rel, name))).digest("hex");
writeFileSync(join(rel, "SHA256SUMS"), `${sum}  ${name}\n${"0".repeat(64)}  mam-9.8.7-darwin-arm64\n`);

const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => new Response(Bun.file(join(rel, new URL(req.url).pathname.slice(1)))) });
afterAll(async () => {
  server.stop(true);
  await sb.cleanup();
});
// the release above has the default build only: a CPU with AVX2 (whatever this machine's is)
const avx2 = join(sb.root, "cpuinfo-avx2");
writeFileSync(avx2, "flags\t\t: fpu sse2 avx avx2\n");
const install = (url: string, dir: string, ...args: string[]) =>
  run(["bash", join(ROOT, "scripts", "install.sh"), "--dir", dir, ...args], { env: sb.with({ MAM_RELEASE_URL: url, MAM_CPUINFO: avx2 }) });

test.skipIf(process.env.MAM_BIN === undefined || process.platform !== "linux")("installs the latest from a file:// folder after checking the sum", async () => {
  const dir = join(sb.root, "bin1");
  const r = await install(`file://${rel}`, dir);
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^installed mam \S+ \(\S+\) to /);
  const v = await run([join(dir, "mam"), "--version"], { env: sb.env });
  expect(v.stdout).toMatch(/^mam /);
});

test.skipIf(process.env.MAM_BIN === undefined || process.platform !== "linux")("installs a given version over loopback HTTP", async () => {
  const dir = join(sb.root, "bin2");
  const r = await install(`http://127.0.0.1:${server.port}`, dir, "--version", "9.8.7");
  expect(r.code).toBe(0);
  expect(existsSync(join(dir, "mam"))).toBe(true);
});

test("a checksum mismatch installs nothing", async () => {
  const bad = join(sb.root, "bad");
  mkdirSync(bad);
  writeFileSync(join(bad, name), "not mam");
  writeFileSync(join(bad, "SHA256SUMS"), `${sum}  ${name}\n`);
  const dir = join(sb.root, "bin3");
  const r = await install(`file://${bad}`, dir);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("checksum mismatch");
  expect(existsSync(join(dir, "mam"))).toBe(false);
});

test("a version that is not released fails clearly", async () => {
  const r = await install(`file://${rel}`, join(sb.root, "bin4"), "--version", "1.0.0");
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("is not listed in SHA256SUMS");
});

// Which build: the system's C library decides (ldd, getconf, /bin/sh's loader), not whether a
// musl loader exists (Debian's musl package installs one next to glibc). Fake systems are fake
// `ldd` / `getconf` first on PATH; the "binaries" are scripts that say which build they are.
describe.skipIf(process.platform !== "linux" || process.arch !== "x64")("install picks the binary that runs", () => {
  const rel2 = join(sb.root, "release2");
  mkdirSync(rel2);
  const build = (file: string, body: string) => {
    writeFileSync(join(rel2, file), `#!/bin/sh\n${body}\n`);
    chmodSync(join(rel2, file), 0o755);
  };
  build("mam-9.8.7-linux-x64", 'echo "mam 9.8.7 (glibc-build)"');
  build("mam-9.8.7-linux-x64-musl", 'echo "mam 9.8.7 (musl-build)"');
  build("mam-9.8.7-linux-x64-baseline", 'echo "mam 9.8.7 (baseline-build)"');
  const sums = () => {
    writeFileSync(join(rel2, "SHA256SUMS"), readdirSync(rel2).filter((f) => f.startsWith("mam-")).map((f) => `${createHash("sha256").update(readFileSync(join(rel2, f))).digest("hex")}  ${f}\n`).join(""));
  };
  sums();
  /** a fake system: its own bin folder first on PATH with the given ldd and getconf, and a CPU with AVX2 or without */
  const system = (label: string, ldd: string, getconf: string, avx2 = true) => {
    const b = join(sb.root, `sys-${label}`);
    mkdirSync(b);
    writeFileSync(join(b, "cpuinfo"), `processor\t: 0\nflags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 popcnt${avx2 ? " avx avx2 bmi2" : " avx"}\n`);
    writeFileSync(join(b, "ldd"), `#!/bin/sh\n${ldd}\n`);
    writeFileSync(join(b, "getconf"), `#!/bin/sh\n${getconf}\n`);
    chmodSync(join(b, "ldd"), 0o755);
    chmodSync(join(b, "getconf"), 0o755);
    return sb.with({ MAM_RELEASE_URL: `file://${rel2}`, PATH: `${b}:${sb.env.PATH}`, MAM_CPUINFO: join(b, "cpuinfo") });
  };
  const inst = (env: Record<string, string>, dir: string, ...args: string[]) =>
    run(["bash", join(ROOT, "scripts", "install.sh"), "--dir", dir, ...args], { env });
  const GLIBC_LDD = 'echo "ldd (Debian GLIBC 2.36-9+deb12u14) 2.36"';
  const MUSL_LDD = 'echo "musl libc (x86_64)"; echo "Version 1.2.4"; echo "Usage: ldd [options] [--] pathname" ; exit 1';

  test("a glibc system with musl installed gets the glibc build", async () => {
    // Debian with the musl package: its musl ldd is not the one on PATH, the system's is glibc's
    const dir = join(sb.root, "g1");
    const r = await inst(system("glibc", GLIBC_LDD, 'echo "glibc 2.36"'), dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("mam-9.8.7-linux-x64 (linux, glibc, avx2)");
    expect(r.stdout).toBe(`installed mam 9.8.7 (glibc-build) to ${dir}/mam\n`);
  });

  test("a musl system gets the musl build", async () => {
    const dir = join(sb.root, "m1");
    const r = await inst(system("musl", MUSL_LDD, "exit 1"), dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("mam-9.8.7-linux-x64-musl (linux, musl, avx2)");
    expect(r.stdout).toBe(`installed mam 9.8.7 (musl-build) to ${dir}/mam\n`);
  });

  test("no answer from ldd or getconf: the loader of /bin/sh decides (glibc here)", async () => {
    const dir = join(sb.root, "s1");
    const r = await inst(system("mute", "exit 127", "exit 1"), dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("(glibc-build)");
  });

  test("--libc overrides the detection; a bad value is a usage error", async () => {
    const dir = join(sb.root, "o1");
    const r = await inst(system("ov", GLIBC_LDD, "exit 0"), dir, "--libc", "musl");
    expect(r.stdout).toContain("(musl-build)");
    const bad = await inst(system("ov2", GLIBC_LDD, "exit 0"), dir, "--libc", "bionic");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--libc must be glibc or musl");
  });

  test("a CPU without AVX2 gets the baseline build on glibc, a clear refusal on musl; --cpu overrides", async () => {
    const dir = join(sb.root, "c1");
    const r = await inst(system("noavx", GLIBC_LDD, 'echo "glibc 2.36"', false), dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain("mam-9.8.7-linux-x64-baseline (linux, glibc, baseline)");
    expect(r.stdout).toBe(`installed mam 9.8.7 (baseline-build) to ${dir}/mam\n`);
    const musl = await inst(system("noavx-musl", MUSL_LDD, "exit 1", false), join(sb.root, "c2"));
    expect(musl.code).toBe(1);
    expect(musl.stderr).toContain("mam's musl build for x64 needs a CPU with AVX2 and this one has none");
    expect(existsSync(join(sb.root, "c2", "mam"))).toBe(false);
    const forced = await inst(system("avx-forced", GLIBC_LDD, 'echo "glibc 2.36"'), join(sb.root, "c3"), "--cpu", "baseline");
    expect(forced.stdout).toContain("(baseline-build)");
    const bad = await inst(system("cpu-bad", GLIBC_LDD, "exit 0"), join(sb.root, "c4"), "--cpu", "sse");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--cpu must be avx2 or baseline");
  });

  test("a binary that does not run is refused and the old one is kept", async () => {
    const dir = join(sb.root, "k1");
    const env = system("broken", MUSL_LDD, "exit 1");
    expect((await inst(env, dir)).code).toBe(0); // the working musl build
    const before = readFileSync(join(dir, "mam"));
    // the next release's musl build cannot load its libraries
    build("mam-9.8.7-linux-x64-musl", 'echo "Error loading shared library libstdc++.so.6: No such file or directory" >&2; exit 127');
    sums();
    try {
      const r = await inst(env, dir);
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain("mam-9.8.7-linux-x64-musl does not run on this system (Error loading shared library libstdc++.so.6");
      expect(r.stderr).toContain(`kept the installed ${dir}/mam`);
      expect(r.stderr).toContain("apk add libstdc++ libgcc");
      expect(readFileSync(join(dir, "mam"))).toEqual(before);
      expect(readdirSync(dir)).toEqual(["mam"]); // no half-installed file left
      // a first install of a broken binary installs nothing
      const fresh = join(sb.root, "k2");
      const r2 = await inst(env, fresh);
      expect(r2.code).toBe(1);
      expect(r2.stderr).toContain("nothing installed");
      expect(existsSync(join(fresh, "mam"))).toBe(false);
    } finally {
      build("mam-9.8.7-linux-x64-musl", 'echo "mam 9.8.7 (musl-build)"');
      sums();
    }
  });
});
