// The operations on the workspace as a whole: reconcile the registry with the panes, check,
// restore or rebuild the registry file, the sessions' git worktrees, the workspace's daemon. Each entry is the one definition of its input, its text
// and how the command line and MCP name it; the use cases load only when the operation runs.
import * as z from "zod/mini";
import type { ReconcileReport } from "../reconcile.ts";
import type { DaemonStatus } from "../../sys/daemon-proc.ts";
import { notFound } from "../../sys/errors.ts";
import { table } from "../../sys/io.ts";
import { info, type Notice, warning } from "../../sys/notice.ts";
import { flag, name, sessionName, withDefault } from "../input.ts";
import { type CommandGroup, defineOp } from "../op.ts";
import { int, str, strOrNull, warnings } from "../results.ts";
import type { Removed, WorktreeView } from "../worktree.ts";
import type { Checked, Restored } from "../registry-file.ts";
import type { Rebuilt } from "../registry-rebuild.ts";

// the texts of these ops live beside their use cases, loaded when a result is shown
const reconcileTexts = () => require("../reconcile-text.ts") as typeof import("../reconcile-text.ts");
const registryTexts = () => require("../registry-file.ts") as typeof import("../registry-file.ts");
const rebuildTexts = () => require("../registry-rebuild.ts") as typeof import("../registry-rebuild.ts");

/** the command groups of these ops: their help (the commands come from the entries below) */
const WORKTREE: CommandGroup = {
  name: "worktree",
  description: "the git worktrees mam made for agent sessions (mam create --worktree)",
  examples: ["mam worktree list", "mam worktree remove feat-x"],
  group: "agents",
  listed: "once",
};
const DAEMON: CommandGroup = {
  name: "daemon",
  description: "the workspace's subscriber daemon (mam reconcile --subscribe, detached): ensure, status, stop",
  examples: ["mam daemon ensure", "mam daemon status --json", "mam daemon stop"],
  group: "monitoring",
  listed: "once",
};
const REGISTRY: CommandGroup = {
  name: "registry",
  description: "check the registry (.mam/agent-sessions.yaml), put its backup back, or rebuild it from the agents' panes",
  examples: ["mam registry check", "mam registry restore --yes", "mam registry rebuild --yes"],
  group: "monitoring",
  listed: "once",
};

/** a registry's rows per section (registry check / restore) */
const rowsOut = () => z.looseObject({ herdr_sessions: int(), tmux_sessions: int() });
/** a row as registry restore names it */
const rowId = () => z.looseObject({ section: str(), server: str(), name: str(), status: str() });

export const registryReconcile = defineOp({
  name: "registry.reconcile",
  summary: "make the registry match the panes: mark sessions whose pane is gone terminated, register unknown agent panes",
  readOnly: false,
  input: () => ({ dry_run: withDefault(flag("compute drift and actions, write nothing"), false) }),
  async run(deps, i) {
    const { reconcileOnce } = await import("../reconcile.ts");
    return reconcileOnce(deps, i);
  },
  text: (r: ReconcileReport) => reconcileTexts().reconcileText(r),
  result: () =>
    z.looseObject({
      timestamp: str(),
      yaml_path: str(),
      servers: z.record(z.string(), z.looseObject({ reachable: z.boolean(), state: str(), panes: z.number() })),
      drifts: z.array(z.looseObject({ name: str(), kind: str() })),
      actions: z.array(z.unknown()),
      dry_run: z.boolean(),
    }),
  cli: {
    path: "reconcile",
    group: "monitoring",
    extra: "reconcile-subscribe",
    description: "keep the registry true: one reconcile pass, or with --subscribe the workspace's subscriber daemon in the foreground",
    examples: [
      "mam reconcile                                   # one pass: mark dead panes terminated, register unknown agent panes, …",
      "mam reconcile --dry-run --json                  # what a pass would do, as JSON",
      "mam reconcile --subscribe                       # the daemon in the foreground (idle exit after 3600 s)",
      "mam reconcile --subscribe --idle-timeout 0      # never idle out (what mam daemon ensure starts)",
      "mam reconcile --subscribe --timeout 60 --workspace ~/proj",
    ],
  },
  mcp: { aliases: ["reconcile"], description: "Make the registry match the panes: mark sessions whose pane is gone terminated, register unknown agent panes (dry_run: only report)." },
});

