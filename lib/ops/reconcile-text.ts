// The human-readable rendering of one reconcile pass (`mam reconcile`, the MCP tool reconcile);
// names and details shown with their control characters escaped (lib/sys/sanitize.ts).
import { visible } from "../sys/sanitize.ts";
import { describeAction, type ReconcileReport } from "./reconcile.ts";

export function reconcileText(r: ReconcileReport): string {
  const lines: string[] = [];
  for (const [name, s] of Object.entries(r.servers)) if (s.state !== "ok") lines.push(`server ${name}: ${s.state}${s.detail ? ` (${s.detail})` : ""}`);
  for (const d of r.drifts) lines.push(`drift ${d.name}: ${d.kind} (${d.detail})`);
  for (const a of r.actions) lines.push(`${r.dry_run ? "would do" : "done"}: ${describeAction(a)}`);
  return lines.length ? lines.map(visible).join("\n") : `nothing to do (${Object.keys(r.servers).length} server(s), registry ${r.yaml_path})`;
}
