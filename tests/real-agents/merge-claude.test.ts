// The merge queue (docs/merge-queue.md, issue 35) with the real Claude Code: claude, in its own
// worktree, edits a file for a `--merge` job and commits it; main has meanwhile changed the same
// line, so the queue's rebase conflicts and a fix job goes back to claude with the conflict in its
// prompt. Claude resolves it in its worktree (git rebase, its side, rebase --continue), reports the
// fix completed, and the branch lands on main: linear, with both commits, the check run. Offline
// against the scripted model endpoint; no broker (the journals are the channel); no key pressed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { eventLine, withDetail } from "../fakes/model-api/scripts.ts";
import { type ModelApi, type Reply, startModelApi, type Turn } from "../fakes/model-api/server.ts";
import { run } from "../helpers/mam.ts";
import { type RealAgentHost, realAgentHost, endRealAgentHost } from "../helpers/real-agents.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { TMUX_BIN } from "../helpers/tmux.ts";

const NO_BROKER = { MQTT_BROKER: "127.0.0.1", MQTT_PORT: "9" };

let sb: Sandbox;
let api: ModelApi;
let H: RealAgentHost;
let wt: string;

const FIX_MARK = "could not rebase your branch";

/**
 * What claude does: a fix job (the queue's conflict prompt) → rebase onto main in its worktree,
 * keep its side of the conflict, continue the rebase, report completed; any other job → read
 * shared.txt, edit its first line, commit, report completed. Each step one tool call.
 */
function script(t: Turn): Reply {
  const text = t.lastUserText;
  const started = eventLine(text, "started");
  const completed = eventLine(text, "completed");
  if (completed === undefined) return { text: "ready" };
  const file = join(wt, "shared.txt");
  const steps: Reply[] = text.includes(FIX_MARK)
    ? [
        ...(started ? [{ shell: withDetail(started, "resolving the conflict") }] : []),
        { shell: "git rebase main" },
        { shell: "git checkout --theirs shared.txt" },
        { shell: "git add shared.txt" },
        { shell: "git -c core.editor=true rebase --continue" },
        { shell: withDetail(completed, "rebased onto main, conflict resolved") },
      ]
    : [
        ...(started ? [{ shell: withDetail(started, "editing shared.txt") }] : []),
        { tool: { name: "Read", input: { file_path: file } } },
        { tool: { name: "Edit", input: { file_path: file, old_string: "shared.txt line 1", new_string: "claude's line 1" } } },
        { shell: "git commit -qam 'shared.txt: claude rewrites line 1'" },
        { shell: withDetail(completed, "line 1 rewritten and committed") },
      ];
  const step = t.toolOutputs.length;
  return step < steps.length ? steps[step]! : { text: "done" };
}

