// bench area `fleet` (issue 29): mam at fleet scale. Demo agents on one private tmux server, one
// workspace, added in steps of 10, 50 and 100 (`mam create --agent demo --role worker --session wN
// --mux tmux --tmux-server S -- --role worker --think-ms 3600000`); each gets a job as it comes
// (`mam job submit --timeout 0 --idle-timeout 0`, then `mam job event … started`): the agent
// takes it and thinks for an hour, so every job stays running (no time limit ends it while the
// daemon is measured) and every agent shows LIVE working.
//   (a) at each step the daemon (`mam reconcile --subscribe`, no broker: polling mode,
//       MAM_STATE_POLL_MS 1000) watching the N agents of N running jobs: its CPU (% of one core;
//       the tmux clients it waited for apart) and RSS over BENCH_FLEET_SECONDS (default 30; 60 at
//       100 agents), the tmux server's CPU meanwhile, and the tmux calls it makes per second
//       (counted afterwards over 10 s by a `tmux` wrapper first on PATH that logs each call);
//   (b) at 100: `mam status --json` and `mam status` (LIVE worked out for all 100), whole process;
//   (c) one screen poll of the 100 panes in a warm process (observe(), what the daemon's watch and
//       the job queue run): its time and its tmux calls;
//   (d) `mam reconcile --json` over the 100 tmux panes, whole process, and its tmux calls;
//   (e) `mam ui`: page ready and event → page with the 100 agents and their 100 jobs.
// The machine's 1-minute load average is shown in the rows: other work on it moves the times.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromiumPath, eventToPage, openUi, pageReady } from "./browser.ts";
import { cpuPercent, load1, mamSync, medP90, ms, NO_BROKER, pct, procUsage, type Row, secondsFrom, type Usage } from "./common.ts";

const STEPS = [10, 50, 100];
const THINK_MS = "3600000";

const load = load1;

