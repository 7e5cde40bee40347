// Stopping a session (docs/sessions.md): graceful (the agent's own exit, then close), hard, or
// soft (archive the row, leave the pane); the conversation id is recorded first so resume can
// continue it. An archived row (soft left its pane running) can be stopped again: graceful or
// hard then close that pane, if it is still ours (it carries our label, or it is the pane the row
// names and no running row holds it).
import { rmSync } from "node:fs";
import { agentKind, idField, isHerdrManaged, KINDS, ownId } from "../../agents/kinds/index.ts";
import { findPane } from "../../fleet/classify.ts";
import { nameFromLabel } from "../../mux/label.ts";
import { rowAgent } from "../../fleet/rows.ts";
import { descendantsOf, hasProcfs, procStartTime } from "../../mux/procfs.ts";
import type { Mux, MuxPane } from "../../mux/types.ts";
import { backendOf, serverOf } from "../../registry/rows.ts";
import type { RegistryData, Row, Section } from "../../registry/types.ts";
import { EXIT, MamError, usageError } from "../../sys/errors.ts";
import { field } from "../../sys/fields.ts";
import type { Env } from "../../sys/paths.ts";
import { isoUtc } from "../../sys/time.ts";
import { liveWorktreeOf, rowCwd } from "../../worktrees/plan.ts";
import type { Deps } from "../deps.ts";
import { checkRemovable, removeWorktreeOfSession } from "../worktree.ts";
import { lookAt } from "./at-prompt.ts";
import { paneChosen, rowChosen } from "./named.ts";

export type StopMode = "graceful" | "hard" | "soft";

export interface StopInput {
  /** the session; or `pane`, for a row whose name mam would refuse */
  name?: string;
  /** the pane id the row records, instead of its name */
  pane?: string;
  mode: StopMode;
  /** with a hard stop: delete this session's own conversation files in this workspace */
  purge: boolean;
  reason: string;
  /** then remove the session's git worktree (refused, exit 4 before anything, when work would be lost) */
  remove_worktree: boolean;
  /** remove the worktree even with uncommitted or unmerged work */
  force: boolean;
}

export interface Stopped {
  name: string;
  status: "stopped" | "terminated" | "archived";
  already: boolean;
  pane: string | null;
  session_id: string | null;
  purged: string[];
  /** the worktree that was removed (--remove-worktree), else null */
  worktree_removed: string | null;
}

const until = async (cond: () => Promise<boolean>, ms: number, step = 100): Promise<boolean> => {
  const end = Date.now() + ms;
  for (;;) {
    if (await cond()) return true;
    if (Date.now() >= end) return false;
    await Bun.sleep(step);
  }
};

async function currentPane(mux: Mux, row: Row, section: Section): Promise<MuxPane | undefined> {
  const l = await mux.list();
  return l.state === "ok" ? findPane(row, l.panes, section) : undefined;
}

/** the agent has left the pane: no foreground process besides the shell, or the pane is gone */
async function agentLeft(mux: Mux, paneId: string): Promise<boolean> {
  try {
    const info = await mux.processInfo(paneId);
    return info.foreground.every((p) => p.pid === info.shellPid || /^(ba|z|da|fi|k|tc|c)?sh$/.test(p.name));
  } catch {
    return true;
  }
}

/** the agent's processes in a pane, with their descendants (pid and start time, so a reused pid is never taken for them); [] without /proc */
async function agentProcesses(mux: Mux, paneId: string): Promise<{ pid: number; start: string }[]> {
  if (!hasProcfs()) return [];
  try {
    const info = await mux.processInfo(paneId);
    // tmux: the pane's process is the agent itself (mam execs it), even when it is a bash script;
    // herdr: the pane's shell is the user's, only what runs in it is the agent's
    const own = mux.backend === "tmux" ? info.foreground : info.foreground.filter((p) => p.pid !== info.shellPid);
    const pids = own.flatMap((p) => [p.pid, ...descendantsOf(p.pid)]);
    return [...new Set(pids)].flatMap((pid) => {
      const start = procStartTime(pid);
      return start ? [{ pid, start }] : [];
    });
  } catch {
    return [];
  }
}

/**
 * end the agent processes that outlived their closed pane: an agent that ignores the hangup
 * (Gemini CLI 0.61.0 and its relaunched child) would run on as an orphan. SIGTERM, then SIGKILL
 * after 3 s; only the processes that were in the pane mam closed, by pid and start time.
 */
