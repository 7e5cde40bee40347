// Publishing journalled events (docs/jobs.md): the journal already holds them; the broker makes them
// live. A broker that does not take one is not a failure, and what mam prints here is read by the
// agent that ran `mam job event` (a model reads "WARNING … unreachable" as its command failing):
// * no broker configured (MQTT_BROKER unset): nothing at all; the journal is the channel and the
//   daemon of this workspace reacts to it;
// * a configured broker that does not answer: one NOTE line saying the event is saved.
import { brokerConfigFromEnv } from "./broker-config.ts";
import { type Notice, note } from "../sys/notice.ts";
import type { Env } from "../sys/paths.ts";

/** has the user named a broker (MQTT_BROKER)? Without one mam still tries the local default, quietly */
export function brokerConfigured(env: Env): boolean {
  return (env.MQTT_BROKER ?? "") !== "";
}

/** the note for an event this machine's journal holds but the broker did not take */
export function savedNote(id: string, seq: number, reason: string, remote: boolean): Notice {
  return note(
    remote
      ? `job ${id} event #${seq} is saved here; ${reason}: it is sent again with your next report`
      : `job ${id} event #${seq} is saved in the journal, where mam's daemon reads it; ${reason}, so it was not sent live`,
  );
}

/**
 * publish `line` on `topic`; returns the note to show when the configured broker did not take it
 * (the journal keeps the event), else undefined. A remote reporter's resends go through
 * publishReport (acks) instead.
 */
export async function publishJournalled(topic: string, line: string, id: string, seq: number, env: Env): Promise<Notice | undefined> {
  const cfg = brokerConfigFromEnv(env);
  const { publishAll } = await import("./transport.ts");
  const r = await publishAll(cfg, [{ topic, payload: line }]);
  return r.ok || !brokerConfigured(env) ? undefined : savedNote(id, seq, r.reason, false);
}
