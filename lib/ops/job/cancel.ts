// Cancelling a job (SPEC §7.4 `job cancel`), the one use case behind `mam job cancel`, the MCP
// tool cancel_job and mam ui's cancel: journal a `cancelled` event (source mam) under the jobs lock unless the job has
// already ended, publish it, and tell the job's agent to stop.
import { brokerConfigFromEnv } from "../../jobs/broker-config.ts";
import { isFinal, type JobStatus } from "../../jobs/event.ts";
import { publishJournalled } from "../../jobs/publish.ts";
import { appendEvent, effectiveStatus, requireRecord } from "../../jobs/store.ts";
import { checkJobId } from "../../sys/names.ts";
import type { Env } from "../../sys/paths.ts";

export interface Cancelled {
  job_id: string;
  /** false when the job had already ended (nothing was written) */
  cancelled: boolean;
  /** the job's status after the call */
  status: JobStatus;
  /** the session that was told to stop, if it could be reached */
  told: string | null;
  /** non-fatal problems (no broker, agent not reachable), one line each */
  warnings: string[];
}

export async function cancelJob(ws: string, rawId: string, env: Env = process.env): Promise<Cancelled> {
  const id = checkJobId(rawId);
  requireRecord(ws, id);
  brokerConfigFromEnv(env); // a bad MQTT_* setting fails before anything is written
  let ended: JobStatus | undefined;
  const a = await appendEvent(ws, id, (r, evs) => {
    const st = effectiveStatus(r!, evs);
    if (isFinal(st)) {
      ended = st;
      return undefined;
    }
    return { event: "cancelled", detail: "cancelled by mam job cancel", source: "mam" };
  });
  if (!a) return { job_id: id, cancelled: false, status: ended!, told: null, warnings: [] };
  const warnings: string[] = [];
  const w = await publishJournalled(`${a.record!.topic_prefix}/events`, a.line, id, a.payload.seq, env);
  if (w) warnings.push(w.replace(/^NOTE: /, ""));
  const { loadJobRuntime } = await import("../../jobs/runtime.ts");
  const rt = await loadJobRuntime(ws, env);
  const s = await rt.findSession(a.record!.agent_session);
  let told: string | null = null;
  if (s) {
    try {
      await rt.prompt(s, `[mam] Job ${id} was cancelled: stop working on it.`);
      told = s.name;
    } catch (e) {
      warnings.push(`could not tell ${s.name} (${(e as Error).message})`);
    }
  }
  return { job_id: id, cancelled: true, status: "cancelled", told, warnings };
}
