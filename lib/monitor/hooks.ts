// What the subscriber daemon does, wired in one place. The loop (daemon.ts) decides when; these
// decide what. Each plug point below is one line:
//
//   reconcile  → the reconcile pass of lib/monitor/reconcile.ts (SPEC §6.1), applied
//   onEvent    → ingestEvent(ws, topic, payload, log) from lib/jobs (verify, journal, status,
//                tell the delegator; SPEC §7.4)
//   poll       → polling mode: the reconcile pass + scanJobs(ws, now) (journals written while no
//                broker carried them); MQTT mode: scanJobs only (job timeouts, blocked/dead panes)
//   busy       → any running row or non-terminal job (holds the idle timeout off)
//
// Until those land, the hooks only log, so the daemon's lifecycle can be built and tested alone.
import type { DaemonHooks } from "./daemon.ts";

export function defaultHooks(): DaemonHooks {
  return {
    async reconcile(ctx) {
      ctx.debug("reconcile pass (not wired yet)"); // lead: await reconcilePass(ctx.ws, { log: ctx.log })
    },
    async onEvent(topic, payload, ctx) {
      ctx.log(`event ${topic} (${payload.length} bytes)`); // lead: await ingestEvent(ctx.ws, topic, payload, ctx.log)
    },
    async poll(ctx) {
      ctx.debug(`poll in ${ctx.mode} mode (not wired yet)`); // lead: if (ctx.mode === "polling") await reconcilePass(…); await scanJobs(ctx.ws, Date.now())
    },
    async busy() {
      return false; // lead: return (await hasRunningWork(ctx.ws))
    },
  };
}
