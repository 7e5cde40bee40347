// Resuming a session (docs/sessions.md): bring a stopped / terminated / archived session back with
// its own conversation (else this workspace's newest of that agent), in a pane claimed as create
// does.
import { checkSandbox, rowSandbox } from "../../sandbox/spec.ts";
import { existsSync } from "node:fs";
import { agentKind, agentMcpArgs, grantArgs, idField, ownId, resumeLoadedOf } from "../../agents/kinds/index.ts";
import { serverEntry } from "../../sys/self.ts";
import { adoptPane } from "../../fleet/adopt.ts";
import { findPane } from "../../fleet/classify.ts";
import { keepingPolicy } from "../../fleet/policy.ts";
import { RESTART_STATE_KEYS } from "../../fleet/restart.ts";
import { recordKey } from "../../sys/record-key.ts";
import { rowAgent } from "../../fleet/rows.ts";
import { shJoin } from "../../mux/exec.ts";
import { backendOf, serverOf } from "../../registry/rows.ts";
import { conflict, EXIT, MamError, notFound, usageError } from "../../sys/errors.ts";
import { isValidName } from "../../sys/names.ts";
import { SECTIONS } from "../../registry/types.ts";
import { nameShown } from "../../registry/validate.ts";
import type { Env } from "../../sys/paths.ts";
import { note } from "../../sys/notice.ts";
import { isoUtc } from "../../sys/time.ts";
import { liveWorktreeOf, rowCwd, worktreeOf } from "../../worktrees/plan.ts";
import { type AfterStart, afterStart } from "./after-start.ts";
import { field } from "../../sys/fields.ts";
import { forgetTriedPane, launch } from "./launch.ts";
import { paneChosen, rowChosen } from "./named.ts";
import { paneAgentGone } from "./probe.ts";
import type { Deps } from "../deps.ts";

export const STOP_KEYS = ["stopped_at", "stopped_at_epoch", "stop_reason", "resumable", "terminated_at", "terminated_at_epoch", "termination_mode", "archived_at"];

export interface ResumeInput {
  /** the session; or `pane`, for a row whose name mam would refuse */
  name?: string;
  /** the pane id the row records, instead of its name */
  pane?: string;
  /** the name the session comes back under (needed when its own is one mam would refuse) */
  rename?: string;
  /** start a fresh conversation when none is found */
  fresh: boolean;
  /** start the herdr server when it is not running */
  start_server: boolean;
  /**
   * the daemon restarting an agent that died (lib/ops/react/agents-restart.ts): its restart count
   * stays; a user's resume starts the count again (lib/fleet/restart.ts)
   */
  restarting?: boolean;
}

export interface Resumed extends AfterStart {
  name: string;
  already: boolean;
  pane: string;
  session_id: string | null;
  /** own: the row's conversation; newest: this workspace's newest; fresh: a new one */
  from: "own" | "newest" | "fresh" | "running";
  /** the subscriber daemon a resume makes sure runs (as create does); null when none runs */
  daemon_pid?: number | null;
}

/** which conversation to resume: the row's own if its file exists, else the newest one started in `ws` (the row's folder) */
export function pickConversation(row: Record<string, unknown>, agent: string, ws: string, env: Env): { id: string; from: "own" | "newest" } | undefined {
  const store = agentKind(agent).store;
  const own = ownId(row, agent);
  if (own && (!store || store.find(own, ws, env))) return { id: own, from: "own" };
  const newest = store?.newest(ws, env);
  return newest ? { id: newest.id, from: "newest" } : undefined;
}

/** an agent that was already running: nothing was started or looked at */
const NOT_STARTED: AfterStart = { at_prompt: false, waiting_at: null, onboarding: "off", warnings: [] };

