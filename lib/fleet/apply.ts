// Applying reconcile actions to a fresh copy of the registry, inside the registry lock. Each
// action is re-checked against the data as it is now: a create or stop that ran between the
// listing and the write wins.
import type { RegistryData, Row } from "../registry/types.ts";
import { isoUtc } from "../sys/time.ts";
import { rowServer } from "./adopt.ts";
import { type Action, AGENT_EXITED_NOTE, TERMINATED_NOTE } from "./classify.ts";

/**
 * how long a stop in progress owns its row's end state: a stop that died half-way (kill -9) leaves
 * its mark, and the reconcile pass ends the row after this
 */
export const STOPPING_GRACE_S = 120;

/** a `mam stop` is closing this row's pane now: its pane going is the stop's to record */
export function stopInProgress(row: Row, now: number): boolean {
  return typeof row.stopping_epoch === "number" && now - row.stopping_epoch < STOPPING_GRACE_S;
}

function target(data: RegistryData, a: { section: Action["section"]; name: string; server: string }): Row | undefined {
  return data[a.section].find((r) => r.name === a.name && r.status === "running" && rowServer(r, a.section) === a.server);
}

/** applies what still holds; returns the actions applied */
export function applyActions(data: RegistryData, actions: Action[], now: number): Action[] {
  const done: Action[] = [];
  for (const a of actions) {
    switch (a.type) {
      case "terminate": {
        const row = target(data, a);
        if (!row) break;
        if (a.paneId !== undefined && row.pane?.id !== undefined && row.pane.id !== a.paneId) break;
        // the pane went because a stop closes it: the stop writes stopped (or terminated, hard)
        if (stopInProgress(row, now)) break;
        row.status = "terminated";
        row.last_visible_status = "terminated";
        row.last_visible_note = a.reason === AGENT_EXITED_NOTE ? AGENT_EXITED_NOTE : TERMINATED_NOTE;
        row.terminated_at = isoUtc(now);
        row.terminated_at_epoch = now;
        row.termination_mode = "auto-detected";
        done.push(a);
        break;
      }
      case "register": {
        const rows = data[a.section];
        const paneId = a.row.pane?.id;
        const held = rows.some((r) => rowServer(r, a.section) === a.server && ((paneId !== undefined && r.pane?.id === paneId) || (r.name === a.row.name && r.status === "running")));
        if (held) break;
        rows.push(structuredClone(a.row));
        done.push(a);
        break;
      }
      case "fill-session-id": {
        const row = target(data, a);
        if (!row) break;
        if (a.source === "hook") {
          // the agent said which conversation it is in: that replaces an assigned or found id
          if (row[a.field] === a.value && row.session_id_source === "hook") break;
          row.session_id_source = "hook";
        } else if (typeof row[a.field] === "string" && row[a.field] !== "") break;
        row[a.field] = a.value;
        done.push(a);
        break;
      }
      case "update-pane": {
        const row = target(data, a);
        if (!row) break;
        row.pane = { ...(row.pane ?? {}), ...a.pane };
        done.push(a);
        break;
      }
    }
  }
  return done;
}
