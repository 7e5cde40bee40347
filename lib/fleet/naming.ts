// Session names (SPEC §5.2) and the role guess of auto-registered rows (SPEC §6.1 step 3).
import { basename, dirname } from "node:path";

/** the two last path components of the workspace, lower-cased, `_`→`-`, joined with `-` */
export function workspaceSlug(ws: string): string {
  const parts = [basename(dirname(ws)), basename(ws)].filter((p) => p !== "" && p !== "/");
  const slug = parts
    .map((p) => p.toLowerCase().replace(/_/g, "-").replace(/[^a-z0-9.-]/g, "-"))
    .join("-")
    .replace(/-+/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "");
  return slug || "ws";
}

/** `<slug>-<role>-<agent>`, cut to a valid name (64 characters) */
export function defaultSessionName(ws: string, role: string, agent: string): string {
  const r = role.toLowerCase().replace(/[^a-z0-9._-]/g, "-");
  const tail = `-${r}-${agent}`;
  const slug = workspaceSlug(ws).slice(0, Math.max(1, 64 - tail.length)).replace(/[-.]+$/, "");
  return `${slug}${tail}`.slice(0, 64);
}

/** role of a row the monitor registers: `-creator-` in the name → creator, else unknown */
export function guessRole(name: string): string {
  return name.includes("-creator-") ? "creator" : "unknown";
}