const n = (v: number | null) => (v === null ? "-" : String(v));

export const worktreeList = defineOp({
  name: "worktree.list",
  summary: "the git worktrees of this workspace's sessions: branch, base, ahead/behind the workspace's HEAD, uncommitted files",
  readOnly: true,
  input: () => ({}),
  async run(deps) {
    const { listSessionWorktrees } = await import("../worktree.ts");
    return { workspace: deps.ws, worktrees: await listSessionWorktrees(deps) };
  },
  text: (r: { workspace: string; worktrees: WorktreeView[] }) =>
    r.worktrees.length === 0
      ? `no session worktrees in ${r.workspace}`
      : table(
          ["SESSION", "STATUS", "BRANCH", "BASE", "AHEAD", "BEHIND", "CHANGED", "PATH"],
          r.worktrees.map((v) => [v.session, v.status, v.branch, v.base || "-", n(v.ahead), n(v.behind), n(v.changed), v.exists ? v.path : `${v.path} (${v.removed_at ? "removed" : "gone"})`]),
        ),
  result: () =>
    z.looseObject({
      workspace: str(),
      worktrees: z.array(
        z.looseObject({ session: str(), status: str(), path: str(), branch: str(), base: str(), exists: z.boolean(), removed_at: strOrNull(), ahead: z.nullable(int()), behind: z.nullable(int()), changed: z.nullable(int()) }),
      ),
    }),
  cli: { path: "worktree list", under: WORKTREE, examples: ["mam worktree list", "mam worktree list --json"] },
  mcp: false,
});

export const worktreeRemove = defineOp({
  name: "worktree.remove",
  summary: "remove a stopped session's git worktree (its branch stays); refused (exit 4) with uncommitted or unmerged work unless --force",
  readOnly: false,
  input: () => ({
    name: sessionName(),
    force: withDefault(flag("remove it even with uncommitted or unmerged work"), false),
  }),
  async run(deps, i) {
    const { removeWorktreeOfSession } = await import("../worktree.ts");
    return removeWorktreeOfSession(deps, i.name, i.force);
  },
  text: (r: Removed) => (r.removed ? `removed worktree ${r.path} of ${r.session} (branch ${r.branch} kept)` : `worktree ${r.path} of ${r.session} was already gone (branch ${r.branch} kept)`),
  result: () => z.looseObject({ session: str(), path: str(), branch: str(), removed: z.boolean() }),
  cli: { path: "worktree remove", under: WORKTREE, positionals: ["name"], examples: ["mam worktree remove feat-x", "mam worktree remove feat-x --force"] },
  mcp: false,
});

interface Ensured {
  pid: number | null;
  started: boolean;
  disabled: boolean;
  warnings: Notice[];
}

