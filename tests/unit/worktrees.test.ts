// The pure parts of a worktree per agent (issue 18): git's porcelain list, the row field and its
// validation, what removal would lose, the texts jobs get, the optional --worktree value, and the
// vanished-worktree drift.
import { describe, expect, test } from "bun:test";
import { commandInput } from "../../lib/cli/op-command.ts";
import { sessionCreate } from "../../lib/ops/table/session.ts";
import { feedbackRequest, jobHeader, reviewRequest } from "../../lib/jobs/header.ts";
import { agentMam } from "../../lib/sys/agent-mam.ts";
import type { JobRecord } from "../../lib/jobs/store.ts";
import { loopJob } from "../helpers/job-record.ts";
import { classify } from "../../lib/fleet/classify.ts";
import type { RegistryData, Row } from "../../lib/registry/types.ts";
import { validateRegistry } from "../../lib/registry/validate.ts";
import { gitWhy, parseWorktreeList } from "../../lib/worktrees/git.ts";
import { liveWorktreeOf, rowCwd, worktreeOf, worktreePath } from "../../lib/worktrees/plan.ts";
import { riskText } from "../../lib/worktrees/remove.ts";

const WS = "/work/my ws";
const WT = { path: "/work/my ws/.mam/worktrees/w1", branch: "feat-x", base: "main", base_commit: "3f0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c" };

describe("git worktree list --porcelain", () => {
  test("main checkout, a branch worktree, a detached and a prunable one", () => {
    const text = [
      "worktree /r",
      "HEAD 1111111111111111111111111111111111111111",
      "branch refs/heads/main",
      "",
      "worktree /r/.mam/worktrees/w1",
      "HEAD 2222222222222222222222222222222222222222",
      "branch refs/heads/feat/x",
      "",
      "worktree /tmp/d",
      "HEAD 3333333333333333333333333333333333333333",
      "detached",
      "",
      "worktree /tmp/gone",
      "HEAD 4444444444444444444444444444444444444444",
      "branch refs/heads/old",
      "prunable gitdir file points to non-existent location",
      "",
    ].join("\n");
    expect(parseWorktreeList(text)).toEqual([
      { path: "/r", head: "1111111111111111111111111111111111111111", branch: "main", detached: false, prunable: false },
      { path: "/r/.mam/worktrees/w1", head: "2222222222222222222222222222222222222222", branch: "feat/x", detached: false, prunable: false },
      { path: "/tmp/d", head: "3333333333333333333333333333333333333333", detached: true, prunable: false },
      { path: "/tmp/gone", head: "4444444444444444444444444444444444444444", branch: "old", detached: false, prunable: true },
    ]);
    expect(parseWorktreeList("")).toEqual([]);
  });
});

describe("git's error line", () => {
  test("the fatal:/error: line, not the progress line git prints first", () => {
    expect(gitWhy({ code: 128, stdout: "", stderr: "Preparing worktree (new branch 'x')\nfatal: a branch named 'x' already exists\n" })).toBe("a branch named 'x' already exists");
    expect(gitWhy({ code: 1, stdout: "", stderr: "something odd\nlast words\n" })).toBe("last words");
    expect(gitWhy({ code: 3, stdout: "", stderr: "" })).toBe("exit 3");
  });
});

describe("the row's worktree field", () => {
  const row = (extra: Record<string, unknown> = {}): Row => ({ name: "w1", status: "running", role: "worker", ...extra });

  test("one place: <workspace>/.mam/worktrees/<session>", () => {
    expect(worktreePath(WS, "w1")).toBe("/work/my ws/.mam/worktrees/w1");
  });

  test("read back; the agent's folder is the worktree until it is removed", () => {
    expect(worktreeOf(row({ worktree: WT }))).toEqual(WT);
    expect(rowCwd(row({ worktree: WT }), WS)).toBe(WT.path);
    expect(rowCwd(row(), WS)).toBe(WS);
    const removed = row({ worktree: { ...WT, removed_at: "2026-12-01T00:00:00Z" } });
    expect(worktreeOf(removed)?.removed_at).toBe("2026-12-01T00:00:00Z");
    expect(liveWorktreeOf(removed)).toBeUndefined();
    expect(rowCwd(removed, WS)).toBe(WS);
    // malformed blocks are not worktrees (and validation refuses to write them)
    expect(worktreeOf(row({ worktree: "x" }))).toBeUndefined();
    expect(worktreeOf(row({ worktree: { path: "/p" } }))).toBeUndefined();
  });

  test("validation: old rows without it pass; a bad block is refused", () => {
    const data = (r: Row): RegistryData => ({ herdr_sessions: [], tmux_sessions: [r] });
    expect(validateRegistry(data(row()))).toEqual([]);
    expect(validateRegistry(data(row({ worktree: WT })))).toEqual([]);
    expect(validateRegistry(data(row({ worktree: "feat-x" })))).toEqual(["tmux_sessions[0] 'w1' worktree is not a mapping"]);
    expect(validateRegistry(data(row({ worktree: { ...WT, path: "rel/path" } })))).toEqual(["tmux_sessions[0] 'w1' worktree.path must be an absolute path"]);
    expect(validateRegistry(data(row({ worktree: { ...WT, branch: "" } })))).toEqual(["tmux_sessions[0] 'w1' worktree.branch must be a non-empty string"]);
  });
});

