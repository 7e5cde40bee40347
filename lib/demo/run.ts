// mam demo (SPEC §8): the hello-world. A temporary workspace, an embedded broker on a free
// loopback port, a private multiplexer server, a worker and a reviewer of the built-in `demo`
// kind, one loop job, its timeline and the status table — then everything is torn down.
import { lstatSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningBroker } from "../broker/server.ts";
import type { JobEvent } from "../jobs/event.ts";
import type { Backend } from "../mux/types.ts";
import { EXIT, MamError } from "../sys/errors.ts";
import type { Env } from "../sys/paths.ts";
import { childEnv, selfCommand } from "../sys/self.ts";
import { freePort } from "../sys/net.ts";

export interface DemoOptions {
  backend: Backend;
  keep: boolean;
  print: (line: string) => void;
  /** the environment (PATH decides herdr/tmux) */
  env: Env;
  /** how long the job may take */
  timeoutMs: number;
  /** the worker asks in a permission dialog before its command, and the demo answers it with mam approve */
  dialog?: boolean;
  /** a plan that lands its work instead (./plan.ts) */
  plan?: boolean;
}

/**
 * the question of the worker's dialog, once the daemon has journalled it on the job (its own
 * observation, source monitor): what `mam approve` without a fingerprint answers
 */
async function questionJournalled(read: () => readonly JobEvent[], timeoutMs: number, signal: AbortSignal): Promise<JobEvent | undefined> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end && !signal.aborted) {
    const q = read().find((e) => e.event === "permission_required" && e.source === "monitor" && e.data?.question !== undefined);
    if (q) return q;
    await Bun.sleep(100);
  }
  return undefined;
}

const WORKER = "demo-worker";
const REVIEWER = "demo-reviewer";

/** a process that is gone or a zombie */
function gone(pid: number): boolean {
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

async function untilGone(pids: number[], ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end && !pids.every(gone)) await Bun.sleep(25);
  for (const p of pids) {
    if (gone(p)) continue;
    try {
      process.kill(p, "SIGKILL");
    } catch {}
  }
}

/** one timeline line per event, seconds since the first */
export function timeline(events: JobEvent[], t0: number): string[] {
  return events.map((e) => {
    const at = (Date.parse(e.timestamp) - t0) / 1000;
    return `  ${`+${Math.max(0, at).toFixed(0)}s`.padStart(5)}  #${String(e.seq).padEnd(3)} ${e.event.padEnd(20)} ${e.source.padEnd(14)} ${e.detail}`;
  });
}


