// Agent identification and state for one pane, as herdr.md §3.6 and §4 describe:
// * the pane's foreground job is the tty's foreground process group (terminal.ts); a process
//   named like a known agent (or carrying HERDR_AGENT=<kind>), group leader first, is that agent;
// * a pane.report_agent from a custom source is the state authority while its process lives;
//   otherwise a detected agent is idle (herdr's fallback), or blocked when "Do you want to
//   proceed?" is among the last 4 non-empty lines of the screen;
// * done = idle and unseen: a working/blocked → idle transition outside the active tab of the
//   focused workspace;
// * a managed start (agent.start) is pending until the settle delay has passed and the expected
//   kind is idle or blocked (0.8.0), or idle (0.8.2); the deadline, or the detected agent leaving,
//   clears the claim. 0.8.2 (src/terminal/state.rs reconcile_managed_agent_at): an expected agent
//   seen blocked while pending moves to a blocked phase that stays pending, has no deadline, and
//   becomes ready once the agent is idle.
// * 0.8.2 (src/pane.rs, src/pane/agent_detection.rs): a newly detected agent is `unknown`, not
//   idle, until herdr's startup grace (3 s) has passed and its screen decides; a report decides
//   at once.
import { canonicalKind } from "../common/kinds.ts";
import type { Release } from "../common/release.ts";
import type { EventHub } from "./events.ts";
import { type Internal, type Pane, type State, type Status } from "./model.ts";
import { alive, cwdOf, detectAgent } from "./procfs.ts";

export interface AgentHost {
  state: State;
  hub: EventHub;
  cfg: { release: Release; graceMs: number };
}

const BLOCKER = /do you want to proceed\?/i;

/** herdr's is_horizontal_rule (src/detect/manifest.rs): starts with ─, all ─ or at least three */
function isRule(line: string): boolean {
  const t = line.trim();
  const n = /^─*/.exec(t)![0].length;
  return n > 0 && (n === t.length || n >= 3);
}

/** the screen below its last horizontal rule (all of it when there is none), lower-cased */
function afterLastRule(lines: string[]): string {
  let i = lines.length - 1;
  while (i >= 0 && !isRule(lines[i]!)) i--;
  return lines.slice(i + 1).join("\n").toLowerCase();
}

/**
 * claude's selection and confirmation dialogs (src/detect/manifests/claude.toml, region
 * after_last_horizontal_rule): 0.8.0 "enter to select" + "esc to cancel" + a navigation hint;
 * 0.8.2 also "enter to confirm" + "esc to cancel" (claude's trust and API-key dialogs, 4473e391)
 */
function claudeDialog(text: string, r: Release): boolean {
  if (!text.includes("esc to cancel")) return false;
  const select = text.includes("enter to select") && /(tab\/arrow keys|arrow keys|arrows|↑\/↓|↑↓) to navigate/.test(text);
  return select || (r === "0.8.2" && text.includes("enter to confirm"));
}

/** the blocker is on the bottom of the screen: among the last 4 non-empty lines (claude: its dialogs) */
function screenBlocked(p: Pane, r: Release): boolean {
  const lines = p.term.screen.lastLines(50);
  if (p.agent === "claude" && claudeDialog(afterLastRule(lines), r)) return true;
  return lines
    .filter((l) => l.trim() !== "")
    .slice(-4)
    .some((l) => BLOCKER.test(l));
}

/** the state herdr's screen detection gives a detected agent without a report */
function screenState(h: AgentHost, p: Pane, now: number): Internal {
  // 0.8.2: `unknown` through the startup grace after detection (0.8.0 said idle at once)
  if (h.cfg.release === "0.8.2" && p.detectedAt !== undefined && now - p.detectedAt < h.cfg.graceMs) return "unknown";
  return screenBlocked(p, h.cfg.release) ? "blocked" : "idle";
}

