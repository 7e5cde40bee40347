// LIVE for tmux panes (SPEC §5.5): tmux has no agent status of its own, so mam works it out per
// pane, for the rows whose pane the listing found:
//   1. a fresh hook report of the session (lib/agents/reports.ts) wins;
//   2. else the screen-state detector (lib/agents/screen/detect.ts) on the pane's visible screen
//      and title, captured for all such panes of a server in ONE tmux call (Mux.screens);
//   3. else "unknown".
// MAM_SCREEN_DETECT=0 turns step 2 off (hooks only). herdr panes keep herdr's own status.
// The result is written into the listed panes (status, reason, dialog, liveSource), so the pure
// classification (monitor/classify.ts) and everything after it see it like herdr's status.
import { readReport, reportIsFresh, staleMs } from "../agents/reports.ts";
import { findPane, serverKey, type ServerView } from "../monitor/classify.ts";
import type { MuxPane, PaneScreen } from "../mux/types.ts";
import type { RegistryData, Row } from "../registry/types.ts";
import type { Env } from "../sys/paths.ts";
import { rowEpoch, rowServer } from "./adopt.ts";
import type { MuxFactory } from "./observe.ts";

export function screenDetectOn(env: Env): boolean {
  return env.MAM_SCREEN_DETECT !== "0";
}

interface Target {
  row: Row;
  pane: MuxPane;
  kind: string;
}

/** fill status/reason/dialog of the tmux panes that rows hold; `only` limits it to those sessions */
export async function fillTmuxLive(data: RegistryData, views: ServerView[], muxFor: MuxFactory, ws: string, env: Env, nowMs: number, only?: Set<string>): Promise<void> {
  const stale = staleMs(env);
  const detect = screenDetectOn(env);
  const byServer = new Map<string, { server: string; targets: Target[] }>();
  for (const row of data.tmux_sessions ?? []) {
    if (only && !only.has(row.name)) continue;
    const server = rowServer(row, "tmux_sessions");
    const view = views.find((v) => v.backend === "tmux" && v.server === server);
    if (!view || view.listing.state !== "ok") continue;
    const pane = findPane(row, view.listing.panes, "tmux_sessions");
    if (!pane) continue;
    const report = readReport(ws, row.name);
    if (report && reportIsFresh(report, { nowMs, rowEpoch: rowEpoch(row, "tmux_sessions"), paneId: pane.id, staleMs: stale })) {
      pane.status = report.state;
      pane.liveSource = "hook";
      if (report.state === "blocked") {
        pane.reason = report.reason ?? "waiting for a decision (hook)";
        pane.dialog = "permission";
      }
      continue;
    }
    if (!detect || typeof row.agent !== "string") continue;
    const key = serverKey("tmux", server);
    if (!byServer.has(key)) byServer.set(key, { server, targets: [] });
    byServer.get(key)!.targets.push({ row, pane, kind: row.agent });
  }
  if (byServer.size === 0) return;
  const { detectScreen } = await import("../agents/screen/detect.ts");
  await Promise.all(
    [...byServer.values()].map(async ({ server, targets }) => {
      const mux = muxFor("tmux", server);
      let screens: Map<string, PaneScreen>;
      try {
        screens = mux.screens ? await mux.screens(targets.map((t) => t.pane.id)) : new Map();
      } catch {
        return; // the server failed between listing and capture: LIVE stays unknown
      }
      for (const t of targets) {
        const sc = screens.get(t.pane.id);
        if (!sc) continue;
        const v = detectScreen(t.kind, sc);
        t.pane.status = v.state;
        if (v.state !== "unknown") t.pane.liveSource = "screen";
        if (v.reason) t.pane.reason = v.reason;
        if (v.dialog) t.pane.dialog = v.dialog;
      }
    }),
  );
}
