// A plan (docs/plan.md): a small graph of jobs in one YAML file, submitted in one go. Each job is
// a `job submit` (the same fields, checked by the same rules), named in the plan so that others
// can run after it (`after`: names of the plan, or ids of jobs submitted before). A file with a
// mistake gets every mistake with its line and submits nothing; the targets are checked before
// the first submit; a submit that fails in the middle (a session gone since) cancels what the
// plan had submitted. What was submitted is kept in .mam/plans/<id>.json for `mam plan status`.
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import type { Document, LineCounter, Node, Pair, YAMLMap } from "yaml";
import * as z from "zod/mini";
import type { Card } from "../../jobs/board.ts";
import { readCards } from "./board.ts";
import { atomicWriteFile } from "../../sys/atomic.ts";
import { EXIT, MamError, usageError } from "../../sys/errors.ts";
import { spellFields } from "../../sys/fields.ts";
import { ensureMamSubdir } from "../../sys/mam-dir.ts";
import { isValidJobId } from "../../sys/names.ts";
import type { Deps } from "../deps.ts";
import { type Issue, issueText } from "../input.ts";
import { allRows } from "../../registry/rows.ts";

/** the fields of a plan's job: job submit's, less what makes no sense in a plan (later, worktrees) */
export const PLAN_JOB_FIELDS = ["to", "to_role", "prompt", "brief_file", "after", "after_any_end", "priority", "type", "reviewer", "max_iterations", "from", "timeout_s", "idle_timeout_s", "expect", "budget_usd", "max_tokens", "failover", "merge"] as const;
const TOP_FIELDS = ["name", "jobs"];
/** a plan file is small: refused past this before it is parsed */
const MAX_BYTES = 256 << 10;
const MAX_JOBS = 200;
const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/i;

export interface PlanJob {
  name: string;
  line: number;
  /** the job submit input, `after` still as the plan writes it (names or ids) */
  input: Record<string, unknown> & { after?: string[] };
}

export interface Plan {
  name: string | null;
  jobs: PlanJob[];
}

/** a plan's mistakes, each "FILE:LINE: what" (exit 2, nothing submitted) */
function mistakes(file: string, list: { line: number; what: string }[]): MamError {
  const sorted = [...list].sort((a, b) => a.line - b.line);
  const lines = sorted.map((m) => `${file}:${m.line}: ${m.what}`);
  const head = lines.length === 1 ? lines[0]! : `${lines.length} mistakes in the plan: ${lines.join("; ")}`;
  return usageError(`${head}; nothing was submitted`, "see docs/plan.md (its JSON Schema: docs/plan.schema.json)");
}

/** how a plan names its fields in messages: as its keys */
const planSpelling = (f: string, v?: string) => (v === undefined ? f : `${f}: ${v}`);

