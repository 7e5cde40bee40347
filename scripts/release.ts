// bun run release: into dist/release/, for every release target, the binary
// mam-<version>-<os>-<arch>[-baseline|-musl] and its npm package
// (multi-agent-mux-<os>-<arch>…-<version>.tgz, scripts/npm.ts), the main npm package
// multi-agent-mux-<version>.tgz, and SHA256SUMS of them all. The host target is smoke-tested
// (`--version`). A target Bun cannot build here (its runtime is downloaded from the npm registry
// on first use) is named with the reason, the rest is still made, and the run exits 1.
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { build, hostTarget, TARGETS } from "./build.ts";
import { makeNpmPackages, NPM_TARGETS, type NpmPlatform, npmPack } from "./npm.ts";

const ROOT = join(import.meta.dir, "..");
const OUT = join(ROOT, "dist", "release");

export function artifactName(version: string, target: string): string {
  // bun-linux-x64-musl → linux-x64-musl
  return `mam-${version}-${target.replace(/^bun-/, "")}`;
}

const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

if (import.meta.main) {
  const version = process.env.MAM_VERSION ?? pkg.version;
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const files: string[] = [];
  const failed: [string, string][] = [];
  const binaries: Partial<Record<NpmPlatform, string>> = {};
  for (const target of TARGETS) {
    const file = join(OUT, artifactName(version, target));
    const t0 = performance.now();
    try {
      // bytecode is only used for the host build: cross-compiled bytecode has crashed in Bun's
      // history (oven-sh/bun#18416), and only the host binary is tested here
      await build({ target, outfile: file, version, bytecode: target === hostTarget() });
    } catch (e) {
      failed.push([target, (e as Error).message]);
      console.error(`NOT BUILT ${target}: ${(e as Error).message}`);
      continue;
    }
    files.push(file);
    const npmName = (Object.keys(NPM_TARGETS) as NpmPlatform[]).find((n) => NPM_TARGETS[n].target === target);
    if (npmName) binaries[npmName] = file;
    console.error(`built ${file} in ${Math.round(performance.now() - t0)} ms`);
  }
  const host = join(OUT, artifactName(version, hostTarget()));
  const v = Bun.spawnSync([host, "--version"]);
  if (v.exitCode !== 0) {
    console.error(`smoke test failed: ${host} --version exited ${v.exitCode}`);
    process.exit(1);
  }
  // the npm packages, packed next to the binaries
  const dirs = makeNpmPackages({ version, binaries, out: join(ROOT, "dist", "npm") });
  for (const dir of [dirs.main, ...Object.values(dirs.platforms)]) files.push(npmPack(dir, OUT));
  writeFileSync(join(OUT, "SHA256SUMS"), `${files.map((f) => `${sha256(f)}  ${basename(f)}`).join("\n")}\n`);
  console.error(`${v.stdout.toString().trim()} — ${files.length} artefacts (binaries, npm tarballs) and SHA256SUMS in ${OUT}`);
  if (failed.length) {
    console.error(`\nNOT BUILT (${failed.length} of ${TARGETS.length} targets; their npm packages are left out of multi-agent-mux's optionalDependencies):`);
    for (const [t, why] of failed) console.error(`  ${t}: ${why}`);
    console.error("Bun cross-compiles a target by downloading its runtime (@oven/bun-<target>) from the npm registry: check that it is reachable, or build on a machine of that target.");
    process.exit(1);
  }
}
