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
