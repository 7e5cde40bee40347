// The rules between a session operation's fields (usage errors naming fields as {{field}}),
// checked before anything is looked at: by the operations' input checks, and by create for the
// parts other callers give it.
import { usageError } from "../../sys/errors.ts";
import { field } from "../../sys/fields.ts";

/** a role: 1-64 characters on one line */
export function checkRole(role: string): string {
  if (role.trim() === "" || /[\n\r\t]/.test(role) || role.length > 64) {
    throw usageError(`invalid role '${role.slice(0, 40)}'`, "a role is 1-64 characters on one line");
  }
  return role;
}

/** the rules between create's fields, before anything is looked at */
export function checkCreate(o: { base?: string; worktree?: string; role: string; mcp?: boolean; mcp_all_tools?: boolean; restart?: string; max_restarts?: number }): void {
  checkRole(o.role);
  if (o.max_restarts !== undefined && o.restart !== "on-failure") throw usageError(`${field("max_restarts")} goes with ${field("restart", "on-failure")}`);
  if (o.base !== undefined && o.worktree === undefined) throw usageError(`${field("base")} goes with ${field("worktree")}`);
  if (o.mcp_all_tools && !o.mcp) throw usageError(`${field("mcp_all_tools")} goes with ${field("mcp")}`);
}

/** the rules between stop's fields, before anything is looked at */
export function checkStop(o: { mode: string; purge: boolean; remove_worktree: boolean; force: boolean }): void {
  if (o.purge && o.mode !== "hard") throw usageError(`${field("purge")} goes with ${field("mode", "hard")}`);
  if (o.force && !o.remove_worktree) throw usageError(`${field("force")} goes with ${field("remove_worktree")}`);
  if (o.remove_worktree && o.mode === "soft") throw usageError(`${field("remove_worktree")} cannot go with ${field("mode", "soft")} (its agent keeps running in the worktree)`);
}
