// Which platform package the npm package's postinstall and launcher pick (scripts/npm/pick.js):
// the mistakes other tools shipped (musl missed, musl picked on glibc, the AVX2 build on a CPU
// without it) as cases of a pure function.
import { describe, expect, test } from "bun:test";
import pick from "../../scripts/npm/pick.js";
import { NPM_TARGETS } from "../../scripts/npm.ts";

const c = (platform: string, arch: string, libc?: string, avx2?: boolean) => pick.candidates({ platform, arch, libc, avx2 });

describe("the platform package that fits", () => {
  test("linux x64: the AVX2 build first, the baseline one without AVX2 (or after it when AVX2 is unknown)", () => {
    expect(c("linux", "x64", "glibc", true).list).toEqual(["linux-x64", "linux-x64-baseline"]);
    expect(c("linux", "x64", "glibc", undefined).list).toEqual(["linux-x64", "linux-x64-baseline"]);
    expect(c("linux", "x64", "glibc", false).list).toEqual(["linux-x64-baseline"]);
    // an unknown libc is glibc's (musl says itself in ldd --version)
    expect(c("linux", "x64", undefined, true).list).toEqual(["linux-x64", "linux-x64-baseline"]);
  });

  test("musl only where the C library mam runs on is musl", () => {
    expect(c("linux", "x64", "musl", true).list).toEqual(["linux-x64-musl"]);
    expect(c("linux", "arm64", "musl").list).toEqual(["linux-arm64-musl"]);
    expect(c("linux", "arm64", "glibc").list).toEqual(["linux-arm64"]);
    const r = c("linux", "x64", "musl", false);
    expect(r.list).toEqual([]);
    expect(r.reason).toBe("mam's musl build for x64 needs a CPU with AVX2 and this one has none");
  });

  test("macOS, and what mam does not ship", () => {
    expect(c("darwin", "arm64").list).toEqual(["darwin-arm64"]);
    expect(c("darwin", "x64", undefined, true).list).toEqual(["darwin-x64"]);
    const w = c("win32", "x64");
    expect(w.list).toEqual([]);
    expect(pick.noBinaryMessage({ platform: "win32", arch: "x64" }, w.list, w.reason)).toBe(
      "ERROR: mam: no mam binary for win32-x64: mam ships no build for win32-x64; mam ships linux-x64, linux-x64-baseline, linux-x64-musl, linux-arm64, linux-arm64-musl, darwin-x64, darwin-arm64; build mam from source (docs/install.md) and set MAM_BINARY=/path/to/mam",
    );
  });

  test("every package the picker names is one the release makes, with the same os/cpu/libc", () => {
    expect(Object.keys(pick.PACKAGES).sort()).toEqual(Object.keys(NPM_TARGETS).sort());
    for (const [name, p] of Object.entries(pick.PACKAGES) as [keyof typeof NPM_TARGETS, { os: string; cpu: string; libc?: string }][]) {
      const t = NPM_TARGETS[name] as { os: string; cpu: string; libc?: string };
      expect([p.os, p.cpu, p.libc]).toEqual([t.os, t.cpu, t.libc]);
      for (const m of [{ platform: p.os, arch: p.cpu, libc: p.libc, avx2: !name.endsWith("-baseline") }]) expect(pick.candidates(m).list[0]).toBe(name);
    }
  });

  test("this machine: the libc Node runs on (glibc here) and its CPU's AVX2 flag", () => {
    const m = pick.detect();
    expect(m.platform).toBe(process.platform);
    if (process.platform === "linux") expect(m.libc).toBe(readLddLibc());
  });
});

function readLddLibc(): string {
  const r = Bun.spawnSync(["ldd", "--version"]);
  return /musl/i.test(`${r.stdout}${r.stderr}`) ? "musl" : "glibc";
}