export async function benchFleet(bin: string): Promise<Row[]> {
  const { makeSandbox, waitFor } = await import("../tests/helpers/sandbox.ts");
  const { killTmuxServer, TMUX_BIN, tmuxServerName, writeScript } = await import("../tests/helpers/tmux.ts");
  if (!TMUX_BIN) throw new Error("bench fleet needs tmux");
  const sb = makeSandbox("mam-bench-fl-");
  const server = tmuxServerName("mambfl");
  const env = sb.with({ TMUX_TMPDIR: sb.root, MAM_AGENT_SETTLE_S: "0.2", ...NO_BROKER });
  // a tmux that logs each call (its first word) before it runs the real one
  const calls = join(sb.root, "tmux-calls.log");
  const countBin = join(sb.root, "count");
  mkdirSync(countBin);
  writeScript(countBin, "tmux", `#!/bin/sh\necho "$3" >>'${calls}'\nexec '${TMUX_BIN}' "$@"\n`);
  const counting = { ...env, PATH: `${countBin}:${env.PATH}` };
  const callCount = (): number => readFileSync(calls, "utf8").split("\n").filter(Boolean).length;
  const mam = (args: string[], e: Record<string, string> = env) => mamSync(bin, args, e, sb.ws);
  const daemonEnv = { ...env };
  delete (daemonEnv as Record<string, string>).MAM_NO_SUBSCRIBER_DAEMON;
  const rows: Row[] = [];
  const jobs: string[] = [];
  let daemon: ReturnType<typeof Bun.spawn> | undefined;
  const startDaemon = (e: Record<string, string>) =>
    Bun.spawn([bin, "reconcile", "--subscribe", "--idle-timeout", "0", "--workspace", sb.ws], { env: e, cwd: sb.ws, stdout: "ignore", stderr: "ignore" });
  const stopDaemon = async () => {
    daemon?.kill("SIGTERM");
    await daemon?.exited;
    daemon = undefined;
  };
  const tmuxPid = (): number => Number(Bun.spawnSync([TMUX_BIN, "-L", server, "display-message", "-p", "#{pid}"], { env }).stdout.toString().trim());

  try {
    // (a) add agents in steps; the daemon watching them
    const scale: { n: number; cpu: number; child: number; rss: number; tmux: number; perSecond: number; seconds: number; load: string }[] = [];
    let made = 0;
    for (const n of STEPS) {
      for (; made < n; made += 5) {
        const batch = Array.from({ length: Math.min(5, n - made) }, (_, k) => `w${made + k + 1}`);
        const procs = batch.map((name) =>
          Bun.spawn([bin, "create", "--agent", "demo", "--role", "worker", "--session", name, "--mux", "tmux", "--tmux-server", server, "--no-onboard", "--", "--role", "worker", "--think-ms", THINK_MS], {
            env, cwd: sb.ws, stdout: "ignore", stderr: "pipe",
          }),
        );
        for (const [k, p] of procs.entries()) if ((await p.exited) !== 0) throw new Error(`mam create ${batch[k]} failed: ${await new Response(p.stderr as ReadableStream).text()}`);
        for (const name of batch) {
          const id = mam(["job", "submit", "--to", name, "--prompt", `bench task for ${name}`, "--timeout", "0", "--idle-timeout", "0"]).trim();
          mam(["job", "event", id, "started", "--source", name, "--detail", "go"]);
          jobs.push(id);
        }
      }
      // every agent took its job: LIVE working for all
      const working = async () => (JSON.parse(mam(["status", "--json"])).sessions as { live: string }[]).filter((s) => s.live === "working").length === n;
      if (!(await waitFor(working, 30_000, 500))) throw new Error(`not all ${n} agents show working`);
      const seconds = n === 100 ? secondsFrom("BENCH_FLEET_SECONDS", 30) * 2 : secondsFrom("BENCH_FLEET_SECONDS", 30);
      daemon = startDaemon(daemonEnv);
      await Bun.sleep(3000); // start-up and the first passes are not the steady state
      const tpid = tmuxPid();
      const a = procUsage(daemon.pid);
      const ta = procUsage(tpid);
      let peak = a.rssKiB;
      let last: Usage = a;
      for (let s = 0; s < seconds; s++) {
        await Bun.sleep(1000);
        last = procUsage(daemon.pid);
        peak = Math.max(peak, last.rssKiB);
      }
      const tb = procUsage(tpid);
      const l = load();
      await stopDaemon();
      // its tmux calls, counted over 10 s with the logging tmux first on PATH
      writeFileSync(calls, "");
      daemon = startDaemon({ ...daemonEnv, PATH: counting.PATH });
      await Bun.sleep(3000);
      const c0 = callCount();
      await Bun.sleep(10_000);
      const perSecond = (callCount() - c0) / 10;
      await stopDaemon();
      scale.push({ n, cpu: cpuPercent(a, last, seconds), child: cpuPercent(a, last, seconds, true), rss: peak / 1024, tmux: cpuPercent(ta, tb, seconds), perSecond, seconds, load: l });
    }
    const at100 = scale.find((s) => s.n === 100)!;
    rows.push({
      what: `daemon watching 100 demo agents of 100 running jobs (one workspace, one tmux server; polling, MAM_STATE_POLL_MS 1000), ${at100.seconds} s: CPU (+ its tmux clients) / peak RSS; tmux calls per second; the tmux server's CPU meanwhile; load average`,
      target: "≤ 3 % of one core, ≤ 80 MiB",
      measured: `${at100.cpu.toFixed(2)} % (+${at100.child.toFixed(2)} %) / ${at100.rss.toFixed(1)} MiB; ${at100.perSecond.toFixed(1)} calls/s; tmux ${at100.tmux.toFixed(2)} %; load ${at100.load}`,
      ok: at100.cpu <= 3 && at100.rss <= 80,
    });
    const per = scale.map((s) => s.cpu / s.n);
    rows.push({
      what: `the same daemon as agents are added: CPU per agent (% of one core) at ${scale.map((s) => s.n).join(", ")} agents (each with its running job; CPU / RSS / tmux calls per second)`,
      target: "flat (grows no faster than the agents)",
      measured: scale.map((s) => `${s.n}: ${(s.cpu / s.n).toFixed(3)} %/agent (${s.cpu.toFixed(2)} % / ${s.rss.toFixed(1)} MiB / ${s.perSecond.toFixed(1)})`).join("; "),
      ok: per[per.length - 1]! <= per[0]! * 1.25,
    });

    // (b) status over the 100, whole process; the tmux calls of one
    const statusRuns = (args: string[]) => {
      const t: number[] = [];
      for (let i = 0; i < 33; i++) {
        const t0 = performance.now();
        const outText = mam(args);
        const dt = performance.now() - t0;
        if (i === 0 && args.includes("--json")) {
          const lives = (JSON.parse(outText).sessions as { live: string }[]).map((s) => s.live);
          if (lives.length !== 100 || lives.some((x) => x !== "working")) throw new Error(`status did not see 100 working agents: ${[...new Set(lives)].join(",")}`);
        }
        if (i >= 3) t.push(dt);
      }
      return t;
    };
    writeFileSync(calls, "");
    mam(["status", "--json"], counting);
    const statusCalls = callCount();
    const sj = statusRuns(["status", "--json"]);
    const lj = load();
    const st = statusRuns(["status"]);
    const lt = load();
    rows.push(
      { what: `\`mam status --json\`, 100 tmux demo agents (LIVE from their screens), whole process (median / p90); tmux calls; load average`, target: "≤ 150 ms", measured: `${medP90(sj)}; ${statusCalls} call(s); load ${lj}`, ok: pct(sj, 50) <= 150 },
      { what: "`mam status` (the table, LIVE for all 100), whole process (median / p90); load average", target: "≤ 150 ms", measured: `${medP90(st)}; load ${lt}`, ok: pct(st, 50) <= 150 },
    );

    // (c) one screen poll of the 100 panes in a warm process
    const [{ realDeps }, { observe }] = await Promise.all([import("../lib/ops/wiring.ts"), import("../lib/ops/session/observe.ts")]);
    const deps = realDeps(sb.ws, counting);
    const data = deps.registry.read();
    const all = new Set(data.tmux_sessions.map((r) => r.name));
    const poll: number[] = [];
    writeFileSync(calls, "");
    for (let i = 0; i < 23; i++) {
      const t0 = performance.now();
      const obs = await observe(deps, data, [], { liveOnly: all });
      if (i >= 3) poll.push(performance.now() - t0);
      if (i === 0 && obs.rows.filter((v) => v.live === "working").length !== 100) throw new Error("the poll did not see 100 working agents");
    }
    const pollCalls = callCount() / 23;
    rows.push({
      what: "one screen poll of the 100 panes (listing + screens + detector; what the daemon's watch runs) in a warm process (median / p90); tmux calls per poll; load average",
      target: "one tmux call per server",
      measured: `${medP90(poll)}; ${pollCalls} call(s); load ${load()}`,
      ok: pollCalls === 1,
    });

    // (d) reconcile over the 100 panes, whole process
    writeFileSync(calls, "");
    mam(["reconcile", "--json"], counting);
    const rcCalls = callCount();
    const rc: number[] = [];
    for (let i = 0; i < 23; i++) {
      const t0 = performance.now();
      const r = JSON.parse(mam(["reconcile", "--json"])) as { actions: unknown[] };
      if (i >= 3) rc.push(performance.now() - t0);
      if (r.actions.length !== 0) throw new Error(`reconcile found ${r.actions.length} actions`);
    }
    rows.push({
      what: "`mam reconcile --json`, 100 tmux panes / 100 rows, whole process (median / p90); tmux calls per pass; load average",
      target: "≤ 150 ms, one tmux call per server",
      measured: `${medP90(rc)}; ${rcCalls} call(s); load ${load()}`,
      ok: pct(rc, 50) <= 150 && rcCalls === 1,
    });

    // (e) the dashboard with the 100 agents and their 100 jobs
    const chromium = chromiumPath();
    if (!chromium) rows.push({ what: "`mam ui` with 100 agents", target: "-", measured: "not measured: chromium is not installed", ok: null });
    else {
      const open = await openUi(bin, sb.ws, env, sb.root, chromium);
      try {
        const ready = await pageReady(open.browser, open.url, jobs.length, 10);
        const lr = load();
        const { lat } = await eventToPage(open.browser, open.url, sb.ws, jobs[0]!, "w1", 40);
        rows.push(
          { what: "`mam ui`: page ready (navigation → first full render in chromium), 100 tmux demo agents / 100 running jobs (median / p90); load average", target: "≤ 300 ms", measured: `${medP90(ready)}; load ${lr}`, ok: pct(ready, 50) <= 300 },
          { what: "`mam ui`: event appended to a journal → visible on the page, 100 agents (p50 / p95 of 40); load average", target: "≤ 500 ms p95", measured: `${ms(pct(lat, 50))} / ${ms(pct(lat, 95))}; load ${load()}`, ok: pct(lat, 95) <= 500 },
        );
      } finally {
        await open.close();
      }
    }
  } finally {
    await stopDaemon();
    await killTmuxServer(server, env, sb.root);
    await sb.cleanup();
  }
  return rows;
}
