// The daemon's notifications (docs/notifications.md): what it hears becomes a notification to the
// user's sinks (lib/notify), once per transition:
//   * a job's `permission_required` → "dialog" (what the agent asks, the mam approve commands, the
//     dashboard's link when mam ui runs);
//   * the event that ends a job → "ended" (completed, error, timeout, cancelled, budget_exceeded),
//     or "died" when the daemon saw its agent exit;
//   * a running row the reconcile pass finds gone → "died" (the same death as the job's is one
//     notification: both are keyed by the session and its start);
//   * a host of the team whose daemons all went offline → "offline" (its first state seen is where
//     it was, not news);
//   * a job that waited in the queue longer than MAM_NOTIFY_QUEUED_MIN → "queued" (./notify-queued.ts);
//   * an agent that went to a usage or rate limit, or back from it → "limited" (./limits-watch.ts).
//   * an agent created with --restart on-failure that died once too often within the hour →
//     "gave_up" (./agents-restart.ts); its deaths before that are no "died" (the daemon restarts it),
//     nor is the one it gave up on (the gave_up said it).
// Jobs copied from another host are that host's to tell about; an event older than MAX_AGE_MS (a
// daemon starting over an old journal) is not news either.
import { fromDaemon, type JobEvent } from "../../jobs/event.ts";
import { visible } from "../../sys/sanitize.ts";
import type { JobRecord } from "../../jobs/store.ts";
import type { Action } from "../../fleet/classify.ts";
import { rowEpoch } from "../../fleet/adopt.ts";
import { rowAgent } from "../../fleet/rows.ts";
import { agentKind } from "../../agents/kinds/index.ts";
import { askedOf, diedNotice, dialogNotice, endedNotice, gaveUpNotice, limitedNotice, type Notification, offlineNotice, queuedNotice, type Where } from "../../notify/message.ts";
import { Notifier } from "../../notify/send.ts";
import type { Deps } from "../deps.ts";
import { SECTIONS } from "../../registry/types.ts";
import { policyView } from "../../fleet/policy.ts";
import { restartPolicy } from "../../fleet/restart.ts";
import { recordKey } from "../../sys/record-key.ts";
import { RESTART_EVENTS } from "../../jobs/statuses.ts";
import { hostName, isValidAddress } from "../../team/host.ts";
import { dashboardLink } from "../../sys/ui-file.ts";

const MAX_AGE_MS = 15 * 60_000;

export interface NotifyPart {
  /** a job's permission_required, or the event that ended it */
  jobEvent(rec: JobRecord, ev: JobEvent, log: (line: string) => void): Promise<void>;
  /** the reconcile pass's actions: running rows whose pane is gone */
  terminated(actions: readonly Action[], log: (line: string) => void): Promise<void>;
  /** the daemon gave up restarting a session (./agents-restart.ts); `since`: when */
  gaveUp(o: { session: string; max: number; why: string; since: number; job_id?: string }, log: (line: string) => void): Promise<void>;
  /** a job has waited in the queue longer than MAM_NOTIFY_QUEUED_MIN (./notify-queued.ts) */
  queued(job_id: string, session: string, minutes: number, log: (line: string) => void): Promise<void>;
  /** an agent went to a limit, or back from it (`lifted`: what ended it) */
  limited(o: { session: string; since: string; resets_at: string | null; reason: string; lifted?: string; job_id?: string }, log: (line: string) => void): Promise<void>;
  /** a workspace daemon of the team said online or offline */
  presence(team: string, host: string, wsId: string, online: boolean, at: number, log: (line: string) => void): Promise<void>;
}