const git = async (args: string[], cwd = H.ws) => {
  const r = await run(["git", ...args], { env: H.env, cwd });
  if (r.code !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
};
const events = (id: string) => H.journal(id).map((e) => e.event);

describe.skipIf(!TMUX_BIN)("the merge queue with the real claude", () => {
  beforeAll(async () => {
    sb = makeSandbox("mam-rmq-");
    api = startModelApi(script);
    H = realAgentHost(sb.root, "hm", NO_BROKER, api);
    wt = join(H.ws, ".mam", "worktrees", "w");
    writeFileSync(join(H.ws, "shared.txt"), "shared.txt line 1\nline 2\n");
    await git(["init", "-q", "-b", "main"]);
    await git(["config", "user.name", "mam test"]);
    await git(["config", "user.email", "mam-test@example.com"]);
    await git(["add", "."]);
    await git(["commit", "-qm", "init"]);
    await H.ok(["merge", "config", "--check", "grep -q 'line 2' shared.txt"]);
    // claude in its own worktree, allowed git and file edits (and mam's reporting, as mam grants)
    const c = JSON.parse(await H.ok(["create", "--agent", "claude", "--role", "worker", "--session", "w", "--worktree", "--mux", "tmux", "--tmux-server", H.tmux, "--json", "--", "--allowedTools", "Bash(git:*)", "Edit", "--permission-mode", "default"]));
    expect(c, JSON.stringify(c)).toMatchObject({ at_prompt: true, onboarding: "sent", warnings: [] });
    expect(await waitFor(() => api.turns("anthropic").length >= 1, 30_000, 100)).toBe(true);
  }, 180_000);

  afterAll(async () => {
    await endRealAgentHost(H, api, sb);
  }, 60_000);

  test("claude's branch conflicts with main: the fix job shows claude the conflict, claude resolves it, the branch lands linear with the check run", async () => {
    expect(existsSync(wt)).toBe(true);
    // main moves on the same line after claude's worktree was made from it
    writeFileSync(join(H.ws, "shared.txt"), "main's line 1\nline 2\n");
    await git(["commit", "-qam", "shared.txt: main rewrites line 1"]);
    const mainBefore = await git(["rev-parse", "main"]);

    const id = (await H.ok(["job", "submit", "--to", "w", "--merge", "--prompt", "Rewrite the first line of shared.txt"])).trim();
    const story = () => `job ${id}: ${H.journal(id).map((e) => `${e.event}: ${e.detail}`).join("\n")}\n${H.visible("w")}\n${H.log()}`;
    expect(await waitFor(() => events(id).includes("merge_conflict"), 150_000, 200), story()).toBe(true);
    const conflict = H.journal(id).find((e) => e.event === "merge_conflict")!;
    expect(conflict.data).toMatchObject({ files: ["shared.txt"], target: "main" });
    const fix = String(conflict.data!.fix_job);
    expect(events(id).slice(0, 3)).toEqual(["started", "completed", "merge_queued"]);
    // main did not move while the branch conflicted
    expect(await git(["rev-parse", "main"])).toBe(mainBefore);

    // the fix job reached claude as its own message, with the conflict in it
    const fixTurnNow = () => api.requests.find((r) => r.turn?.main && r.turn.lastUserText.includes(`Job ${fix} delegated`))?.turn;
    expect(await waitFor(() => fixTurnNow() !== undefined, 60_000, 100), story()).toBe(true);
    const fixTurn = fixTurnNow();
    expect(fixTurn!.lastUserText).toContain(FIX_MARK);
    expect(fixTurn!.lastUserText).toContain("<<<<<<<");
    expect(fixTurn!.lastUserText).toContain("main's line 1");
    expect(fixTurn!.lastUserText).toContain("claude's line 1");

    // claude resolves it; the branch goes back in line and lands
    expect(await waitFor(() => events(id).includes("merged"), 150_000, 200), `${story()}\nfix ${fix}: ${H.journal(fix).map((e) => `${e.event}: ${e.detail}`).join("\n")}`).toBe(true);
    // (queued first when claude was still ending its turn on the first job)
    expect(H.journal(fix).map((e) => e.event).filter((e) => e !== "queued" && e !== "dispatched")).toEqual(["started", "completed"]);
    // its git rebase ran in claude's worktree and hit the conflict there
    const rebaseOut = api.requests.flatMap((r) => r.turn?.toolOutputs ?? []).find((o) => o.includes("CONFLICT"));
    expect(rebaseOut, story()).toContain("shared.txt");
    const merged = H.journal(id).find((e) => e.event === "merged")!;
    expect(events(id).filter((e) => e === "merge_queued")).toHaveLength(2);
    expect(events(id)).toContain("merge_checking");
    // main: fast-forwarded to claude's resolved commit, on top of main's; no merge commit
    expect(await git(["rev-parse", "main"])).toBe(String(merged.data!.commit));
    expect(await git(["log", "--merges", "--oneline", "main"])).toBe("");
    expect((await git(["log", "--format=%s", "main"])).split("\n")).toEqual(["shared.txt: claude rewrites line 1", "shared.txt: main rewrites line 1", "init"]);
    expect(readFileSync(join(H.ws, "shared.txt"), "utf8")).toBe("claude's line 1\nline 2\n");
    expect(await git(["for-each-ref", "refs/mam/"])).toBe("");
    // claude was never left at a permission dialog
    expect(H.visible("w")).not.toContain("Do you want to proceed?");
  }, 320_000);
});
