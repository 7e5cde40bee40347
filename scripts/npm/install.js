// The postinstall of the npm package multi-agent-mux: put the native mam binary of the platform
// package that fits in place of bin/mam (a hard link, else a copy), so that `mam` on PATH is the
// binary itself and no Node process runs on mam's hot path (the bash shims call it many times a
// minute). The binary's SHA-256 must be the one this package records for it, and it must run
// here (`mam --version`: a CPU without AVX2 dies of SIGILL and the baseline build is tried next).
// When nothing fits, or MAM_BINARY is set, bin/mam stays the small launcher (lib/launch.js),
// which says what to do. Never fails the install.
"use strict";
const crypto = require("crypto");
const cp = require("child_process");
const fs = require("fs");
const path = require("path");
const pick = require("./lib/pick.js");

const recorded = require("./package.json").mamBinaries || {};
const say = (s) => process.stderr.write(`multi-agent-mux: ${s}\n`);

function sha256(file) {
  return crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

function place(bin) {
  const target = path.join(__dirname, "bin", "mam");
  const tmp = `${target}.tmp-${process.pid}`;
  try {
    fs.linkSync(bin, tmp);
  } catch (e) {
    fs.copyFileSync(bin, tmp);
  }
  fs.chmodSync(tmp, 0o755);
  fs.renameSync(tmp, target);
}

function main() {
  if (process.env.MAM_BINARY) {
    say(`MAM_BINARY is set: mam runs ${process.env.MAM_BINARY} through the launcher (bin/mam)`);
    return;
  }
  const m = pick.detect();
  const { list, reason } = pick.candidates(m);
  for (const name of list) {
    const bin = pick.installedBinary(name, __dirname);
    if (!bin) continue;
    const want = recorded[`${pick.SCOPE}/${name}`];
    const got = sha256(bin);
    if (!want || got !== want) {
      say(`${pick.SCOPE}/${name}: its binary's SHA-256 is ${got}, not the ${want || "(none recorded)"} this package records; not used`);
      continue;
    }
    const r = cp.spawnSync(bin, ["--version"], { encoding: "utf8", timeout: 30000 });
    if (r.status !== 0) {
      say(`${pick.SCOPE}/${name} does not run here (${r.signal ? `signal ${r.signal}` : `exit ${r.status}`}${r.error ? `: ${r.error.message}` : ""}); trying the next build`);
      continue;
    }
    place(bin);
    return;
  }
  say(`${pick.noBinaryMessage(m, list, reason).replace(/^ERROR: mam: /, "")} (mam says this when it runs, until then)`);
}

try {
  main();
} catch (e) {
  say(`could not put the native binary in place (${e.message}); mam runs through its Node launcher, which is slower to start`);
}
