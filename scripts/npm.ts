// The npm packages of a release (bun run release calls this): `multi-agent-mux` (bin `mam`: a
// small Node launcher that its postinstall replaces with the native binary) and one package per
// target under @multi-agent-mux/ holding that target's binary, with os/cpu/libc so that npm
// installs only the ones that fit. The main package lists them as optionalDependencies and
// records each binary's SHA-256 (`mamBinaries`), which the postinstall checks.
//   scripts/npm/pick.js     which package fits this machine (musl vs glibc, AVX2 vs baseline)
//   scripts/npm/launch.js   the fallback launcher (MAM_BINARY, exit status, 128+signal)
//   scripts/npm/install.js  the postinstall
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
export const MAIN_PACKAGE = "multi-agent-mux";
export const SCOPE = "@multi-agent-mux";

/** Bun's build target of each platform package, and the os/cpu/libc npm installs it on */
export const NPM_TARGETS = {
  "linux-x64": { target: "bun-linux-x64", os: "linux", cpu: "x64", libc: "glibc" },
  "linux-x64-baseline": { target: "bun-linux-x64-baseline", os: "linux", cpu: "x64", libc: "glibc" },
  "linux-x64-musl": { target: "bun-linux-x64-musl", os: "linux", cpu: "x64", libc: "musl" },
  "linux-arm64": { target: "bun-linux-arm64", os: "linux", cpu: "arm64", libc: "glibc" },
  "linux-arm64-musl": { target: "bun-linux-arm64-musl", os: "linux", cpu: "arm64", libc: "musl" },
  "darwin-x64": { target: "bun-darwin-x64", os: "darwin", cpu: "x64" },
  "darwin-arm64": { target: "bun-darwin-arm64", os: "darwin", cpu: "arm64" },
} as const satisfies Record<string, { target: string; os: string; cpu: string; libc?: string }>;
export type NpmPlatform = keyof typeof NPM_TARGETS;

const REPO = { type: "git", url: "git+https://github.com/multi-agent-mux/mam.git" };
const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");
const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;

/**
 * write the package folders under `out`: the main one, and one per binary given (platform →
 * path of its binary; a platform left out gets no package and is not listed). Returns the folders.
 */
export function makeNpmPackages(o: { version: string; binaries: Partial<Record<NpmPlatform, string>>; out: string }): { main: string; platforms: Record<string, string> } {
  rmSync(o.out, { recursive: true, force: true });
  const platforms: Record<string, string> = {};
  const recorded: Record<string, string> = {};
  for (const [name, bin] of Object.entries(o.binaries) as [NpmPlatform, string][]) {
    const t = NPM_TARGETS[name];
    const dir = join(o.out, name);
    mkdirSync(join(dir, "bin"), { recursive: true });
    try {
      linkSync(bin, join(dir, "bin", "mam"));
    } catch {
      copyFileSync(bin, join(dir, "bin", "mam"));
    }
    chmodSync(join(dir, "bin", "mam"), 0o755);
    writeFileSync(
      join(dir, "package.json"),
      json({
        name: `${SCOPE}/${name}`,
        version: o.version,
        description: `The mam (multi-agent-mux) binary for ${name}; installed by the package ${MAIN_PACKAGE}`,
        license: "MIT",
        repository: REPO,
        os: [t.os],
        cpu: [t.cpu],
        ...("libc" in t ? { libc: [t.libc] } : {}),
        files: ["bin/mam"],
        preferUnplugged: true,
      }),
    );
    writeFileSync(join(dir, "README.md"), `# ${SCOPE}/${name}\n\nThe \`mam\` binary for ${name}. Install [\`${MAIN_PACKAGE}\`](https://www.npmjs.com/package/${MAIN_PACKAGE}), not this.\n`);
    platforms[name] = dir;
    recorded[`${SCOPE}/${name}`] = sha256(bin);
  }
  const main = join(o.out, MAIN_PACKAGE);
  mkdirSync(join(main, "bin"), { recursive: true });
  mkdirSync(join(main, "lib"), { recursive: true });
  for (const f of ["pick.js", "launch.js"]) copyFileSync(join(ROOT, "scripts", "npm", f), join(main, "lib", f));
  copyFileSync(join(ROOT, "scripts", "npm", "install.js"), join(main, "install.js"));
  writeFileSync(join(main, "bin", "mam"), `#!/usr/bin/env node\n// the fallback launcher: the postinstall puts the native binary here\nrequire("../lib/launch.js");\n`, { mode: 0o755 });
  copyFileSync(join(ROOT, "LICENSE"), join(main, "LICENSE"));
  writeFileSync(
    join(main, "README.md"),
    `# multi-agent-mux\n\n\`mam\`: run a team of AI coding agents in terminal-multiplexer panes.\n\n    npm i -g multi-agent-mux\n    mam demo\n\n` +
      `The install puts the native binary of your platform (${SCOPE}/<os>-<cpu>[-musl|-baseline]) in place of \`mam\`, so no Node process runs when mam does. ` +
      `\`MAM_BINARY=/path/to/mam\` makes \`mam\` run that binary instead. Documentation: https://github.com/multi-agent-mux/mam\n`,
  );
  writeFileSync(
    join(main, "package.json"),
    json({
      name: MAIN_PACKAGE,
      version: o.version,
      description: "multi-agent-mux: run a team of AI coding agents in terminal-multiplexer panes",
      license: "MIT",
      repository: REPO,
      homepage: "https://github.com/multi-agent-mux/mam#readme",
      bin: { mam: "bin/mam" },
      scripts: { postinstall: "node install.js" },
      engines: { node: ">=16" },
      files: ["bin/mam", "lib/", "install.js", "README.md", "LICENSE"],
      optionalDependencies: Object.fromEntries(Object.keys(platforms).map((n) => [`${SCOPE}/${n}`, o.version])),
      mamBinaries: recorded,
    }),
  );
  return { main, platforms };
}

/** `npm pack` of a package folder into dest; the tarball's path */
export function npmPack(dir: string, dest: string): string {
  mkdirSync(dest, { recursive: true });
  const r = Bun.spawnSync(["npm", "pack", "--ignore-scripts", "--json", "--pack-destination", dest], { cwd: dir, stderr: "pipe", env: { ...process.env, npm_config_update_notifier: "false" } });
  if (r.exitCode !== 0) throw new Error(`npm pack in ${dir} failed: ${r.stderr.toString()}`);
  const [info] = JSON.parse(r.stdout.toString()) as { filename: string }[];
  return join(dest, info!.filename);
}
