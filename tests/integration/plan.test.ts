// mam plan (issue 35 item 2; docs/plan.md), through the compiled binary with fake agents on the
// fake herdr and the workspace's daemon: a plan of four jobs runs to the end in the order its
// `after`s say; plan status follows it by name; a file with a mistake on line 7 says line 7 and
// submits nothing; a target that does not exist is named with its line, nothing submitted;
// --dry-run submits nothing; MCP plan_run takes the plan as text.
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createAgent, type E2E, ensureDaemon, journalEvents, monitorLog, jobRecords, newWorkspace, startE2E, type Ws } from "../helpers/jobs-e2e.ts";

let e: E2E;
beforeAll(async () => {
  e = await startE2E("mam-plan-");
});
afterAll(async () => {
  await e.cleanup();
});

const started: Ws[] = [];
afterEach(async () => {
  for (const w of started.splice(0)) await w.mam(["daemon", "stop"]);
});

const jobFiles = (w: Ws) => jobRecords(w.dir);
const at = (w: Ws, id: string, event: string) => Date.parse((journalEvents(w.dir, id).find((x) => x.event === event) as { timestamp?: string } | undefined)?.timestamp ?? "NaN");

function planText(w: Ws): string {
  return [
    "name: the parser",
    "jobs:",
    "  parser:",
    `    to: ${w.n("a")}`,
    "    prompt: Write the parser",
    "  tests:",
    `    to: ${w.n("b")}`,
    "    after: parser",
    "    prompt: Write its tests",
    "  docs:",
    "    to_role: docs",
    "    after: parser",
    "    brief_file: briefs/docs.md",
    "  review:",
    `    to: ${w.n("a")}`,
    "    after: [tests, docs]",
    "    prompt: Review it all",
    "",
  ].join("\n");
}

test("a plan of four jobs: submitted in one go, each after what it names; plan status follows it by name to the end", async () => {
  const w = newWorkspace(e);
  await ensureDaemon(w, "polling", started);
  await createAgent(e, w, w.n("a"), "worker");
  await createAgent(e, w, w.n("b"), "worker");
  await createAgent(e, w, w.n("c"), "docs");
  const dir = join(w.dir, "plans");
  mkdirSync(join(dir, "briefs"), { recursive: true });
  writeFileSync(join(dir, "briefs", "docs.md"), "Document the parser\n");
  writeFileSync(join(dir, "plan.yaml"), planText(w));
  const dry = await w.mam(["plan", "run", join(dir, "plan.yaml"), "--dry-run"]);
  expect(dry.code, dry.stderr).toBe(0);
  expect(dry.stdout).toContain("the plan is fine: 4 job(s) would be submitted");
  expect(jobFiles(w)).toBe(0);

  const r = await w.mam(["plan", "run", join(dir, "plan.yaml"), "--json"]);
  expect(r.code, r.stderr).toBe(0);
  const plan = JSON.parse(r.stdout).plan;
  expect(plan.name).toBe("the parser");
  expect(plan.jobs.map((j: { name: string }) => j.name)).toEqual(["parser", "tests", "docs", "review"]);
  const id = Object.fromEntries(plan.jobs.map((j: { name: string; job_id: string }) => [j.name, j.job_id])) as Record<string, string>;
  // the ids took the place of the names, and the brief is the plan folder's
  const review = JSON.parse((await w.mam(["job", "status", id.review!, "--json"])).stdout);
  expect(review.after).toEqual([id.tests, id.docs]);
  expect(JSON.parse((await w.mam(["job", "status", id.docs!, "--json"])).stdout).brief_file).toBe(join(dir, "briefs", "docs.md"));

  const all = await w.mam(["job", "wait", ...Object.values(id), "--timeout", "90"], {}, 100_000);
  expect(all.code, `${all.stdout}${all.stderr}\n${monitorLog(w.dir)}`).toBe(0);
  expect(at(w, id.tests!, "dispatched")).toBeGreaterThanOrEqual(at(w, id.parser!, "completed"));
  expect(at(w, id.review!, "dispatched")).toBeGreaterThanOrEqual(Math.max(at(w, id.tests!, "completed"), at(w, id.docs!, "completed")));
  const st = JSON.parse((await w.mam(["plan", "status", "--json"])).stdout);
  expect(st.plan.plan_id).toBe(plan.plan_id);
  expect(st.done).toBe(4);
  expect(st.cards.map((c: { name: string; column: string }) => [c.name, c.column])).toEqual([
    ["parser", "done"],
    ["tests", "done"],
    ["docs", "done"],
    ["review", "done"],
  ]);
  const txt = (await w.mam(["plan", "status", plan.plan_id])).stdout;
  expect(txt).toStartWith(`plan ${plan.plan_id} (the parser): 4 of 4 done\n`);
}, 180_000);

test("a mistake on line 7 says line 7 and submits nothing; so do targets that do not exist, each with its line", async () => {
  const w = newWorkspace(e);
  started.push(w);
  await createAgent(e, w, w.n("a"), "worker");
  const lines = planText(w).split("\n");
  lines[6] = "    colour: blue"; // line 7: after `to:` of tests
  writeFileSync(join(w.dir, "bad.yaml"), lines.join("\n"));
  const r = await w.mam(["plan", "run", "bad.yaml"]);
  expect(r.code).toBe(2);
  expect(r.stderr).toContain("bad.yaml:7: job tests: unknown field 'colour'");
  expect(r.stderr).toContain("nothing was submitted");
  // the targets: b and the role docs are not running here
  writeFileSync(join(w.dir, "plan.yaml"), planText(w));
  mkdirSync(join(w.dir, "briefs"), { recursive: true });
  writeFileSync(join(w.dir, "briefs", "docs.md"), "x\n");
  const t = await w.mam(["plan", "run", "plan.yaml"]);
  expect(t.code).toBe(2);
  expect(t.stderr).toContain(`plan.yaml:6: job tests: no running session named '${w.n("b")}'`);
  expect(t.stderr).toContain("plan.yaml:10: job docs: no running session has the role 'docs'");
  expect(jobFiles(w)).toBe(0);
  expect((await w.mam(["plan", "status"])).stderr).toContain("ERROR: no plan was run in");
}, 60_000);
