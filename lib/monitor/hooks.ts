// What the subscriber daemon does, wired in one place. The loop (daemon.ts) decides when; these
// decide what:
//   reconcile   → the reconcile pass (SPEC §6.1), applied; then react to the journals
//   onEvent     → ingestEvent (verify, journal once, move the status), then react to that job
//   jobsChanged → react to journals written on this machine (works with no broker at all)
//   poll        → polling mode: the reconcile pass; both modes: job timeouts
//   watch       → every MAM_STATE_POLL_MS, only while jobs are unfinished: blocked / dead agents of
//                 those jobs (one listing per server, tmux screens of just those agents)
//   busy        → a running row or an unfinished job holds the idle timeout off
import type { JobRuntime } from "../jobs/runtime.ts";
import type { Env } from "../sys/paths.ts";
import type { DaemonHooks, HookContext } from "./daemon.ts";
import type { AgentLook, AgentState, ReactorContext } from "./reactor.ts";

export function defaultHooks(env: Env = process.env): DaemonHooks {
  let runtime: JobRuntime | undefined;
  const blocked = new Map<string, string>();
  const reactor = async (ctx: HookContext): Promise<ReactorContext> => {
    const { loadJobRuntime } = await import("../jobs/runtime.ts");
    runtime ??= await loadJobRuntime(ctx.ws, env);
    return { ws: ctx.ws, runtime, log: ctx.log, publish: ctx.publish };
  };
  const pass = async (ctx: HookContext) => {
    const { reconcileOnce, describeAction } = await import("./reconcile.ts");
    const r = await reconcileOnce(ctx.ws, env, { dryRun: false });
    for (const a of r.actions) ctx.log(`reconcile: ${describeAction(a)}`);
  };
  const react = async (ctx: HookContext, only?: string[]) => {
    const { reactToJobs } = await import("./reactor.ts");
    await reactToJobs(await reactor(ctx), only);
  };
  return {
    async reconcile(ctx) {
      await pass(ctx);
      await react(ctx);
    },
    async onEvent(topic, payload, ctx) {
      const { ingestEvent } = await import("../jobs/ingest.ts");
      const r = await ingestEvent(ctx.ws, topic, payload, ctx.log);
      if (r.outcome !== "dropped") await react(ctx, [r.job.job_id]);
    },
    async jobsChanged(ctx) {
      await react(ctx);
    },
    async poll(ctx) {
      if (ctx.mode === "polling") await pass(ctx);
      const [{ scanJobs }, { publishAppended }] = await Promise.all([import("../jobs/ingest.ts"), import("./reactor.ts")]);
      const rc = await reactor(ctx);
      const scan = await scanJobs(ctx.ws, Date.now() / 1000, ctx.log);
      for (const a of scan.timedOut) await publishAppended(rc, a.record, [a]);
      await react(ctx);
    },
    async watch(ctx) {
      const watched = await waitedOn(ctx.ws);
      if (watched.size === 0) {
        blocked.clear();
        return; // no unfinished job: no multiplexer call at all
      }
      const { watchAgents } = await import("./reactor.ts");
      const rc = await reactor(ctx);
      await watchAgents(rc, await agentStates(ctx.ws, env, watched), blocked);
      await react(ctx);
    },
    async busy(ctx) {
      const [{ readRegistry, registryPath }, { listJobIds, readRecord }, { isFinal }] = await Promise.all([
        import("../registry/index.ts"),
        import("../jobs/store.ts"),
        import("../jobs/event.ts"),
      ]);
      const data = readRegistry(registryPath(ctx.ws, env));
      if ([...data.herdr_sessions, ...data.tmux_sessions].some((r) => r.status === "running")) return true;
      return listJobIds(ctx.ws).some((id) => {
        try {
          const r = readRecord(ctx.ws, id);
          return r !== undefined && !isFinal(r.status);
        } catch {
          return false;
        }
      });
    },
  };
}

/** the sessions unfinished jobs wait on (their agent, or a loop's reviewer) */
async function waitedOn(ws: string): Promise<Set<string>> {
  const [{ listJobIds, readJournal, readRecord }, { isFinal }, { busySession }] = await Promise.all([import("../jobs/store.ts"), import("../jobs/event.ts"), import("./reactor.ts")]);
  const out = new Set<string>();
  for (const id of listJobIds(ws)) {
    try {
      const r = readRecord(ws, id);
      if (r && !isFinal(r.status)) out.add(busySession(r, readJournal(ws, id)));
    } catch {}
  }
  return out;
}

/** the state of each session's pane, from one listing per server (tmux screens: only `watched`) */
async function agentStates(ws: string, env: Env, watched?: Set<string>): Promise<(session: string) => Promise<AgentLook>> {
  const [{ readRegistry, registryPath }, { muxFor }, { observe }, { epochNow }] = await Promise.all([
    import("../registry/index.ts"),
    import("../mux/index.ts"),
    import("../sessions/observe.ts"),
    import("../sys/time.ts"),
  ]);
  let cache: Map<string, AgentLook> | undefined;
  return async (session) => {
    if (!cache) {
      cache = new Map();
      const data = readRegistry(registryPath(ws, env));
      const obs = await observe(data, ws, (b, s) => muxFor(b, s, env), env, epochNow(), [], { liveOnly: watched });
      for (const v of obs.rows) {
        if (v.row.status !== "running" && cache.has(v.row.name)) continue;
        const st: AgentState = v.live === "blocked" ? "blocked" : v.live === "dead" ? "gone" : v.live === "unreachable" ? "unknown" : "alive";
        cache.set(v.row.name, v.row.status === "running" ? { state: st, ...(st === "blocked" && v.pane?.reason ? { reason: v.pane.reason } : {}) } : { state: "gone" });
      }
    }
    return cache.get(session) ?? { state: "unknown" };
  };
}
