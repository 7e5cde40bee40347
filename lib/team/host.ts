// This machine's name in a team (docs/machines.md): MAM_HOST, else the hostname, as a mam name
// ([A-Za-z0-9][A-Za-z0-9._-]{0,63}); the hostname is cut at its first dot and anything outside
// the name alphabet becomes `-`. `NAME@HOST` names a session on another machine.
import { hostname } from "node:os";
import { usageError } from "../sys/errors.ts";
import { isValidName } from "../sys/names.ts";
import type { Env } from "../sys/paths.ts";

/** the hostname as a mam name: its first label, other characters as `-` */
export function nameOfHostname(h: string): string {
  const first = h.split(".")[0] ?? "";
  const n = first.replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[^A-Za-z0-9]+/, "").slice(0, 64);
  return isValidName(n) ? n : "host";
}

export function hostName(env: Env, system: () => string = hostname): string {
  const v = env.MAM_HOST;
  if (v !== undefined && v !== "") {
    if (!isValidName(v)) throw usageError(`MAM_HOST '${v.slice(0, 80)}' is not a valid host name`, "names are 1-64 characters of [A-Za-z0-9._-], starting with a letter or digit");
    return v;
  }
  return nameOfHostname(system());
}

/** this host's name where a wrong MAM_HOST must not stop anything (job topics): else the hostname's */
export function topicHost(env: Env): string {
  try {
    return hostName(env);
  } catch {
    return nameOfHostname(hostname());
  }
}

export interface Address {
  name: string;
  /** undefined: this workspace (a bare NAME) */
  host?: string;
}

/** `NAME` or `NAME@HOST`; `NAME@<this host>` is this machine */
export function parseAddress(text: string, localHost: string): Address {
  const at = text.lastIndexOf("@");
  if (at < 0) return { name: text };
  const name = text.slice(0, at);
  const host = text.slice(at + 1);
  return host === localHost ? { name } : { name, host };
}

/** a session address is a name, or a name @ a host name */
export function isValidAddress(text: string): boolean {
  const at = text.lastIndexOf("@");
  if (at < 0) return isValidName(text);
  return isValidName(text.slice(0, at)) && isValidName(text.slice(at + 1));
}

/** the name of a session on this host: a bare name, or `name@<this host>`; undefined for another host */
export function localPart(name: string, localHost: string): string | undefined {
  const a = parseAddress(name, localHost);
  return a.host === undefined ? a.name : undefined;
}
