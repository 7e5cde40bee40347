// mam demo --plan: a plan that lands its work. The demo's workspace becomes a git repository; three
// demo workers, each in its own git worktree, build three parts, each reviewed by a reviewer of its
// own (a loop job), and the merge queue lands each branch on main once its review passed: rebased,
// checked (every part file there and not empty), fast-forwarded. Submitted as one plan file
// (docs/plan.md); what the user sees: the plan, its board while it runs, main's history at the end.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Deps } from "../ops/deps.ts";
import { EXIT, MamError } from "../sys/errors.ts";

const PARTS = ["a", "b", "c"] as const;
const CHECK = `for p in ${PARTS.map((p) => `part-${p}.txt`).join(" ")}; do [ ! -e "$p" ] || [ -s "$p" ] || exit 1; done`;

function git(cwd: string, args: string[]): string {
  const r = Bun.spawnSync(["git", "-C", cwd, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  if (r.exitCode !== 0) throw new MamError(`git ${args.join(" ")} failed in ${cwd}: ${r.stderr.toString().trim()}`, EXIT.FAIL);
  return r.stdout.toString();
}

/** the plan the demo runs (printed as it is submitted) */
export function demoPlanText(): string {
  const lines = ["name: three parts, reviewed, landed on main", "jobs:"];
  for (const p of PARTS) {
    lines.push(`  part-${p}:`, `    to: demo-${p}`, "    type: loop", `    reviewer: demo-rev-${p}`, `    prompt: write part-${p}.txt, part ${p.toUpperCase()} of the greeting`, `    expect: part-${p}.txt`, "    merge: true");
  }
  return `${lines.join("\n")}\n`;
}

export interface PlanDemo {
  print: (line: string) => void;
  timeoutMs: number;
  signal: AbortSignal;
  /** how a session is made on the demo's multiplexer server */
  create: (name: string, role: "worker" | "reviewer", worktree: boolean, agentArgs: string[]) => Promise<void>;
}

/** true when every part merged on main with its check green */
export async function runPlanDemo(deps: Deps, o: PlanDemo): Promise<boolean> {
  const p = o.print;
  const ws = deps.ws;
  git(ws, ["init", "-q", "-b", "main"]);
  git(ws, ["config", "user.name", "mam demo"]);
  git(ws, ["config", "user.email", "demo@mam.invalid"]);
  writeFileSync(join(ws, "README.md"), "# the demo's greeting, in three parts\n");
  git(ws, ["add", "README.md"]);
  git(ws, ["commit", "-q", "-m", "start"]);
  const { configureMerge, mergeStatus } = await import("../ops/job/merge-run.ts");
  await configureMerge(deps, { check: CHECK });
  p(`  a git repository on main; the merge queue's check: ${CHECK}`);
  for (const x of PARTS) {
    await o.create(`demo-${x}`, "worker", true, ["--role", "worker"]);
    await o.create(`demo-rev-${x}`, "reviewer", false, ["--role", "reviewer", "--pass-on", "2"]);
  }
  const { runPlan, planStatus } = await import("../ops/job/plan.ts");
  const { jobSubmit } = await import("../ops/table/job.ts");
  const { shapeOf } = await import("../ops/input.ts");
  const text = demoPlanText();
  p(`\n$ cat plan.yaml\n${text.trimEnd()}\n$ mam plan run plan.yaml`);
  const run = await runPlan(deps, text, "plan.yaml", ws, { dryRun: false, confineBrief: false, submitShape: shapeOf(jobSubmit as never) as never });
  p(`plan ${run.plan.plan_id}: ${run.plan.jobs.map((j) => `${j.name} ${j.job_id}`).join(", ")}`);
  const t0 = Date.now();
  let last = "";
  const ids = run.plan.jobs.map((j) => j.job_id);
  for (;;) {
    if (o.signal.aborted) return false;
    const st = planStatus(deps, run.plan.plan_id);
    const merged = new Set(mergeStatus(deps, true).entries.filter((e) => e.state === "merged").map((e) => e.job_id));
    const line = st.cards.map((c) => `${c.name}: ${merged.has(c.job_id) ? "merged" : c.column.replace("_", " ")}`).join(" · ");
    if (line !== last) p(`  +${Math.round((Date.now() - t0) / 1000)}s  ${line}`);
    last = line;
    if (ids.every((id) => merged.has(id))) break;
    if (st.failed > 0 || mergeStatus(deps, true).entries.some((e) => e.state === "dropped")) break;
    if (Date.now() - t0 > o.timeoutMs) {
      p(`the plan did not land within ${o.timeoutMs / 1000} s`);
      return false;
    }
    await Bun.sleep(250);
  }
  const merged = mergeStatus(deps, true).entries.filter((e) => e.state === "merged");
  p(`\n$ git log --oneline main\n${git(ws, ["log", "--oneline", "main"]).trimEnd()}`);
  p(`$ ls\n${git(ws, ["ls-tree", "--name-only", "main"]).trimEnd().split("\n").join("  ")}`);
  return merged.length === PARTS.length && PARTS.every((x) => git(ws, ["ls-tree", "--name-only", "main"]).split("\n").includes(`part-${x}.txt`));
}
