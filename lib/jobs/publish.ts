// Publishing journalled events (SPEC §7.4): the journal already holds them; the broker makes them
// live. Without a broker this is not a failure: the caller gets a warning line to show.
import { brokerConfigFromEnv } from "./broker-config.ts";
import type { Env } from "../sys/paths.ts";

/**
 * publish `line` on `topic`; returns a warning when no broker took it (the journal keeps the
 * event), else undefined. A remote reporter's resends go through publishReport (acks) instead.
 */
export async function publishJournalled(topic: string, line: string, id: string, seq: number, env: Env = process.env): Promise<string | undefined> {
  const cfg = brokerConfigFromEnv(env);
  const { publishAll } = await import("./transport.ts");
  const r = await publishAll(cfg, [{ topic, payload: line }]);
  return r.ok ? undefined : `${r.reason}; event ${id} #${seq} is in the journal only`;
}
