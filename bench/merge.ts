// bench area `merge` (issue 35, docs/merge-queue.md): the merge queue's throughput. One workspace
// as tests/helpers/team.ts makes a host (its own HOME, tmux server and daemon with its default
// polls; no broker), a git repository on main, the check `sleep 1` (a stand-in for a 1 s test
// suite). MERGES demo workers, each in its own worktree, each get one job with `--merge` that
// writes a file of its own and commits it, all submitted at once: the queue lands them one at a
// time. Measured from the jobs' journals (stamped with the bench's clock when read,
// bench/journal-watch.ts): the throughput (merges per minute from the first `merge_queued` to the
// last `merged`), and per merge the time the queue spent on it: from the moment it could start
// (its `merge_queued`, or the merge before it landed, whichever is later) to its `merged`; minus
// the 1 s check, what the queue adds (rebase in a scratch worktree, fast-forward, bookkeeping).
import { join } from "node:path";
import { TMUX_BIN } from "../tests/helpers/tmux.ts";
import { load1, pct, type Row, secondsFrom, until } from "./common.ts";
import { onBenchHost } from "./host.ts";
import { JournalWatch } from "./journal-watch.ts";

const MERGES = Math.round(secondsFrom("BENCH_MERGES", 20));
const GIT_ID = { GIT_AUTHOR_NAME: "bench", GIT_AUTHOR_EMAIL: "bench@mam.invalid", GIT_COMMITTER_NAME: "bench", GIT_COMMITTER_EMAIL: "bench@mam.invalid" };

function git(cwd: string, args: string[]): void {
  const r = Bun.spawnSync(["git", "-C", cwd, ...args], { env: { ...process.env, ...GIT_ID }, stdio: ["ignore", "ignore", "pipe"] });
  if (r.exitCode !== 0) throw new Error(`bench merge: git ${args.join(" ")}: ${r.stderr.toString()}`);
}

export async function benchMerge(bin: string): Promise<Row[]> {
  const what = `merge queue: ${MERGES} worktree jobs of ${MERGES} demo workers, each a file of its own, submitted at once with \`--merge\`, check \`sleep 1\`, the workspace's daemon (no broker, default polls)`;
  if (!TMUX_BIN) return [{ what, target: "-", measured: "skipped: tmux not installed", ok: null }];
  return onBenchHost("merge", "mq", bin, GIT_ID, async (h) => {
    git(h.ws, ["init", "-q", "-b", "main"]);
    git(h.ws, ["commit", "-q", "--allow-empty", "-m", "start"]);
    await h.ok(["merge", "config", "--check", "sleep 1"]);
    for (let i = 0; i < MERGES; i++) await h.ok(["create", "--agent", "demo", "--role", "worker", "--session", `m${i}`, "--worktree", "--no-onboard", "--mux", "tmux", "--tmux-server", h.tmux, "--", "--role", "worker", "--think-ms", "0"]);
    const jw = new JournalWatch(join(h.ws, ".mam", "jobs"));
    const loadStart = load1();
    const ids: string[] = [];
    for (let i = 0; i < MERGES; i++) ids.push((await h.ok(["job", "submit", "--to", `m${i}`, "--merge", "--prompt", `write f${i}.txt`, "--expect", `f${i}.txt`])).trim());
    await until("merge", () => ids.every((id) => jw.at(id, "merged") !== undefined), 60 + MERGES * 10, () => `not every branch merged:\n${h.log().slice(-3000)}`);
    const loadEnd = load1();
    jw.close();
    const landed = [...ids].sort((a, b) => jw.at(a, "merged")! - jw.at(b, "merged")!);
    const service: number[] = [];
    let prev = 0;
    for (const id of landed) {
      const from = Math.max(jw.at(id, "merge_queued")!, prev);
      service.push(jw.at(id, "merged")! - from);
      prev = jw.at(id, "merged")!;
    }
    const span = jw.at(landed.at(-1)!, "merged")! - Math.min(...ids.map((id) => jw.at(id, "merge_queued")!));
    const perMin = (MERGES / span) * 60_000;
    const added = service.map((s) => s - 1000);
    return [
      {
        what: `${what}: throughput, from the first \`merge_queued\` to the last \`merged\``,
        target: "-",
        measured: `${perMin.toFixed(1)} merges / min (${MERGES} in ${(span / 1000).toFixed(1)} s); load average ${loadStart} → ${loadEnd}`,
        ok: null,
      },
      {
        what: "same, per merge: its turn began (queued, or the one before landed) → `merged`, p50 / p95; minus the 1 s check, what the queue adds",
        target: "-",
        measured: `${(pct(service, 50) / 1000).toFixed(2)} s / ${(pct(service, 95) / 1000).toFixed(2)} s; added ${(pct(added, 50) / 1000).toFixed(2)} s / ${(pct(added, 95) / 1000).toFixed(2)} s`,
        ok: null,
      },
    ];
  });
}
