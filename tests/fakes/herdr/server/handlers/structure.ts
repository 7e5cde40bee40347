// ping, session.snapshot, workspace.*, tab.*, and the structural pane.* methods (herdr.md §3.3).
import { AREA, measure } from "../layout.ts";
import type { MethodDef } from "../context.ts";
import type { FakeHerdr } from "../core.ts";
import { ApiError, type Pane } from "../model.ts";

const ok = { type: "ok" };

function snapshot(h: FakeHerdr): Record<string, unknown> {
  const s = h.state;
  const fws = s.focusedWs();
  const snap: Record<string, unknown> = { version: h.cfg.version, protocol: h.cfg.protocol };
  if (fws) {
    snap.focused_workspace_id = fws.id;
    const t = s.activeTab(fws);
    if (t) snap.focused_tab_id = t.id;
    const p = s.focusedPane(fws);
    if (p) snap.focused_pane_id = p.id;
  }
  const tabs = s.workspaces.flatMap((w) => w.tabs);
  const panes = s.allPanes();
  snap.workspaces = s.workspaces.map((w) => s.workspaceInfo(w));
  snap.tabs = tabs.map((t) => s.tabInfo(t));
  snap.panes = panes.map((p) => s.paneInfo(p));
  snap.layouts = tabs.map((t) => {
    const m = t.layout ? measure(t.layout) : { panes: [], splits: [] };
    const focused = t.panes.find((p) => p.id === t.focusedPaneId) ?? t.orderedPanes()[0];
    return {
      workspace_id: t.ws.id,
      tab_id: t.id,
      zoomed: false,
      area: { ...AREA },
      focused_pane_id: focused?.id ?? "",
      panes: m.panes.map((x) => ({ pane_id: x.pane_id, focused: x.pane_id === focused?.id, rect: x.rect })),
      splits: m.splits,
    };
  });
  snap.agents = panes.filter(hostsAgent).map((p) => s.agentInfo(p));
  return snap;
}

export function hostsAgent(p: Pane): boolean {
  return p.agent !== undefined || p.pending !== undefined || p.name !== undefined;
}

function label(v: unknown): string | undefined {
  return typeof v === "string" && v !== "" ? v : undefined;
}

