// bubblewrap for the sandbox tests (docs/sandbox.md). CI does not install Debian's package on
// PATH: the real codex runs its own commands through a `bwrap` it finds there, which fails in a
// container without the privileges it expects. `.ci/run` unpacks the package into
// ~/.cache/mam/bwrap instead, and the tests give mam that one (MAM_BWRAP).
import { existsSync } from "node:fs";
import { join } from "node:path";

/** the bwrap the tests use: MAM_BWRAP, else the unpacked package, else one on PATH */
export function bwrapBin(): string | undefined {
  if (process.env.MAM_BWRAP) return process.env.MAM_BWRAP;
  const unpacked = join(process.env.HOME ?? "/root", ".cache", "mam", "bwrap", "usr", "bin", "bwrap");
  if (existsSync(unpacked)) return unpacked;
  return Bun.which("bwrap") ?? undefined;
}

/** bwrap can make the namespaces a sandbox needs here */
export function bwrapWorks(bin: string | undefined): boolean {
  if (!bin) return false;
  return Bun.spawnSync([bin, "--ro-bind", "/", "/", "--unshare-user", "--unshare-pid", "--unshare-net", "--", "/bin/true"]).exitCode === 0;
}
