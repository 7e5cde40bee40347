// Agent identification and state for one pane, as herdr.md §3.6 and §4 describe:
// * the pane's foreground job is the tty's foreground process group (terminal.ts); a process
//   named like a known agent (or carrying HERDR_AGENT=<kind>), group leader first, is that agent;
// * a pane.report_agent from a custom source is the state authority while its process lives;
//   otherwise a detected agent is idle (herdr's fallback), or blocked when "Do you want to
//   proceed?" is among the last 4 non-empty lines of the screen;
// * done = idle and unseen: a working/blocked → idle transition outside the active tab of the
//   focused workspace;
// * a managed start (agent.start) is pending until the settle delay has passed and the expected
//   kind is idle or blocked; the deadline, or the detected agent leaving, clears the claim.
import { canonicalKind } from "../common/kinds.ts";
import type { EventHub } from "./events.ts";
import { type Internal, type Pane, type State, type Status } from "./model.ts";
import { alive, cwdOf, detectAgent } from "./procfs.ts";

export interface AgentHost {
  state: State;
  hub: EventHub;
}

const BLOCKER = /do you want to proceed\?/i;

/** the blocker is on the bottom of the screen: among the last 4 non-empty lines */
function screenBlocked(p: Pane): boolean {
  return p.term.screen
    .lastLines(24)
    .filter((l) => l.trim() !== "")
    .slice(-4)
    .some((l) => BLOCKER.test(l));
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
    p.revision++;
    h.hub.emit("pane_agent_detected", { pane_id: p.id, workspace_id: p.ws.id, agent: kind });
  }
  const internal: Internal = p.agent === undefined ? "unknown" : p.authority ? p.authority.state : screenBlocked(p) ? "blocked" : "idle";
  setInternal(h, p, internal);

  const pd = p.pending;
  if (pd) {
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

/** the agent left the pane (exit, release, replacement): the pane is a plain shell again */
export function release(h: AgentHost, p: Pane): void {
  const final = p.status;
  h.hub.emit("pane_agent_detected", { pane_id: p.id, workspace_id: p.ws.id, released: true, final_status: final });
  p.agent = undefined;
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
