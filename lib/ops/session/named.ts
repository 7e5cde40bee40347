// The session a command names: the registry as read, and the row the command acts on (the
// running one, else the last of that name); exit 3 when there is none.
import { pickRow } from "../../fleet/rows.ts";
import type { RegistryData, Row, Section } from "../../registry/types.ts";
import { notFound } from "../../sys/errors.ts";
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
