// The reconcile pass as a pure function (SPEC §6.1): registry rows × one listing per server →
// drifts and actions. `mam reconcile` applies the actions; `mam status` only reads the verdicts.
import type { Backend, Listing, MuxPane, PaneScreen } from "../mux/types.ts";
import type { RegistryData, Row, Section } from "../registry/types.ts";
import { SECTIONS } from "../registry/types.ts";
import { backendOf, sectionOf } from "../registry/rows.ts";
import { idField, KINDS, ownId, readsCommands } from "../agents/kinds/index.ts";
import { isValidName } from "../sys/names.ts";
import { isoUtc } from "../sys/time.ts";
import { MONITOR_NOTE, rowEpoch, rowServer } from "./adopt.ts";
import { nameFromLabel } from "../mux/label.ts";
import { guessRole } from "./naming.ts";
import { liveWorktreeOf, rowCwd } from "../worktrees/plan.ts";
import { agentGone } from "./liveness.ts";
import { rowAgent } from "./rows.ts";

export const TERMINATED_NOTE = "terminated (auto-detected)";
/** the note of a row whose agent exited while its herdr pane lives on as a shell (audit #1) */
export const AGENT_EXITED_NOTE = "agent exited";

export type Live = "working" | "blocked" | "idle" | "unknown" | "dead" | "unreachable";

export type DriftKind =
  | "pane-gone" // a running row whose pane is gone (step 1)
  | "agent-exited" // a running herdr row whose pane is alive with no agent in it (step 1)
  | "server-down" // its server is definitely not running (step 1)
  | "server-unreachable" // its server failed in another way: nothing is changed
  | "unregistered-pane" // a live agent pane of this workspace without a row (step 3)
  | "missing-session-id" // a row without its conversation id (step 4)
  | "pane-changed" // pid/cmd of the pane differ from the row (step 5)
  | "worktree-gone"; // the row's git worktree folder vanished (issue 18): reported, nothing changed

export interface Drift {
  name: string;
  kind: DriftKind;
  detail: string;
}

export type Action =
  | { type: "terminate"; section: Section; name: string; server: string; paneId?: string; reason: string }
  | { type: "register"; section: Section; server: string; row: Row }
  | { type: "fill-session-id"; section: Section; name: string; server: string; field: string; value: string; source: "herdr" | "store" | "hook" }
  | { type: "update-pane"; section: Section; name: string; server: string; pane: Record<string, unknown> };

export const serverKey = (backend: Backend, server: string) => `${backend}:${server}`;

export interface ServerView {
  backend: Backend;
  server: string;
  listing: Listing;
  /** tmux: the screens captured in the listing's own call, by pane id (lib/ops/session/live.ts) */
  screens?: Map<string, PaneScreen>;
}

export interface RowVerdict {
  section: Section;
  index: number;
  row: Row;
  backend: Backend;
  server: string;
  live: Live;
  pane?: MuxPane;
  drifts: Drift[];
}

export interface Classification {
  rows: RowVerdict[];
  drifts: Drift[];
  actions: Action[];
}

export interface ClassifyInput {
  data: RegistryData;
  views: ServerView[];
  workspace: string;
  now: number;
  /** a conversation id of `kind` started in `cwd` (the row's worktree, else the workspace), newer than `sinceEpoch`, not in `exclude` */
  discover?: (kind: string, sinceEpoch: number | undefined, exclude: Set<string>, cwd: string) => string | undefined;
  /** does this folder exist (a row's worktree)? default: assume it does */
  folderExists?: (path: string) => boolean;
  /** the conversation id the row's agent reported through its hook (mam agent-report), if any */
  reported?: (row: Row, section: Section, pane: MuxPane) => string | undefined;
}

/** every (backend, server) the rows name */
export function serversOf(data: RegistryData): { backend: Backend; server: string }[] {
  const seen = new Map<string, { backend: Backend; server: string }>();
  for (const section of SECTIONS) {
    for (const row of data[section] ?? []) {
      const backend = backendOf(section);
      const server = rowServer(row, section);
      seen.set(serverKey(backend, server), { backend, server });
    }
  }
  return [...seen.values()];
}

/**
 * the pane of a row: by recorded pane id (when its label does not name another session), else by
 * label, else by herdr agent name. tmux rows match by label only: tmux pane ids start again at %0
 * when its server restarts, so a recorded id may name someone else's pane.
 */
