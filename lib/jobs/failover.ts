// Failover (docs/unattended.md#failover): a job whose agent reached a usage limit goes to a free
// agent the submitter allowed (`job submit --failover role|KIND|NAME[,…]`), with what the first
// agent reported so far. The pure decisions: the targets a flag names, which free agent takes the
// job, whether `failover_waiting` was said already, and the text the new agent gets before the
// job's header. Pure: no I/O (lib/ops/job/failover.ts does the moving).
import { EXIT, MamError } from "../sys/errors.ts";
import { field } from "../sys/fields.ts";
import type { JobEvent } from "./event.ts";

/** a target that stands for any free agent (`create --on-limit failover` falls back to it) */
export const ANY_AGENT = "*";

const TARGET_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * the targets of `--failover role|KIND|NAME[,…]` (or MAM_FAILOVER), in order, without repeats;
 * `none` (or nothing): no failover. Exit 2 on a word that can be no role, kind or name.
 */
export function parseFailover(raw: string): string[] {
  const words = raw
    .split(",")
    .map((w) => w.trim())
    .filter((w) => w !== "");
  if (words.length === 1 && words[0] === "none") return [];
  for (const w of words) {
    if (!TARGET_RE.test(w)) throw new MamError(`${field("failover")} '${w.slice(0, 64)}' is not a role, agent kind or session name`, EXIT.USAGE, `give roles, kinds or names separated by commas (${field("failover", "worker,codex")}), or none`);
  }
  return [...new Set(words)];
}

/** a free agent that could take the job */
export interface Candidate {
  name: string;
  role: string | null;
  kind: string | null;
}

const matches = (c: Candidate, t: string) => t === ANY_AGENT || c.name === t || c.role === t || c.kind === t;

/**
 * pure: the free agent the job goes to: the first target (in the order given) that a free agent
 * matches by name, role or kind, the agent first by name among them; never the limited agent
 * itself, and an agent that held the job before only when no other is left; undefined: none
 */
export function pickFailover(targets: readonly string[], from: string, free: readonly Candidate[], heldBefore: ReadonlySet<string>): string | undefined {
  const pool = free.filter((c) => c.name !== from).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  let fallback: string | undefined;
  for (const t of targets) {
    for (const c of pool) {
      if (!matches(c, t)) continue;
      if (!heldBefore.has(c.name)) return c.name;
      fallback ??= c.name;
    }
  }
  return fallback;
}

/** the agents a job was taken from before (its `failover` events' data.from) */
export function heldBefore(events: readonly Pick<JobEvent, "event" | "data">[]): Set<string> {
  const out = new Set<string>();
  for (const e of events) if (e.event === "failover" && typeof e.data?.from === "string") out.add(e.data.from);
  return out;
}

/** pure: was `failover_waiting` journalled already for this agent's limit (since the job last moved)? */
export function waitingSaid(events: readonly Pick<JobEvent, "event" | "data">[], from: string): boolean {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.event === "failover") return false;
    if (e.event === "failover_waiting" && e.data?.from === from) return true;
  }
  return false;
}

const REPORTED_MAX = 10;
const DETAIL_MAX = 400;

/** what the agents reported on the job so far (their `started` and `progress` details), the last few, oldest first */
export function reportedSoFar(events: readonly Pick<JobEvent, "event" | "source" | "detail">[]): { source: string; event: string; detail: string }[] {
  return events
    .filter((e) => (e.event === "started" || e.event === "progress") && e.source !== "mam" && !e.source.startsWith("mam@") && e.detail.trim() !== "")
    .slice(-REPORTED_MAX)
    .map((e) => ({ source: e.source, event: e.event, detail: e.detail.length > DETAIL_MAX ? `${e.detail.slice(0, DETAIL_MAX)}…` : e.detail }));
}

/** the lines the new agent reads before the job's header: why the job comes to it, what was done */
export function failoverPreface(jobId: string, from: string, to: string, reason: string, reported: readonly { source: string; event: string; detail: string }[]): string {
  const lines = [`[mam] Job ${jobId} comes to you (${to}) from ${from}, which reached a usage limit before finishing it (${reason}).`];
  if (reported.length) {
    lines.push(`What was reported on it so far:`);
    for (const r of reported) lines.push(`  - ${r.source} (${r.event}): ${r.detail}`);
  } else lines.push(`${from} reported no progress on it.`);
  lines.push(`Continue where it stopped: check what is already done before you redo anything.`);
  return lines.join("\n");
}
