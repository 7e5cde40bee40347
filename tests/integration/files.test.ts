// mam's own files under .mam/ (issue 23, security review 2026-12): never written through a
// symbolic link (BUG-5, attempts 17-19), never committed by accident (R2, attempt 43), and a
// daemon log that does not grow without end (R5). The compiled binary in temp workspaces.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { registerJob, type JobSpec } from "../../lib/jobs/store.ts";
import { GITIGNORE_TEXT } from "../../lib/sys/mam-dir.ts";
import { MAM_BIN, MAM_SH, run, runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName, writeScript } from "../helpers/tmux.ts";

let sb: Sandbox;
beforeAll(() => {
  sb = makeSandbox("mam-files-");
  // the demo agent is this mam: its pane finds it on PATH
  if (MAM_BIN) symlinkSync(MAM_BIN, join(sb.bin, "mam"));
  else writeScript(sb.bin, "mam", `exec ${MAM_SH} "$@"`);
});
afterAll(async () => {
  await sb?.cleanup();
});

let wsNo = 0;
function workspace(extra: Record<string, string | undefined> = {}) {
  const ws = join(sb.root, `ws${++wsNo}`);
  mkdirSync(ws, { recursive: true });
  const env = sb.with(extra);
  return { ws, env, mam: (args: string[], more: Record<string, string | undefined> = {}) => runMam([...args, "--workspace", ws], { env: { ...env, ...(more as Record<string, string>) }, cwd: ws }) };
}

const spec: JobSpec = {
  agent_session: "wrk", agent: "claude", prompt: "do it", delegator: null, type: "single", reviewer_session: null,
  max_iterations: null, timeout_sec: 0, idle_timeout_sec: 0, expected_artifacts: [], topic_prefix_base: "mam/jobs",
};