export function findPane(row: Row, panes: MuxPane[], section: Section = "herdr_sessions"): MuxPane | undefined {
  if (section === "tmux_sessions") return panes.find((x) => nameFromLabel(x.label) === row.name);
  const id = row.pane?.id;
  if (typeof id === "string" && id !== "") {
    const p = panes.find((x) => x.id === id);
    const owner = nameFromLabel(p?.label);
    if (p && (owner === undefined || owner === row.name)) return p;
  }
  const byLabel = panes.find((x) => nameFromLabel(x.label) === row.name);
  if (byLabel) return byLabel;
  const agentName = typeof row.herdr_agent_name === "string" ? row.herdr_agent_name : row.name;
  return panes.find((x) => x.agentName !== undefined && x.agentName === agentName);
}

export function liveOf(p: MuxPane): Live {
  if (p.status === "done") return "idle";
  return p.status;
}

/**
 * a pane that hosts an agent session worth registering. A herdr pane with only a `mam:` label and
 * no agent is a bare shell whose agent exited (audit #1): not a session.
 */
function isAgentPane(p: MuxPane, backend: Backend): boolean {
  if (p.agentName !== undefined || p.agent !== undefined) return true;
  return nameFromLabel(p.label) !== undefined && (backend === "tmux" || p.status !== "unknown");
}

/** the name an unregistered pane gets: its label, its herdr agent name, else <agent>-<pane id> */
export function nameForPane(p: MuxPane): string | undefined {
  const cands = [nameFromLabel(p.label), p.agentName, p.agent ? `${p.agent}-${p.id.replace(/[^A-Za-z0-9]+/g, "-").replace(/^-+|-+$/g, "")}` : undefined];
  return cands.find((c): c is string => c !== undefined && isValidName(c));
}

