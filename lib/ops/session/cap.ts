// Caps of running sessions (docs/sessions.md#a-whole-team), so that a team never starts more
// agents than the machine holds: MAM_MAX_RUNNING for the whole workspace (every create and resume
// honours it), `create --max-running N` for the sessions of one role, and `resume --all
// --max-running N` for its scope. The counting is pure; the refusal is one conflict error.
import type { RegistryData } from "../../registry/types.ts";
import { conflict, usageError } from "../../sys/errors.ts";
import { field } from "../../sys/fields.ts";
import type { Env } from "../../sys/paths.ts";
import { allRows } from "../../registry/rows.ts";

/** MAM_MAX_RUNNING: the workspace's cap of running sessions (undefined: none) */
export function workspaceCap(env: Env): number | undefined {
  const v = env.MAM_MAX_RUNNING?.trim();
  if (v === undefined || v === "") return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw usageError(`MAM_MAX_RUNNING '${v.slice(0, 40)}' is not a whole number ≥ 1`, "unset it for no cap");
  return Number(v);
}

/** running sessions of the registry (of `role` when given) */
export function runningCount(data: RegistryData, role?: string | null): number {
  return allRows(data).filter((r) => r.status === "running" && (role === undefined || r.role === role)).length;
}

/**
 * refuse (exit 4, nothing started) to start one more session when the workspace's cap
 * (MAM_MAX_RUNNING) or the role's (`roleCap`, for `role`) is reached
 */
export function refuseOverCap(data: RegistryData, env: Env, role: string | null | undefined, roleCap?: number): void {
  const ws = workspaceCap(env);
  const all = runningCount(data);
  if (ws !== undefined && all >= ws) throw conflict(`${all} sessions run already in this workspace (the cap: MAM_MAX_RUNNING=${ws}); nothing was started`, "stop one first, or raise MAM_MAX_RUNNING");
  if (roleCap === undefined) return;
  const n = runningCount(data, role ?? null);
  if (n >= roleCap) throw conflict(`${n} sessions of role '${role ?? ""}' run already (the cap: ${field("max_running")} ${roleCap}); nothing was started`, "stop one first, or raise the cap");
}
