// Plan files (docs/plan.md): parsed and checked as a whole, each mistake with its line; the order
// of submits; the JSON Schema names exactly the fields the parser takes; the doc's example parses.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parsePlan, PLAN_JOB_FIELDS } from "../../lib/ops/job/plan.ts";
import { shapeOf } from "../../lib/ops/input.ts";
import { jobSubmit } from "../../lib/ops/table/job.ts";
import { checkJob } from "../../lib/ops/job/rules.ts";
import { MamError } from "../../lib/sys/errors.ts";

const root = join(import.meta.dir, "..", "..");
const parse = (text: string) => parsePlan(text, "plan.yaml", shapeOf(jobSubmit as never) as never, checkJob as never);
const fails = (text: string): MamError => {
  try {
    parse(text);
  } catch (e) {
    return e as MamError;
  }
  throw new Error("parsed");
};

test("the doc's example parses: four jobs, each after what it runs after, the file's order otherwise", () => {
  const doc = readFileSync(join(root, "docs", "plan.md"), "utf8");
  const yaml = /```yaml\n([\s\S]*?)```/.exec(doc)![1]!;
  const p = parse(yaml);
  expect(p.name).toBe("the parser");
  expect(p.jobs.map((j) => j.name)).toEqual(["parser", "tests", "docs", "review"]);
  expect(p.jobs[3]!.input).toMatchObject({ to: "w1", type: "loop", reviewer: "rev", after: ["tests", "docs"], budget_usd: 2 });
  expect(p.jobs[0]!.input.expect).toEqual(["lib/parse.ts"]);
  expect(p.jobs[1]!.input.after).toEqual(["parser"]);
});

test("a job listed before what it runs after is submitted after it", () => {
  const p = parse("jobs:\n  b:\n    to: w\n    after: a\n    prompt: x\n  a:\n    to: w\n    prompt: y\n");
  expect(p.jobs.map((j) => j.name)).toEqual(["a", "b"]);
});

test("a mistake on line 7 says line 7, exit 2, nothing submitted", () => {
  const e = fails(["name: n", "jobs:", "  a:", "    to: w", "    prompt: x", "  b:", "    priority: urgent", "    to: w", "    prompt: y"].join("\n"));
  expect(e.exitCode).toBe(2);
  expect(e.message).toBe("plan.yaml:7: job b: priority must be one of high, normal, low (got 'urgent'); nothing was submitted");
});

test("every mistake at once, in line order", () => {
  const e = fails(["jobs:", "  a:", "    to: w", "    to_role: r", "    prompt: x", "  b:", "    to: w", "    brief_file: 12", "    after: [a, nosuch]", "    colour: blue", "  c d:", "    to: w", "    prompt: z"].join("\n"));
  expect(e.message).toStartWith("5 mistakes in the plan: plan.yaml:2: job a: give exactly one of to and to_role; plan.yaml:8: job b: brief_file must be a string (got 12); plan.yaml:9: job b runs after 'nosuch', which is neither a job of this plan nor a job id; plan.yaml:10: job b: unknown field 'colour'");
  expect(e.message).toContain("plan.yaml:11: job name 'c d' must be letters, digits, - and _");
  expect(e.message).toEndWith("; nothing was submitted");
});

test("a cycle, a job after itself, a duplicate name, YAML errors, not a plan", () => {
  expect(fails("jobs:\n  a:\n    to: w\n    after: b\n    prompt: x\n  b:\n    to: w\n    after: a\n    prompt: y\n").message).toBe("plan.yaml:2: a cycle: a → b → a (each runs after the next); nothing was submitted");
  expect(fails("jobs:\n  a:\n    to: w\n    after: a\n    prompt: x\n").message).toContain("plan.yaml:4: job a runs after itself");
  expect(fails("jobs:\n  a:\n    to: w\n    prompt: x\n  a:\n    to: w\n    prompt: y\n").message).toMatch(/^plan\.yaml:5: Map keys must be unique/);
  expect(fails("jobs:\n  a: [unclosed\n").message).toMatch(/^plan\.yaml:\d+: /);
  expect(fails("- a\n- b\n").message).toBe("plan.yaml:1: a plan is a map with `jobs:` (and an optional `name:`); nothing was submitted");
  expect(fails("name: x\n").message).toBe("plan.yaml:1: no jobs: a plan has `jobs:`, each job by its name; nothing was submitted");
  expect(fails("jobs: 3\nwho: me\n").message).toBe("2 mistakes in the plan: plan.yaml:1: jobs must be a map: each job by its name; plan.yaml:2: unknown field 'who' (a plan has name, jobs); nothing was submitted");
  // after a job id of the workspace is fine here (the run checks it exists)
  expect(parse("jobs:\n  a:\n    to: w\n    after: 1a2b3c4d\n    prompt: x\n").jobs[0]!.input.after).toEqual(["1a2b3c4d"]);
});

test("the JSON Schema names exactly the fields the parser takes", () => {
  const schema = JSON.parse(readFileSync(join(root, "docs", "plan.schema.json"), "utf8"));
  expect(Object.keys(schema.properties).sort()).toEqual(["jobs", "name"]);
  expect(Object.keys(schema.$defs.job.properties).sort()).toEqual([...PLAN_JOB_FIELDS].sort());
  // each is a field of job submit (one definition of a job's input)
  const submit = Object.keys(shapeOf(jobSubmit as never));
  for (const f of PLAN_JOB_FIELDS) expect(submit).toContain(f);
});
