// mam's version: package.json's, fixed in the binary at build time (scripts/build.ts defines
// MAM_VERSION, MAM_COMMIT, MAM_BUN and MAM_TARGET). `mam --version`, `mam --version --json`, the
// MCP server's serverInfo, the dashboard's footer and the release artefacts all read it here.
import pkg from "../../package.json" with { type: "json" };

export function version(): string {
  return typeof MAM_VERSION === "undefined" ? pkg.version : MAM_VERSION;
}

export function commit(): string {
  return typeof MAM_COMMIT === "undefined" ? "dev" : MAM_COMMIT;
}

export function versionLine(): string {
  return `mam ${version()} (${commit()})`;
}

/** what `mam --version --json` prints */
export interface VersionInfo {
  version: string;
  commit: string;
  /** the Bun the binary was built with (its runtime) */
  bun: string;
  /** the build target (bun-<os>-<arch>[-baseline|-musl]); "source" when run with `bun mam.ts` */
  target: string;
  /** where it runs now */
  os: string;
  arch: string;
}

export function versionInfo(): VersionInfo {
  return {
    version: version(),
    commit: commit(),
    bun: typeof MAM_BUN === "undefined" ? Bun.version : MAM_BUN,
    target: typeof MAM_TARGET === "undefined" ? "source" : MAM_TARGET,
    os: process.platform,
    arch: process.arch,
  };
}
