// Picking rows: the one row a command about a session name acts on, and a row's agent kind.
import type { RegistryData, Row, Section } from "../registry/types.ts";
import { SECTIONS } from "../registry/types.ts";

export interface PickedRow {
  section: Section;
  row: Row;
}

/** the row a command about `name` acts on: the running one, else the last one of that name */
export function pickRow(data: RegistryData, name: string): PickedRow | undefined {
  let last: PickedRow | undefined;
  for (const section of SECTIONS) {
    for (const row of data[section]) {
      if (row.name !== name) continue;
      if (row.status === "running") return { section, row };
      last = { section, row };
    }
  }
  return last;
}

/** the row's agent kind, when the row names one (rows the daemon registered may not) */
export function rowAgent(row: Row): string | undefined {
  return typeof row.agent === "string" ? row.agent : undefined;
}