export const structureMethods: Record<string, MethodDef> = {
  ping: {
    run: (h) => ({ type: "pong", version: h.cfg.version, protocol: h.cfg.protocol, capabilities: { live_handoff: true, detached_server_daemon: false } }),
  },
  "session.snapshot": { run: (h) => ({ type: "session_snapshot", snapshot: snapshot(h) }) },
  "server.stop": {
    run: (h) => {
      h.requestStop();
      return ok;
    },
  },

  "workspace.create": {
    run: (h, p) => {
      const r = h.createWorkspace({ cwd: p.cwd, label: label(p.label), focus: p.focus === true, env: p.env });
      return { type: "workspace_created", workspace: h.state.workspaceInfo(r.ws), tab: h.state.tabInfo(r.tab), root_pane: h.state.paneInfo(r.pane) };
    },
  },
  "workspace.list": { run: (h) => ({ type: "workspace_list", workspaces: h.state.workspaces.map((w) => h.state.workspaceInfo(w)) }) },
  "workspace.get": { run: (h, p) => ({ type: "workspace_info", workspace: h.state.workspaceInfo(h.state.workspace(p.workspace_id)) }) },
  "workspace.focus": {
    run: (h, p) => {
      const ws = h.state.workspace(p.workspace_id);
      h.focusWorkspace(ws);
      return { type: "workspace_info", workspace: h.state.workspaceInfo(ws) };
    },
  },
  "workspace.rename": {
    run: (h, p) => {
      const ws = h.state.workspace(p.workspace_id);
      ws.customLabel = p.label;
      h.hub.emit("workspace_renamed", { workspace_id: ws.id, label: p.label });
      return { type: "workspace_info", workspace: h.state.workspaceInfo(ws) };
    },
  },
  "workspace.close": {
    run: (h, p) => {
      h.closeWorkspace(h.state.workspace(p.workspace_id));
      return ok;
    },
  },

  "tab.create": {
    run: (h, p) => {
      const ws = p.workspace_id ? h.state.workspace(p.workspace_id) : h.state.focusedWs();
      if (!ws) throw new ApiError("workspace_not_found", "no active workspace");
      const r = h.createTab(ws, { cwd: p.cwd, label: label(p.label), focus: p.focus === true, env: p.env });
      return { type: "tab_created", tab: h.state.tabInfo(r.tab), root_pane: h.state.paneInfo(r.pane) };
    },
  },
  "tab.list": {
    run: (h, p) => {
      const wss = p.workspace_id ? [h.state.workspace(p.workspace_id)] : h.state.workspaces;
      return { type: "tab_list", tabs: wss.flatMap((w) => w.tabs).map((t) => h.state.tabInfo(t)) };
    },
  },
  "tab.get": { run: (h, p) => ({ type: "tab_info", tab: h.state.tabInfo(h.state.tab(p.tab_id)) }) },
  "tab.focus": {
    run: (h, p) => {
      const t = h.state.tab(p.tab_id);
      h.focusTab(t);
      return { type: "tab_info", tab: h.state.tabInfo(t) };
    },
  },
  "tab.rename": {
    run: (h, p) => {
      const t = h.state.tab(p.tab_id);
      t.customLabel = label(p.label);
      h.hub.emit("tab_renamed", { tab_id: t.id, workspace_id: t.ws.id, label: h.state.tabInfo(t).label });
      return { type: "tab_info", tab: h.state.tabInfo(t) };
    },
  },
  "tab.close": {
    run: (h, p) => {
      h.closeTab(h.state.tab(p.tab_id));
      return ok;
    },
  },

  "pane.list": {
    run: (h, p) => {
      const wss = p.workspace_id ? [h.state.workspace(p.workspace_id)] : h.state.workspaces;
      return { type: "pane_list", panes: wss.flatMap((w) => w.panes()).map((x) => h.state.paneInfo(x)) };
    },
  },
  "pane.get": { run: (h, p) => ({ type: "pane_info", pane: h.state.paneInfo(h.state.pane(p.pane_id)) }) },
  "pane.current": {
    run: (h, p) => {
      const pane = p.caller_pane_id ? h.state.pane(p.caller_pane_id) : h.state.focusedPane(h.state.focusedWs());
      if (!pane) throw new ApiError("pane_not_found", "no focused pane");
      return { type: "pane_current", pane: h.state.paneInfo(pane) };
    },
  },
  "pane.focus": {
    run: (h, p) => {
      const pane = h.state.pane(p.pane_id);
      h.focusPane(pane);
      return { type: "pane_info", pane: h.state.paneInfo(pane) };
    },
  },
  "pane.split": {
    run: (h, p) => {
      let target: Pane | undefined;
      if (p.target_pane_id) target = h.state.findPane(p.target_pane_id);
      else if (p.workspace_id) {
        const ws = h.state.workspaces.find((w) => w.id === p.workspace_id);
        if (!ws) throw new ApiError("workspace_not_found", `workspace ${p.workspace_id} not found`);
        target = h.state.focusedPane(ws);
      } else target = h.state.focusedPane(h.state.focusedWs());
      if (!target) throw new ApiError("pane_not_found", "pane not found");
      const ratio = typeof p.ratio === "number" ? Math.min(0.9, Math.max(0.1, p.ratio)) : 0.5;
      const pane = h.splitPane(target, p.direction, ratio, { cwd: p.cwd, focus: p.focus === true, env: p.env });
      return { type: "pane_info", pane: h.state.paneInfo(pane) };
    },
  },
  "pane.rename": {
    run: (h, p) => {
      const pane = h.state.pane(p.pane_id);
      // herdr keeps the label less its leading and trailing blanks; a blank one clears it
      // (0.8.2 src/terminal/state.rs set_manual_label)
      const l = typeof p.label === "string" && p.label.trim() !== "" ? p.label.trim() : undefined;
      if (l !== pane.label) {
        pane.label = l;
        pane.revision++;
        h.hub.emit("pane_updated", { pane: h.state.paneInfo(pane) });
      }
      return { type: "pane_info", pane: h.state.paneInfo(pane) };
    },
  },
  "pane.close": {
    run: (h, p) => {
      h.closePane(h.state.pane(p.pane_id));
      return ok;
    },
  },
  "pane.layout": {
    run: (h, p) => {
      const pane = p.pane_id ? h.state.pane(p.pane_id) : h.state.focusedPane(h.state.focusedWs());
      if (!pane) throw new ApiError("pane_not_found", "pane not found");
      const t = pane.tab;
      const m = t.layout ? measure(t.layout) : { panes: [], splits: [] };
      const focused = t.panes.find((x) => x.id === t.focusedPaneId) ?? t.orderedPanes()[0];
      return {
        type: "pane_layout",
        layout: {
          workspace_id: t.ws.id,
          tab_id: t.id,
          zoomed: false,
          area: { ...AREA },
          focused_pane_id: focused?.id ?? "",
          panes: m.panes.map((x) => ({ pane_id: x.pane_id, focused: x.pane_id === focused?.id, rect: x.rect })),
          splits: m.splits,
        },
      };
    },
  },
};

