// `mam resume --all` (docs/sessions.md#a-whole-team): bring a stopped team back without a storm.
// The stopped sessions (of one role, with --role) come back one at a time, in name order, with a
// pause between two starts (--stagger), and never past a cap of running sessions (--max-running,
// counted in the same scope: the workspace, or the role): what the cap leaves is left stopped and
// said. Each start is resume's own (its conversation, its dialogs left untouched).
import { parseDuration } from "../../jobs/schedule.ts";
import { MamError } from "../../sys/errors.ts";
import { field } from "../../sys/fields.ts";
import type { Notice } from "../../sys/notice.ts";
import type { Deps } from "../deps.ts";
import { runningCount, workspaceCap } from "./cap.ts";
import { resumeSession } from "./resume.ts";
import { allRows } from "../../registry/rows.ts";

export interface ResumeAllInput {
  role?: string;
  /** the pause between two starts (a duration: 2s, 1m; 0 for none) */
  stagger: string;
  max_running?: number;
  fresh: boolean;
  start_server: boolean;
}

export interface ResumedAll {
  /** what came back, in order, with when each start began (UTC, ms) */
  resumed: { name: string; pane: string; from: string; started_at: string }[];
  /** what stayed stopped, and why */
  left: { name: string; why: string }[];
  /** of those, the ones with no conversation to resume (demo, shell, aider; or none found): they start with --fresh */
  fresh_needed: string[];
  /** the role given (the command that starts the rest names it again) */
  role: string | null;
  /** running sessions (in the scope) before and after */
  running_before: number;
  running_after: number;
  /** the subscriber daemon, once a session came back (as create does); null when none runs */
  daemon_pid?: number | null;
  warnings: Notice[];
}

export async function resumeAll(deps: Deps, o: ResumeAllInput, signal?: AbortSignal): Promise<ResumedAll> {
  const stagger = o.stagger === "0" || o.stagger === "0s" ? 0 : parseDuration(o.stagger);
  const data = deps.registry.read();
  const rows = allRows(data).filter((r) => o.role === undefined || r.role === o.role);
  const stopped = rows.filter((r) => r.status === "stopped").map((r) => r.name).sort();
  let running = runningCount(data, o.role);
  // the workspace's cap (MAM_MAX_RUNNING) holds too, counted over every session
  const wsCap = workspaceCap(deps.env);
  let all = runningCount(data);
  const out: ResumedAll = { resumed: [], left: [], fresh_needed: [], role: o.role ?? null, running_before: running, running_after: running, warnings: [] };
  for (const name of stopped) {
    if (signal?.aborted) {
      out.left.push({ name, why: "interrupted" });
      continue;
    }
    if (o.max_running !== undefined && running >= o.max_running) {
      out.left.push({ name, why: `${running} running: the cap (--max-running ${o.max_running})` });
      continue;
    }
    if (wsCap !== undefined && all >= wsCap) {
      out.left.push({ name, why: `${all} running in the workspace: the cap (MAM_MAX_RUNNING=${wsCap})` });
      continue;
    }
    if (out.resumed.length > 0 && stagger > 0) await pause(stagger * 1000, signal);
    const started_at = new Date().toISOString();
    try {
      const r = await resumeSession(deps, { name, fresh: o.fresh, start_server: o.start_server });
      out.resumed.push({ name, pane: r.pane, from: r.from, started_at });
      out.warnings.push(...r.warnings.map((w) => ({ level: w.level, text: `${name}: ${w.text}` })));
      running++;
      all++;
    } catch (e) {
      out.left.push({ name, why: (e as Error).message });
      // no conversation to go back to: a fresh one is what the user can ask for
      if (!o.fresh && e instanceof MamError && e.hint?.includes(field("fresh"))) out.fresh_needed.push(name);
    }
  }
  out.running_after = running;
  return out;
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
