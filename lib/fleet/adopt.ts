// create's conflict check and adoption rules (docs/sessions.md; seeds test_issue50_pane_lock.py
// A1/A2): a running row of create's name that the daemon registered for create's own pane is
// replaced; and whatever name the daemon gave the pane create claimed (herdr: between `agent
// start` and the row, the pane runs an agent without mam's label yet), that registration goes too.
import type { RegistryData, Row, Section } from "../registry/types.ts";
import { SECTIONS } from "../registry/types.ts";
import { serverOf } from "../registry/rows.ts";

export const MONITOR_NOTE = "auto-registered by monitor";

export interface Target {
  section: Section;
  server: string;
}

/** the server a row lives on (herdr_server, else herdr_session; tmux_server for tmux rows) */
export const rowServer = serverOf;

/** when the row was registered: herdr_session_epoch (tmux rows: tmux_session_epoch) */
export function rowEpoch(row: Row, section: Section): number | undefined {
  const v = section === "tmux_sessions" ? (row.tmux_session_epoch ?? row.herdr_session_epoch) : row.herdr_session_epoch;
  return typeof v === "number" ? v : undefined;
}

/** a running row of create's name that create may replace with its own row */
export function adoptable(row: Row, section: Section, t0: number, target: Target): boolean {
  return (
    row.status === "running" &&
    row.last_visible_note === MONITOR_NOTE &&
    (rowEpoch(row, section) ?? -1) >= t0 &&
    (row.delegate_job_id === undefined || row.delegate_job_id === null || row.delegate_job_id === "") &&
    section === target.section &&
    rowServer(row, section) === target.server
  );
}

export type Decision =
  | { kind: "free" }
  /** every running row of that name is the monitor's registration of create's own pane */
  | { kind: "adopt"; rows: { section: Section; index: number }[] }
  | { kind: "conflict"; row: Row };

/** what create must do about existing rows named `name` (stopped/terminated/archived ones are just replaced) */
export function decide(data: RegistryData, name: string, t0: number, target: Target): Decision {
  const adopt: { section: Section; index: number }[] = [];
  for (const section of SECTIONS) {
    const rows = data[section];
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      if (row.name !== name || row.status !== "running") continue;
      if (!adoptable(row, section, t0, target)) return { kind: "conflict", row };
      adopt.push({ section, index: i });
    }
  }
  return adopt.length ? { kind: "adopt", rows: adopt } : { kind: "free" };
}

/** keys of a row that are history, kept in `previous` when a new session replaces it */
const HISTORY_KEYS = ["status", "role", "agent", "pane", "stopped_at", "stop_reason", "terminated_at", "termination_mode", "archived_at", "herdr_session_created_at", "start_command"];

/**
 * replace every row named `name` with `fresh` (in place of the first one, so the file's order
 * is kept); rows that were not running leave a summary in fresh.previous
 */
export function placeRow(data: RegistryData, section: Section, fresh: Row): { adopted: boolean; replaced: number } {
  let at: { section: Section; index: number } | undefined;
  const previous: Record<string, unknown>[] = [];
  let adopted = false;
  let replaced = 0;
  for (const s of SECTIONS) {
    const rows = data[s];
    for (let i = rows.length - 1; i >= 0; i--) {
      const row = rows[i]!;
      if (row.name !== fresh.name) continue;
      if (row.status === "running") adopted = true;
      else {
        const summary: Record<string, unknown> = {};
        for (const k of HISTORY_KEYS) if (row[k] !== undefined) summary[k] = row[k];
        for (const k of Object.keys(row)) if (k.endsWith("_session_id_own") || k.endsWith("_conversation_id_own")) summary[k] = row[k];
        previous.unshift(summary);
        if (Array.isArray(row.previous)) previous.unshift(...(row.previous as Record<string, unknown>[]));
      }
      rows.splice(i, 1);
      replaced++;
      at = { section: s, index: i };
    }
  }
  if (previous.length) fresh.previous = previous.slice(-10);
  if (at && at.section === section) data[section].splice(at.index, 0, fresh);
  else data[section].push(fresh);
  return { adopted, replaced };
}

/**
 * Take the pane create (or resume) just claimed back from the daemon: remove every row of another
 * name that the daemon registered for that pane (`section`, `server`, pane id) since `t0`, without
 * a job — still running, or already ended by a later pass that saw the pane carry our label
 * (`terminated (auto-detected)`). A row the daemon registered has no `session_id_source` (create
 * always writes one). Rows of a name the user chose, older ones and rows with a job are never
 * touched. Returns the names removed.
 */
export function adoptPane(data: RegistryData, section: Section, server: string, paneId: string, t0: number, keep: string): string[] {
  const rows = data[section];
  const gone: string[] = [];
  for (let i = rows.length - 1; i >= 0; i--) {
    const row = rows[i]!;
    if (row.name === keep || row.pane?.id !== paneId || rowServer(row, section) !== server) continue;
    if (row.session_id_source !== undefined || (rowEpoch(row, section) ?? -1) < t0) continue;
    if (row.delegate_job_id !== undefined && row.delegate_job_id !== null && row.delegate_job_id !== "") continue;
    const registered = row.status === "running" && row.last_visible_note === MONITOR_NOTE;
    const endedSince = row.status === "terminated" && row.termination_mode === "auto-detected";
    if (!registered && !endedSince) continue;
    rows.splice(i, 1);
    gone.unshift(row.name);
  }
  return gone;
}
