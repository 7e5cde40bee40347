// Pruning the registry (docs/sessions.md): the rows of sessions a user no longer wants go: those
// stopped or terminated (archived ones only when asked: their pane may still run), never a
// running one. A row that still keeps a git worktree on disk stays (its work would drop out of
// mam's view; remove the worktree first). Conversations and job records are left as they are.
import { existsSync } from "node:fs";
import { backendOf, serverOf } from "../../registry/rows.ts";
import type { Row, Section, SessionStatus } from "../../registry/types.ts";
import { SECTIONS } from "../../registry/types.ts";
import { conflict, notFound } from "../../sys/errors.ts";
import { type Notice, note } from "../../sys/notice.ts";
import { liveWorktreeOf } from "../../worktrees/plan.ts";
import type { Deps } from "../deps.ts";

export type PrunableStatus = Exclude<SessionStatus, "running">;

export interface PruneInput {
  /** only these sessions (default: every row in `statuses`) */
  names: string[];
  statuses: PrunableStatus[];
  /** say what would go, change nothing */
  dry_run: boolean;
}

export interface PrunedRow {
  name: string;
  status: string;
  mux: "herdr" | "tmux";
  server: string;
}

export interface Pruned {
  removed: PrunedRow[];
  dry_run: boolean;
  warnings: Notice[];
}

const rowKey = (section: Section, r: Row) => `${section}\u0000${serverOf(r, section)}\u0000${r.name}\u0000${r.status}\u0000${String(r.pane?.id ?? "")}`;

/** which rows go, and what is said about those that stay (pure) */
export function planPrune(data: Record<Section, Row[]>, o: PruneInput): { go: { section: Section; row: Row }[]; warnings: Notice[] } {
  const go: { section: Section; row: Row }[] = [];
  const warnings: Notice[] = [];
  for (const name of o.names) {
    const rows = SECTIONS.flatMap((s) => data[s].filter((r) => r.name === name));
    if (rows.length === 0) throw notFound(`no session named '${name}' in the registry`, "see: mam status");
    if (rows.some((r) => r.status === "running")) throw conflict(`session '${name}' is running`, `stop it first: mam stop ${name}`);
  }
  const wanted = (r: Row) => (o.names.length === 0 || o.names.includes(r.name)) && (o.statuses as string[]).includes(r.status);
  for (const section of SECTIONS) {
    for (const row of data[section]) {
      if (row.status === "running" || !wanted(row)) continue;
      const wt = liveWorktreeOf(row);
      if (wt && existsSync(wt.path)) {
        warnings.push(note(`${row.name} keeps its worktree ${wt.path} (branch ${wt.branch}); remove it first: mam worktree remove ${row.name}`));
        continue;
      }
      go.push({ section, row });
    }
  }
  for (const name of o.names) {
    if (!go.some((g) => g.row.name === name) && !warnings.some((w) => w.text.startsWith(`${name} keeps`))) {
      const st = SECTIONS.flatMap((s) => data[s].filter((r) => r.name === name)).map((r) => r.status);
      warnings.push(note(`${name} is ${[...new Set(st)].join(", ")}, not ${o.statuses.join(" or ")}: kept`));
    }
  }
  return { go, warnings };
}

export async function pruneSessions(deps: Deps, o: PruneInput): Promise<Pruned> {
  const plan = planPrune(deps.registry.read(), o);
  const shown = (g: { section: Section; row: Row }): PrunedRow => ({ name: g.row.name, status: g.row.status, mux: backendOf(g.section), server: serverOf(g.row, g.section) });
  if (o.dry_run || plan.go.length === 0) return { removed: plan.go.map(shown), dry_run: o.dry_run, warnings: plan.warnings };
  // under the lock, on the file as it is now: only rows that still are as they were planned
  const keys = new Set(plan.go.map((g) => rowKey(g.section, g.row)));
  const r = await deps.registry.mutate((d) => {
    const removed: PrunedRow[] = [];
    for (const section of SECTIONS) {
      d[section] = d[section].filter((row) => {
        if (row.status === "running" || !keys.has(rowKey(section, row))) return true;
        removed.push(shown({ section, row }));
        return false;
      });
    }
    return removed;
  });
  return { removed: r.result, dry_run: false, warnings: plan.warnings };
}
