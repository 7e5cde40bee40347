// mam's fallback launcher (the npm package multi-agent-mux): what `mam` runs when the postinstall
// could not put the native binary in place of bin/mam (install scripts turned off, no binary
// that fits, MAM_BINARY set at install), and what `npx multi-agent-mux` runs before that. It picks
// the binary (MAM_BINARY, else the installed platform package that fits), runs it, and exits
// with its status: 128+N when it died of signal N, never 0 on a crash.
"use strict";
const cp = require("child_process");
const os = require("os");
const pick = require("./pick.js");

function binary() {
  if (process.env.MAM_BINARY) return process.env.MAM_BINARY;
  const m = pick.detect();
  const { list, reason } = pick.candidates(m);
  for (const name of list) {
    const bin = pick.installedBinary(name, __dirname);
    if (bin) return bin;
  }
  process.stderr.write(`${pick.noBinaryMessage(m, list, reason)}\n`);
  process.exit(1);
}

const bin = binary();
const child = cp.spawn(bin, process.argv.slice(2), { stdio: "inherit" });
// a terminal's Ctrl-C reaches the whole process group (mam too): the launcher only stays alive
// for it; a signal sent to the launcher alone is passed on
process.on("SIGINT", () => {});
for (const sig of ["SIGTERM", "SIGHUP", "SIGQUIT"]) process.on(sig, () => child.kill(sig));
child.on("error", (e) => {
  const fix = process.env.MAM_BINARY ? "set MAM_BINARY to a mam binary that runs here, or unset it" : "reinstall multi-agent-mux (npm i -g multi-agent-mux)";
  process.stderr.write(`ERROR: mam: cannot run ${bin} (${e.code || e.message}); ${fix}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    if (signal === "SIGILL")
      process.stderr.write(
        `ERROR: mam: ${bin} died of SIGILL (an instruction this CPU lacks: AVX2?); reinstall so the baseline build is picked, or set MAM_BINARY to the linux-x64-baseline binary\n`,
      );
    process.exit(128 + (os.constants.signals[signal] || 0));
  }
  process.exit(code === null ? 1 : code);
});