/** parse and check a plan's text: its jobs in an order where each comes after what it runs after */
export function parsePlan(text: string, file: string, submitShape: Record<string, z.core.$ZodType>, checkJob: (o: never) => void): Plan {
  if (Buffer.byteLength(text) > MAX_BYTES) throw usageError(`${file} is larger than ${MAX_BYTES >> 10} KiB; a plan is a small file; nothing was submitted`);
  const Y = require("yaml") as typeof import("yaml");
  const lc: LineCounter = new Y.LineCounter();
  const doc: Document = Y.parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  const lineOf = (n: { range?: [number, number, number] | null } | null | undefined) => (n?.range ? lc.linePos(n.range[0]).line : 1);
  const errs: { line: number; what: string }[] = [];
  if (doc.errors.length) throw mistakes(file, doc.errors.map((e) => ({ line: lc.linePos(e.pos[0]).line, what: e.message.split("\n")[0]!.replace(/\.$/, "") })));
  const top = doc.contents as Node | null;
  if (!Y.isMap(top)) throw mistakes(file, [{ line: 1, what: "a plan is a map with `jobs:` (and an optional `name:`)" }]);
  let name: string | null = null;
  let jobsNode: YAMLMap | undefined;
  for (const p of (top as YAMLMap).items as Pair<Node, Node>[]) {
    const k = Y.isScalar(p.key) ? String(p.key.value) : "";
    if (k === "name") {
      if (Y.isScalar(p.value) && typeof p.value.value === "string" && p.value.value.trim()) name = p.value.value.trim().slice(0, 200);
      else errs.push({ line: lineOf(p.value ?? p.key), what: "name must be a text" });
    } else if (k === "jobs") {
      if (Y.isMap(p.value)) jobsNode = p.value as YAMLMap;
      else errs.push({ line: lineOf(p.value ?? p.key), what: "jobs must be a map: each job by its name" });
    } else errs.push({ line: lineOf(p.key), what: `unknown field '${k}' (a plan has ${TOP_FIELDS.join(", ")})` });
  }
  if (!jobsNode && errs.length === 0) errs.push({ line: 1, what: "no jobs: a plan has `jobs:`, each job by its name" });
  const jobs: PlanJob[] = [];
  /** every job's name and what it runs after, its mistakes or not: a name is checked once */
  const declared: { name: string; line: number; after: string[] }[] = [];
  const allowed = new Set<string>(PLAN_JOB_FIELDS);
  const schema = z.strictObject(Object.fromEntries(PLAN_JOB_FIELDS.filter((f) => f !== "after").map((f) => [f, submitShape[f]!])));
  for (const p of (jobsNode?.items ?? []) as Pair<Node, Node>[]) {
    const jname = Y.isScalar(p.key) ? String(p.key.value) : "";
    const at = lineOf(p.key);
    if (!NAME.test(jname)) errs.push({ line: at, what: `job name '${jname.slice(0, 70)}' must be letters, digits, - and _ (at most 64)` });
    if (!Y.isMap(p.value)) {
      errs.push({ line: lineOf(p.value ?? p.key), what: `job ${jname}: a job is a map of job submit's fields (to, prompt, after, …)` });
      continue;
    }
    const fieldLine = new Map<string, number>();
    const raw: Record<string, unknown> = {};
    for (const fp of (p.value as YAMLMap).items as Pair<Node, Node>[]) {
      const f = Y.isScalar(fp.key) ? String(fp.key.value) : "";
      fieldLine.set(f, lineOf(fp.value ?? fp.key));
      if (!allowed.has(f)) {
        errs.push({ line: lineOf(fp.key), what: `job ${jname}: unknown field '${f.slice(0, 40)}' (a plan's job has ${PLAN_JOB_FIELDS.join(", ")})` });
        continue;
      }
      raw[f] = fp.value === null ? null : (fp.value as Node).toJSON();
    }
    // after: one name or id, or a list of them
    let after: string[] | undefined;
    if (raw.after !== undefined) {
      const a = raw.after;
      after = typeof a === "string" ? [a] : Array.isArray(a) && a.every((x) => typeof x === "string") ? (a as string[]) : undefined;
      if (!after || after.length === 0) errs.push({ line: fieldLine.get("after")!, what: `job ${jname}: after must be a job's name (or id), or a list of them` });
      delete raw.after;
    }
    declared.push({ name: jname, line: fieldLine.get("after") ?? at, after: after ?? [] });
    // expect: one path or a list
    if (typeof raw.expect === "string") raw.expect = [raw.expect];
    const r = z.safeParse(schema, raw, { reportInput: true });
    if (!r.success) {
      for (const i of r.error.issues as unknown as Issue[]) errs.push({ line: i.path.length ? (fieldLine.get(String(i.path[0])) ?? at) : at, what: `job ${jname}: ${spellFields(issueText(i), planSpelling)}` });
      continue;
    }
    try {
      checkJob(r.data as never);
    } catch (e) {
      errs.push({ line: at, what: `job ${jname}: ${spellFields((e as Error).message, planSpelling)}` });
      continue;
    }
    jobs.push({ name: jname, line: at, input: { ...(r.data as Record<string, unknown>), ...(after ? { after } : {}) } });
  }
  if (jobs.length > MAX_JOBS) errs.push({ line: 1, what: `${jobs.length} jobs; a plan has at most ${MAX_JOBS}` });
  // what each runs after: a job of the plan, or a job submitted before (an id)
  const names = new Set(declared.map((j) => j.name));
  for (const j of declared) {
    for (const a of j.after) {
      if (a === j.name) errs.push({ line: j.line, what: `job ${j.name} runs after itself` });
      else if (!names.has(a) && !isValidJobId(a)) errs.push({ line: j.line, what: `job ${j.name} runs after '${a.slice(0, 70)}', which is neither a job of this plan nor a job id` });
    }
  }
  if (errs.length) throw mistakes(file, errs);
  const ordered = orderOf(jobs, names);
  if ("cycle" in ordered) throw mistakes(file, [{ line: ordered.cycle[0]!.line, what: `a cycle: ${[...ordered.cycle.map((j) => j.name), ordered.cycle[0]!.name].join(" → ")} (each runs after the next)` }]);
  return { name, jobs: ordered.jobs };
}