export const daemonEnsure = defineOp({
  name: "daemon.ensure",
  summary: "print the PID of the workspace's subscriber daemon, starting one (detached) if none runs",
  readOnly: false,
  input: () => ({}),
  async run(deps): Promise<Ensured> {
    const [{ DISABLED_MESSAGE }, { monitorLogPath }] = await Promise.all([import("../../sys/daemon-proc.ts"), import("../../sys/daemon-files.ts")]);
    const r = await deps.daemon.ensure();
    const warnings: Notice[] = [];
    if (r.disabled) warnings.push(info(DISABLED_MESSAGE));
    if (r.started) warnings.push(info(`started the subscriber daemon for ${deps.ws} (pid ${r.pid}; log ${monitorLogPath(deps.ws)})`));
    return { pid: r.pid ?? null, started: r.started, disabled: r.disabled, warnings };
  },
  text: (r: Ensured) => (r.pid === null ? "" : String(r.pid)),
  result: () => z.looseObject({ pid: z.nullable(int()), started: z.boolean(), disabled: z.boolean(), warnings: warnings() }),
  cli: {
    path: "daemon ensure",
    under: DAEMON,
    examples: [
      "mam daemon ensure --json                # {pid, started, disabled, warnings}",
      "mam daemon ensure                       # 12345",
      "mam daemon ensure --workspace ~/proj",
      "MAM_NO_SUBSCRIBER_DAEMON=1 mam daemon ensure   # never starts one; prints the PID of one that runs",
    ],
  },
  mcp: false,
});

const noneRuns = (ws: string) => notFound(`no subscriber daemon runs for ${ws}`, "start one with: mam daemon ensure");

export const daemonStatus = defineOp({
  name: "daemon.status",
  summary: "show the workspace's subscriber daemon: pid, mode (mqtt / polling), since, log; exit 3 when none runs",
  readOnly: true,
  input: () => ({}),
  async run(deps) {
    const s = deps.daemon.status();
    if (!s) throw noneRuns(deps.ws);
    return { ...s, workspace: deps.ws };
  },
  text: (s: DaemonStatus & { workspace: string }) =>
    table(
      ["subscriber daemon", s.workspace],
      [
        ["pid", String(s.pid ?? "?")],
        ["mode", s.mode],
        ["since", s.since ?? "-"],
        ["broker", s.broker ?? "-"],
        ["log", s.log ?? "-"],
      ],
    ),
  json: ({ workspace: _w, ...s }: DaemonStatus & { workspace: string }) => s,
  result: () => z.looseObject({ pid: z.nullable(int()), mode: str(), since: strOrNull(), log: strOrNull(), broker: strOrNull() }),
  cli: { path: "daemon status", under: DAEMON, examples: ["mam daemon status", "mam daemon status --json   # {pid, mode, since, log, broker}"] },
  mcp: false,
});

interface DaemonStopped {
  pid: number;
  killed: boolean;
  warnings: Notice[];
}

export const daemonStop = defineOp({
  name: "daemon.stop",
  summary: "stop the workspace's subscriber daemon (SIGTERM, SIGKILL after 5 s); exit 3 when none runs",
  readOnly: false,
  input: () => ({}),
  async run(deps): Promise<DaemonStopped> {
    const { STOP_GRACE_MS } = await import("../../sys/daemon-proc.ts");
    const r = await deps.daemon.stop();
    if (!r) throw noneRuns(deps.ws);
    const warnings = r.killed ? [warning(`the subscriber daemon (pid ${r.pid}) did not stop within ${STOP_GRACE_MS / 1000} s of SIGTERM; killed it (SIGKILL)`)] : [];
    return { pid: r.pid, killed: r.killed, warnings };
  },
  text: (r: DaemonStopped) => `stopped the subscriber daemon (pid ${r.pid})`,
  result: () => z.looseObject({ pid: int(), killed: z.boolean(), warnings: warnings() }),
  cli: { path: "daemon stop", under: DAEMON, examples: ["mam daemon stop", "mam daemon stop --workspace ~/proj", "mam daemon stop --json     # {pid, killed, warnings}"] },
  mcp: false,
});

export const registryCheck = defineOp({
  name: "registry.check",
  summary: "validate the registry and list every problem (exit 1 when there is one); reads only",
  readOnly: true,
  input: () => ({}),
  async run(deps) {
    const { checkRegistry } = await import("../registry-file.ts");
    return checkRegistry(deps.registry);
  },
  text: (c: Checked) => registryTexts().checkedText(c),
  json: ({ backupRows: _b, ...c }: Checked) => c,
  exitCode: (c: Checked) => (c.ok ? 0 : 1),
  result: () =>
    z.looseObject({
      path: str(),
      exists: z.boolean(),
      ok: z.boolean(),
      rows: rowsOut(),
      problems: z.array(str()),
      backup: z.looseObject({ path: str(), exists: z.boolean(), ok: z.boolean() }),
    }),
  cli: { path: "registry check", under: REGISTRY, examples: ["mam registry check", "mam registry check --workspace ~/src/api --json"] },
  mcp: false,
});

