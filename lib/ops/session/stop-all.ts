// `mam stop --all` (docs/sessions.md#a-whole-team): the other half of `resume --all`. Every running
// session (of one role, with --role) is stopped as `mam stop NAME` would, one at a time, in name
// order, with the same mode and flags; what could not be stopped is left running and said.
import type { Deps } from "../deps.ts";
import { type StopInput, type Stopped, stopSession } from "./stop.ts";
import { allRows } from "../../registry/rows.ts";

export interface StopAllInput extends Omit<StopInput, "name" | "pane"> {
  role?: string;
}

export interface StoppedAll {
  /** what was stopped, in order, as `mam stop NAME` reports each */
  stopped: Stopped[];
  /** what was left running, and why */
  left: { name: string; why: string }[];
  /** the role given, else null (every session) */
  role: string | null;
}

export async function stopAll(deps: Deps, o: StopAllInput): Promise<StoppedAll> {
  const data = deps.registry.read();
  const names = allRows(data)
    .filter((r) => r.status === "running" && (o.role === undefined || r.role === o.role))
    .map((r) => r.name)
    .sort();
  const out: StoppedAll = { stopped: [], left: [], role: o.role ?? null };
  const { role: _role, ...each } = o;
  for (const name of [...new Set(names)]) {
    try {
      out.stopped.push(await stopSession(deps, { ...each, name }));
    } catch (e) {
      out.left.push({ name, why: (e as Error).message });
    }
  }
  return out;
}