/** the jobs in an order where each comes after those of the plan it runs after (the file's order otherwise); or a cycle */
function orderOf(jobs: PlanJob[], names: Set<string>): { jobs: PlanJob[] } | { cycle: PlanJob[] } {
  const byName = new Map(jobs.map((j) => [j.name, j]));
  const state = new Map<string, "open" | "done">();
  const out: PlanJob[] = [];
  const stack: PlanJob[] = [];
  const visit = (j: PlanJob): PlanJob[] | undefined => {
    const s = state.get(j.name);
    if (s === "done") return undefined;
    if (s === "open") return stack.slice(stack.indexOf(j));
    state.set(j.name, "open");
    stack.push(j);
    for (const a of j.input.after ?? []) {
      if (!names.has(a)) continue;
      const c = visit(byName.get(a)!);
      if (c) return c;
    }
    stack.pop();
    state.set(j.name, "done");
    out.push(j);
    return undefined;
  };
  for (const j of jobs) {
    const c = visit(j);
    if (c) return { cycle: c };
  }
  return { jobs: out };
}

// ---- running it ------------------------------------------------------------------------------

export interface PlanRecord {
  plan_id: string;
  name: string | null;
  file: string | null;
  created_at: string;
  /** each job by its name, with what it runs after as the plan wrote it (names of the plan, or ids) */
  jobs: { name: string; job_id: string; after: string[] }[];
}

const plansDir = (ws: string) => join(ws, ".mam", "plans");

/** every target of the plan exists now (else each missing one, with its line; nothing submitted) */
async function preflight(deps: Deps, file: string, plan: Plan): Promise<void> {
  const errs: { line: number; what: string }[] = [];
  const roles = new Set(allRows(deps.registry.read()).filter((r) => r.status === "running" && typeof r.role === "string").map((r) => r.role as string));
  for (const j of plan.jobs) {
    const i = j.input as { to?: string; to_role?: string; reviewer?: string };
    for (const who of [i.to, i.reviewer]) {
      if (who === undefined) continue;
      const s = await deps.runtime.findSession(who);
      if (!s) errs.push({ line: j.line, what: `job ${j.name}: no running session named '${who}' (see: mam status)` });
    }
    if ((j.input as { merge?: boolean }).merge) {
      const s = i.to !== undefined && !i.to.includes("@") ? await deps.runtime.findSession(i.to) : undefined;
      if (!s?.worktree) errs.push({ line: j.line, what: `job ${j.name}: merge needs a session of this host that works in a git worktree (to: NAME, made with --worktree)` });
    }
    if (i.to_role !== undefined && !roles.has(i.to_role)) errs.push({ line: j.line, what: `job ${j.name}: no running session has the role '${i.to_role}' (see: mam status)` });
    for (const a of j.input.after ?? []) if (isValidJobId(a) && !plan.jobs.some((x) => x.name === a) && !deps.jobs.read(a)) errs.push({ line: j.line, what: `job ${j.name}: no job ${a} in this workspace` });
  }
  if (errs.length) throw mistakes(file, errs);
}

export interface PlanRun {
  plan: PlanRecord;
  dry_run: boolean;
  warnings: import("../../sys/notice.ts").Notice[];
}

/**
 * submit a plan: `text` as read from `file` (for messages; brief files relative to `base`). Each
 * job in order, its `after` names turned into the ids just submitted. `submitShape`: job submit's
 * input (lib/ops/table/job.ts), which checks each job's fields.
 */
