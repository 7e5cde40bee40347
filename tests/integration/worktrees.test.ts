// A git worktree per agent (issue 18), with real git, on a real tmux and on the fake herdr (its
// worktree.create/remove as in herdr 0.8.0): the agent runs in its worktree on its own branch,
// status shows the branch, jobs report back to the main workspace, two workers editing the same
// file keep both changes on their branches, a loop job's reviewer gets the worker's exact diff,
// and removal refuses to lose work. Bad input changes nothing.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { claudeProjectDir } from "../../lib/agents/kinds/claude.ts";
import { type FakeHerdrServer, installFakeAgents, startFakeHerdr } from "../helpers/herdr.ts";
import { MAM_BIN, MAM_SH, type RunResult, run, runMam } from "../helpers/mam.ts";
import { anchoredPids, makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName, writeScript } from "../helpers/tmux.ts";

type Row = Record<string, any>;

/**
 * FAKE_AGENT_ON_PROMPT of every agent here: logs each prompt line to $WT_LOG/<cwd name>.lines;
 * runs the header's `started` line; before the worker's `completed` line it appends
 * "edit by <session>" to shared.txt and commits it; a reviewer saves the output of the review's
 * `git -C … diff …` line to $WT_LOG/review.diff and runs the PASS line.
 */
const WT_AGENT = `#!/usr/bin/env bash
line="$1"
me="$(basename "$PWD")"
printf '%s\\n' "$line" >> "$WT_LOG/$me.lines"
cmd="\${line#"\${line%%[![:space:]]*}"}"
case "$cmd" in
  "git -C "*" diff "*) eval "$cmd" > "$WT_LOG/review.diff" 2>&1 ;;
  *" job event "*)
    set -- \${cmd#* job event }
    ev="$2"; src="$4"
    case "$ev:$cmd" in
      started:*) eval "$cmd" >> "$WT_LOG/$me.out" 2>&1 ;;
      completed:*'"PASS"'*) eval "$cmd" >> "$WT_LOG/$me.out" 2>&1 ;;
      completed:*'"summary of the result"'*)
        echo "edit by $src" >> shared.txt
        git add shared.txt && git commit -qm "work of $src" >> "$WT_LOG/$me.out" 2>&1
        eval "\${cmd/summary of the result/committed on my branch}" >> "$WT_LOG/$me.out" 2>&1 ;;
    esac ;;
esac
exit 0
`;

interface World {
  mux: "tmux" | "herdr";
  sb: Sandbox;
  ws: string;
  log: string;
  env: Record<string, string>;
  herdr?: FakeHerdrServer;
  mam(args: string[], cwd?: string): Promise<RunResult>;
  git(args: string[], cwd?: string): Promise<RunResult>;
  /** mam create --agent claude --session NAME on this world's multiplexer */
  create(name: string, extra?: string[]): Promise<RunResult>;
  /** the flags that name this world's multiplexer server */
  where: string[];
  row(name: string): Row;
  rowsText(): string;
  /** how many panes the multiplexer has */
  paneCount(): Promise<number>;
}

