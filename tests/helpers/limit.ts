// Usage limits in tests: put an agent at a limit (or take it off) as the daemon's detection does,
// by writing the `limit` field of its registry row under the registry lock (docs/unattended.md).
import { join } from "node:path";
import type { Limit } from "../../lib/fleet/limit.ts";
import { mutateRegistry } from "../../lib/registry/index.ts";

/** set (or, with undefined, remove) a field of the running row `name` of the workspace's registry */
export async function setRowField(ws: string, name: string, key: string, value: unknown): Promise<void> {
  await mutateRegistry(join(ws, ".mam", "agent-sessions.yaml"), (d) => {
    for (const row of [...d.herdr_sessions, ...d.tmux_sessions]) {
      if (row.name !== name || row.status !== "running") continue;
      if (value === undefined) delete row[key];
      else row[key] = value;
    }
  });
}

/** put the agent at a usage limit that resets at `resetsAt` (null: unknown) */
export function limitAgent(ws: string, name: string, resetsAt: Date | null, reason = "You've hit your 5-hour limit"): Promise<void> {
  const limit: Limit = { since: new Date().toISOString(), resets_at: resetsAt ? resetsAt.toISOString() : null, reason, source: "screen" };
  return setRowField(ws, name, "limit", limit);
}
