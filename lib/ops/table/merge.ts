// The merge queue's operations (docs/merge-queue.md): enqueue a job's branch, configure the target
// and the check, show the queue, run it in the foreground. The use cases are lib/ops/job/merge-run.ts;
// the daemon runs the queue by itself (lib/ops/react/merge-queue.ts). Not MCP tools and not
// dashboard actions yet: what lands on the user's branch is the user's to start.
import * as z from "zod/mini";
import { table } from "../../sys/io.ts";
import { visible } from "../../sys/sanitize.ts";
import { flag, jobId, optional, seconds, text, withDefault } from "../input.ts";
import type { Enqueued, MergeConfigView, MergeRun, MergeStatus } from "../job/merge-run.ts";
import type { MergeEntry } from "../job/merge-plan.ts";
import { type CommandGroup, defineOp } from "../op.ts";
import { int, str, strOrNull, warnings } from "../results.ts";

/** `mam merge …`: its help (the commands come from the entries below) */
const MERGE: CommandGroup = {
  name: "merge",
  description: "land finished worktree jobs on the target branch one at a time: rebase, check, fast-forward (docs/merge-queue.md)",
  examples: ['mam merge config --target main --check "npm test"', "mam merge enqueue 3f2a9c1d", "mam merge status", "mam merge run"],
  group: "jobs",
  listed: "each",
};

const entryOut = () =>
  z.looseObject({
    job_id: str(),
    session: str(),
    branch: str(),
    worktree: str(),
    target: str(),
    state: z.enum(["awaiting", "queued", "merging", "fixing", "merged", "dropped"]),
    order: int(),
    since: z.number(),
    fixes: int(),
    tries: int(),
  });

const configOut = () => z.looseObject({ target: strOrNull(), target_from: z.enum(["config", "checkout"]), check: strOrNull(), check_timeout_s: z.number() });

const when = (epoch: number) => new Date(epoch * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");

function configText(c: MergeConfigView): string {
  return [
    `target: ${c.target ?? "(none: the main checkout is on a detached HEAD)"}${c.target_from === "checkout" ? " (the branch the main checkout is on)" : ""}`,
    `check:  ${c.check === null ? "(none: a clean rebase lands)" : visible(c.check)} (time limit ${c.check_timeout_s} s)`,
  ].join("\n");
}

function statusText(s: MergeStatus): string {
  const head = configText(s.config);
  if (s.entries.length === 0) return `${head}\nthe merge queue is empty`;
  return `${head}\n${table(
    ["JOB", "BRANCH", "TARGET", "STATE", "POS", "SINCE", "NOTE"],
    s.entries.map((e) => [e.job_id, e.branch, e.target, e.state, e.position === null ? "-" : String(e.position), when(e.since), (e.blocked ?? e.note ?? "").replace(/\s+/g, " ").slice(0, 80)].map(visible)),
  )}`;
}

export const mergeEnqueue = defineOp({
  name: "merge.enqueue",
  summary: "queue a worktree job's branch for the target branch: now if the job completed, else once it completes (a loop job: once its review passes)",
  readOnly: false,
  input: () => ({ job_id: jobId("the job whose worktree branch to merge") }),
  async run(deps, i) {
    const [{ enqueueMerge }, { ensureDaemonNoticed }] = await Promise.all([import("../job/merge-run.ts"), import("../job/submit.ts")]);
    const r = await enqueueMerge(deps, i.job_id);
    await ensureDaemonNoticed(deps, r.warnings, "the queue moves only with mam merge run");
    return r;
  },
  text: (r: Enqueued) =>
    r.entry.state === "queued" ? `job ${r.entry.job_id}: ${r.entry.branch} queued for ${r.entry.target} (position ${r.position})` : `job ${r.entry.job_id}: ${r.entry.branch} goes in line for ${r.entry.target} once the job completes`,
  result: () => z.looseObject({ entry: entryOut(), position: z.nullable(int()), warnings: warnings() }),
  cli: { path: "merge enqueue", under: MERGE, positionals: ["job_id"], examples: ["mam merge enqueue 3f2a9c1d"] },
  mcp: false,
});

export const mergeConfig = defineOp({
  name: "merge.config",
  summary: "show or set the merge queue's target branch and check command (stored in .mam/merge/config.json)",
  readOnly: false,
  input: () => ({
    target: optional(text("the branch merges land on (default: the branch the main checkout is on)", { max: 200, oneLine: true })),
    check: optional(text('the check: a command run with sh -c in the rebased branch; a merge lands only when it exits 0 ("npm test")', { max: 4000, oneLine: true })),
    check_timeout_s: optional(seconds("the check's time limit in seconds (default 1800); past it, the check failed", 86400)),
    no_check: withDefault(flag("remove the check: a clean rebase lands"), false),
  }),
  async run(deps, i) {
    const { configureMerge } = await import("../job/merge-run.ts");
    return configureMerge(deps, i);
  },
  text: (c: MergeConfigView) => configText(c),
  result: () => configOut(),
  cli: {
    path: "merge config",
    under: MERGE,
    flags: { target: { valueHint: "BRANCH" }, check: { valueHint: "CMD" }, check_timeout_s: { flag: "check-timeout", valueHint: "S" } },
    examples: ["mam merge config", 'mam merge config --target main --check "npm test"', "mam merge config --no-check"],
  },
  mcp: false,
});

export const mergeStatusOp = defineOp({
  name: "merge.status",
  summary: "the merge queue: the target and check, the branches in line (in order), waiting on their job or a fix job, and the last ones merged or dropped",
  readOnly: true,
  input: () => ({ all: withDefault(flag("every entry ever merged or dropped, not only the last ten"), false) }),
  async run(deps, i) {
    const { mergeStatus } = await import("../job/merge-run.ts");
    return mergeStatus(deps, i.all);
  },
  text: (s: MergeStatus) => statusText(s),
  result: () => z.looseObject({ config: configOut(), entries: z.array(z.extend(entryOut(), { position: z.nullable(int()) })) }),
  cli: { path: "merge status", under: MERGE, examples: ["mam merge status", "mam merge status --json"] },
  mcp: false,
});

export const mergeRun = defineOp({
  name: "merge.run",
  summary: "run the merge queue now, in the foreground (the daemon does it by itself): each ready branch rebased, checked and fast-forwarded, one at a time per target",
  readOnly: false,
  input: () => ({}),
  async run(deps) {
    const { runMerges } = await import("../job/merge-run.ts");
    const lines: string[] = [];
    const r = await runMerges(deps, { log: (l) => lines.push(l) });
    return { ...r, log: lines };
  },
  text: (r: MergeRun & { log: string[] }) => (r.steps.length === 0 ? "nothing to merge" : r.steps.map((e: MergeEntry) => `job ${e.job_id} (${e.branch} → ${e.target}): ${e.state}: ${e.note ?? ""}`).join("\n")),
  result: () => z.looseObject({ steps: z.array(entryOut()), busy: z.array(str()), log: z.array(str()), warnings: warnings() }),
  cli: { path: "merge run", under: MERGE, examples: ["mam merge run"] },
  mcp: false,
});
