// mam demo (SPEC §8): the loop job completes on a fresh tmux, and on the fake herdr; everything
// it started is gone afterwards.
import { afterEach, beforeEach, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { installFakeHerdr } from "../helpers/herdr.ts";
import { runMam } from "../helpers/mam.ts";
import { anchoredPids, makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

let sb: Sandbox;
beforeEach(() => {
  sb = makeSandbox("mam-demo-t-");
});
afterEach(async () => {
  await sb.cleanup();
});

function check(r: { code: number; stdout: string; stderr: string }) {
  expect(r.code, r.stdout + r.stderr).toBe(0);
  expect(r.stdout).toMatch(/job [0-9a-f]{8} completed in /);
  expect(r.stdout).toContain("started");
  expect(r.stdout).toContain("PASS");
  expect(r.stdout).toMatch(/NAME\s+AGENT\s+ROLE\s+STATUS\s+LIVE/);
  expect(r.stdout).toContain("cleaned up:");
  // the temp workspace lives under TMPDIR (the sandbox) and is gone, and so is every process
  expect(readdirSync(sb.root).filter((f) => f.startsWith("mam-demo-"))).toEqual([]);
  expect(anchoredPids(sb.root)).toEqual([]);
}

test("mam demo on tmux: the loop job completes, nothing is left behind (not even the tmux server's socket)", async () => {
  const r = await runMam(["demo"], { env: sb.with({ TMPDIR: sb.root, TMUX_TMPDIR: sb.root, MAM_NO_SUBSCRIBER_DAEMON: "1" }), cwd: sb.ws, timeoutMs: 120_000 });
  check(r);
  expect(r.stdout).toContain("tmux server 'mam-demo-");
  // tmux leaves a killed server's socket behind (issue 39 item 12): the demo removes it
  expect(readdirSync(join(sb.root, `tmux-${process.getuid!()}`))).toEqual([]);
}, 130_000);

test("mam demo --dialog: the worker asks in a permission dialog, the daemon journals it, mam approve answers it, the job completes; synthetic cost shown", async () => {
  const r = await runMam(["demo", "--dialog"], { env: sb.with({ TMPDIR: sb.root, TMUX_TMPDIR: sb.root, MAM_NO_SUBSCRIBER_DAEMON: "1" }), cwd: sb.ws, timeoutMs: 120_000 });
  check(r);
  expect(r.stdout).toContain("demo-worker asks, in a permission dialog");
  expect(r.stdout).toContain("  Demo command: write hello.txt — Do you want to proceed?");
  expect(r.stdout).toContain("  choices: 1 Yes · 2 No");
  expect(r.stdout).toMatch(/approved demo-worker's dialog \(Demo command: write hello\.txt — Do you want to proceed\?\): pressed 1 \(Yes\); journalled on job [0-9a-f]{8}/);
  // the timeline: the daemon's question, then the answer, then the worker's hand-in
  const at = (what: string) => r.stdout.split("\n").findIndex((l) => new RegExp(`#\\d+\\s+${what}\\s`).test(l));
  expect(at("permission_required")).toBeGreaterThan(-1);
  expect(at("permission_required")).toBeLessThan(at("approved"));
  expect(r.stdout).toContain("COST is synthetic");
  expect(r.stdout).toMatch(/demo-worker .*\$0\.\d+\/\$0\.\d+\/\$0\.\d+/);
}, 130_000);

test("mam demo --plan: three parts in three worktrees, each reviewed, the merge queue lands them on main with the check green; nothing left behind", async () => {
  const r = await runMam(["demo", "--plan"], { env: sb.with({ TMPDIR: sb.root, TMUX_TMPDIR: sb.root, MAM_NO_SUBSCRIBER_DAEMON: "1" }), cwd: sb.ws, timeoutMs: 150_000 });
  expect(r.code, r.stdout + r.stderr).toBe(0);
  expect(r.stdout).toContain("$ mam plan run plan.yaml");
  expect(r.stdout).toMatch(/plan [0-9a-f]{8}: part-a [0-9a-f]{8}, part-b [0-9a-f]{8}, part-c [0-9a-f]{8}/);
  // each went through its review, and landed
  for (const x of ["a", "b", "c"]) {
    expect(r.stdout).toContain(`created demo-${x} (demo, role worker, in its own worktree on branch demo-${x})`);
    expect(r.stdout).toMatch(new RegExp(`part-${x}: in review`));
  }
  expect(r.stdout).toMatch(/part-a: merged · part-b: merged · part-c: merged/);
  // main's history: the start and one commit per part, linear (no merge commit)
  const log = r.stdout.slice(r.stdout.indexOf("$ git log --oneline main")).split("\n").slice(1, 5);
  expect(log.map((l) => l.replace(/^[0-9a-f]+ /, "")).sort()).toEqual(["demo agent: part-a.txt", "demo agent: part-b.txt", "demo agent: part-c.txt", "start"]);
  expect(r.stdout).toContain("README.md  part-a.txt  part-b.txt  part-c.txt");
  expect(r.stdout).toContain("the plan landed: three parts on main, each reviewed, checked and fast-forwarded");
  expect(r.stdout).toContain("cleaned up:");
  expect(readdirSync(sb.root).filter((f) => f.startsWith("mam-demo-"))).toEqual([]);
  expect(anchoredPids(sb.root)).toEqual([]);
}, 160_000);

test("mam demo --mux herdr without herdr: says so before starting anything (issue 39 item 12)", async () => {
  const r = await runMam(["demo", "--mux", "herdr"], { env: sb.with({ TMPDIR: sb.root, PATH: `${sb.bin}:/usr/bin:/bin` }), cwd: sb.ws, timeoutMs: 30_000 });
  expect(r.code).toBe(1);
  expect(r.stdout).toBe("");
  expect(r.stderr).toBe("ERROR: herdr not found on PATH; install herdr or set MAM_HERDR_BIN (or use --mux tmux)\n");
  expect(readdirSync(sb.root).filter((f) => f.startsWith("mam-demo-"))).toEqual([]);
});

test("mam demo --mux herdr on the fake herdr", async () => {
  installFakeHerdr(sb.bin);
  const r = await runMam(["demo", "--mux", "herdr"], { env: sb.with({ TMPDIR: sb.root, FAKE_HERDR_SETTLE_MS: "100" }), cwd: sb.ws, timeoutMs: 120_000 });
  check(r);
  expect(r.stdout).toContain("herdr server 'mam-demo-");
}, 130_000);

test("Ctrl-C during the demo tears everything down and exits 130", async () => {
  const { MAM_CMD } = await import("../helpers/mam.ts");
  const p = Bun.spawn([...MAM_CMD, "demo", "--timeout", "60"], {
    env: sb.with({ TMPDIR: sb.root, MAM_NO_SUBSCRIBER_DAEMON: undefined }),
    cwd: sb.ws,
    stdout: "pipe",
    stderr: "pipe",
  });
  let text = "";
  const reader = p.stdout.getReader();
  const dec = new TextDecoder();
  while (!text.includes("created demo-reviewer")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += dec.decode(value);
  }
  p.kill("SIGINT");
  expect(await p.exited).toBe(130);
  expect(readdirSync(sb.root).filter((f) => f.startsWith("mam-demo-"))).toEqual([]);
  expect(anchoredPids(sb.root)).toEqual([]);
}, 60_000);