describe("never through a symbolic link under .mam/ (BUG-5)", () => {
  test("a journal that links to another file: job event refuses with the file named; the target keeps every byte (attempt 17)", async () => {
    const w = workspace();
    const job = await registerJob(w.ws, spec);
    const victim = join(sb.root, `victim-${wsNo}`);
    writeFileSync(victim, "l1\nl2-no-newline");
    const journal = join(w.ws, ".mam", "jobs", `${job.job_id}.events.ndjson`);
    symlinkSync(victim, journal);
    const r = await w.mam(["job", "event", job.job_id, "progress"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`ERROR: refusing to write through ${journal}: it is a symbolic link; mam never writes through a link to its own files; replace the link with the file it points to, or remove it\n`);
    expect(readFileSync(victim, "utf8")).toBe("l1\nl2-no-newline");
    expect(lstatSync(journal).isSymbolicLink()).toBe(true);
  });

  test("a monitor.log that links elsewhere (a workspace shipping .mam/): daemon ensure refuses, starts nothing, writes nothing there (attempt 18)", async () => {
    const w = workspace({ MAM_NO_SUBSCRIBER_DAEMON: undefined });
    mkdirSync(join(w.ws, ".mam"));
    const target = join(sb.root, `log-target-${wsNo}`);
    writeFileSync(target, "theirs\n");
    symlinkSync(target, join(w.ws, ".mam", "monitor.log"));
    const r = await w.mam(["daemon", "ensure"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`ERROR: refusing to write through ${join(w.ws, ".mam", "monitor.log")}: it is a symbolic link`);
    expect(readFileSync(target, "utf8")).toBe("theirs\n");
    expect((await w.mam(["daemon", "status"])).code).toBe(3); // no daemon runs
  });

  test("a lock file that links to a missing path: the path is never created (attempt 19)", async () => {
    const w = workspace();
    const job = await registerJob(w.ws, spec);
    const lock = join(w.ws, ".mam", "jobs", ".lock");
    const planted = join(sb.root, `planted-${wsNo}`);
    Bun.spawnSync(["rm", "-f", lock]);
    symlinkSync(planted, lock);
    const r = await w.mam(["job", "event", job.job_id, "progress"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`ERROR: refusing to write through ${lock}: it is a symbolic link`);
    expect(existsSync(planted)).toBe(false);
  });

  test("a registry that links to a 0644 file: a write refuses, the link stays a link and its target is unchanged (attempt 19)", async () => {
    const w = workspace();
    mkdirSync(join(w.ws, ".mam"));
    const target = join(sb.root, `registry-${wsNo}.yaml`);
    const text = "herdr_sessions: []\ntmux_sessions:\n  - name: old\n    status: stopped\n    role: worker\n";
    writeFileSync(target, text, { mode: 0o644 });
    const reg = join(w.ws, ".mam", "agent-sessions.yaml");
    symlinkSync(target, reg);
    const r = await w.mam(["prune"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`ERROR: refusing to write through ${reg}: it is a symbolic link`);
    expect(lstatSync(reg).isSymbolicLink()).toBe(true);
    expect(readFileSync(target, "utf8")).toBe(text);
    expect(statSync(target).mode & 0o777).toBe(0o644);
    // reading through it still works (read-only commands change nothing)
    expect((await w.mam(["status"])).stdout).toContain("old");
  });
});

describe(".mam/ is never committed by accident (R2)", () => {
  const git = (ws: string, ...args: string[]) => run(["git", "-C", ws, "-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { env: sb.env });

  test("in a git repository: after create and job submit, `git add -A` stages nothing under .mam/ (attempt 43)", async () => {
    if (!TMUX_BIN) throw new Error("tmux is not installed: this test needs a real tmux (apt install tmux)");
    const server = tmuxServerName("mamgi");
    const w = workspace({ TMUX_TMPDIR: sb.root, TERM: process.env.TERM ?? "xterm", SHELL: "/bin/bash" });
    try {
      expect((await git(w.ws, "init", "-q")).code).toBe(0);
      writeFileSync(join(w.ws, "README"), "hello\n");
      const c = await w.mam(["create", "--agent", "demo", "--mux", "tmux", "--tmux-server", server, "--role", "worker", "--session", "w1", "--no-onboard"]);
      expect(c.code, c.stderr).toBe(0);
      const s = await w.mam(["job", "submit", "--to", "w1", "--prompt", "hello"]);
      expect(s.code, s.stderr).toBe(0);
      expect(existsSync(join(w.ws, ".mam", "jobs", `${s.stdout.trim()}.json`))).toBe(true);
      expect(readFileSync(join(w.ws, ".mam", ".gitignore"), "utf8")).toBe(GITIGNORE_TEXT);
      expect((await git(w.ws, "add", "-A")).code).toBe(0);
      expect((await git(w.ws, "diff", "--cached", "--name-only")).stdout).toBe("README\n");
      expect((await git(w.ws, "status", "--porcelain", "--ignored")).stdout).toContain("!! .mam/");
    } finally {
      await killTmuxServer(server, sb.with({ TMUX_TMPDIR: sb.root }), undefined);
    }
  }, 60_000);

  test("an existing .mam/ without one: read-only commands create nothing; the first writing command adds it; one of the user's own is kept", async () => {
    const w = workspace();
    const job = await registerJob(w.ws, spec); // a .mam/ as an older mam left it
    rmSync(join(w.ws, ".mam", ".gitignore"));
    const list = () => (Bun.spawnSync(["find", join(w.ws, ".mam")]).stdout.toString().split("\n").filter(Boolean).sort());
    const before = list();
    for (const args of [["status"], ["job", "list"], ["job", "status", job.job_id], ["job", "logs", job.job_id], ["daemon", "status"]]) await w.mam(args);
    expect(list()).toEqual(before);
    expect((await w.mam(["job", "event", job.job_id, "progress"])).code).toBe(0);
    expect(readFileSync(join(w.ws, ".mam", ".gitignore"), "utf8")).toBe(GITIGNORE_TEXT);
    writeFileSync(join(w.ws, ".mam", ".gitignore"), "jobs/\n");
    expect((await w.mam(["job", "event", job.job_id, "progress"])).code).toBe(0);
    expect(readFileSync(join(w.ws, ".mam", ".gitignore"), "utf8")).toBe("jobs/\n");
  });

  test("a .mam that is a symbolic link (a repository can ship one) is refused by writers, its target untouched", async () => {
    const w = workspace();
    const elsewhere = join(sb.root, `elsewhere-${wsNo}`);
    mkdirSync(elsewhere);
    symlinkSync(elsewhere, join(w.ws, ".mam"));
    const r = await w.mam(["daemon", "ensure"], { MAM_NO_SUBSCRIBER_DAEMON: undefined });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`ERROR: refusing to use ${join(w.ws, ".mam")}: it is a symbolic link`);
    expect(Bun.spawnSync(["ls", "-A", elsewhere]).stdout.toString()).toBe("");
  });
});