export async function resumeSession(deps: Deps, input: ResumeInput): Promise<Resumed> {
  const chosen = rowChosen(deps.registry, input);
  const { data, section, row } = chosen;
  const backend = backendOf(section);
  const server = serverOf(row, section);
  // an agent never starts under a name mam would refuse (it goes into labels, tmux and herdr
  // names, the agent's environment): such a row comes back under a new one
  const was = row.name;
  if (input.rename === undefined && !isValidName(was)) {
    throw usageError(`session ${nameShown(was)} has a name mam would refuse`, `give the name it comes back under: ${field("rename")}`);
  }
  if (input.rename !== undefined && input.rename !== was && SECTIONS.some((s) => data[s].some((r) => r.name === input.rename))) {
    throw conflict(`the registry already has a session named '${input.rename}'`, `choose another ${field("rename")}`);
  }
  const o = { ...input, name: input.rename ?? was };
  const agent = rowAgent(row);
  if (!agent) throw new MamError(`session '${o.name}' has no agent kind in the registry`, EXIT.FAIL, "stop it and create a new one");
  const kind = agentKind(agent);

  // a running row whose pane lives with no agent in it (herdr leaves a bare shell when the agent
  // exits) is started again, in that same pane when it is free
  let bareShell: string | undefined;
  if (row.status === "running") {
    const mux = deps.muxFor(backend, server);
    const l = await mux.list();
    const pane = l.state === "ok" ? (findPane(row, l.panes, section) ?? paneChosen(l.panes, input, chosen, server)) : undefined;
    if (pane && (await paneAgentGone(mux, pane, agent))) bareShell = pane.id;
    else if (pane || l.state === "unreachable") return { name: o.name, already: true, pane: pane?.id ?? String(row.pane?.id ?? "?"), session_id: ownId(row, agent) ?? null, from: "running", ...NOT_STARTED };
  }

  // a session in a worktree comes back there; its conversations are keyed by that folder
  const wt = liveWorktreeOf(row);
  if (worktreeOf(row) && !wt) throw new MamError(`the worktree of session '${o.name}' was removed`, EXIT.FAIL, `its branch ${worktreeOf(row)!.branch} is kept: start a new session on it with mam create --worktree ${worktreeOf(row)!.branch}`);
  if (wt && !existsSync(wt.path)) throw new MamError(`the worktree of session '${o.name}' (${wt.path}) no longer exists`, EXIT.FAIL, `start a new session on its branch with: mam create --worktree ${wt.branch}`);
  const cwd = rowCwd(row, deps.ws);
  const conv = kind.resumeArgs ? pickConversation(row, agent, cwd, deps.env) : undefined;
  if (!conv && !o.fresh) {
    throw notFound(
      kind.resumeArgs ? `no ${agent} conversation of session '${o.name}' found in this workspace` : `${agent} sessions cannot be resumed`,
      `pass ${field("fresh")} to start a new conversation instead`,
    );
  }
  // a session created with --mcp (mcp_tools) comes back with the mam tools, all pre-approved if it had them so ("all")
  const mcpArgs = row.mcp_tools === true || row.mcp_tools === "all" ? agentMcpArgs(kind.kind, serverEntry(deps.ws), row.mcp_tools === "all") : [];
  // mam's own commands stay pre-approved unless the session was created without them
  const grants = row.grants === false ? [] : grantArgs(kind.kind, deps.env);
  const args = [...(conv ? kind.resumeArgs!(conv.id) : kind.freshArgs(kind.assignsId ? crypto.randomUUID() : undefined)), ...grants, ...mcpArgs];
  const freshId = !conv && kind.assignsId ? args[args.indexOf("--session-id") + 1] : undefined;
  const taken = new Set<string>(data[section].filter((r) => r.status === "running" && typeof r.pane?.id === "string").map((r) => r.pane!.id as string));
  if (bareShell) taken.delete(bareShell);
  // herdr: show the kept worktree as its own workspace again (herdr worktree open)
  const herdrWorktree = wt && backend === "herdr" ? { cwd: deps.ws, branch: wt.branch, path: wt.path, label: o.name, open: true } : undefined;
  // what the agent's records look like before it starts, to see when it has loaded the conversation
  const loaded = conv ? (resumeLoadedOf(agent, conv.id, cwd, deps.env) ?? undefined) : undefined;
  // the sandbox it was created in (docs/sandbox.md)
  const spec = rowSandbox(row);
  const sandbox = spec ? { spec, bwrap: checkSandbox(spec, { ws: deps.ws, backend }, deps.env) } : undefined;
  const t0 = deps.clock.epoch();
  const made: { worktree: boolean; pane?: string } = { worktree: false };
  let l: Awaited<ReturnType<typeof launch>>;
  try {
    l = await launch(deps, { name: o.name, kind, args, backend, server, startServer: o.start_server, taken, cwd, herdrWorktree, made, sandbox, ...(typeof row.role === "string" ? { role: row.role } : {}) });
  } catch (e) {
    await forgetTriedPane(deps, section, server, made.pane, t0, was);
    throw e;
  }
  const now = deps.clock.epoch();
  const sid = conv?.id ?? freshId;
  let renamed: string[] = [];
  const key = recordKey(deps.env, false);
  try {
    await deps.registry.mutate((d) => {
      // the daemon may have seen the new pane before its label: take it back (lib/fleet/adopt.ts);
      // under a rename, a registration of the new name is the daemon's too
      renamed = adoptPane(d, section, server, l.pane.id, t0, was);
      const r = d[section].find((x) => x.name === was && serverOf(x, section) === server && x.status === row.status);
      if (!r) throw new MamError(`session '${o.name}' changed while it was being resumed`, EXIT.FAIL, "see: mam status");
      // a policy this user's mam marked stays marked through the new name and conversation; never one it did not
      keepingPolicy([r], key, deps.ws, () => {
        if (o.name !== was) {
          if (SECTIONS.some((s) => d[s].some((x) => x.name === o.name))) throw conflict(`the registry already has a session named '${o.name}'`, `choose another ${field("rename")}`);
          r.renamed_from = was;
          r.name = o.name;
        }
        for (const k of STOP_KEYS) delete r[k];
        for (const k of input.restarting ? ["restart_claim_epoch"] : RESTART_STATE_KEYS) delete r[k];
        r.status = "running";
        r.last_visible_status = "running";
        r.last_visible_note = conv ? `resumed ${conv.id}` : "resumed with a fresh conversation";
        r.pane = { id: l.pane.id, ...(l.pid !== undefined ? { pid: l.pid } : {}), ...(l.cmd !== undefined ? { cmd: l.cmd } : {}), cmd_full: l.cmdFull, cwd };
        if (l.agentName && l.agentName !== o.name) r.herdr_agent_name = l.agentName;
        if (l.worktreeWorkspace && r.worktree) r.worktree.herdr_workspace = l.worktreeWorkspace;
        if (sid) r[idField(agent)] = sid;
        else delete r[idField(agent)];
        r.start_command = shJoin(l.argv);
        r.resumed_at = isoUtc(now);
      });
    });
  } catch (e) {
    await l.mux.close(l.pane.id).catch(() => {});
    throw e;
  } finally {
    l.lock.close();
  }
  // the agent is registered; tell the user when it waits at a dialog (resume types nothing)
  const after = await afterStart({ mux: l.mux, name: o.name, kind: agent, backend, server, paneId: l.pane.id, cwd, env: deps.env, started: l.pane, ...(l.pid !== undefined ? { pid: l.pid } : {}), loaded });
  const tookOver = renamed.map((n) => note(`the daemon registered pane ${l.pane.id} as ${n} while ${o.name} was being resumed; ${o.name} took it over`));
  // a flaw of the agent's own that threatens the conversation just resumed (gemini's session cleanup)
  const caveat = conv ? kind.resumeNote?.(cwd, deps.env) : null;
  const warnings = [...tookOver, ...(caveat ? [note(caveat)] : []), ...after.warnings];
  return { name: o.name, already: false, pane: l.pane.id, session_id: sid ?? null, from: conv ? conv.from : "fresh", ...after, warnings };
}
