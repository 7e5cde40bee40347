// The session a command names: the registry as read, and the row the command acts on (the
// running one, else the last of that name); exit 3 when there is none. A row can also be chosen
// by the pane it records (`mam stop --pane %3`): the way to reach a row whose name mam would
// refuse (hand-edited: `../../etc`, control characters), which no name argument can spell.
import { nameFromLabel } from "../../mux/label.ts";
import { pickRow } from "../../fleet/rows.ts";
import type { MuxPane } from "../../mux/types.ts";
import type { RegistryData, Row, Section } from "../../registry/types.ts";
import { SECTIONS } from "../../registry/types.ts";
import { serverOf } from "../../registry/rows.ts";
import { notFound, usageError } from "../../sys/errors.ts";
import { field } from "../../sys/fields.ts";
import type { RegistryStore } from "../deps.ts";

export interface Named {
  data: RegistryData;
  section: Section;
  row: Row;
}

export function rowNamed(registry: RegistryStore, name: string): Named {
  const data = registry.read();
  const ref = pickRow(data, name);
  if (!ref) throw notFound(`no session named '${name}' in ${registry.path}`, "see: mam status");
  return { data, ...ref };
}

/** how a command names its row: by name, or by the pane the row records */
export interface RowChoice {
  name?: string;
  pane?: string;
}

/**
 * the row whose recorded pane is `pane`: the running one, else the last one (as by name); two
 * running rows on different servers with that pane id are ambiguous (exit 2)
 */
export function rowOfPane(registry: RegistryStore, pane: string): Named {
  const data = registry.read();
  const hits: { section: Section; index: number; row: Row }[] = [];
  for (const section of SECTIONS) data[section].forEach((row, index) => row.pane?.id === pane && hits.push({ section, index, row }));
  if (hits.length === 0) throw notFound(`no session with pane '${pane}' in ${registry.path}`, "see: mam status (its PANE column)");
  const running = hits.filter((h) => h.row.status === "running");
  if (running.length > 1) {
    const where = running.map((h) => `${h.section}[${h.index}] on ${serverOf(h.row, h.section)}`).join(", ");
    throw usageError(`pane '${pane}' is the pane of ${running.length} running sessions (${where})`, `name the session instead (${field("name")})`);
  }
  const { section, row } = running[0] ?? hits[hits.length - 1]!;
  return { data, section, row };
}

/** the row of a choice: by name, else by pane */
export function rowChosen(registry: RegistryStore, c: RowChoice): Named {
  if (c.name !== undefined) return rowNamed(registry, c.name);
  if (c.pane !== undefined) return rowOfPane(registry, c.pane);
  throw usageError(`give ${field("name")} or ${field("pane")}`);
}

/**
 * with a row chosen by its pane: that pane in a listing when the row's own label does not find
 * it (a hand-edited name no longer matches the `mam:<name>` label), unless its label names
 * another running session of that server (tmux numbers panes anew after a restart)
 */
export function paneChosen(panes: MuxPane[], c: RowChoice, n: Named, server: string): MuxPane | undefined {
  if (c.pane === undefined) return undefined;
  const p = panes.find((x) => x.id === c.pane);
  const owner = nameFromLabel(p?.label);
  if (!p || owner === undefined || owner === n.row.name) return p;
  const other = n.data[n.section].some((r) => r !== n.row && r.name === owner && r.status === "running" && serverOf(r, n.section) === server);
  return other ? undefined : p;
}