export const registryRestore = defineOp({
  name: "registry.restore",
  summary: "put agent-sessions.yaml.bak back (the current file becomes the new .bak); without --yes only shows what would change",
  readOnly: false,
  input: () => ({ yes: withDefault(flag("really restore (without it nothing is changed)"), false) }),
  async run(deps, i) {
    const { restoreRegistry } = await import("../registry-file.ts");
    return restoreRegistry(deps.registry, i.yes);
  },
  text: (r: Restored) => registryTexts().restoredText(r),
  json: ({ summary: _s, same: _m, had_current: _h, ...r }: Restored) => r,
  result: () =>
    z.looseObject({
      path: str(),
      backup: str(),
      restored: z.boolean(),
      dry_run: z.boolean(),
      current: z.looseObject({ exists: z.boolean(), ok: z.boolean() }),
      from_backup: z.looseObject({ rows: rowsOut() }),
      diff: z.looseObject({ only_current: z.array(rowId()), only_backup: z.array(rowId()), changed: z.array(rowId()), unchanged: int() }),
    }),
  cli: { path: "registry restore", under: REGISTRY, examples: ["mam registry restore            # what would change; changes nothing", "mam registry restore --yes      # restore it"] },
  mcp: false,
});

export const registryRebuild = defineOp({
  name: "registry.rebuild",
  summary: "write a fresh registry from the panes mam labelled (mam:<name>) in this workspace, when it is broken with no usable .bak or gone; without --yes only shows what it would do",
  readOnly: false,
  input: () => ({
    yes: withDefault(flag("really rebuild (without it nothing is changed); a broken file is kept as <file>.broken-<time>"), false),
    herdr_servers: withDefault(z.array(name("herdr server name", "")).check(z.describe("also look at this herdr server (repeatable; mam looks at the default one, yours, and those the old file names)")), []),
    tmux_servers: withDefault(z.array(name("tmux server name", "")).check(z.describe("also look at this private tmux server (repeatable; mam looks at mam and every socket in $TMUX_TMPDIR/tmux-<uid>/)")), []),
  }),
  async run(deps, i) {
    const { rebuildRegistry } = await import("../registry-rebuild.ts");
    return rebuildRegistry(deps, i);
  },
  text: (r: Rebuilt) => rebuildTexts().rebuiltText(r),
  result: () =>
    z.looseObject({
      path: str(),
      dry_run: z.boolean(),
      previous: z.looseObject({ state: z.enum(["missing", "empty", "broken"]), moved_to: strOrNull() }),
      servers: z.array(z.looseObject({ mux: str(), server: str(), state: str(), panes: int() })),
      registered: z.array(z.looseObject({ name: str(), mux: str(), server: str(), pane: str(), agent: strOrNull(), role: str(), from_backup: z.boolean() })),
      skipped: z.array(z.looseObject({ label: str(), mux: str(), server: str(), pane: str(), why: str() })),
    }),
  cli: {
    path: "registry rebuild",
    under: REGISTRY,
    flags: { herdr_servers: { flag: "herdr-session", valueHint: "SERVER" }, tmux_servers: { flag: "tmux-server", valueHint: "NAME" } },
    examples: [
      "mam registry rebuild                      # what it would register; changes nothing",
      "mam registry rebuild --yes                # do it (a broken file is kept as agent-sessions.yaml.broken-<time>)",
      "mam registry rebuild --yes --herdr-session work --tmux-server team",
    ],
  },
  mcp: false,
});
