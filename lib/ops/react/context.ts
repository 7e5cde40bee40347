// What the daemon (lib/daemon/hook-runner.ts) hands each hook, and so each reaction (./reaction.ts):
// the means to log, publish on the daemon's broker link and put slow work aside; and what a team
// adds to that link.
import type { DaemonMode } from "../../sys/daemon-files.ts";

/** what a hook hands a reaction: the daemon's means to log, publish and put work aside */
export interface HookContext {
  ws: string;
  /** the mode the daemon is in when the hook starts */
  mode: DaemonMode;
  /** aborted when the daemon stops or the hook overruns its deadline */
  signal: AbortSignal;
  log(message: string): void;
  /** logged only with MAM_DEBUG=1 */
  debug(message: string): void;
  /**
   * queue a QoS 1 publish on the daemon's broker connection (not awaited); while a connection is
   * being set up, it goes out in order once it is; false in polling mode
   */
  publish(topic: string, payload: string, opts?: { retain?: boolean }): Promise<boolean>;
  /**
   * run `fn` beside the hooks, not in their line: after the earlier work given the same `lane`
   * (one at a time per lane, in order), with a hook's deadline and context. For a step that waits
   * (typing into a pane waits out pauses): in a hook it would hold up every hook behind it, and
   * the broker's messages (MQTT.js hands over the next one when the last one's hook is done).
   */
  aside(lane: string, name: string, fn: (ctx: HookContext) => Promise<void>): void;
  /** resolves once no connection is being set up (what was queued meanwhile has gone out) */
  settled(): Promise<void>;
  /**
   * subscribe the daemon's broker connection to more topics, or drop them (not awaited; nothing
   * in polling mode: a new connection subscribes to what LinkExtras names then)
   */
  subscribe(topics: string[]): void;
  unsubscribe(topics: string[]): void;
}

/** what a team adds to the daemon's broker connection (./team.ts): its topics and a last will */
export interface LinkExtras {
  topics: string[];
  will?: { topic: string; payload: string };
}
