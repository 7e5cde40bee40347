// mam worktree list | remove NAME (issue 18), and the `--worktree [BRANCH] --base REF` flags that
// `mam create` and `mam job submit` share: parse → call lib/worktrees → render.
import { usageError } from "../sys/errors.ts";
import { out, outJson, table } from "../sys/io.ts";
import { resolveWorkspace } from "../sys/paths.ts";
import { type ArgsDef, bool, defineCommand, jsonArg, type ParsedArgs, str, workspaceArg } from "./command.ts";

/** `--worktree` alone: the branch is named after the session */
export const worktreeArgs: ArgsDef = {
  worktree: {
    type: "string",
    optionalValue: "",
    // the next word is the branch unless it is a flag
    optionalValuePattern: /^[^-]/,
    description: "run the agent in its own git worktree <workspace>/.mam/worktrees/<session> on branch BRANCH; BRANCH may be left out (then: the session name); an existing branch is continued",
    valueHint: "BRANCH",
  },
  base: { type: "string", description: "with --worktree: the commit a new branch starts from (default: the workspace's HEAD)", valueHint: "REF" },
};

/** the parsed --worktree / --base pair; --base alone is a usage error */
export function worktreeOption(args: ParsedArgs): { branch?: string; base?: string } | undefined {
  const wt = str(args, "worktree");
  const base = str(args, "base");
  if (wt === undefined) {
    if (base !== undefined) throw usageError("--base goes with --worktree");
    return undefined;
  }
  return { branch: wt === "" ? undefined : wt, base };
}

const list = defineCommand({
  meta: {
    name: "list",
    description: "the git worktrees of this workspace's sessions: branch, base, ahead/behind the workspace's HEAD, uncommitted files",
    examples: ["mam worktree list", "mam worktree list --json"],
  },
  args: { ...workspaceArg, ...jsonArg },
  async run({ args }) {
    const ws = resolveWorkspace(str(args, "workspace"));
    const { listSessionWorktrees } = await import("../ops/worktree.ts");
    const views = await listSessionWorktrees(ws, process.env);
    if (bool(args, "json")) return outJson({ workspace: ws, worktrees: views });
    if (views.length === 0) return out(`no session worktrees in ${ws}`);
    const n = (v: number | null) => (v === null ? "-" : String(v));
    out(
      table(
        ["SESSION", "STATUS", "BRANCH", "BASE", "AHEAD", "BEHIND", "CHANGED", "PATH"],
        views.map((v) => [v.session, v.status, v.branch, v.base || "-", n(v.ahead), n(v.behind), n(v.changed), v.exists ? v.path : `${v.path} (${v.removed_at ? "removed" : "gone"})`]),
      ),
    );
  },
});

const remove = defineCommand({
  meta: {
    name: "remove",
    description: "remove a stopped session's git worktree (its branch stays); refused (exit 4) with uncommitted or unmerged work unless --force",
    examples: ["mam worktree remove feat-x", "mam worktree remove feat-x --force"],
  },
  args: {
    name: { type: "positional", description: "session name", valueHint: "NAME" },
    force: { type: "boolean", description: "remove it even with uncommitted or unmerged work" },
    ...workspaceArg,
    ...jsonArg,
  },
  async run({ args }) {
    const name = str(args, "name")!;
    const ws = resolveWorkspace(str(args, "workspace"));
    const { removeWorktreeOfSession } = await import("../ops/worktree.ts");
    const r = await removeWorktreeOfSession(ws, name, bool(args, "force"), process.env);
    if (bool(args, "json")) return outJson(r);
    out(r.removed ? `removed worktree ${r.path} of ${name} (branch ${r.branch} kept)` : `worktree ${r.path} of ${name} was already gone (branch ${r.branch} kept)`);
  },
});

export default defineCommand({
  meta: {
    name: "worktree",
    description: "the git worktrees mam made for agent sessions (mam create --worktree)",
    examples: ["mam worktree list", "mam worktree remove feat-x"],
  },
  subCommands: { list, remove },
});