async function endLeftovers(procs: { pid: number; start: string }[]): Promise<void> {
  const alive = () => procs.filter((p) => procStartTime(p.pid) === p.start);
  // the hangup reaches them as the pane closes; give them a moment to go by themselves
  if (!(await until(async () => alive().length === 0, 1000))) {
    for (const p of alive()) {
      try {
        process.kill(p.pid, "SIGTERM");
      } catch {}
    }
    if (!(await until(async () => alive().length === 0, 3000))) {
      for (const p of alive()) {
        try {
          process.kill(p.pid, "SIGKILL");
        } catch {}
      }
    }
  }
}

/** the conversation id to keep: the row's own, herdr's report, else this workspace's newest */
export function conversationId(row: Row, pane: MuxPane | undefined, ws: string, env: Env): string | undefined {
  const agent = rowAgent(row);
  if (!agent || !KINDS[agent]) return undefined;
  return ownId(row, agent) ?? pane?.agentSessionId ?? agentKind(agent).store?.newest(rowCwd(row, ws), env)?.id;
}

/** does a running row of this server hold that pane id? */
function heldByRunning(data: RegistryData, section: Section, server: string, paneId: string): boolean {
  return data[section].some((r) => r.status === "running" && serverOf(r, section) === server && r.pane?.id === paneId);
}

/** the pane an archived row left running, if the multiplexer still shows one with our label */
async function leftRunning(mux: Mux, row: Row, section: Section): Promise<string | undefined> {
  try {
    const p = await currentPane(mux, row, section);
    return p && nameFromLabel(p.label) === row.name ? p.id : undefined;
  } catch {
    return undefined;
  }
}

export async function stopSession(deps: Deps, input: StopInput): Promise<Stopped> {
  const chosen = rowChosen(deps.registry, input);
  const { data, section, row } = chosen;
  const o = { ...input, name: row.name };
  const agent = rowAgent(row);
  const base: Stopped = { name: o.name, status: "stopped", already: false, pane: null, session_id: agent ? (ownId(row, agent) ?? null) : null, purged: [], worktree_removed: null };
  // --remove-worktree: every refusal before the agent is touched
  const wt = o.remove_worktree ? liveWorktreeOf(row) : undefined;
  if (o.remove_worktree && !wt) throw usageError(`session '${o.name}' has no worktree to remove`, "see: mam worktree list");
  if (wt && !o.force) checkRemovable(deps, o.name, wt);
  const removeAfter = async (r: Stopped): Promise<Stopped> => {
    if (!wt) return r;
    const done = await removeWorktreeOfSession(deps, o.name, o.force);
    return { ...r, worktree_removed: done.path };
  };
  // an archived row (stop --soft) may have left its pane running: a later stop can close it
  const archived = row.status === "archived";
  if (row.status !== "running" && !archived && !(o.mode === "hard" && o.purge)) {
    return removeAfter({ ...base, status: row.status, already: true });
  }

  const server = serverOf(row, section);
  const mux = deps.muxFor(backendOf(section), server);
  let pane: MuxPane | undefined;
  if (row.status === "running" || (archived && o.mode !== "soft")) {
    const l = await mux.list();
    // a multiplexer that answers garbage or times out says nothing about the pane: marking the
    // row stopped would hide an agent that may still run (a server that is not running owns no
    // panes, so that case goes on). --soft never touches the pane and goes on too.
    if (l.state === "unreachable" && o.mode !== "soft") {
      throw new MamError(`cannot stop ${o.name}: ${l.detail}`, EXIT.FAIL, `nothing was changed; retry when the multiplexer answers, or archive the row with ${field("mode", "soft")}`);
    }
    pane = l.state === "ok" ? (findPane(row, l.panes, section) ?? paneChosen(l.panes, input, chosen, server)) : undefined;
  }
  // only ever a pane that carries our label, or the one the registry names (for an archived row:
  // and that no running row holds, the id may have been given to another pane since)
  const named = pane !== undefined && pane.id === row.pane?.id && (!archived || !heldByRunning(data, section, server, pane.id));
  const ours = pane !== undefined && (nameFromLabel(pane.label) === o.name || named);
  if (archived && !(ours && pane) && !(o.mode === "hard" && o.purge)) {
    // --soft again, or the pane is gone (or is not ours any more): nothing to close
    const left = o.mode === "soft" ? await leftRunning(mux, row, section) : undefined;
    return removeAfter({ ...base, status: "archived", already: true, pane: left ?? null });
  }
  const sid = conversationId(row, pane, deps.ws, deps.env);
  const sameRow = (d: RegistryData) => d[section].find((x) => x.name === o.name && serverOf(x, section) === server && x.status === row.status);
  // the pane is about to go: mark the row, so that the daemon's reconcile pass, seeing the pane
  // gone before this stop has written its end state, leaves the row to it (lib/fleet/apply.ts)
  const closing = o.mode !== "soft" && ours && pane !== undefined;
  if (closing) {
    await deps.registry.mutate((d) => {
      const r = sameRow(d);
      if (r) r.stopping_epoch = deps.clock.epoch();
    });
  }
  try {
    return await finishStop(deps, o, { section, row, mux, pane, ours, sid, agent, base, sameRow, removeAfter });
  } catch (e) {
    // a stop that failed half-way gives the row back to the reconcile pass
    if (closing) {
      await deps.registry
        .mutate((d) => {
          const r = d[section].find((x) => x.name === o.name && serverOf(x, section) === server && x.stopping_epoch !== undefined);
          if (r) delete r.stopping_epoch;
        })
        .catch(() => {});
    }
    throw e;
  }
}

