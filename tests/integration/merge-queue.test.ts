// The merge queue (docs/merge-queue.md) through the compiled binary, with real git, real tmux and
// demo agents in their own worktrees (each writes its --expect files in its worktree and commits
// them), the workspace's daemon running the queue: three branches land in queue order with the
// check run for each and a linear history; a conflict goes back to its agent as a fix job (the
// demo resolves it) and then lands; a red check never lands; a dirty checkout of the target is
// never moved; a daemon killed -9 during the check leaves the target as it was and the next one
// finishes the merge.
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { daemonPids, killAndWait } from "../helpers/daemon.ts";
import { MAM_BIN, MAM_SH, type RunResult, run, runMam } from "../helpers/mam.ts";
import { anchoredPids, makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName, writeScript } from "../helpers/tmux.ts";

type Ev = { event: string; detail: string; data: Record<string, any> };

interface World {
  sb: Sandbox;
  ws: string;
  marks: string;
  env: Record<string, string>;
  mam(args: string[]): Promise<RunResult>;
  git(args: string[], cwd?: string): Promise<string>;
  /** a demo worker in its own worktree, given one job that writes these files (queued for merging) */
  worker(name: string, files: string[]): Promise<string>;
  /** a demo worker in its own worktree (made from main now), no job yet */
  session(name: string): Promise<void>;
  /** a job to a worker made by session(), queued for merging */
  job(name: string, files: string[]): Promise<string>;
  events(job: string): Ev[];
  waitEvent(job: string, event: string, ms?: number): Promise<Ev>;
}

