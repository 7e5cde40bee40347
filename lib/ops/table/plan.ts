// The plan operations (docs/plan.md): submit a small graph of jobs from one YAML file, and show
// where its jobs stand. The use cases are lib/ops/job/plan.ts; each job is a job submit.
import * as z from "zod/mini";
import { BOARD_COLUMNS } from "../../jobs/statuses.ts";
import { usageError } from "../../sys/errors.ts";
import { field } from "../../sys/fields.ts";
import { table } from "../../sys/io.ts";
import { visible } from "../../sys/sanitize.ts";
import { flag, optional, shapeOf, text, withDefault } from "../input.ts";
import type { PlanRecord, PlanRun, PlanStatus } from "../job/plan.ts";
import { type CommandGroup, defineOp } from "../op.ts";
import { str, strOrNull, warnings } from "../results.ts";

/** `mam plan …`: its help (the commands come from the entries below) */
const PLAN: CommandGroup = {
  name: "plan",
  description: "submit a small graph of jobs from one YAML file (names, targets, prompts, after, loops, budgets), and follow it (docs/plan.md)",
  examples: ["mam plan run plan.yaml", "mam plan run plan.yaml --dry-run", "mam plan status"],
  group: "jobs",
  listed: "each",
};

const planOut = () => z.looseObject({ plan_id: str(), name: strOrNull(), file: strOrNull(), created_at: str(), jobs: z.array(z.looseObject({ name: str(), job_id: str(), after: z.array(str()) })) });

function jobsText(p: PlanRecord): string {
  return table(
    ["NAME", "JOB", "AFTER"],
    p.jobs.map((j) => [j.name, j.job_id, (j.after ?? []).join(", ") || "-"].map(visible)),
  );
}

export const planRun = defineOp({
  name: "plan.run",
  summary: "submit the jobs of a plan file in one go, each after the jobs it names; a file with mistakes gets each with its line and submits nothing",
  readOnly: false,
  input: () => ({
    file: optional(text("the plan: a YAML file (docs/plan.md); through MCP, a file inside the workspace", { max: 4096, oneLine: true })),
    text: optional(text("the plan itself, as YAML text (instead of {{file}})", { max: 256 << 10 })),
    dry_run: withDefault(flag("check the plan and its targets, and show what would be submitted; submit nothing"), false),
  }),
  check(i) {
    if ((i.file === undefined) === (i.text === undefined)) throw usageError(`give exactly one of ${field("file")} and ${field("text")}`, "mam plan run plan.yaml");
  },
  async run(deps, i, ctx) {
    const [{ runPlan, planBase }, { jobSubmit }] = await Promise.all([import("../job/plan.ts"), import("./job.ts")]);
    const submitShape = shapeOf(jobSubmit as never) as never;
    const { resolve, relative, isAbsolute } = await import("node:path");
    const { readFileSync, statSync } = await import("node:fs");
    if (i.text !== undefined) return runPlan(deps, i.text, "plan", deps.ws, { dryRun: i.dry_run, confineBrief: ctx.surface !== "cli", submitShape });
    const file = resolve(ctx.surface === "cli" ? process.cwd() : deps.ws, i.file!);
    if (ctx.surface !== "cli") {
      const rel = relative(deps.ws, file);
      if (rel.startsWith("..") || isAbsolute(rel)) throw usageError(`plan file '${i.file}' is not inside the workspace (${deps.ws}); nothing was submitted`, `give the plan as ${field("text")}, or a file inside the workspace`);
    }
    let body: string;
    try {
      if (!statSync(file).isFile()) throw new Error("not a file");
      body = readFileSync(file, "utf8");
    } catch (e) {
      throw usageError(`cannot read plan file '${i.file}' (${(e as Error).message}); nothing was submitted`);
    }
    return runPlan(deps, body, i.file!, planBase(file), { dryRun: i.dry_run, confineBrief: ctx.surface !== "cli", submitShape });
  },
  text: (r: PlanRun) => {
    const head = r.dry_run ? `the plan is fine: ${r.plan.jobs.length} job(s) would be submitted, in this order (nothing was submitted)` : `plan ${r.plan.plan_id}${r.plan.name ? ` (${r.plan.name})` : ""}: ${r.plan.jobs.length} job(s) submitted; follow it with mam plan status ${r.plan.plan_id}`;
    return `${head}\n${jobsText(r.plan)}`;
  },
  result: () => z.looseObject({ plan: planOut(), dry_run: z.boolean(), warnings: warnings() }),
  cli: {
    path: "plan run",
    under: PLAN,
    positionals: ["file"],
    flags: { file: { valueHint: "FILE" } },
    examples: ["mam plan run plan.yaml", "mam plan run plan.yaml --dry-run", "mam plan run plan.yaml --json"],
  },
  mcp: {
    aliases: ["run_plan"],
    description: "Submit a plan: a small graph of jobs (each a job_submit's fields, named, with `after` naming other jobs of the plan) as YAML text or a file in the workspace. A plan with mistakes gets each with its line and submits nothing. Returns the plan id and each job's id.",
  },
});

export const planStatusOp = defineOp({
  name: "plan.status",
  summary: "where the jobs of a plan stand (the newest plan when no id is given): each by its name, on the board's columns",
  readOnly: true,
  input: () => ({ plan_id: optional(text("the plan's id (mam plan run printed it); default: the newest plan", { max: 8, oneLine: true })) }),
  async run(deps, i) {
    const { planStatus } = await import("../job/plan.ts");
    return planStatus(deps, i.plan_id);
  },
  text: (s: PlanStatus) =>
    `plan ${s.plan.plan_id}${s.plan.name ? ` (${s.plan.name})` : ""}: ${s.done} of ${s.plan.jobs.length} done${s.failed ? `, ${s.failed} failed` : ""}\n${table(
      ["NAME", "JOB", "WHERE", "WHO", "SINCE", "NOTE"],
      s.cards.map((c) => [c.name, c.job_id, c.column.replace("_", " "), c.who, c.since, c.note.replace(/\s+/g, " ").slice(0, 80)].map(visible)),
    )}`,
  result: () => z.looseObject({ plan: planOut(), cards: z.array(z.looseObject({ name: str(), job_id: str(), column: z.enum(BOARD_COLUMNS), who: str(), since: str(), note: str() })), done: z.number(), failed: z.number() }),
  cli: { path: "plan status", under: PLAN, positionals: ["plan_id"], examples: ["mam plan status", "mam plan status 3f2a9c1d --json"] },
  mcp: { aliases: ["plan_status"], description: "Where the jobs of a plan stand (default: the newest plan): each by its name, with its column (waiting, queued, working, in_review, merging, done, failed), who has it and since when." },
});