function ok(r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

/** daemon: the subscriber daemon runs (it drives loop jobs), stopped at the end */
async function withWorld(mux: "tmux" | "herdr", fn: (w: World) => Promise<void>, o: { daemon?: boolean; herdrEnv?: Record<string, string> } = {}): Promise<void> {
  if (mux === "tmux" && !TMUX_BIN) throw new Error("tmux is not installed: these tests need a real tmux; they are not skipped on purpose");
  const sb = makeSandbox("mam-wt-");
  installFakeAgents(sb.bin, ["claude", "codex"]);
  if (MAM_BIN) symlinkSync(MAM_BIN, join(sb.bin, "mam"));
  else writeScript(sb.bin, "mam", `exec ${MAM_SH} "$@"`);
  const agent = writeScript(sb.bin, "wt-agent", WT_AGENT);
  const log = join(sb.root, "log");
  const { mkdirSync } = await import("node:fs");
  mkdirSync(log);
  const tmuxServer = tmuxServerName("mamwt");
  const env = sb.with({
    TMUX_TMPDIR: sb.root,
    MAM_AGENT_SETTLE_S: "0.5",
    FAKE_AGENT_ON_PROMPT: agent,
    WT_LOG: log,
    GIT_AUTHOR_NAME: "t",
    GIT_AUTHOR_EMAIL: "t@example.com",
    GIT_COMMITTER_NAME: "t",
    GIT_COMMITTER_EMAIL: "t@example.com",
    ...(o.daemon ? { MAM_NO_SUBSCRIBER_DAEMON: undefined, RECONCILE_POLL_INTERVAL: "1" } : {}),
  });
  const herdr = mux === "herdr" ? await startFakeHerdr(sb, { session: "wt", settleMs: 150, env: { ...env, ...o.herdrEnv } }) : undefined;
  const reg = join(sb.ws, ".mam", "agent-sessions.yaml");
  const where = mux === "tmux" ? ["--mux", "tmux", "--tmux-server", tmuxServer] : ["--herdr-session", "wt"];
  const w: World = {
    mux,
    sb,
    ws: sb.ws,
    log,
    env,
    herdr,
    mam: (args, cwd = sb.ws) => runMam(args, { env, cwd, timeoutMs: 120_000 }),
    git: (args, cwd = sb.ws) => run(["git", ...args], { env, cwd }),
    where,
    create: (name, extra = []) => w.mam(["create", "--agent", "claude", "--role", "worker", "--session", name, "--no-onboard", ...where, ...extra]),
    row: (name) => {
      const d = Bun.YAML.parse(readFileSync(reg, "utf8")) as { herdr_sessions?: Row[]; tmux_sessions?: Row[] };
      const rows = [...(d.herdr_sessions ?? []), ...(d.tmux_sessions ?? [])].filter((r) => r.name === name);
      if (rows.length !== 1) throw new Error(`expected one row ${name}: ${readFileSync(reg, "utf8")}`);
      return rows[0]!;
    },
    rowsText: () => (existsSync(reg) ? readFileSync(reg, "utf8") : ""),
    paneCount: async () => {
      if (herdr) return ((await herdr.call("pane.list", {})).panes as Row[]).length;
      const r = await run([TMUX_BIN!, "-L", tmuxServer, "list-panes", "-a"], { env });
      return r.code === 0 ? r.stdout.split("\n").filter(Boolean).length : 0;
    },
  };
  // a repository with one commit; shared.txt is the file every worker edits
  writeFileSync(join(sb.ws, "shared.txt"), "line 1\n");
  ok(await w.git(["init", "-q", "-b", "main"]));
  ok(await w.git(["add", "shared.txt"]));
  ok(await w.git(["commit", "-qm", "init"]));
  try {
    await fn(w);
  } finally {
    if (o.daemon) await w.mam(["daemon", "stop"]);
    if (herdr) await herdr.stop();
    else await killTmuxServer(tmuxServer, env, sb.root);
    await waitFor(() => anchoredPids(sb.root).length === 0, 5000);
    await sb.cleanup();
  }
}

const wtPath = (w: World, name: string) => join(w.ws, ".mam", "worktrees", name);

/** `git worktree list --porcelain` as path → branch */
async function gitWorktrees(w: World): Promise<Map<string, string>> {
  const m = new Map<string, string>();
  let path = "";
  for (const l of ok(await w.git(["worktree", "list", "--porcelain"])).stdout.split("\n")) {
    if (l.startsWith("worktree ")) path = l.slice(9);
    if (l.startsWith("branch ")) m.set(path, l.slice(7).replace("refs/heads/", ""));
  }
  return m;
}

for (const mux of ["tmux", "herdr"] as const) {
  describe(`worktrees on ${mux}`, () => {
    test("create --worktree feat-x: git shows it on feat-x, the agent runs there, status shows the branch, two workers keep both edits, jobs report to the main workspace, removal refuses to lose work", async () => {
      await withWorld(mux, async (w) => {
        const c1 = ok(await w.create("w1", ["--worktree", "feat-x"]));
        expect(c1.stdout).toContain(`worktree ${wtPath(w, "w1")} on branch feat-x (from main`);
        ok(await w.create("w2", ["--worktree"]));
        const wts = await gitWorktrees(w);
        expect(wts.get(wtPath(w, "w1"))).toBe("feat-x");
        expect(wts.get(wtPath(w, "w2"))).toBe("w2");

        // the agent runs in its worktree: claude keys its conversation by its real cwd
        const r1 = w.row("w1");
        expect(r1.worktree).toMatchObject({ path: wtPath(w, "w1"), branch: "feat-x", base: "main" });
        expect(r1.pane.cwd).toBe(wtPath(w, "w1"));
        const sid = r1.claude_session_id_own as string;
        const conv = join(claudeProjectDir(wtPath(w, "w1"), w.env), `${sid}.jsonl`);
        expect(await waitFor(() => existsSync(conv), 10_000)).toBe(true);
        if (mux === "herdr") {
          // herdr shows the worktree as a workspace of its own, with the agent's pane in it
          const ws = ((await w.herdr!.call("workspace.list", {})).workspaces as Row[]).find((x) => x.worktree?.checkout_path === wtPath(w, "w1"));
          expect(ws).toBeDefined();
          expect(ws!.worktree.is_linked_worktree).toBe(true);
          expect(r1.worktree.herdr_workspace).toBe(ws!.workspace_id);
          expect(r1.pane.id.startsWith(`${ws!.workspace_id}:`)).toBe(true);
        }

        const st = ok(await w.mam(["status"])).stdout;
        expect(st).toMatch(/BRANCH/);
        expect(st).toMatch(/^w1 .* feat-x /m);

        // a job to each: both edit shared.txt on their own branch and report back here
        const j1 = ok(await w.mam(["job", "submit", "--to", "w1", "--prompt", "add your line to shared.txt"])).stdout.trim();
        const j2 = ok(await w.mam(["job", "submit", "--to", "w2", "--prompt", "add your line to shared.txt"])).stdout.trim();
        const waited = await w.mam(["job", "wait", j1, j2, "--timeout", "60"]);
        expect(waited.code, `${waited.stdout}${waited.stderr}\n${readdirSync(w.log).join(" ")}`).toBe(0);
        expect(JSON.parse(ok(await w.mam(["job", "status", j1, "--json"])).stdout)).toMatchObject({ status: "completed", worktree: { branch: "feat-x", path: wtPath(w, "w1") } });
        // the header named the branch and pointed mam at the main workspace
        // a plain mam call inside a worktree (no --workspace, no MAM_WORKSPACE) finds the main workspace
        const inside = await runMam(["job", "status", j2, "--json"], { env: { ...w.env, MAM_WORKSPACE: "" }, cwd: wtPath(w, "w2") });
        expect(JSON.parse(ok(inside).stdout).job_id).toBe(j2);
        const lines1 = readFileSync(join(w.log, "w1.lines"), "utf8");
        expect(lines1).toContain(`on branch feat-x`);
        expect(lines1).toContain(`mam job event ${j1} started --source w1 --workspace ${w.ws}`);

        expect(ok(await w.git(["show", "feat-x:shared.txt"])).stdout).toBe("line 1\nedit by w1\n");
        expect(ok(await w.git(["show", "w2:shared.txt"])).stdout).toBe("line 1\nedit by w2\n");
        expect(readFileSync(join(w.ws, "shared.txt"), "utf8")).toBe("line 1\n");
        const sj = JSON.parse(ok(await w.mam(["status", "--json"])).stdout).sessions as Row[];
        expect(sj.find((s) => s.name === "w1")!.worktree).toMatchObject({ branch: "feat-x", ahead: 1, behind: 0, changed: 0, exists: true });

        // removal refuses with unmerged work: exit 4, the session still runs, nothing removed
        const before = w.rowsText();
        const refused = await w.mam(["stop", "w1", "--remove-worktree"]);
        expect(refused.code).toBe(4);
        expect(refused.stderr).toContain("1 commit(s) not merged into the workspace's HEAD");
        expect(w.rowsText()).toBe(before);
        expect(existsSync(wtPath(w, "w1"))).toBe(true);
        // stop keeps the worktree; worktree remove refuses, --force removes it, the branch stays
        ok(await w.mam(["stop", "w1"]));
        expect(existsSync(wtPath(w, "w1"))).toBe(true);
        // a stopped session that keeps its worktree is not replaced by a plain create
        const replaced = await w.create("w1");
        expect(replaced.code).toBe(4);
        expect(replaced.stderr).toContain(`session 'w1' keeps its worktree ${wtPath(w, "w1")} (branch feat-x)`);
        // resume brings the agent back in its worktree (herdr: shown as its worktree workspace again)
        ok(await w.mam(["resume", "w1"]));
        const back = w.row("w1");
        expect(back.status).toBe("running");
        expect(back.pane.cwd).toBe(wtPath(w, "w1"));
        if (mux === "herdr") {
          const ws = ((await w.herdr!.call("workspace.list", {})).workspaces as Row[]).find((x) => x.worktree?.checkout_path === wtPath(w, "w1"));
          expect(ws?.workspace_id).toBe(back.worktree.herdr_workspace);
          expect(back.pane.id.startsWith(`${ws!.workspace_id}:`)).toBe(true);
        }
        ok(await w.mam(["stop", "w1"]));
        expect((await w.mam(["worktree", "remove", "w1"])).code).toBe(4);
        ok(await w.mam(["worktree", "remove", "w1", "--force"]));
        expect(existsSync(wtPath(w, "w1"))).toBe(false);
        expect((await gitWorktrees(w)).has(wtPath(w, "w1"))).toBe(false);
        expect(ok(await w.git(["rev-parse", "--verify", "feat-x"])).code).toBe(0);
        expect(w.row("w1").worktree.removed_at).toBeDefined();

        // merged work goes without --force: merge w2 into main, then stop --remove-worktree
        ok(await w.git(["merge", "-q", "--ff-only", "w2"]));
        const rm = ok(await w.mam(["stop", "w2", "--remove-worktree"]));
        expect(rm.stdout).toContain(`removed worktree ${wtPath(w, "w2")}`);
        expect(existsSync(wtPath(w, "w2"))).toBe(false);
        expect(await w.paneCount()).toBe(0);
      });
    }, 180_000);

    test("loop job: job submit --worktree makes the worker in one step; the reviewer's request names the branch, the base and the diff it reads", async () => {
      await withWorld(mux, async (w) => {
        ok(await w.create("rev"));
        const head = ok(await w.git(["rev-parse", "HEAD"])).stdout.trim();
        const sub = await w.mam(["job", "submit", "--to", "w3", "--worktree", "--agent", "claude", "--type", "loop", "--reviewer", "rev", "--prompt", "add your line", ...w.where]);
        const id = ok(sub).stdout.trim();
        expect(id).toMatch(/^[0-9a-f]{8}$/);
        const waited = await w.mam(["job", "wait", id, "--timeout", "60"]);
        expect(waited.code, `${waited.stdout}${waited.stderr}`).toBe(0);
        const lines = readFileSync(join(w.log, "ws.lines"), "utf8");
        expect(lines).toContain(`The work is on branch w3 (from main at ${head})`);
        expect(lines).toContain(`git -C ${w.ws} diff ${head}...w3`);
        const diff = readFileSync(join(w.log, "review.diff"), "utf8");
        expect(diff).toContain("+edit by w3");
        expect(diff).toContain("shared.txt");
        expect(w.row("w3").worktree).toMatchObject({ branch: "w3", base_commit: head });
      }, { daemon: true });
    }, 180_000);
  });
}

describe("worktrees: an archived session's agent still in its worktree", () => {
  test("herdr: worktree remove refuses while a pane runs there; --force removes it through herdr, which closes its workspace", async () => {
    await withWorld("herdr", async (w) => {
      ok(await w.create("arc", ["--worktree"]));
      const row = w.row("arc");
      ok(await w.mam(["stop", "arc", "--soft"]));
      expect(w.row("arc").status).toBe("archived");
      const refused = await w.mam(["worktree", "remove", "arc"]);
      expect(refused.code).toBe(4);
      expect(refused.stderr).toContain(`pane ${row.pane.id} on herdr server 'wt' still runs in the worktree of arc (${wtPath(w, "arc")})`);
      expect(existsSync(wtPath(w, "arc"))).toBe(true);
      ok(await w.mam(["worktree", "remove", "arc", "--force"]));
      expect(existsSync(wtPath(w, "arc"))).toBe(false);
      const wss = (await w.herdr!.call("workspace.list", {})).workspaces as Row[];
      expect(wss.some((x) => x.workspace_id === row.worktree.herdr_workspace)).toBe(false);
      expect(await w.paneCount()).toBe(0);
    });
  }, 60_000);
});

describe("worktrees: conversation ids are found where the agent runs", () => {
  test("codex (id discovered, not assigned) in a worktree: reconcile finds its rollout by the worktree's cwd; stop records it", async () => {
    await withWorld("tmux", async (w) => {
      ok(await w.mam(["create", "--agent", "codex", "--session", "cx", "--no-onboard", "--worktree", ...w.where]));
      expect(w.row("cx").session_id_source).toBe("pending-discovery");
      let id: string | undefined;
      await waitFor(async () => {
        await w.mam(["reconcile"]);
        id = w.row("cx").codex_session_id_own;
        return typeof id === "string";
      }, 15_000);
      expect(id).toMatch(/^[0-9a-f-]{8,}/);
      ok(await w.mam(["stop", "cx"]));
      expect(w.row("cx")).toMatchObject({ status: "stopped", resumable: true, codex_session_id_own: id });
      const res = ok(await w.mam(["resume", "cx"]));
      expect(res.stdout).toContain(`(conversation ${id})`);
      ok(await w.mam(["stop", "cx", "--hard"]));
    });
  }, 60_000);
});

describe("worktrees: the done-when, word for word", () => {
  test("mam create --agent claude --worktree feat-x (default name, onboarding on): git, the pane, status, a job reporting back", async () => {
    await withWorld("tmux", async (w) => {
      const r = ok(await w.mam(["create", "--agent", "claude", "--worktree", "feat-x", ...w.where]));
      const name = /^created (\S+) /m.exec(r.stdout)![1]!;
      expect(name).toMatch(/-creator-claude$/);
      const path = wtPath(w, name);
      expect((await gitWorktrees(w)).get(path)).toBe("feat-x");
      // the agent's pane runs there, and its onboarding says so
      const tmuxPath = ok(await run([TMUX_BIN!, "-L", w.where[3]!, "display-message", "-p", "-t", name, "#{pane_current_path}"], { env: w.env })).stdout.trim();
      expect(tmuxPath).toBe(path);
      expect(await waitFor(() => existsSync(join(w.log, `${name}.lines`)) && readFileSync(join(w.log, `${name}.lines`), "utf8").includes("on branch feat-x"), 10_000)).toBe(true);
      expect(readFileSync(join(w.log, `${name}.lines`), "utf8")).toContain(`You work in your own git worktree ${path} on branch feat-x (made from main)`);
      expect(ok(await w.mam(["status"])).stdout).toMatch(new RegExp(`^${name} .* feat-x `, "m"));
      const id = ok(await w.mam(["job", "submit", "--to", name, "--prompt", "add a line"])).stdout.trim();
      ok(await w.mam(["job", "wait", id, "--timeout", "60"]));
      expect(ok(await w.git(["show", "feat-x:shared.txt"])).stdout).toBe(`line 1\nedit by ${name}\n`);
    });
  }, 120_000);
});

describe("worktrees: bad input changes nothing", () => {
  for (const mux of ["tmux", "herdr"] as const) {
    test(`an agent that dies at start (${mux}): no row, no worktree, no new branch, no pane`, async () => {
      await withWorld(
        mux,
        async (w) => {
          const r = await runMam(["create", "--agent", "claude", "--session", "x", "--worktree", ...w.where], { env: { ...w.env, FAKE_AGENT_EXIT_AT_START: "1" }, cwd: w.ws });
          expect(r.code, r.stderr).toBe(1);
          expect(r.stderr).toContain("exited right after start");
          expect(existsSync(wtPath(w, "x"))).toBe(false);
          expect([...(await gitWorktrees(w)).keys()]).toEqual([w.ws]);
          expect(ok(await w.git(["branch", "--list", "x"])).stdout).toBe("");
          expect(w.rowsText()).not.toContain("name: x");
          expect(await w.paneCount()).toBe(0);
        },
        { herdrEnv: { FAKE_AGENT_EXIT_AT_START: "1" } },
      );
    }, 60_000);
  }

  test("two creates of one name at once: one wins, the loser does not remove the winner's worktree", async () => {
    await withWorld("tmux", async (w) => {
      const [a, b] = await Promise.all([w.create("same", ["--worktree"]), w.create("same", ["--worktree"])]);
      expect([a.code, b.code].sort(), `${a.stderr}\n${b.stderr}`).toEqual([0, 4]);
      expect((await gitWorktrees(w)).get(wtPath(w, "same"))).toBe("same");
      expect(existsSync(join(wtPath(w, "same"), "shared.txt"))).toBe(true);
      expect(w.row("same")).toMatchObject({ status: "running", worktree: { branch: "same" } });
    });
  }, 60_000);

  test("not a git repository, a branch checked out elsewhere, a bad base, --base alone: clear errors, no row, no pane, no worktree", async () => {
    await withWorld("herdr", async (w) => {
      ok(await w.create("a", ["--worktree", "feat-a"]));
      const reg = w.rowsText();
      const panes = await w.paneCount();
      const branches = ok(await w.git(["branch", "--list"])).stdout;
      const cases: [string[], number, string][] = [
        [["--worktree", "feat-a"], 4, "branch 'feat-a' is already checked out at"],
        [["--worktree", "x", "--base", "no-such-ref"], 2, "--base 'no-such-ref' is not a commit of this repository"],
        [["--worktree", "bad..name"], 2, "invalid branch name 'bad..name'"],
        [["--base", "main"], 2, "--base goes with --worktree"],
      ];
      for (const [extra, code, msg] of cases) {
        const r = await w.create("b", extra);
        expect(r.code, r.stderr).toBe(code);
        expect(r.stderr).toContain(msg);
      }
      expect(w.rowsText()).toBe(reg);
      expect(await w.paneCount()).toBe(panes);
      expect(ok(await w.git(["branch", "--list"])).stdout).toBe(branches);
      expect(existsSync(wtPath(w, "b"))).toBe(false);
      // not a repository: a plain folder as the workspace
      const plain = join(w.sb.root, "plain");
      const { mkdirSync } = await import("node:fs");
      mkdirSync(plain);
      const np = await runMam(["create", "--agent", "claude", "--session", "c", "--herdr-session", "wt", "--worktree", "--workspace", plain], { env: w.env, cwd: plain });
      expect(np.code).toBe(2);
      expect(np.stderr).toBe(`ERROR: ${plain} is not in a git repository; --worktree needs one: run git init (and commit once), or leave --worktree out\n`);
      expect(existsSync(join(plain, ".mam"))).toBe(false);
      // a worktree that vanished is a drift
      rmSync(wtPath(w, "a"), { recursive: true, force: true });
      const rec = JSON.parse(ok(await w.mam(["reconcile", "--dry-run", "--json"])).stdout);
      expect(rec.drifts.some((d: Row) => d.name === "a" && d.kind === "worktree-gone")).toBe(true);
    });
  }, 120_000);
});
