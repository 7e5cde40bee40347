// Human-readable renderings of the session use cases' results (create, stop, resume, prune): the
// one text each operation has, on every front door. Roles, names and paths are shown with their
// control characters escaped (visible, lib/sys/sanitize.ts).
import type { ResumedLimited } from "./limit-resume.ts";
import { questionLine } from "../../agents/screen/question.ts";
import type { ResumedAll } from "./resume-all.ts";
import { visible } from "../../sys/sanitize.ts";
import { shq } from "../../sys/shell.ts";
import type { Answered } from "./approve.ts";
import type { CreateOutcome } from "./create.ts";
import type { Pruned } from "./prune.ts";
import type { Resumed } from "./resume.ts";
import type { Stopped } from "./stop.ts";
import type { StoppedAll } from "./stop-all.ts";

export function createdText(c: CreateOutcome): string {
  const lines: string[] = [];
  if (c.adopted) lines.push(`NOTE: the monitor registered ${c.name} while it was being created`);
  if (c.job_id) lines.push(`job ${c.job_id} submitted to ${c.name}`);
  // never a bare "watchdog PID: " line; the seed contract keeps "watchdog PID:" in the output
  // even when MAM_NO_SUBSCRIBER_DAEMON=1 starts none, so that case names itself
  lines.push(`watchdog PID: ${c.daemon_pid ?? "none (MAM_NO_SUBSCRIBER_DAEMON=1)"}`);
  lines.push(`created ${c.name} (${c.agent}, role ${c.role}) in pane ${c.pane} on ${c.backend} server ${c.server}`);
  if (c.worktree) lines.push(`worktree ${c.worktree.path} on branch ${c.worktree.branch} (from ${c.worktree.base} ${c.worktree.base_commit.slice(0, 12)})`);
  return lines.map(visible).join("\n");
}

export function stoppedText(r: Stopped): string {
  return visible(stopped(r));
}

function stopped(r: Stopped): string {
  const removed = r.worktree_removed ? `; removed worktree ${r.worktree_removed}` : "";
  if (r.already && r.status === "archived" && r.pane) {
    return `${r.name} is already archived; its pane ${r.pane} still runs (close it: mam stop ${r.name} --hard, or mam stop ${r.name} to let the agent exit first)`;
  }
  if (r.already) return `${r.name} is already ${r.status}${removed}`;
  return `${r.name} ${r.status}${r.session_id ? ` (conversation ${r.session_id})` : ""}${r.purged.length ? `; purged ${r.purged.length} file(s)` : ""}${removed}`;
}

/** what stop --all did: each session as stop says it, who was left running and why */
export function stoppedAllText(r: StoppedAll): string {
  if (r.stopped.length === 0 && r.left.length === 0) return visible(`no running sessions to stop${r.role !== null ? ` (role ${r.role})` : ""}`);
  const lines = r.stopped.map(stoppedText);
  for (const l of r.left) lines.push(visible(`left ${l.name} running: ${l.why}`));
  return lines.join("\n");
}

export function resumedText(r: Resumed): string {
  if (r.already) return visible(`${r.name} is already running (pane ${r.pane})`);
  return visible(`resumed ${r.name} in pane ${r.pane}${r.session_id ? ` (${r.from === "fresh" ? "fresh conversation" : "conversation"} ${r.session_id})` : ""}`);
}

export function prunedText(p: Pruned): string {
  if (p.removed.length === 0) return "nothing to prune";
  const list = p.removed.map((r) => `${r.name} (${r.status})`).join(", ");
  return visible(`${p.dry_run ? "would remove" : "removed"} ${p.removed.length} row${p.removed.length === 1 ? "" : "s"}: ${list}`);
}

/** "approved wrk's dialog (Bash command: touch x — Do you want to proceed?): pressed 1 (Yes); journalled on job 3f9a01bc (#4)" */
export function answeredText(a: Answered): string {
  const where = a.job_id ? `; journalled on job ${a.job_id}${a.seq !== null ? ` (#${a.seq})` : ""}` : "";
  const told = a.told ? `; told ${a.session} that the answer is no` : "";
  return visible(`${a.answer} ${a.session}'s dialog (${questionLine(a.question)}): pressed ${a.key} (${a.choice.label})${where}${told}`);
}

/** what resume --limited did: whom mam typed continue into, and whom not and why */
export function continuedText(r: ResumedLimited): string {
  if (r.continued.length === 0 && r.left.length === 0) return "no agent is at a usage limit";
  const lines = r.continued.map((x) => visible(`typed continue into ${x.name}${x.job_id ? ` (job ${x.job_id})` : ""}`));
  for (const l of r.left) lines.push(visible(`nothing typed into ${l.name}: ${l.why}`));
  return lines.join("\n");
}

/** what resume --all did: who came back, who stayed stopped and why */
export function resumedAllText(r: ResumedAll): string {
  if (r.resumed.length === 0 && r.left.length === 0) return "no stopped sessions to resume";
  const lines = r.resumed.map((x) => visible(`resumed ${x.name} in ${x.pane} (${x.from})`));
  for (const l of r.left) lines.push(visible(`left ${l.name} stopped: ${l.why}`));
  lines.push(`${r.running_after} running (${r.running_before} before)`);
  // resume --all is the command line's alone (MCP resumes one session): the command to run next
  if (r.fresh_needed.length) lines.push(visible(`${r.fresh_needed.join(", ")} ${r.fresh_needed.length === 1 ? "has" : "have"} no conversation to resume; start ${r.fresh_needed.length === 1 ? "it" : "them"} with a new one: mam resume --all --fresh${r.role !== null ? ` --role ${shq(r.role)}` : ""}`));
  return lines.join("\n");
}
