// Build the single self-contained binary: dist/mam (host), or every release target with --all.
//   bun scripts/build.ts [--all] [--target bun-linux-x64] [--outfile PATH]
import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };

// every release target (one npm package each: scripts/npm.ts). Bun cross-compiles by downloading
// the target's runtime (@oven/bun-<target> from the npm registry) on first use.
export const TARGETS = [
  "bun-linux-x64",
  "bun-linux-x64-baseline",
  "bun-linux-x64-musl",
  "bun-linux-arm64",
  "bun-linux-arm64-musl",
  "bun-darwin-x64",
  "bun-darwin-arm64",
] as const;

function gitSha(): string {
  const r = Bun.spawnSync(["git", "rev-parse", "--short", "HEAD"], { stderr: "ignore" });
  const sha = r.exitCode === 0 ? r.stdout.toString().trim() : "";
  if (!sha) return "unknown";
  const dirty = Bun.spawnSync(["git", "status", "--porcelain", "--untracked-files=no"], { stderr: "ignore" });
  return dirty.stdout.toString().trim() ? `${sha}-dirty` : sha;
}

/** the target a build without --target makes: this Bun's own (bun-<os>-<arch>) */
export function hostTarget(): string {
  return `bun-${process.platform}-${process.arch === "arm64" ? "arm64" : "x64"}`;
}

export async function build(opts: { target?: string; outfile: string; version?: string; sha?: string; bytecode?: boolean }): Promise<void> {
  const version = opts.version ?? process.env.MAM_VERSION ?? pkg.version;
  const sha = opts.sha ?? gitSha();
  mkdirSync(join(opts.outfile, ".."), { recursive: true });
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, "..", "mam.ts")],
    // bytecode halves start-up (every `mam` call pays it); it needs ESM output with top-level await
    bytecode: opts.bytecode ?? true,
    format: "esm",
    // lazily imported commands (mqtt, aedes, yaml behind them) become chunks loaded on first
    // use, so `mam pane-lock` does not pay for the whole bundle at start-up
    splitting: true,
    minify: false,
    sourcemap: "none",
    define: {
      MAM_VERSION: JSON.stringify(version),
      MAM_COMMIT: JSON.stringify(sha),
      MAM_BUN: JSON.stringify(Bun.version),
      MAM_TARGET: JSON.stringify(opts.target ?? hostTarget()),
    },
    compile: {
      outfile: opts.outfile,
      ...(opts.target ? { target: opts.target as never } : {}),
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
    throw: false,
  } as never);
  const r = result as unknown as { success: boolean; logs: unknown[] };
  if (!r.success) {
    for (const log of r.logs) console.error(log);
    throw new Error(`build failed for ${opts.target ?? "host"}`);
  }
  chmodSync(opts.outfile, 0o755);
}

if (import.meta.main) {
  const argv = process.argv.slice(2);
  const dist = join(import.meta.dir, "..", "dist");
  const t0 = performance.now();
  if (argv.includes("--all")) {
    for (const target of TARGETS) {
      const out = join(dist, `mam-${target.replace(/^bun-/, "")}`);
      await build({ target, outfile: out, bytecode: false });
      console.error(`built ${out}`);
    }
  }
  const ti = argv.indexOf("--target");
  const oi = argv.indexOf("--outfile");
  const outfile = oi >= 0 ? argv[oi + 1]! : join(dist, "mam");
  await build({ target: ti >= 0 ? argv[ti + 1] : undefined, outfile });
  const v = Bun.spawnSync([outfile, "--version"]);
  if (v.exitCode !== 0 && ti < 0) {
    console.error(`smoke test failed: ${outfile} --version exited ${v.exitCode}\n${v.stderr}`);
    process.exit(1);
  }
  console.error(`built ${outfile} (${v.stdout.toString().trim()}) in ${Math.round(performance.now() - t0)} ms`);
}
