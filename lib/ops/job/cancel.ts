// Cancelling a job (docs/jobs.md), behind `mam job cancel`, the MCP tool and mam ui's cancel:
// journal a `cancelled` event (source mam) under the jobs lock unless the job has already ended,
// publish it, and tell the job's agent to stop (a shell is told nothing: the `mam shell-job`
// running its command sees the cancel and stops it).
import { brokerConfigFromEnv } from "../../jobs/broker-config.ts";
import { isFinal, type JobStatus } from "../../jobs/statuses.ts";
import { publishJournalled } from "../../jobs/publish.ts";
import { effectiveStatus } from "../../jobs/store.ts";
import { readsCommands } from "../../agents/kinds/index.ts";
import { note, type Notice, warning } from "../../sys/notice.ts";
import type { Deps } from "../deps.ts";

export interface Cancelled {
  job_id: string;
  /** false when the job had already ended (nothing was written) */
  cancelled: boolean;
  /** the job's status after the call */
  status: JobStatus;
  /** the session that was told to stop, if it could be reached */
  told: string | null;
  /** non-fatal problems (no broker, agent not reachable) */
  warnings: Notice[];
}

export async function cancelJob(deps: Deps, id: string): Promise<Cancelled> {
  deps.jobs.require(id);
  brokerConfigFromEnv(deps.env); // a bad MQTT_* setting fails before anything is written
  let ended: JobStatus | undefined;
  let waiting = false;
  const a = await deps.jobs.append(id, (r, evs) => {
    const st = effectiveStatus(r!, evs);
    if (isFinal(st)) {
      ended = st;
      return undefined;
    }
    waiting = st === "queued";
    return { event: "cancelled", detail: waiting ? "cancelled by mam job cancel while it waited its turn" : "cancelled by mam job cancel", source: "mam" };
  });
  if (!a) return { job_id: id, cancelled: false, status: ended!, told: null, warnings: [] };
  const warnings: Notice[] = [];
  const w = await publishJournalled(`${a.record!.topic_prefix}/events`, a.line, id, a.payload.seq, deps.env);
  if (w) warnings.push(w);
  // a job that waited its turn never reached its agent: nothing to tell it
  if (waiting) return { job_id: id, cancelled: true, status: "cancelled", told: null, warnings };
  const agent = a.record!.agent_session;
  // an agent on another host: its host's daemon hears the `cancelled` event and tells it
  if (agent.includes("@") && !a.record!.remote_of) return { job_id: id, cancelled: true, status: "cancelled", told: agent, warnings };
  const s = await deps.runtime.findSession(agent);
  let told: string | null = null;
  if (s && readsCommands(s.agent)) {
    // a shell would run the notice; its `mam shell-job` sees the cancel and stops the command
    warnings.push(note(`nothing was typed into ${s.name} (a ${s.agent} session runs what is typed); a running job command there stops within a second`));
  } else if (s) {
    try {
      const left = await deps.runtime.prompt(s, `[mam] Job ${id} was cancelled: stop working on it.`);
      if (left) warnings.push(left);
      told = s.name;
    } catch (e) {
      warnings.push(warning(`could not tell ${s.name} (${(e as Error).message})`));
    }
  }
  return { job_id: id, cancelled: true, status: "cancelled", told, warnings };
}
