// bench area `queue` (issue 28, docs/jobs.md#the-queue): pool dispatch. One workspace as
// tests/helpers/team.ts makes a host (its own HOME, tmux server and daemon; no broker: the
// journals are the channel, as on a fresh machine), five demo agents of role `worker`, the
// daemon's default poll intervals. Jobs go to the pool with `mam job submit --to-role worker`
// whole processes, as a user's script submits them.
//
//   * 5 idle: one job at a time, each submitted once the one before has completed, so a free
//     agent is always there. Delivered = the submit process has returned: it typed the header
//     into the first free agent's pane (the text, then Enter) before it exits.
//   * all busy: the five agents work on long jobs (--think-ms 1500) and 30 more jobs are
//     submitted at once; each waits its turn and the daemon gives it to the next agent that frees
//     up. The queue wait is left out: the clock starts when the agent it goes to ended its last
//     job (the bench sees that job's `completed` in the agent's journal) and stops at the job's
//     `dispatched` (the daemon's decision, journalled before it types) and at its `started` (the
//     header typed, read by the demo agent after its 200 ms quiet spell, reported after its
//     1500 ms think).
// Journal lines are stamped with the bench's clock when read (bench/journal-watch.ts). The
// 1-minute load average is shown: these rows are sensitive to whatever else runs.
import { join } from "node:path";
import { TMUX_BIN } from "../tests/helpers/tmux.ts";
import { load1, pct, pp, type Row, secondsFrom, until } from "./common.ts";
import type { Host } from "../tests/helpers/team.ts";
import { onBenchHost } from "./host.ts";
import { JournalWatch } from "./journal-watch.ts";

const POOL = 5;
const IDLE_JOBS = Math.round(secondsFrom("BENCH_QUEUE_IDLE_JOBS", 40));
const BUSY_JOBS = Math.round(secondsFrom("BENCH_QUEUE_BUSY_JOBS", 30));

async function submit(h: Host, prompt: string): Promise<string> {
  const r = await h.mam(["job", "submit", "--to-role", "worker", "--prompt", prompt]);
  const id = r.stdout.trim();
  if (r.code !== 0 || !/^[0-9a-f]{8}$/.test(id)) throw new Error(`mam job submit --to-role worker → ${r.code}: ${r.stdout}${r.stderr}\n${h.log().slice(-2000)}`);
  return id;
}

/** the agent a job went to (its `dispatched` names it; a job typed by its submit, the record) */
async function agentOf(h: Host, id: string): Promise<string> {
  const d = h.journal(id).find((e) => e.event === "dispatched");
  if (typeof d?.data?.to === "string") return d.data.to;
  return JSON.parse(await h.ok(["job", "status", id, "--json"])).agent_session;
}

export async function benchQueue(bin: string): Promise<Row[]> {
  const what = `pool dispatch: ${POOL} demo agents of one role, one workspace, its daemon (no broker), \`mam job submit --to-role worker\` whole processes`;
  if (!TMUX_BIN) return [{ what, target: "-", measured: "skipped: tmux not installed", ok: null }];
  return onBenchHost("queue", "pool", bin, {}, async (h) => {
    const jw = new JournalWatch(join(h.ws, ".mam", "jobs"));
    const loadStart = load1();

    // ---- 5 idle ----------------------------------------------------------------------------
    for (let k = 0; k < POOL; k++) await h.demo(`p${k}`, "worker", ["--think-ms", "0"]);
    const typed: number[] = [];
    const started: number[] = [];
    for (let i = 0; i < IDLE_JOBS; i++) {
      const t0 = performance.now();
      const id = await submit(h, `idle pool job ${i}`);
      typed.push(performance.now() - t0);
      await until("queue", () => jw.at(id, "completed") !== undefined, 30, () => `job ${id} did not complete:\n${h.log().slice(-2000)}`);
      started.push(jw.at(id, "started")! - t0);
    }

    // ---- all busy ----------------------------------------------------------------------------
    for (let k = 0; k < POOL; k++) await h.mam(["stop", `p${k}`]);
    for (let k = 0; k < POOL; k++) await h.demo(`b${k}`, "worker", ["--think-ms", "1500"]);
    const fill: string[] = [];
    for (let k = 0; k < POOL; k++) fill.push(await submit(h, `long job ${k}`));
    await until("queue", () => fill.every((id) => jw.at(id, "started") !== undefined), 30, () => "the first five jobs did not start");
    const waiting: string[] = [];
    for (let i = 0; i < BUSY_JOBS; i++) waiting.push(await submit(h, `queued job ${i}`));
    const all = [...fill, ...waiting];
    await until("queue", () => all.every((id) => jw.at(id, "completed") !== undefined), 60 + BUSY_JOBS * 5, () => `not all jobs completed:\n${h.log().slice(-2000)}`);
    const loadEnd = load1();
    jw.close();
    // per agent, its jobs in the order they began; a waiting job's clock starts at the end of the
    // job before it on its agent
    const byAgent = new Map<string, string[]>();
    for (const id of all) {
      const a = await agentOf(h, id);
      byAgent.set(a, [...(byAgent.get(a) ?? []), id]);
    }
    const toDispatched: number[] = [];
    const toStarted: number[] = [];
    let notQueued = 0;
    for (const ids of byAgent.values()) {
      ids.sort((a, b) => jw.at(a, "started")! - jw.at(b, "started")!);
      for (let i = 1; i < ids.length; i++) {
        const free = jw.at(ids[i - 1]!, "completed")!;
        const d = jw.at(ids[i]!, "dispatched");
        if (d === undefined) {
          notQueued++;
          continue;
        }
        toDispatched.push(d - free);
        toStarted.push(jw.at(ids[i]!, "started")! - free);
      }
    }
    return [
      {
        what: `${what}: 5 idle, submit → delivered (the submit process returned, the header typed into a free agent) p50 / p99, ${IDLE_JOBS} jobs one after another`,
        target: "≤ 500 ms p99",
        measured: `${pp(typed)}; load average ${loadStart} → ${loadEnd}`,
        ok: typed.length === IDLE_JOBS && pct(typed, 99) <= 500,
      },
      {
        what: "same, submit → `started` (the demo agent read the header after its 200 ms quiet spell and reported) p50 / p99",
        target: "-",
        measured: pp(started),
        ok: null,
      },
      {
        what: `same, all busy (--think-ms 1500): ${BUSY_JOBS} jobs queued behind ${POOL}; queue wait left out: the agent freed (its last job's \`completed\`) → \`dispatched\` p50 / p99`,
        target: "≤ 500 ms p99",
        measured: `${pp(toDispatched)} (${toDispatched.length} dispatches${notQueued ? `, ${notQueued} typed by their submit` : ""})`,
        ok: toDispatched.length > 0 && pct(toDispatched, 99) <= 500,
      },
      {
        what: "same, the agent freed → `started` (typed, read after the demo agent's 200 ms quiet spell, reported after its 1500 ms think) p50 / p99",
        target: "-",
        measured: pp(toStarted),
        ok: null,
      },
    ];
  });
}
