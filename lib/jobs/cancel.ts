// The `mam job cancel` use case, shared by the CLI and the dashboard (mam ui): journal a
// `cancelled` event (source mam) unless the job has already ended, publish it, and tell the
// job's agent to stop. Never throws for a job that has ended: it says so in the result.
import { brokerConfigFromEnv } from "./broker-config.ts";
import { isFinal, type JobStatus } from "./event.ts";
import { appendEvent, effectiveStatus, requireRecord } from "./store.ts";
import type { Env } from "../sys/paths.ts";

export interface Cancelled {
  job_id: string;
  /** false: the job had already ended (see `ended`) and nothing was written */
  cancelled: boolean;
  ended?: JobStatus;
  seq?: number;
  /** non-fatal problems (no broker, the agent could not be told) */
  warnings: string[];
}

export async function cancelJob(ws: string, id: string, env: Env = process.env, detail = "cancelled by mam job cancel"): Promise<Cancelled> {
  requireRecord(ws, id);
  const cfg = brokerConfigFromEnv(env);
  let ended: JobStatus | undefined;
  const a = await appendEvent(ws, id, (r, evs) => {
    const st = effectiveStatus(r!, evs);
    if (isFinal(st)) {
      ended = st;
      return undefined;
    }
    return { event: "cancelled", detail, source: "mam" };
  });
  if (!a) return { job_id: id, cancelled: false, ended, warnings: [] };
  const warnings: string[] = [];
  const { publishAll } = await import("./transport.ts");
  const p = await publishAll(cfg, [{ topic: `${a.record!.topic_prefix}/events`, payload: a.line }]);
  if (!p.ok) warnings.push(`${p.reason}; event ${id} #${a.payload.seq} is in the journal only`);
  const { loadJobRuntime } = await import("./runtime.ts");
  const rt = await loadJobRuntime(ws, env);
  const s = await rt.findSession(a.record!.agent_session);
  if (s) await rt.prompt(s, `[mam] Job ${id} was cancelled: stop working on it.`).catch((e) => warnings.push(`could not tell ${s.name} (${(e as Error).message})`));
  return { job_id: id, cancelled: true, seq: a.payload.seq, warnings };
}
