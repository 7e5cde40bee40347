// Pure helpers over registry rows: which server a row lives on, where a backend's rows are, lookups.
import type { Backend } from "../mux/types.ts";
import type { RegistryData, Row, Section } from "./types.ts";
import { SECTIONS } from "./types.ts";

/** the server a row without server fields lives on */
export const DEFAULT_SERVER: Readonly<Record<Section, string>> = { herdr_sessions: "default", tmux_sessions: "mam" };

export const sectionOf = (backend: Backend): Section => (backend === "herdr" ? "herdr_sessions" : "tmux_sessions");
export const backendOf = (section: Section): Backend => (section === "herdr_sessions" ? "herdr" : "tmux");

/** every row of the registry, herdr's then tmux's */
export const allRows = (data: Pick<RegistryData, Section>): Row[] => [...data.herdr_sessions, ...data.tmux_sessions];

const field = (row: Row, k: string): string | undefined => {
  const v = row[k];
  if (v === undefined || v === null || v === "") return undefined;
  return String(v);
};

/**
 * the server a row lives on: herdr rows `herdr_server`, else `herdr_session`; tmux rows
 * `tmux_server`; else the section's default (`default` for herdr, `mam` for tmux). Empty values
 * count as absent.
 */
export function serverOf(row: Row, section: Section): string {
  if (section === "herdr_sessions") return field(row, "herdr_server") ?? field(row, "herdr_session") ?? field(row, "tmux_server") ?? DEFAULT_SERVER[section];
  return field(row, "tmux_server") ?? field(row, "herdr_server") ?? field(row, "herdr_session") ?? DEFAULT_SERVER[section];
}

export interface RowRef {
  section: Section;
  index: number;
  row: Row;
}

export interface FindOptions {
  section?: Section;
  server?: string;
  status?: Row["status"] | readonly Row["status"][];
}

/** every row named `name` (both sections, file order), optionally only one section / server / status */
export function findRows(data: RegistryData, name: string, opts: FindOptions = {}): RowRef[] {
  const statuses = opts.status === undefined ? undefined : Array.isArray(opts.status) ? opts.status : [opts.status];
  const hits: RowRef[] = [];
  for (const section of SECTIONS) {
    if (opts.section !== undefined && opts.section !== section) continue;
    const rows = data[section] ?? [];
    for (let index = 0; index < rows.length; index++) {
      const row = rows[index]!;
      if (row?.name !== name) continue;
      if (opts.server !== undefined && serverOf(row, section) !== opts.server) continue;
      if (statuses !== undefined && !statuses.includes(row.status)) continue;
      hits.push({ section, index, row });
    }
  }
  return hits;
}

export function emptyRegistry(): RegistryData {
  return { herdr_sessions: [], tmux_sessions: [] };
}