export function notifyPart(deps: Deps, self: string = hostName(deps.env)): NotifyPart {
  let notifier: Notifier | undefined;
  const send = async (n: Notification, log: (line: string) => void) => {
    notifier ??= new Notifier(deps.env, log);
    try {
      await notifier.send(n);
    } catch (e) {
      log(`notify: ${(e as Error).message}`);
    }
  };
  const where = (): Where => ({ workspace: deps.ws, host: self, at: new Date().toISOString(), dashboard: (s) => (s.includes("@") ? undefined : dashboardLink(deps.ws, s)) });
  /** the start of the running (else last) row of a session: one death of it is one notification */
  const startOf = (session: string): number => {
    try {
      const data = deps.registry.read();
      for (const section of SECTIONS) {
        const rows = data[section].filter((r) => r.name === session);
        const row = rows.find((r) => r.status === "running") ?? rows.at(-1);
        if (row) return rowEpoch(row, section) ?? 0;
      }
    } catch {}
    return 0;
  };
  /** its kind keeps no conversation mam can resume (demo, shell, aider): it starts again with --fresh */
  const freshOnly = (session: string): boolean => {
    try {
      const data = deps.registry.read();
      const row = SECTIONS.flatMap((section) => data[section].filter((r) => r.name === session)).at(-1);
      const agent = row ? rowAgent(row) : undefined;
      return agent !== undefined && agentKind(agent).resumeArgs === null;
    } catch {
      return false; // an unknown kind (or a broken registry): the plain command, whose error says more
    }
  };
  /** the session's row has restart on-failure: the daemon restarts it, or told of giving up (gave_up) */
  const restarts = (session: string): boolean => {
    try {
      const data = deps.registry.read();
      const key = recordKey(deps.env, false);
      return SECTIONS.some((section) => data[section].some((r) => r.name === session && restartPolicy(policyView(r, key, deps.ws)).on));
    } catch {
      return false;
    }
  };
  /** host → workspace id → online; and whether the host was last seen online */
  const hosts = new Map<string, { ws: Map<string, { online: boolean; at: number }>; online: boolean }>();
  return {
    async jobEvent(rec, ev, log) {
      if (rec.remote_of || Date.now() - Date.parse(ev.timestamp) > MAX_AGE_MS) return;
      const w = where();
      if (ev.event === "permission_required") {
        // only the daemon's own (here, or vouched for by the agent's host): an agent's report is no dialog
        if (!fromDaemon(ev)) return log(`job ${rec.job_id}: permission_required from ${visible(ev.source.slice(0, 64))}, not the daemon's; no notification`);
        // the session the event names, when it is one (a name, or name@host): it goes into command lines
        const session = typeof ev.data.session === "string" && isValidAddress(ev.data.session) ? ev.data.session : rec.agent_session;
        const at = session.lastIndexOf("@");
        const agentHost = at >= 0 ? session.slice(at + 1) : undefined;
        const local = agentHost === undefined || agentHost === self ? (at >= 0 ? session.slice(0, at) : session) : session;
        const n = dialogNotice(w, { job_id: rec.job_id, session: local, detail: ev.detail, question: askedOf(ev.data.question), agentHost, seq: ev.seq });
        // an event's identity (origin and seq): the same question asked again is another transition
        return send({ ...n, key: `dialog:${rec.job_id}:${ev.origin ?? ""}:${ev.seq}` }, log);
      }
      // the daemon's restarts: the delegator hears of them; the user of giving up (gaveUp)
      if (RESTART_EVENTS.includes(ev.event)) return;
      const session = rec.agent_session;
      if (ev.event === "error" && ev.source === "monitor" && ev.detail === "agent exited") {
        if (restarts(session)) return log(`job ${rec.job_id}: ${session} restarts on failure; its gave_up notification tells of this death`);
        return send(diedNotice(w, { session, job_id: rec.job_id, why: `its agent exited while job ${rec.job_id} ran`, since: startOf(session), fresh: freshOnly(session) }), log);
      }
      return send(endedNotice(w, { job_id: rec.job_id, session, status: ev.event, detail: ev.detail }), log);
    },
    async terminated(actions, log) {
      for (const a of actions) {
        if (a.type !== "terminate") continue;
        if (restarts(a.name)) continue; // the daemon restarts it (./agents-restart.ts)
        await send(diedNotice(where(), { session: a.name, why: `its pane ${a.paneId ?? ""} is gone (${a.reason})`.replace("  ", " "), since: startOf(a.name), fresh: freshOnly(a.name) }), log);
      }
    },
    async gaveUp(o, log) {
      await send(gaveUpNotice(where(), o), log);
    },
    async queued(job_id, session, minutes, log) {
      await send(queuedNotice(where(), { job_id, session, minutes }), log);
    },
    async limited(o, log) {
      await send(limitedNotice(where(), o), log);
    },
    async presence(team, host, wsId, online, at, log) {
      if (host === self) return;
      let h = hosts.get(host);
      const first = !h;
      h ??= { ws: new Map(), online };
      hosts.set(host, h);
      h.ws.set(wsId, { online, at });
      const now = [...h.ws.values()].some((x) => x.online);
      const was = h.online;
      h.online = now;
      if (first || !was || now) return;
      const since = Math.max(...[...h.ws.values()].map((x) => x.at));
      await send(offlineNotice(where(), { team, host, since, workspaces: h.ws.size }), log);
    },
  };
}
