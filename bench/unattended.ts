// bench area `unattended` (issue 34, docs/unattended.md#failover): how soon a job moves off an
// agent at its usage limit. One workspace as tests/helpers/team.ts makes a host (its own HOME,
// tmux server and daemon, its default poll intervals; no broker: the journals are the channel),
// demo agents: ROUNDS workers that think for ten minutes on their job, and one `backup` that
// answers at once. Each round: a job to the next worker with `--failover backup`; once its
// `started` is journalled (the bench reports it for the worker), the worker's row gets a limit, written under the registry lock exactly as
// the daemon's detection writes it (tests/helpers/limit.ts: the demo kind has no records of limits
// for the daemon to read). The clock starts at that write and stops at the job's `failover` (the
// daemon's decision, journalled before it types) and at its `completed` from the backup (the
// failover text typed, read after the demo agent's 200 ms quiet spell, the job reported done).
// Journal lines are stamped with the bench's clock when read (bench/journal-watch.ts).
//
// Then the soak, with the real CLIs (installed on first use, as npm run test:agents does):
// tests/helpers/unattended.ts's run, longer. Two real claudes and a real codex in one pool,
// SOAK_JOBS jobs to the role from a script with --failover, each step of each job answered
// SOAK_STEP_MS late by the scripted endpoint (agents that work a while); a third of the way in
// one claude goes over its 5-hour limit for the rest of the run (claude 2.1.197 then shows its
// limit options, a dialog mam never types into), and the other is killed with -9 mid-job once.
import { join } from "node:path";
import { limitAgent } from "../tests/helpers/limit.ts";
import { TMUX_BIN } from "../tests/helpers/tmux.ts";
import { load1, pct, pp, type Row, secondsFrom, until } from "./common.ts";
import { onBenchHost } from "./host.ts";
import { JournalWatch } from "./journal-watch.ts";

const ROUNDS = Math.round(secondsFrom("BENCH_UNATTENDED_ROUNDS", 20));

export async function benchUnattended(bin: string): Promise<Row[]> {
  return [...(await failoverRounds(bin)), ...(await soak(bin))];
}

/** the soak with the real CLIs (see the header), in a process of its own: the test helpers run the mam MAM_BIN names when they load */
async function soak(bin: string): Promise<Row[]> {
  const p = Bun.spawn([process.execPath, join(import.meta.dir, "unattended-soak.ts")], { env: { ...process.env, MAM_BIN: bin }, stdout: "pipe", stderr: "inherit" });
  const out = await new Response(p.stdout).text();
  if ((await p.exited) !== 0) return [{ what: "unattended soak (bench/unattended-soak.ts)", target: "-", measured: `failed (exit ${p.exitCode}; its error above)`, ok: false }];
  return (JSON.parse(out.trim().split("\n").at(-1) ?? "") as { rows: Row[] }).rows;
}

async function failoverRounds(bin: string): Promise<Row[]> {
  const what = `failover at a usage limit: ${ROUNDS} demo workers (each limited mid-job) and a demo backup, one workspace, its daemon (no broker, default polls), \`job submit --failover backup\``;
  if (!TMUX_BIN) return [{ what, target: "-", measured: "skipped: tmux not installed", ok: null }];
  return onBenchHost("unattended", "un", bin, {}, async (h) => {
    const jw = new JournalWatch(join(h.ws, ".mam", "jobs"));
    await h.ok(["create", "--agent", "demo", "--role", "backup", "--session", "backup", "--mux", "tmux", "--tmux-server", h.tmux, "--", "--role", "worker", "--think-ms", "0"]);
    const loadStart = load1();
    const toFailover: number[] = [];
    const toCompleted: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const w = `w${i}`;
      await h.demo(w, "worker", ["--think-ms", "600000"]);
      const r = await h.mam(["job", "submit", "--to", w, "--failover", "backup", "--prompt", `round ${i}`]);
      const id = r.stdout.trim();
      if (r.code !== 0 || !/^[0-9a-f]{8}$/.test(id)) throw new Error(`bench unattended: job submit → ${r.code}: ${r.stdout}${r.stderr}`);
      // the worker thinks for ten minutes before it would report: the bench reports its `started`
      // (as an agent at work has), and the worker is stopped before it says anything
      await h.ok(["job", "event", id, "started", "--source", w, "--detail", "on it"]);
      await until("unattended", () => jw.at(id, "started") !== undefined, 30, () => `job ${id} did not start:\n${h.log().slice(-2000)}`);
      const t0 = performance.now();
      await limitAgent(h.ws, w, new Date(Date.now() + 3600_000));
      await until("unattended", () => jw.at(id, "completed") !== undefined, 30, () => `job ${id} did not complete on the backup:\n${h.log().slice(-2000)}`);
      const fo = jw.at(id, "failover");
      if (fo === undefined || jw.count(id, "failover") !== 1) throw new Error(`bench unattended: job ${id} completed without one failover`);
      toFailover.push(fo - t0);
      toCompleted.push(jw.at(id, "completed")! - t0);
      // the worker thinks on: out of the way for the next round
      await h.mam(["stop", w, "--hard"]);
    }
    const loadEnd = load1();
    jw.close();
    return [
      {
        what: `${what}: the limit on the worker's row → \`failover\` journalled p50 / p99`,
        target: "-",
        measured: `${pp(toFailover)}; load average ${loadStart} → ${loadEnd}`,
        ok: null,
      },
      {
        what: "same, the limit on the row → the job `completed` by the backup (the failover text typed, read after the demo agent's 200 ms quiet spell, reported) p50 / p95",
        target: "≤ 3 s p95",
        measured: `${(pct(toCompleted, 50) / 1000).toFixed(2)} s / ${(pct(toCompleted, 95) / 1000).toFixed(2)} s`,
        ok: toCompleted.length === ROUNDS && pct(toCompleted, 95) <= 3000,
      },
    ];
  });
}
