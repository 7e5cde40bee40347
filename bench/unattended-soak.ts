// The soak of bench area `unattended` (see bench/unattended.ts), in a process of its own so that
// the test helpers it uses run the binary under test (MAM_BIN, read when they load): prints
// {rows} as JSON on stdout.
import { load1, pct, type Row, secondsFrom } from "./common.ts";
import { anchoredPids, makeSandbox, waitFor } from "../tests/helpers/sandbox.ts";
import { TMUX_BIN } from "../tests/helpers/tmux.ts";
import { runUnattended, story } from "../tests/helpers/unattended.ts";

const SOAK_JOBS = Math.round(secondsFrom("BENCH_SOAK_JOBS", 100));
const SOAK_STEP_MS = Math.round(secondsFrom("BENCH_SOAK_STEP_MS", 3000));

async function soak(): Promise<Row[]> {
  const what = `unattended soak: real claude ×2 and codex in one pool, ${SOAK_JOBS} jobs to the role with --failover (each step answered ${SOAK_STEP_MS / 1000} s late), one claude over its limit a third of the way in, the other killed with -9 mid-job once`;
  if (!TMUX_BIN) return [{ what, target: "-", measured: "skipped: tmux not installed", ok: null }];
  const sb = makeSandbox("mam-bench-soak-");
  const loadStart = load1();
  let run: Awaited<ReturnType<typeof runUnattended>> | undefined;
  try {
    run = await runUnattended(sb.root, { jobs: SOAK_JOBS, stepDelayMs: SOAK_STEP_MS, waitS: 900 });
    const r = run;
    const s = story(r);
    const completed = r.jobs.filter((j) => r.h.journal(j).some((e) => e.event === "completed")).length;
    const doubled = r.jobs.filter((j) => r.h.journal(j).filter((e) => e.event === "completed").length > 1).length;
    const limitedEvents = r.h.journal(r.limited).map((e) => e.event);
    const into429 = r.api.requests.filter((q) => q.headers["x-claude-code-session-id"] === r.c1 && q.status === 429 && q.turn?.main).length;
    const ok = completed === SOAK_JOBS && doubled === 0 && into429 === 1 && limitedEvents.includes("failover") && r.h.journal(r.held).some((e) => e.event === "restarted");
    return [
      {
        what: `${what}: jobs completed / lost / doubled; by agent`,
        target: `${SOAK_JOBS} / 0 / 0`,
        measured: `${completed} / ${SOAK_JOBS - completed} / ${doubled}; ${Object.entries(s.per).map(([k, v]) => `${k} ${v}`).join(", ")}; ${(r.wallMs / 60_000).toFixed(1)} min from the first submit to the last job done; load average ${loadStart} → ${load1()}`,
        ok,
      },
      {
        what: "same: the story (the limit at, the failover of its job, the kill at and the restart of its job); requests from the limited claude after its limit",
        target: "one (the refused one)",
        measured: `limit at ${(r.limitAt / 1000).toFixed(0)} s, its job ${limitedEvents.join(" → ")}; kill at ${(r.killAt / 1000).toFixed(0)} s, its job ${r.h.journal(r.held).map((e) => e.event).join(" → ")}; ${into429} refused request`,
        ok: into429 === 1,
      },
      { what: "same: a job's time from its submit to its end (`job wait` returned) p50 / p95 / max", target: "-", measured: `${(pct(r.jobMs, 50) / 1000).toFixed(1)} s / ${(pct(r.jobMs, 95) / 1000).toFixed(1)} s / ${(Math.max(...r.jobMs) / 1000).toFixed(1)} s`, ok: null },
    ];
  } finally {
    await run?.h.stop().catch(() => undefined);
    await run?.api.stop().catch(() => undefined);
    await waitFor(() => anchoredPids(sb.root).length === 0, 10_000, 100);
    await sb.cleanup().catch((e) => console.error(`bench unattended soak: ${(e as Error).message}`));
  }
}

console.log(JSON.stringify({ rows: await soak() }));
