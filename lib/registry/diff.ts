// What differs between two versions of the registry, row by row (for `mam registry restore`).
import { serverOf } from "./rows.ts";
import type { RegistryData, Section } from "./types.ts";
import { SECTIONS } from "./types.ts";
import { deepEqual } from "./values.ts";

export interface RowId {
  section: Section;
  name: string;
  server: string;
  status: string;
}

export interface RegistryDiff {
  /** rows only the first version has */
  onlyInA: RowId[];
  /** rows only the second version has */
  onlyInB: RowId[];
  /** rows both have, with the fields that differ (status shown as in the second version) */
  changed: (RowId & { fields: string[] })[];
  unchanged: number;
}

function ids(data: RegistryData): Map<string, { id: RowId; row: Record<string, unknown> }> {
  const out = new Map<string, { id: RowId; row: Record<string, unknown> }>();
  for (const section of SECTIONS) {
    for (const row of data[section]) {
      const server = serverOf(row, section);
      const base = `${section}\u0000${server}\u0000${row.name}`;
      let key = base;
      for (let n = 2; out.has(key); n++) key = `${base}\u0000${n}`;
      out.set(key, { id: { section, name: String(row.name), server, status: String(row.status) }, row });
    }
  }
  return out;
}

export function diffRegistries(a: RegistryData, b: RegistryData): RegistryDiff {
  const ia = ids(a);
  const ib = ids(b);
  const d: RegistryDiff = { onlyInA: [], onlyInB: [], changed: [], unchanged: 0 };
  for (const [k, x] of ia) {
    const y = ib.get(k);
    if (!y) {
      d.onlyInA.push(x.id);
      continue;
    }
    const fields = [...new Set([...Object.keys(x.row), ...Object.keys(y.row)])].filter((f) => !deepEqual(x.row[f], y.row[f]));
    if (fields.length) d.changed.push({ ...y.id, fields });
    else d.unchanged++;
  }
  for (const [k, y] of ib) if (!ia.has(k)) d.onlyInB.push(y.id);
  return d;
}
