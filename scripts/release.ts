// bun run release: build mam-<version>-<os>-<arch> for every release target, plus SHA256SUMS,
// into dist/release/. The host target is smoke-tested (`--version`).
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { build, hostTarget, TARGETS } from "./build.ts";

const ROOT = join(import.meta.dir, "..");
const OUT = join(ROOT, "dist", "release");

export function artifactName(version: string, target: string): string {
  // bun-linux-x64-musl → linux-x64-musl
  return `mam-${version}-${target.replace(/^bun-/, "")}`;
}

if (import.meta.main) {
  const version = process.env.MAM_VERSION ?? pkg.version;
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const sums: string[] = [];
  for (const target of TARGETS) {
    const file = join(OUT, artifactName(version, target));
    const t0 = performance.now();
    // bytecode is only used for the host build: cross-compiled bytecode has crashed in Bun's
    // history (oven-sh/bun#18416), and only the host binary is tested here
    await build({ target, outfile: file, version, bytecode: target === hostTarget() });
    const digest = createHash("sha256").update(readFileSync(file)).digest("hex");
    sums.push(`${digest}  ${artifactName(version, target)}`);
    console.error(`built ${file} in ${Math.round(performance.now() - t0)} ms`);
  }
  writeFileSync(join(OUT, "SHA256SUMS"), `${sums.join("\n")}\n`);
  const host = join(OUT, artifactName(version, hostTarget()));
  const v = Bun.spawnSync([host, "--version"]);
  if (v.exitCode !== 0) {
    console.error(`smoke test failed: ${host} --version exited ${v.exitCode}`);
    process.exit(1);
  }
  console.error(`${v.stdout.toString().trim()} — artefacts and SHA256SUMS in ${OUT}`);
}
