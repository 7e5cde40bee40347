// bench area `npm` (issue 38): `mam pane-lock acquire` through the `mam` that `npm i -g` of the
// packed npm packages puts on PATH (scripts/npm.ts; from the tarballs alone, --offline) against
// the bare binary: whole processes, interleaved run by run (the order swapped each run) so that
// the machine's load moves both alike. The installed `mam` is the native binary itself (the
// postinstall hard-links it over the Node launcher), so the target is ≤ 1.1 ×. A row of its own,
// not a test: on a loaded machine (load 30+) the same binary measured 1.31 × against itself.
import { mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { makeNpmPackages, npmPack } from "../scripts/npm.ts";
import { medP90, pct, type Row, timeProcess } from "./common.ts";

export function benchNpm(bin: string): Row[] {
  if (process.platform !== "linux" || process.arch !== "x64") return [{ what: "`mam` installed by npm: pane-lock acquire", target: "≤ 1.1 ×", measured: "skipped (the bench packs linux-x64 only)", ok: null }];
  const dir = mkdtempSync(join(tmpdir(), "mam-bench-npm-"));
  try {
    const dirs = makeNpmPackages({ version: pkg.version, binaries: { "linux-x64": bin }, out: join(dir, "pkgs") });
    const tgz = [npmPack(dirs.main, join(dir, "tgz")), npmPack(dirs.platforms["linux-x64"]!, join(dir, "tgz"))];
    const prefix = join(dir, "prefix");
    const env = { ...process.env, npm_config_cache: join(dir, "npm-cache"), npm_config_update_notifier: "false" };
    const r = Bun.spawnSync(["npm", "i", "-g", "--prefix", prefix, "--offline", "--no-audit", "--no-fund", "--loglevel=error", ...tgz], { env, stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`npm i -g failed: ${r.stderr}`);
    const mam = join(prefix, "bin", "mam");
    const fd = openSync(join(dir, "free.lock"), "a");
    const argv = (b: string) => [b, "pane-lock", "acquire", "--fd", "9"];
    timeProcess(argv(mam), 3, fd, 0);
    timeProcess(argv(bin), 3, fd, 0);
    const installed: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < 60; i++) {
      if (i % 2) {
        installed.push(...timeProcess(argv(mam), 1, fd, 0));
        bare.push(...timeProcess(argv(bin), 1, fd, 0));
      } else {
        bare.push(...timeProcess(argv(bin), 1, fd, 0));
        installed.push(...timeProcess(argv(mam), 1, fd, 0));
      }
    }
    const ratio = pct(installed, 50) / pct(bare, 50);
    return [
      {
        what: "`mam pane-lock acquire` through the `mam` npm i -g installed, against the bare binary, 60 each interleaved: median / median (installed median / p90)",
        target: "≤ 1.1 ×",
        measured: `${ratio.toFixed(2)} × (${medP90(installed)})`,
        ok: ratio <= 1.1,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
