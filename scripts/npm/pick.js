// Which of mam's platform packages fits this machine (shared by the postinstall and the launcher
// of the npm package multi-agent-mux). Plain CommonJS for any Node >= 16: no dependency.
//
// The mistakes other tools shipped (docs: peers-2026-12b.md section 4): musl not detected
// (Alpine), musl picked on a glibc system that merely has a musl loader (WSL, Debian's musl
// package), the AVX2 build on a CPU without AVX2 (SIGILL). So: the C library is the one this Node
// runs on (glibcVersionRuntime in Node's own report, else `ldd --version`), and AVX2 is read from
// the CPU's flags; an unknown answer tries the AVX2 build first and the baseline build next.
"use strict";
const fs = require("fs");
const cp = require("child_process");

const SCOPE = "@multi-agent-mux";

/** every platform package: its npm name's tail, and the os/cpu/libc npm installs it on */
const PACKAGES = {
  "linux-x64": { os: "linux", cpu: "x64", libc: "glibc", what: "Linux x64, glibc, a CPU with AVX2" },
  "linux-x64-baseline": { os: "linux", cpu: "x64", libc: "glibc", what: "Linux x64, glibc, any x64 CPU (no AVX2 needed)" },
  "linux-x64-musl": { os: "linux", cpu: "x64", libc: "musl", what: "Linux x64, musl (Alpine), a CPU with AVX2" },
  "linux-arm64": { os: "linux", cpu: "arm64", libc: "glibc", what: "Linux arm64, glibc" },
  "linux-arm64-musl": { os: "linux", cpu: "arm64", libc: "musl", what: "Linux arm64, musl (Alpine)" },
  "darwin-x64": { os: "darwin", cpu: "x64", what: "macOS on Intel" },
  "darwin-arm64": { os: "darwin", cpu: "arm64", what: "macOS on Apple silicon" },
};

/** glibc, musl or undefined (not Linux, or not known) */
function detectLibc() {
  if (process.platform !== "linux") return undefined;
  try {
    if (process.report) {
      process.report.excludeNetwork = true;
      const header = process.report.getReport().header;
      if (header && header.glibcVersionRuntime) return "glibc";
    }
  } catch (e) {}
  let text = "";
  try {
    const r = cp.spawnSync("ldd", ["--version"], { encoding: "utf8", timeout: 5000 });
    text = `${r.stdout || ""}${r.stderr || ""}`;
  } catch (e) {}
  if (/musl/i.test(text)) return "musl";
  if (/GLIBC|GNU libc|GNU C Library/i.test(text)) return "glibc";
  return undefined;
}

/** true, false, or undefined (not known) */
function detectAvx2() {
  if (process.arch !== "x64") return undefined;
  try {
    if (process.platform === "linux") {
      const flags = fs.readFileSync("/proc/cpuinfo", "utf8").split("\n").find((l) => l.startsWith("flags"));
      return flags === undefined ? undefined : /\savx2(\s|$)/.test(flags);
    }
    if (process.platform === "darwin") {
      const r = cp.spawnSync("sysctl", ["-n", "machdep.cpu.leaf7_features"], { encoding: "utf8", timeout: 5000 });
      return r.status === 0 ? /\bAVX2\b/.test(r.stdout) : undefined;
    }
  } catch (e) {}
  return undefined;
}

function detect() {
  return { platform: process.platform, arch: process.arch, libc: detectLibc(), avx2: detectAvx2() };
}

/**
 * pure: the platform packages that fit, best first (each a key of PACKAGES); an empty list has a
 * reason. An unknown libc on Linux is taken as glibc (musl systems say so in `ldd --version`).
 */
function candidates(m) {
  if (m.platform === "linux" && m.arch === "x64") {
    if (m.libc === "musl") {
      if (m.avx2 === false) return { list: [], reason: "mam's musl build for x64 needs a CPU with AVX2 and this one has none" };
      return { list: ["linux-x64-musl"] };
    }
    return { list: m.avx2 === false ? ["linux-x64-baseline"] : ["linux-x64", "linux-x64-baseline"] };
  }
  if (m.platform === "linux" && m.arch === "arm64") return { list: [m.libc === "musl" ? "linux-arm64-musl" : "linux-arm64"] };
  if (m.platform === "darwin" && (m.arch === "x64" || m.arch === "arm64")) return { list: [`darwin-${m.arch}`] };
  return { list: [], reason: `mam ships no build for ${m.platform}-${m.arch}` };
}

/** how this machine reads in a message: "linux-x64 (glibc, AVX2)" */
function describe(m) {
  const bits = [];
  if (m.libc) bits.push(m.libc);
  if (m.avx2 !== undefined) bits.push(m.avx2 ? "AVX2" : "no AVX2");
  return `${m.platform}-${m.arch}${bits.length ? ` (${bits.join(", ")})` : ""}`;
}

const INSTALL_SH = "https://github.com/multi-agent-mux/mam#install";

/** the ERROR line when no installed binary fits (what to do included) */
function noBinaryMessage(m, list, reason) {
  if (!list.length) {
    return (
      `ERROR: mam: no mam binary for ${describe(m)}: ${reason}; mam ships ${Object.keys(PACKAGES).join(", ")}; ` +
      `build mam from source (docs/install.md) and set MAM_BINARY=/path/to/mam`
    );
  }
  const names = list.map((c) => `${SCOPE}/${c}`).join(" or ");
  return (
    `ERROR: mam: no mam binary for ${describe(m)} is installed: the optional package ${names} is missing ` +
    `(npm leaves optional packages out with --omit=optional or --no-optional, and a registry mirror may lack them); ` +
    `reinstall without --omit=optional (npm i -g multi-agent-mux), or set MAM_BINARY=/path/to/mam, ` +
    `or install the binary without Node: ${INSTALL_SH}`
  );
}

/** the binary of an installed platform package, else undefined */
function installedBinary(name, from) {
  try {
    const pkg = require.resolve(`${SCOPE}/${name}/package.json`, { paths: [from] });
    const bin = require("path").join(require("path").dirname(pkg), "bin", "mam");
    return fs.existsSync(bin) ? bin : undefined;
  } catch (e) {
    return undefined;
  }
}

module.exports = { SCOPE, PACKAGES, detect, detectLibc, detectAvx2, candidates, describe, noBinaryMessage, installedBinary };