export function classify(input: ClassifyInput): Classification {
  const { data, workspace, now } = input;
  const views = new Map(input.views.map((v) => [serverKey(v.backend, v.server), v]));
  const verdicts: RowVerdict[] = [];
  const drifts: Drift[] = [];
  const actions: Action[] = [];
  const claimed = new Map<string, Set<string>>(); // server key → pane ids that rows hold
  const ownedIds = new Set<string>();

  for (const section of SECTIONS) {
    (data[section] ?? []).forEach((row) => {
      const agent = rowAgent(row);
      const id = agent ? ownId(row, agent) : undefined;
      if (id) ownedIds.add(id);
    });
  }

  for (const section of SECTIONS) {
    const rows = data[section] ?? [];
    rows.forEach((row, index) => {
      const backend = backendOf(section);
      const server = rowServer(row, section);
      const key = serverKey(backend, server);
      const view = views.get(key);
      const v: RowVerdict = { section, index, row, backend, server, live: "unreachable", drifts: [] };
      verdicts.push(v);
      const add = (kind: DriftKind, detail: string) => {
        const d = { name: row.name, kind, detail };
        v.drifts.push(d);
        drifts.push(d);
      };
      const wt = liveWorktreeOf(row);
      if (wt && input.folderExists && !input.folderExists(wt.path)) add("worktree-gone", `worktree ${wt.path} (branch ${wt.branch}) no longer exists`);
      if (!view) {
        add("server-unreachable", `${backend} server '${server}' was not listed`);
        return;
      }
      if (view.listing.state === "unreachable") {
        if (row.status === "running") add("server-unreachable", `${backend} server '${server}': ${view.listing.detail}`);
        return;
      }
      const panes = view.listing.state === "ok" ? view.listing.panes : [];
      const pane = findPane(row, panes, section);
      const exited = pane !== undefined && section === "herdr_sessions" && agentGone(pane, rowAgent(row));
      if (pane) {
        v.pane = pane;
        v.live = exited ? "dead" : liveOf(pane);
        if (!claimed.has(key)) claimed.set(key, new Set());
        claimed.get(key)!.add(pane.id);
      } else {
        v.live = "dead";
      }
      if (row.status !== "running") return; // step 2: deliberate end states are left alone
      if (exited) {
        add("agent-exited", `pane ${pane.id} is alive with no agent in it`);
        actions.push({ type: "terminate", section, name: row.name, server, paneId: pane.id, reason: AGENT_EXITED_NOTE });
        return;
      }
      if (!pane) {
        const down = view.listing.state === "not-running";
        add(down ? "server-down" : "pane-gone", down ? `${backend} server '${server}' is not running` : `pane ${row.pane?.id ?? "?"} is gone`);
        actions.push({ type: "terminate", section, name: row.name, server, paneId: row.pane?.id, reason: down ? "server not running" : "pane gone" });
        return;
      }
      // step 4: the conversation id; what the agent's own hook reported wins (session_id_source: hook)
      const agent = rowAgent(row) ?? pane.agent;
      const hookId = agent ? input.reported?.(row, section, pane) : undefined;
      if (agent && hookId && (ownId(row, agent) !== hookId || row.session_id_source !== "hook") && !(ownedIds.has(hookId) && ownId(row, agent) !== hookId)) {
        ownedIds.add(hookId);
        actions.push({ type: "fill-session-id", section, name: row.name, server, field: idField(agent), value: hookId, source: "hook" });
      } else if (agent && KINDS[agent]?.store && !ownId(row, agent)) {
        let value: string | undefined;
        let source: "herdr" | "store" = "herdr";
        if (pane.agentSessionId && !ownedIds.has(pane.agentSessionId)) value = pane.agentSessionId;
        else if (input.discover && KINDS[agent].store) {
          value = input.discover(agent, rowEpoch(row, section), ownedIds, rowCwd(row, workspace));
          source = "store";
        }
        add("missing-session-id", value ? `found ${value} (${source})` : "not found yet");
        if (value) {
          ownedIds.add(value);
          actions.push({ type: "fill-session-id", section, name: row.name, server, field: idField(agent), value, source });
        }
      }
      // step 5: pane facts
      const patch: Record<string, unknown> = {};
      if (row.pane?.id !== pane.id) patch.id = pane.id;
      if (pane.pid !== undefined && row.pane?.pid !== pane.pid) patch.pid = pane.pid;
      // a shell runs commands (its own jobs too): its pane's command changes by design, no drift
      if (pane.cmd !== undefined && row.pane?.cmd !== pane.cmd && !readsCommands(agent)) patch.cmd = pane.cmd;
      if (Object.keys(patch).length) {
        add("pane-changed", Object.entries(patch).map(([k, x]) => `${k}=${x}`).join(" "));
        actions.push({ type: "update-pane", section, name: row.name, server, pane: patch });
      }
    });
  }

  // step 3: live agent panes of this workspace that no row names
  for (const view of input.views) {
    if (view.listing.state !== "ok") continue;
    const section = sectionOf(view.backend);
    const key = serverKey(view.backend, view.server);
    const held = claimed.get(key) ?? new Set<string>();
    for (const p of view.listing.panes) {
      if (held.has(p.id) || p.cwd !== workspace || !isAgentPane(p, view.backend)) continue;
      const name = nameForPane(p);
      if (!name) continue;
      const taken = data[section].some((r) => r.name === name && r.status === "running" && rowServer(r, section) === view.server);
      if (taken) continue;
      const kind = p.kind !== undefined && Object.hasOwn(KINDS, p.kind) ? p.kind : p.agent;
      const row: Row = {
        name,
        status: "running",
        // the kind and role mam started it with (tmux keeps them on the session, herdr in the
        // pane's label), else the agent herdr detects and a role guessed from the name
        role: p.role ?? guessRole(name),
        ...(kind ? { agent: kind } : {}),
        ...(view.backend === "herdr"
          ? { herdr_session: view.server, herdr_server: view.server, herdr_session_created_at: isoUtc(now), herdr_session_epoch: now }
          : { tmux_server: view.server, tmux_session_created_at: isoUtc(now), tmux_session_epoch: now }),
        ...(p.agentName && p.agentName !== name ? { herdr_agent_name: p.agentName } : {}),
        pane: {
          id: p.id,
          ...(p.pid !== undefined ? { pid: p.pid } : {}),
          ...(p.cmd !== undefined ? { cmd: p.cmd } : {}),
          ...(p.cmdFull !== undefined ? { cmd_full: p.cmdFull } : {}),
          cwd: p.cwd,
        },
        last_visible_status: "running",
        last_visible_note: MONITOR_NOTE,
      };
      if (kind && p.agentSessionId && !ownedIds.has(p.agentSessionId)) row[idField(kind)] = p.agentSessionId;
      held.add(p.id);
      drifts.push({ name, kind: "unregistered-pane", detail: `${view.backend} pane ${p.id} on '${view.server}'` });
      actions.push({ type: "register", section, server: view.server, row });
    }
  }
  return { rows: verdicts, drifts, actions };
}