function ok(r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

async function withWorld(fn: (w: World) => Promise<void>): Promise<void> {
  if (!TMUX_BIN) throw new Error("tmux is not installed: these tests need a real tmux; they are not skipped on purpose");
  const sb = makeSandbox("mam-mq-");
  if (MAM_BIN) symlinkSync(MAM_BIN, join(sb.bin, "mam"));
  else writeScript(sb.bin, "mam", `exec ${MAM_SH} "$@"`);
  const tmux = tmuxServerName("mammq");
  const marks = join(sb.root, "marks");
  const { mkdirSync } = await import("node:fs");
  mkdirSync(marks);
  const env = sb.with({
    TMUX_TMPDIR: sb.root,
    MAM_AGENT_SETTLE_S: "0.3",
    MAM_NO_SUBSCRIBER_DAEMON: undefined,
    RECONCILE_POLL_INTERVAL: "1",
    MARKS: marks,
    GIT_AUTHOR_NAME: "t",
    GIT_AUTHOR_EMAIL: "t@example.com",
    GIT_COMMITTER_NAME: "t",
    GIT_COMMITTER_EMAIL: "t@example.com",
  });
  const w: World = {
    sb,
    ws: sb.ws,
    marks,
    env,
    mam: (args) => runMam(args, { env, cwd: sb.ws, timeoutMs: 120_000 }),
    git: async (args, cwd = sb.ws) => ok(await run(["git", ...args], { env, cwd })).stdout.trim(),
    async worker(name, files) {
      const r = ok(await w.mam(["job", "submit", "--to", name, "--worktree", "--agent", "demo", "--mux", "tmux", "--tmux-server", tmux, "--merge", "--prompt", `build ${files.join(" ")}`, ...files.flatMap((f) => ["--expect", f])]));
      return r.stdout.trim().split("\n").at(-1)!;
    },
    async session(name) {
      ok(await w.mam(["create", "--agent", "demo", "--role", "worker", "--session", name, "--worktree", "--no-onboard", "--mux", "tmux", "--tmux-server", tmux]));
    },
    async job(name, files) {
      const r = ok(await w.mam(["job", "submit", "--to", name, "--merge", "--prompt", `build ${files.join(" ")}`, ...files.flatMap((f) => ["--expect", f])]));
      return r.stdout.trim().split("\n").at(-1)!;
    },
    events(job) {
      const p = join(sb.ws, ".mam", "jobs", `${job}.events.ndjson`);
      return existsSync(p) ? readFileSync(p, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as Ev) : [];
    },
    async waitEvent(job, event, ms = 60_000) {
      let hit: Ev | undefined;
      const seen = await waitFor(() => (hit = w.events(job).find((e) => e.event === event)) !== undefined, ms, 100);
      if (!seen) throw new Error(`job ${job}: no ${event} within ${ms} ms; journal: ${w.events(job).map((e) => `${e.event}: ${e.detail}`).join("\n")}\nqueue: ${(await w.mam(["merge", "status"])).stdout}\nlog: ${existsSync(join(sb.ws, ".mam", "monitor.log")) ? readFileSync(join(sb.ws, ".mam", "monitor.log"), "utf8").slice(-3000) : ""}`);
      return hit!;
    },
  };
  for (const f of ["a.txt", "b.txt", "c.txt", "shared.txt"]) writeFileSync(join(sb.ws, f), `${f} line 1\n`);
  await w.git(["init", "-q", "-b", "main"]);
  await w.git(["add", "."]);
  await w.git(["commit", "-qm", "init"]);
  try {
    await fn(w);
  } finally {
    await w.mam(["daemon", "stop"]);
    await killTmuxServer(tmux, env, sb.root);
    await waitFor(() => anchoredPids(sb.root).length === 0, 5000);
    await sb.cleanup();
  }
}

const merged = (w: World, jobs: string[]) => Promise.all(jobs.map((j) => w.waitEvent(j, "merged", 90_000)));

describe("merge queue", () => {
  test("three demo agents edit different files: three merges in queue order, the check run for each, main's history linear, the main checkout moved with it", async () => {
    await withWorld(async (w) => {
      ok(await w.mam(["merge", "config", "--check", 'echo "$MAM_MERGE_BRANCH $(ls part*.txt | tr "\\n" " ")" >> "$MARKS/checks"']));
      const base = await w.git(["rev-parse", "main"]);
      const jobs = [await w.worker("w1", ["part1.txt"]), await w.worker("w2", ["part2.txt"]), await w.worker("w3", ["part3.txt"])];
      const evs = await merged(w, jobs);
      // queue order: the order of merge_queued is the order of merged
      const at = (j: string, e: string) => w.events(j).find((x) => x.event === e)!;
      const queuedOrder = [...jobs].sort((a, b) => Date.parse((at(a, "merge_queued") as any).timestamp) - Date.parse((at(b, "merge_queued") as any).timestamp));
      const mergedOrder = [...jobs].sort((a, b) => Date.parse((at(a, "merged") as any).timestamp) - Date.parse((at(b, "merged") as any).timestamp));
      expect(mergedOrder).toEqual(queuedOrder);
      for (const j of jobs) expect(w.events(j).map((e) => e.event)).toEqual(expect.arrayContaining(["completed", "merge_queued", "merge_checking", "merged"]));
      // each check ran on the branch rebased onto what landed before it
      const checks = readFileSync(join(w.marks, "checks"), "utf8").trim().split("\n");
      expect(checks.length).toBe(3);
      expect(checks[0]!.split(" ").filter(Boolean).length).toBe(2);
      expect(checks[2]!.split(" ").filter(Boolean).length).toBe(4);
      // main: linear, no merge commit, the last merged commit is its tip, and the main checkout has the files
      expect(await w.git(["log", "--merges", "--oneline", "main"])).toBe("");
      const tip = await w.git(["rev-parse", "main"]);
      expect(evs.map((e) => e.data.commit)).toContain(tip);
      expect((await w.git(["rev-list", "--count", `${base}..main`])).trim()).toBe("3");
      for (const f of ["part1.txt", "part2.txt", "part3.txt"]) expect(existsSync(join(w.ws, f))).toBe(true);
      expect(await w.git(["status", "--porcelain", "--untracked-files=no"])).toBe("");
      expect(evs.every((e) => e.data.via === "merge --ff-only")).toBe(true);
      // nothing kept once landed, no scratch worktree left
      expect(await w.git(["for-each-ref", "refs/mam/"])).toBe("");
      expect(await w.git(["worktree", "list"])).not.toContain("scratch");
      const st = JSON.parse(ok(await w.mam(["merge", "status", "--json"])).stdout);
      expect(st.entries.map((e: { state: string }) => e.state)).toEqual(["merged", "merged", "merged"]);
    });
  }, 180_000);

  test("two edit the same lines: the second gets a fix job showing the conflict, the demo agent resolves it, it lands; a dirty main checkout is never moved", async () => {
    await withWorld(async (w) => {
      // both worktrees made from the same main: their edits of shared.txt conflict
      await w.session("w1");
      await w.session("w2");
      const j1 = await w.job("w1", ["shared.txt"]);
      await w.waitEvent(j1, "merged");
      // the main checkout is dirty: the next merge waits, says why, main does not move
      writeFileSync(join(w.ws, "a.txt"), "a local edit\n");
      const before = await w.git(["rev-parse", "main"]);
      const j2 = await w.job("w2", ["shared.txt"]);
      await w.waitEvent(j2, "merge_queued");
      expect(await waitFor(async () => /uncommitted changes/.test((await w.mam(["merge", "status"])).stdout), 30_000)).toBe(true);
      expect(await w.git(["rev-parse", "main"])).toBe(before);
      expect(readFileSync(join(w.ws, "a.txt"), "utf8")).toBe("a local edit\n");
      await w.git(["checkout", "--", "a.txt"]);
      const c = await w.waitEvent(j2, "merge_conflict");
      expect(c.data.files).toEqual(["shared.txt"]);
      expect(c.data.diff).toContain("<<<<<<<");
      expect(typeof c.data.fix_job).toBe("string");
      // the fix job went to the same agent, in the same worktree, with the conflict in it
      const fix = JSON.parse(readFileSync(join(w.ws, ".mam", "jobs", `${c.data.fix_job}.json`), "utf8"));
      expect(fix.agent_session).toBe("w2");
      expect(fix.worktree.path).toBe(join(w.ws, ".mam", "worktrees", "w2"));
      expect(fix.prompt).toContain("conflicts in shared.txt");
      expect(fix.prompt).toContain("<<<<<<<");
      // the original tip is kept until it lands
      const m = await w.waitEvent(j2, "merged", 90_000);
      expect(w.events(j2).filter((e) => e.event === "merge_queued").length).toBe(2);
      expect(await w.git(["rev-parse", "main"])).toBe(m.data.commit);
      expect(readFileSync(join(w.ws, "shared.txt"), "utf8")).toContain("demo agent w2");
      expect(await w.git(["log", "--merges", "--oneline", "main"])).toBe("");
      expect(await w.git(["for-each-ref", "refs/mam/"])).toBe("");
    });
  }, 180_000);

  test("a red check never lands: check_failed with its last lines, a fix job, and main unchanged", async () => {
    await withWorld(async (w) => {
      ok(await w.mam(["merge", "config", "--check", 'echo "checking"; test ! -e RED || { echo "RED is there: failing"; exit 3; }']));
      const before = await w.git(["rev-parse", "main"]);
      const j = await w.worker("w1", ["RED"]);
      const f = await w.waitEvent(j, "check_failed");
      expect(f.data.exit).toBe(3);
      expect(f.data.tail).toContain("RED is there: failing");
      expect(typeof f.data.fix_job).toBe("string");
      const fix = JSON.parse(readFileSync(join(w.ws, ".mam", "jobs", `${f.data.fix_job}.json`), "utf8"));
      expect(fix.prompt).toContain("RED is there: failing");
      // the demo agent cannot fix it: after its fix jobs, the entry is dropped; main never moved
      expect(await waitFor(async () => JSON.parse((await w.mam(["merge", "status", "--json"])).stdout).entries[0]?.state === "dropped", 120_000, 250)).toBe(true);
      expect(await w.git(["rev-parse", "main"])).toBe(before);
      expect(w.events(j).some((e) => e.event === "merged")).toBe(false);
      // the branch's original tip is still kept
      expect(await w.git(["for-each-ref", "--format=%(refname)", "refs/mam/"])).toBe(`refs/mam/merge/${j}/orig`);
    });
  }, 240_000);

  test("the daemon killed -9 during the check: main untouched, a manual run meanwhile refused, the next daemon finishes the merge", async () => {
    await withWorld(async (w) => {
      // the first check waits (its mark says it started); the one after a restart passes at once
      ok(await w.mam(["merge", "config", "--check", 'test -e "$MARKS/started" && exit 0; touch "$MARKS/started"; sleep 120']));
      // main is not checked out anywhere: the target moves with git update-ref
      await w.git(["checkout", "-q", "--detach"]);
      ok(await w.mam(["merge", "config", "--target", "main"]));
      const before = await w.git(["rev-parse", "main"]);
      const j = await w.worker("w1", ["part1.txt"]);
      await w.waitEvent(j, "merge_checking");
      expect(await waitFor(() => existsSync(join(w.marks, "started")), 30_000)).toBe(true);
      // a manual run cannot take the line the daemon holds
      const run1 = ok(await w.mam(["merge", "run", "--json"]));
      expect(JSON.parse(run1.stdout).busy).toEqual(["main"]);
      const pids = daemonPids(w.ws);
      expect(pids.length).toBe(1);
      await killAndWait(pids);
      expect(await w.git(["rev-parse", "main"])).toBe(before);
      expect(JSON.parse(ok(await w.mam(["merge", "status", "--json"])).stdout).entries[0].state).toBe("merging");
      expect(await w.git(["for-each-ref", "--format=%(refname)", "refs/mam/"])).toBe(`refs/mam/merge/${j}/orig`);
      ok(await w.mam(["daemon", "ensure"]));
      const m = await w.waitEvent(j, "merged");
      expect(await w.git(["rev-parse", "main"])).toBe(m.data.commit);
      expect(m.data.via).toBe("update-ref");
      expect(await w.git(["log", "--merges", "--oneline", "main"])).toBe("");
      expect(await w.git(["worktree", "list"])).not.toContain("scratch");
      // the killed daemon's check (sleep 120) was ended by the next runner
      expect(await waitFor(() => anchoredPids(w.sb.root).every((p) => !readFileSync(`/proc/${p}/cmdline`, "utf8").includes("sleep")), 10_000)).toBe(true);
    });
  }, 180_000);
});