export async function runPlan(deps: Deps, text: string, file: string, base: string, o: { dryRun: boolean; confineBrief: boolean; submitShape: Record<string, z.core.$ZodType> }): Promise<PlanRun> {
  const [{ checkJob }, { submitJob }] = await Promise.all([import("./rules.ts"), import("./submit.ts")]);
  const plan = parsePlan(text, file, o.submitShape, checkJob as never);
  await preflight(deps, file, plan);
  const merging = plan.jobs.some((j) => (j.input as { merge?: boolean }).merge) ? await import("./merge-run.ts") : undefined;
  if (merging) merging.targetOf(deps); // a branch to merge into, before anything is submitted
  const rec: PlanRecord = { plan_id: randomBytes(4).toString("hex"), name: plan.name, file: isAbsolute(file) ? file : null, created_at: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"), jobs: [] };
  if (o.dryRun) return { plan: { ...rec, jobs: plan.jobs.map((j) => ({ name: j.name, job_id: "-", after: j.input.after ?? [] })) }, dry_run: true, warnings: [] };
  const ids = new Map<string, string>();
  const warnings: PlanRun["warnings"] = [];
  for (const j of plan.jobs) {
    const { merge, ...input } = { ...j.input } as Record<string, unknown> & { after?: string[]; brief_file?: string; merge?: boolean };
    if (input.after) input.after = input.after.map((a) => ids.get(a) ?? a);
    if (input.brief_file !== undefined && !isAbsolute(input.brief_file)) input.brief_file = resolve(base, input.brief_file);
    try {
      const s = await submitJob(deps, input as never, { confineBrief: o.confineBrief });
      ids.set(j.name, s.record.job_id);
      rec.jobs.push({ name: j.name, job_id: s.record.job_id, after: j.input.after ?? [] });
      warnings.push(...s.warnings.filter((w) => w.level !== "info"));
      // its branch goes in line for the target once it completes (docs/merge-queue.md)
      if (merge && merging) warnings.push(...(await merging.enqueueMerge(deps, s.record.job_id)).warnings.filter((w) => w.level !== "info"));
    } catch (e) {
      const undone = await cancelSubmitted(deps, rec);
      const m = e as MamError;
      const note = undone.length ? `; the plan's ${undone.length} job(s) submitted before it were cancelled (${undone.join(", ")})` : "";
      throw new MamError(`${file}:${j.line}: job ${j.name}: ${m.message}${note}`, m instanceof MamError ? m.exitCode : EXIT.FAIL, m instanceof MamError ? m.hint : undefined);
    }
  }
  ensureMamSubdir(deps.ws, "plans");
  atomicWriteFile(join(plansDir(deps.ws), `${rec.plan_id}.json`), `${JSON.stringify(rec, null, 2)}\n`, { mode: 0o600, regularOnly: true });
  return { plan: rec, dry_run: false, warnings };
}

async function cancelSubmitted(deps: Deps, rec: PlanRecord): Promise<string[]> {
  const { cancelJob } = await import("./cancel.ts");
  const out: string[] = [];
  for (const j of rec.jobs) {
    try {
      if ((await cancelJob(deps, j.job_id)).cancelled) out.push(j.job_id);
    } catch {}
  }
  return out;
}

// ---- its status ------------------------------------------------------------------------------

export interface PlanStatus {
  plan: PlanRecord;
  cards: (Card & { name: string })[];
  /** how many completed, of how many */
  done: number;
  failed: number;
}

/** the plans submitted here, newest first */
export function listPlans(ws: string): PlanRecord[] {
  let names: string[];
  try {
    names = readdirSync(plansDir(ws)).filter((n) => /^[0-9a-f]{8}\.json$/.test(n));
  } catch {
    return [];
  }
  const out: PlanRecord[] = [];
  for (const n of names) {
    try {
      out.push(JSON.parse(readFileSync(join(plansDir(ws), n), "utf8")) as PlanRecord);
    } catch {}
  }
  return out.sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : a.plan_id < b.plan_id ? 1 : -1));
}

/** a plan's jobs where they stand (its id, else the newest plan) */
export function planStatus(deps: Deps, id: string | undefined): PlanStatus {
  const plans = listPlans(deps.ws);
  const plan = id === undefined ? plans[0] : plans.find((p) => p.plan_id === id);
  if (!plan) throw new MamError(id === undefined ? `no plan was run in ${deps.ws}` : `no plan ${id} in ${plansDir(deps.ws)}`, EXIT.NOT_FOUND, "run one: mam plan run plan.yaml");
  const nameOf = new Map(plan.jobs.map((j) => [j.job_id, j.name]));
  const cards = readCards(deps, plan.jobs.map((j) => j.job_id)).map((c) => ({ ...c, name: nameOf.get(c.job_id)! }));
  return { plan, cards, done: cards.filter((c) => c.column === "done").length, failed: cards.filter((c) => c.column === "failed").length };
}

/** the file's folder: where its brief files are */
export const planBase = (file: string) => dirname(resolve(file));