/** re-read the pane's processes and recompute agent, status and pending launch */
export function refreshPane(h: AgentHost, p: Pane, now = Date.now()): void {
  if (p.closed) return;
  const t = p.term;
  const job = t.foreground();
  const det = job.length ? detectAgent(job, job[0]) : undefined;
  p.detected = det;
  p.fgCwd = job.length ? cwdOf(job[0]!) : undefined;

  const a = p.authority;
  if (a) {
    if (a.pid !== undefined) {
      if (!job.includes(a.pid)) p.authority = undefined;
    } else if (job.length) {
      a.pid = det?.pid ?? job[0];
    } else if (t.ends > a.endsAtReport) {
      // reported from a command that has ended before it was ever seen in the foreground
      p.authority = undefined;
    }
  }
  const kind = det?.kind ?? (p.authority ? (canonicalKind(p.authority.agent) ?? p.authority.agent) : undefined);
  if (p.agent !== undefined && kind !== p.agent) release(h, p);
  if (kind !== undefined && p.agent === undefined) {
    p.agent = kind;
    p.detectedAt = now;
    p.revision++;
    h.hub.emit("pane_agent_detected", { pane_id: p.id, workspace_id: p.ws.id, agent: kind });
  }
  const internal: Internal = p.agent === undefined ? "unknown" : p.authority ? p.authority.state : screenState(h, p, now);
  setInternal(h, p, internal);

  const pd = p.pending;
  if (pd && h.cfg.release === "0.8.2") reconcileManaged082(p, now);
  else if (pd) {
    if (now >= pd.deadline || t.exited) {
      // the deadline passed: the claim and name go. A typed command that ends before its agent
      // was ever detected leaves the claim pending until then (real 0.8.0,
      // src/terminal/state.rs:1846-1911); one detected and then gone was released above.
      p.pending = undefined;
      p.name = undefined;
      p.revision++;
    } else if (now >= pd.settleAt && p.agent === pd.kind && (p.internal === "idle" || p.internal === "blocked")) {
      p.pending = undefined;
      p.ready = true;
      p.revision++;
    }
  }
}

/**
 * 0.8.2's managed start (src/terminal/state.rs reconcile_managed_agent_at): pending → blocked
 * phase when the expected kind is blocked (before the settle too; no deadline from then on,
 * still launch_pending) → ready once it is idle; a pending start is ready when the expected kind
 * is idle after the settle, and cleared at the deadline
 */
function reconcileManaged082(p: Pane, now: number): void {
  const pd = p.pending!;
  const expected = p.agent === pd.kind;
  if (pd.blocked) {
    if (expected && p.internal === "idle") {
      p.pending = undefined;
      p.ready = true;
      p.revision++;
    }
    return;
  }
  if (expected && p.internal === "blocked") {
    pd.blocked = true;
    p.revision++;
  } else if (now >= pd.deadline || p.term.exited) {
    p.pending = undefined;
    p.name = undefined;
    p.revision++;
  } else if (now >= pd.settleAt && expected && p.internal === "idle") {
    p.pending = undefined;
    p.ready = true;
    p.revision++;
  }
}

/** the agent left the pane (exit, release, replacement): the pane is a plain shell again */
export function release(h: AgentHost, p: Pane): void {
  const final = p.status;
  h.hub.emit("pane_agent_detected", { pane_id: p.id, workspace_id: p.ws.id, released: true, final_status: final });
  p.agent = undefined;
  p.detectedAt = undefined;
  p.name = undefined;
  p.pending = undefined;
  p.authority = undefined;
  p.session = undefined;
  p.ready = false;
  p.unseen = false;
  p.revision++;
  setInternal(h, p, "unknown");
}

export function setInternal(h: AgentHost, p: Pane, internal: Internal): void {
  const prev = p.internal;
  if (internal !== prev) {
    if (internal === "idle" && (prev === "working" || prev === "blocked") && !h.state.inActiveTab(p)) p.unseen = true;
    if (internal !== "idle") p.unseen = false;
    p.internal = internal;
  }
  updateStatus(h, p);
}

/** recompute the public status; a change bumps state_change_seq and goes into the event ring */
export function updateStatus(h: AgentHost, p: Pane): void {
  const status: Status = p.internal === "idle" && p.unseen ? "done" : p.internal;
  if (status === p.status) return;
  p.status = status;
  p.stateChangeSeq++;
  const data: Record<string, unknown> = { pane_id: p.id, workspace_id: p.ws.id, agent_status: status };
  if (p.agent) data.agent = p.agent;
  h.hub.emit("pane_agent_status_changed", data);
}

/** a tab became visible: its panes' finished turns count as seen */
export function markSeen(h: AgentHost, panes: Pane[]): void {
  for (const p of panes) {
    if (p.unseen) {
      p.unseen = false;
      updateStatus(h, p);
    }
  }
}

/** drop an authority whose process is gone before applying a new report */
export function dropDeadAuthority(p: Pane): void {
  if (p.authority?.pid !== undefined && !alive(p.authority.pid)) p.authority = undefined;
}

export const AGENT_NAME_RE = /^[a-z][a-z0-9_-]{0,31}$/;
export const AGENT_NAME_RULE = "agent name must start with a lowercase letter and contain only lowercase letters, digits, '-' or '_' (1-32 characters)";