export async function runDemo(o: DemoOptions): Promise<number> {
  const p = o.print;
  // herdr asked for and not there: said before anything starts (no workspace, broker or server to clean up)
  if (o.backend === "herdr") (await import("../mux/herdr-env.ts")).findHerdr(o.env);
  const ws = realpathSync(mkdtempSync(join(tmpdir(), "mam-demo-")));
  const server = `mam-demo-${process.pid}`;
  const cleanups: { what: string; run: () => Promise<unknown> | unknown }[] = [];
  let broker: RunningBroker | undefined;
  let brokerProc: ReturnType<typeof Bun.spawn> | undefined;
  let ok = false;
  // Ctrl-C / SIGTERM: stop waiting, tear everything down, exit 130 / 143
  const stop = new AbortController();
  let signalled = 0;
  const onSig = (code: number) => () => {
    if (signalled) return;
    signalled = code;
    p(`\nsignal received: cleaning up`);
    stop.abort();
  };
  const onInt = onSig(130);
  const onTerm = onSig(143);
  process.on("SIGINT", onInt);
  process.on("SIGTERM", onTerm);
  const checkpoint = () => {
    if (signalled) throw new MamError("interrupted", signalled);
  };
  try {
    // 1. the broker
    const port = await freePort();
    if (o.keep) {
      // it must outlive this process: a detached `mam broker`
      brokerProc = Bun.spawn([...selfCommand(), "broker", "--port", String(port)], { detached: true, stdio: ["ignore", "ignore", "ignore"], env: childEnv(o.env) });
      brokerProc.unref();
      const { connect } = await import("node:net");
      const deadline = Date.now() + 10_000;
      for (;;) {
        const up = await new Promise<boolean>((r) => {
          const c = connect(port, "127.0.0.1");
          c.once("connect", () => (c.destroy(), r(true)));
          c.once("error", () => r(false));
        });
        if (up) break;
        if (Date.now() > deadline) throw new MamError("the demo broker did not start", EXIT.FAIL);
        await Bun.sleep(50);
      }
    } else {
      const { startBroker } = await import("../broker/server.ts");
      broker = await startBroker({ host: "127.0.0.1", port });
      cleanups.push({ what: "broker", run: () => broker!.close() });
    }
    const env: Env = { ...o.env, MQTT_BROKER: "127.0.0.1", MQTT_PORT: String(port), MQTT_TLS: "0", MAM_WORKSPACE: ws };
    delete env.MAM_NO_SUBSCRIBER_DAEMON;
    delete env.MQTT_USERNAME;
    delete env.MQTT_PASSWORD;
    delete env.MQTT_PASSWORD_FILE;
    p(`mam demo: workspace ${ws}`);
    p(`  broker mqtt://127.0.0.1:${port} (embedded), ${o.backend} server '${server}'`);

    // 2. two demo agents
    const [{ createSession }, { realDeps }] = await Promise.all([import("../ops/session/create.ts"), import("../ops/wiring.ts")]);
    const deps = realDeps(ws, env);
    const choice = o.backend === "herdr" ? { herdr_server: server } : { mux: "tmux" as const, tmux_server: server };
    if (!o.keep) {
      cleanups.unshift({
        what: `${o.backend} server`,
        run: async () => {
          if (o.backend === "tmux") {
            const tenv = childEnv({ ...env, TMUX: undefined });
            // the server and the agents in its panes: gone before we say we cleaned up
            const q = Bun.spawnSync(["tmux", "-L", server, "list-panes", "-a", "-F", "#{pid} #{pane_pid}"], { env: tenv, stdio: ["ignore", "pipe", "ignore"] });
            const pids = [...new Set(q.stdout.toString().split(/\s+/).filter((x) => /^\d+$/.test(x)).map(Number))];
            Bun.spawnSync(["tmux", "-L", server, "kill-server"], { env: tenv, stdio: ["ignore", "ignore", "ignore"] });
            await untilGone(pids, 5000);
            // tmux (3.3) leaves the socket of a killed server behind: the demo's server is gone, so is its socket
            const socket = join(env.TMUX_TMPDIR || "/tmp", `tmux-${process.getuid?.() ?? 0}`, server);
            try {
              if (lstatSync(socket).isSocket() && Bun.spawnSync(["tmux", "-L", server, "list-sessions"], { env: tenv, stdio: ["ignore", "ignore", "ignore"] }).exitCode !== 0) rmSync(socket);
            } catch {} // no socket left: nothing to remove
          } else {
            const { findHerdr } = await import("../mux/herdr.ts");
            Bun.spawnSync([findHerdr(env), "--session", server, "server", "stop"], { env: childEnv(env), stdio: ["ignore", "ignore", "ignore"] });
          }
        },
      });
    }
    if (o.plan) {
      const { pid } = await deps.daemon.ensure();
      if (!o.keep) cleanups.unshift({ what: "daemon", run: () => deps.daemon.stop() });
      p(`  subscriber daemon pid ${pid}`);
      const { runPlanDemo } = await import("./plan.ts");
      ok = await runPlanDemo(deps, {
        print: p,
        timeoutMs: o.timeoutMs,
        signal: stop.signal,
        create: async (name, role, worktree, agentArgs) => {
          const c = await createSession(deps, { agent: "demo", role, name, ...choice, start_server: true, onboard: false, mcp: false, grant: true, agent_args: agentArgs, ...(worktree ? { worktree: "" } : {}) });
          p(`  created ${c.name} (demo, role ${c.role}${worktree ? `, in its own worktree on branch ${name}` : ""}) in pane ${c.pane}`);
          checkpoint();
        },
      });
      checkpoint();
      p(ok ? "\nthe plan landed: three parts on main, each reviewed, checked and fast-forwarded" : "\nthe plan did not land");
      if (o.keep) p(`\nkept everything: mam plan status --workspace ${ws}; mam merge status --workspace ${ws}; git -C ${ws} log --oneline`);
      return ok ? 0 : 1;
    }
    for (const [name, role, extra] of [
      [WORKER, "worker", o.dialog ? ["--dialog"] : []],
      [REVIEWER, "reviewer", ["--pass-on", "2"]],
    ] as const) {
      const c = await createSession(deps, { agent: "demo", role, name, ...choice, start_server: true, onboard: false, mcp: false, grant: true, agent_args: ["--role", role, ...extra] });
      p(`  created ${c.name} (demo, role ${c.role}) in pane ${c.pane}`);
      checkpoint();
    }

    // 3. the daemon hears the events and moves the loop on
    const { pid } = await deps.daemon.ensure();
    if (!o.keep) cleanups.unshift({ what: "daemon", run: () => deps.daemon.stop() });
    p(`  subscriber daemon pid ${pid}`);

    // 4. a loop job
    const [{ submitJob }, { waitJobs }] = await Promise.all([import("../ops/job/submit.ts"), import("../jobs/wait.ts")]);
    const { record } = await submitJob(deps, {
      to: WORKER,
      type: "loop",
      reviewer: REVIEWER,
      max_iterations: 3,
      prompt: "write hello.txt with a greeting for the team",
      expect: ["hello.txt"],
      timeout_s: Math.ceil(o.timeoutMs / 1000),
      idle_timeout_s: 60,
    });
    p(`\njob ${record.job_id}: loop, worker ${WORKER}, reviewer ${REVIEWER} (the reviewer asks for one change, then passes)`);
    const t0 = Date.now();
    checkpoint();
    if (o.dialog) {
      // the worker asks before its command, as a real agent does; the daemon journals the question
      const asked = await questionJournalled(() => deps.jobs.journal(record.job_id), o.timeoutMs, stop.signal);
      checkpoint();
      if (!asked) throw new MamError(`the demo worker's dialog was not journalled within ${o.timeoutMs / 1000} s`, EXIT.FAIL);
      const q = asked.data.question as { title: string; subject: string; question: string; choices: { n: number; label: string }[]; fingerprint: string };
      p(`\n${WORKER} asks, in a permission dialog (as claude or codex would), and waits:`);
      p(`  ${q.title}: ${q.subject} — ${q.question}`);
      p(`  choices: ${q.choices.map((c) => `${c.n} ${c.label}`).join(" · ")}`);
      if (o.keep) {
        p(`answer it yourself (the job goes on once you do):`);
        p(`  mam approve ${WORKER} --workspace ${ws}            # or --deny; mam status shows the dialog, mam ui has buttons`);
      } else {
        const [{ approve }, { answeredText }] = await Promise.all([import("../ops/session/approve.ts"), import("../ops/session/render.ts")]);
        p(`$ mam approve ${WORKER}`);
        const a = await approve(deps, { target: WORKER, deny: false }, { surface: "cli" });
        p(answeredText(a));
      }
      p("");
    }
    const res = await waitJobs(ws, [record], { any: false, timeoutMs: o.timeoutMs, signal: stop.signal });
    checkpoint();
    const events = deps.jobs.journal(record.job_id);
    p(timeline(events, Date.parse(events[0]?.timestamp ?? new Date(t0).toISOString())).join("\n"));
    const status = res.jobs[0]?.status ?? "unknown";
    ok = res.outcome === "done" && status === "completed";
    p(res.outcome === "timeout" ? `job ${record.job_id} did not finish within ${o.timeoutMs / 1000} s` : `job ${record.job_id} ${status} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    // 5. the status table
    const [{ sessionStatus }, { renderStatus }] = await Promise.all([import("../ops/session/status-run.ts"), import("../ops/session/status.ts")]);
    // the agents return from their last `mam job event` a moment after the job ended
    let st = await sessionStatus(deps);
    for (const end = Date.now() + 3000; st.sessions.some((x) => x.live === "working") && Date.now() < end; ) {
      await Bun.sleep(200);
      st = await sessionStatus(deps);
    }
    p(`\n${renderStatus(st, false)}`);
    p(`  (COST is synthetic: the demo agent calls no model and reports made-up tokens as model mam-demo-synthetic; real agents' costs: docs/cost.md)`);
    if (o.keep) {
      p(`\nkept everything. Look around:`);
      p(`  mam status --workspace ${ws}`);
      p(`  mam job logs ${record.job_id} --workspace ${ws}`);
      p(o.backend === "tmux" ? `  tmux -L ${server} attach -t ${WORKER}` : `  herdr --session ${server}`);
      p(`  mam ui --workspace ${ws}      # the team and the loop job's timeline in your browser`);
      p(`clean up:`);
      p(`  mam daemon stop --workspace ${ws}; ${o.backend === "tmux" ? `tmux -L ${server} kill-server` : `herdr --session ${server} server stop`}; kill ${brokerProc?.pid}; rm -rf ${ws}`);
    }
    return ok ? 0 : 1;
  } catch (e) {
    if (signalled) return signalled;
    throw e;
  } finally {
    process.off("SIGINT", onInt);
    process.off("SIGTERM", onTerm);
    if (!o.keep) {
      for (const c of cleanups) {
        try {
          await c.run();
        } catch (e) {
          p(`  (cleaning up the ${c.what} failed: ${(e as Error).message})`);
        }
      }
      rmSync(ws, { recursive: true, force: true });
      p(`cleaned up: sessions, ${o.backend} server, daemon, broker, ${ws}`);
    }
  }
}