interface StopPlan {
  section: Section;
  row: Row;
  mux: Mux;
  pane: MuxPane | undefined;
  /** the pane is ours to close (our label, or the one the row names) */
  ours: boolean;
  sid: string | undefined;
  agent: string | undefined;
  base: Stopped;
  sameRow(d: RegistryData): Row | undefined;
  removeAfter(r: Stopped): Promise<Stopped>;
}

/** the agent's exit, the pane closed, the conversation purged, the row's end state written */
async function finishStop(deps: Deps, o: StopInput & { name: string }, p: StopPlan): Promise<Stopped> {
  const { section, row, mux, pane, ours, sid, agent, base, removeAfter } = p;
  if (o.mode === "graceful" && ours && pane) {
    const kind = agent && KINDS[agent] ? KINDS[agent] : undefined;
    // the exit text, as a prompt to the agent: never into a dialog (Enter would answer it; the
    // pane is closed below instead), and herdr refuses it when the agent is already gone (a bare
    // shell must not run the exit text)
    const st = kind ? await lookAt(mux, pane.id, kind.kind, deps.env).catch(() => undefined) : undefined;
    if (kind?.exitText && st && st.at !== "dialog" && st.at !== "gone") {
      await mux.submit(pane.id, kind.exitText, isHerdrManaged(kind.kind)).catch(() => {});
      await until(() => agentLeft(mux, pane.id), 3000);
    }
  }
  if (o.mode !== "soft" && ours && pane) {
    const procs = await agentProcesses(mux, pane.id);
    await mux.close(pane.id);
    await until(async () => (await currentPane(mux, row, section))?.id !== pane.id, 5000);
    await endLeftovers(procs);
  }

  const purged: string[] = [];
  if (o.purge && agent && sid) {
    const conv = agentKind(agent).store?.find(sid, rowCwd(row, deps.ws), deps.env);
    for (const f of conv?.files ?? []) {
      rmSync(f, { recursive: true, force: true });
      purged.push(f);
    }
  }

  const now = deps.clock.epoch();
  const status: Stopped["status"] = o.mode === "graceful" ? "stopped" : o.mode === "hard" ? "terminated" : "archived";
  await deps.registry.mutate((d) => {
    const r = p.sameRow(d);
    if (!r) return;
    delete r.stopping_epoch;
    if (agent && sid && !o.purge) r[idField(agent)] = sid;
    if (o.purge && agent) delete r[idField(agent)];
    r.status = status;
    r.last_visible_status = status;
    if (status === "stopped") {
      r.stopped_at = isoUtc(now);
      r.stopped_at_epoch = now;
      r.stop_reason = o.reason;
      r.resumable = sid !== undefined;
      r.last_visible_note = `stopped: ${o.reason}`;
    } else if (status === "terminated") {
      r.terminated_at = isoUtc(now);
      r.terminated_at_epoch = now;
      r.termination_mode = "hard";
      r.stop_reason = o.reason;
      r.last_visible_note = `terminated (hard): ${o.reason}`;
    } else {
      r.archived_at = isoUtc(now);
      r.stop_reason = o.reason;
      r.last_visible_note = `archived: ${o.reason}; the pane was left running`;
    }
  });
  return removeAfter({ ...base, status, pane: pane?.id ?? null, session_id: sid ?? null, purged });
}