describe("what removing a worktree would lose", () => {
  test("nothing → no refusal; uncommitted files and unmerged commits are named", () => {
    expect(riskText({ uncommitted: 0, unmerged: 0 })).toBeUndefined();
    expect(riskText({ uncommitted: 2, unmerged: 0 })).toBe("2 uncommitted file(s)");
    expect(riskText({ uncommitted: 0, unmerged: 3 })).toBe("3 commit(s) not merged into the workspace's HEAD");
    expect(riskText({ uncommitted: 1, unmerged: 1 })).toBe("1 uncommitted file(s) and 1 commit(s) not merged into the workspace's HEAD");
    // git could not tell: counted as a risk
    expect(riskText({ uncommitted: Number.POSITIVE_INFINITY, unmerged: 0 })).toBe("uncommitted changes (git status failed)");
  });
});

function job(over: Partial<JobRecord> = {}): JobRecord {
  return loopJob({ agent_session: "w1", delegator: null, last_seq: 0, ...over });
}

describe("jobs name the branch", () => {
  test("the header of a worker in a worktree names its branch; mam commands point at the main workspace", () => {
    const h = jobHeader(job({ worktree: WT }), "w1", WS);
    expect(h).toContain(`Work in your git worktree ${WT.path} on branch feat-x (made from main); commit your changes on feat-x before you report completed.`);
    expect(h).toContain(`${agentMam()} job event abc12345 started --source w1 --workspace '/work/my ws'`);
    expect(jobHeader(job(), "w1", WS)).not.toContain("worktree");
  });

  test("the reviewer's request names branch, base and the exact diff", () => {
    const r = reviewRequest(job({ worktree: WT }), WS, "done");
    expect(r).toContain(`The work is on branch feat-x (from main at ${WT.base_commit}), in the worktree ${WT.path}. Read it with:`);
    expect(r).toContain(`\n  git -C '/work/my ws' diff ${WT.base_commit}...feat-x\n`);
    expect(r).toContain(`\n  git -C '/work/my ws/.mam/worktrees/w1' status --short\n`);
    expect(reviewRequest(job(), WS, "done")).not.toContain("git -C");
    expect(feedbackRequest(job({ worktree: WT }), WS, "fix it", 2)).toContain(`Address the feedback in ${WT.path} and commit it on branch feat-x`);
  });
});

describe("--worktree [BRANCH]", () => {
  const parse = (argv: string[]) => {
    const i = commandInput(sessionCreate, argv.includes("--agent") ? argv : [...argv, "--agent", "claude"]);
    return i.worktree === undefined ? undefined : { branch: i.worktree === "" ? undefined : i.worktree, base: i.base };
  };

  test("alone, before a flag, at the end, with a branch", () => {
    expect(parse(["--worktree"])).toEqual({ branch: undefined, base: undefined });
    expect(parse(["--worktree", "--agent", "claude"])).toEqual({ branch: undefined, base: undefined });
    expect(parse(["--agent", "claude", "--worktree", "feat/x", "--base", "main"])).toEqual({ branch: "feat/x", base: "main" });
    expect(parse(["--agent", "claude"])).toBeUndefined();
  });

  test("--base without --worktree is a usage error", () => {
    expect(() => parse(["--base", "main"])).toThrow("--base goes with --worktree");
  });
});

describe("conversation discovery looks where the agent runs", () => {
  test("classify asks for the row's worktree folder, else the workspace", () => {
    const asked: string[] = [];
    const data: RegistryData = {
      herdr_sessions: [],
      tmux_sessions: [
        { name: "w1", status: "running", role: "worker", agent: "codex", tmux_server: "mam", worktree: WT },
        { name: "w2", status: "running", role: "worker", agent: "codex", tmux_server: "mam" },
      ],
    };
    const c = classify({
      data,
      views: [{ backend: "tmux", server: "mam", listing: { state: "ok", panes: [{ id: "%1", label: "mam:w1", status: "unknown" }, { id: "%2", label: "mam:w2", status: "unknown" }] } }],
      workspace: WS,
      now: 1_800_000_000,
      discover: (_kind, _since, _ex, cwd) => (asked.push(cwd), cwd === WT.path ? "id-in-worktree" : undefined),
      folderExists: () => true,
    });
    expect(asked).toEqual([WT.path, WS]);
    expect(c.actions).toContainEqual({ type: "fill-session-id", section: "tmux_sessions", name: "w1", server: "mam", field: "codex_session_id_own", value: "id-in-worktree", source: "store" });
  });
});

describe("reconcile: a vanished worktree is a drift, nothing else changes", () => {
  test("worktree-gone for a row whose folder is missing; removed worktrees are not drifts", () => {
    const data: RegistryData = {
      herdr_sessions: [],
      tmux_sessions: [
        { name: "w1", status: "running", role: "worker", tmux_server: "mam", pane: { id: "%1" }, worktree: WT },
        { name: "w2", status: "stopped", role: "worker", tmux_server: "mam", worktree: { ...WT, path: "/gone/w2", removed_at: "2026-12-01T00:00:00Z" } },
      ],
    };
    const c = classify({
      data,
      views: [{ backend: "tmux", server: "mam", listing: { state: "ok", panes: [{ id: "%1", label: "mam:w1", status: "unknown" }] } }],
      workspace: WS,
      now: 1_800_000_000,
      folderExists: () => false,
    });
    expect(c.drifts.filter((d) => d.kind === "worktree-gone")).toEqual([{ name: "w1", kind: "worktree-gone", detail: `worktree ${WT.path} (branch feat-x) no longer exists` }]);
    expect(c.actions).toEqual([]);
  });
});
