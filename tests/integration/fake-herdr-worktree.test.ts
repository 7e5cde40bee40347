// The fake herdr's worktree commands against herdr 0.8.0 (src/cli/worktree.rs,
// src/app/api/worktrees*.rs, src/worktree.rs) with real git: every response checked against
// herdr's schema (and the server's own self-check, which fails stop() on a violation).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeHerdrServer, herdrApiError, herdrJson, installFakeHerdr, startFakeHerdr } from "../helpers/herdr.ts";
import { type RunResult, run } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

let sb: Sandbox;
let h: FakeHerdrServer;
let herdr: string;

const git = (args: string[], cwd = sb.ws) => run(["git", ...args], { env: sb.with({ GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@e" }), cwd });
const cli = (args: string[]): Promise<RunResult> => run([herdr, "--session", "wt", ...args], { env: sb.env, cwd: sb.ws });

beforeAll(async () => {
  sb = makeSandbox("mam-fhw-");
  herdr = installFakeHerdr(sb.bin);
  writeFileSync(join(sb.ws, "f.txt"), "x\n");
  for (const a of [["init", "-q", "-b", "main"], ["add", "f.txt"], ["commit", "-qm", "init"]]) expect((await git(a)).code).toBe(0);
  h = await startFakeHerdr(sb, { session: "wt" });
});

afterAll(async () => {
  await h?.stop();
  await sb.cleanup();
});

describe("fake herdr worktree.*", () => {
  test("create: a git worktree on a new branch, shown as its own unfocused workspace with a root pane in it", async () => {
    const path = join(sb.root, "wt-one");
    const r = herdrJson(await cli(["worktree", "create", "--cwd", sb.ws, "--branch", "one", "--path", path, "--label", "one", "--no-focus"])).result;
    expect(r.type).toBe("worktree_created");
    expect(r.worktree).toMatchObject({ path, branch: "one", is_linked_worktree: true, is_bare: false, is_detached: false, is_prunable: false, open_workspace_id: r.workspace.workspace_id });
    expect(r.workspace).toMatchObject({ label: "one", worktree: { checkout_path: path, is_linked_worktree: true, repo_root: sb.ws, repo_name: "ws" } });
    expect(r.root_pane.cwd).toBe(path);
    expect((await git(["worktree", "list", "--porcelain"])).stdout).toContain(`worktree ${path}\nHEAD`);
    // list from the main checkout: both checkouts, the linked one open in that workspace
    const l = herdrJson(await cli(["worktree", "list", "--cwd", sb.ws])).result;
    expect(l.source).toMatchObject({ repo_root: sb.ws, source_checkout_path: sb.ws });
    expect(l.worktrees.map((x: any) => [x.path, x.branch, x.is_linked_worktree])).toEqual([
      [sb.ws, "main", false],
      [path, "one", true],
    ]);
  });

  test("an existing branch is checked out (no -b), --base applies to new branches only", async () => {
    expect((await git(["branch", "two"])).code).toBe(0);
    const r = herdrJson(await cli(["worktree", "create", "--cwd", sb.ws, "--branch", "two", "--base", "no-such-ref", "--path", join(sb.root, "wt-two")])).result;
    expect(r.worktree.branch).toBe("two");
    // the same branch again: git refuses, herdr says worktree_create_failed with git's text
    const again = herdrApiError(await cli(["worktree", "create", "--cwd", sb.ws, "--branch", "two", "--path", join(sb.root, "wt-two-b")]), "worktree_create_failed");
    expect(again.error.message).toMatch(/already (checked out|used by worktree)/);
  });

  test("errors: not a git work tree, a relative path, a linked worktree as source, a plain workspace removed, dirty without --force", async () => {
    const plain = join(sb.root, "plain");
    mkdirSync(plain);
    herdrApiError(await cli(["worktree", "create", "--cwd", plain, "--branch", "x"]), "not_git_worktree");
    herdrApiError(await cli(["worktree", "create", "--cwd", sb.ws, "--branch", "x", "--path", "rel/x"]), "invalid_request");
    herdrApiError(await cli(["worktree", "create", "--cwd", join(sb.root, "wt-one"), "--branch", "x"]), "linked_worktree_source");
    const pw = herdrJson(await cli(["workspace", "create", "--cwd", plain])).result.workspace.workspace_id;
    herdrApiError(await cli(["worktree", "remove", "--workspace", pw]), "not_linked_worktree");

    const path = join(sb.root, "wt-dirty");
    const c = herdrJson(await cli(["worktree", "create", "--cwd", sb.ws, "--branch", "dirty", "--path", path])).result;
    writeFileSync(join(path, "new.txt"), "uncommitted\n");
    herdrApiError(await cli(["worktree", "remove", "--workspace", c.workspace.workspace_id]), "dirty_worktree_requires_force");
    const rm = herdrJson(await cli(["worktree", "remove", "--workspace", c.workspace.workspace_id, "--force"])).result;
    expect(rm).toEqual({ type: "worktree_removed", workspace_id: c.workspace.workspace_id, path, forced: true });
    // its workspace is closed; the branch stays
    const wss = herdrJson(await cli(["workspace", "list"])).result.workspaces.map((w: any) => w.workspace_id);
    expect(wss).not.toContain(c.workspace.workspace_id);
    expect((await git(["rev-parse", "--verify", "dirty"])).code).toBe(0);
  });

  test("open: an existing linked worktree as a workspace again; already_open when one shows it", async () => {
    const path = join(sb.root, "wt-open");
    expect((await git(["worktree", "add", "-q", "-b", "op", path])).code).toBe(0);
    const o = herdrJson(await cli(["worktree", "open", "--cwd", sb.ws, "--path", path, "--label", "op", "--no-focus"])).result;
    expect(o).toMatchObject({ type: "worktree_opened", already_open: false, worktree: { path, branch: "op", is_linked_worktree: true }, workspace: { label: "op", worktree: { checkout_path: path } } });
    expect(o.root_pane.cwd).toBe(path);
    const again = herdrJson(await cli(["worktree", "open", "--cwd", sb.ws, "--branch", "op"])).result;
    expect(again.already_open).toBe(true);
    expect(again.workspace.workspace_id).toBe(o.workspace.workspace_id);
    herdrApiError(await cli(["worktree", "open", "--cwd", sb.ws, "--path", join(sb.root, "nowhere")]), "worktree_not_found");
  });

  test("usage errors exit 2 as herdr's parser does", async () => {
    for (const args of [
      ["worktree", "create", "--cwd", sb.ws, "--workspace", "w1"],
      ["worktree", "remove"],
      ["worktree", "open", "--cwd", sb.ws],
      ["worktree", "list", "--bogus"],
    ]) {
      const r = await cli(args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.stdout).toBe("");
    }
  });
});
