// LIVE for tmux panes (SPEC §5.5): tmux has no agent status of its own, so mam works it out per
// pane, for the rows whose pane the listing found:
//   1. a fresh hook report of the session (lib/agents/reports.ts) wins;
//   2. else the screen-state detector (lib/agents/screen/detect.ts) on the pane's visible screen
//      and title, captured for all such panes of a server in the listing's own tmux call
//      (screenTargets says which before the listing; Mux.listWithScreens), so that a pass makes
//      ONE tmux call per server;
//   3. else "unknown".
// MAM_SCREEN_DETECT=0 turns step 2 off (hooks only). herdr panes keep herdr's own status.
// The result is written into the listed panes (status, reason, dialog, liveSource), so the pure
// classification (lib/fleet/classify.ts) and everything after it see it like herdr's status. What a
// permission dialog on a captured screen asks goes into `questions` when the caller wants it.
import { existsSync } from "node:fs";
import type { Question } from "../../agents/screen/question.ts";
import { readReport, reportIsFresh, reportsDir, staleMs } from "../../agents/reports.ts";
import { findPane, serverKey, type ServerView } from "../../fleet/classify.ts";
import type { MuxFactory, MuxPane } from "../../mux/types.ts";
import type { RegistryData, Row } from "../../registry/types.ts";
import type { Env } from "../../sys/paths.ts";
import { rowEpoch, rowServer } from "../../fleet/adopt.ts";

/** any agent has reported through a hook in this workspace (else a pass reads no report file) */
const hasReports = (ws: string): boolean => existsSync(reportsDir(ws));

export function screenDetectOn(env: Env): boolean {
  return env.MAM_SCREEN_DETECT !== "0";
}

interface Target {
  row: Row;
  pane: MuxPane;
  kind: string;
}

/**
 * the panes whose screens a LIVE pass will want, per tmux server (serverKey), before the listing:
 * the running rows' recorded panes, of kinds with screen rules, without a fresh hook report from
 * that pane. The listing captures them in its own call (Mux.listWithScreens); a row whose pane
 * the listing then finds under another id gets its screen in a call of its own.
 */
export async function screenTargets(data: RegistryData, ws: string, env: Env, nowMs: number, only?: Set<string>): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (!screenDetectOn(env)) return out;
  const rows = (data.tmux_sessions ?? []).filter((r) => r.status === "running" && (!only || only.has(r.name)) && typeof r.agent === "string" && typeof r.pane?.id === "string");
  if (rows.length === 0) return out;
  const { hasScreenRules } = await import("../../agents/screen/detect.ts");
  const stale = staleMs(env);
  const reports = hasReports(ws);
  for (const row of rows) {
    const paneId = row.pane!.id as string;
    if (!hasScreenRules(row.agent as string)) continue;
    const report = reports ? readReport(ws, row.name) : undefined;
    if (report && reportIsFresh(report, { nowMs, rowEpoch: rowEpoch(row, "tmux_sessions"), paneId, staleMs: stale })) continue;
    const key = serverKey("tmux", rowServer(row, "tmux_sessions"));
    out.set(key, [...(out.get(key) ?? []), paneId]);
  }
  return out;
}

/**
 * fill status/reason/dialog of the tmux panes that rows hold; `only` limits it to those sessions;
 * `questions` gets what each permission dialog the detector saw asks
 */
export async function fillTmuxLive(
  data: RegistryData,
  views: ServerView[],
  muxFor: MuxFactory,
  ws: string,
  env: Env,
  nowMs: number,
  only?: Set<string>,
  questions?: Map<MuxPane, Question>,
): Promise<void> {
  const stale = staleMs(env);
  const detect = screenDetectOn(env);
  const reports = hasReports(ws);
  const wanted: (Target & { server: string })[] = [];
  for (const row of data.tmux_sessions ?? []) {
    if (only && !only.has(row.name)) continue;
    const server = rowServer(row, "tmux_sessions");
    const view = views.find((v) => v.backend === "tmux" && v.server === server);
    if (!view || view.listing.state !== "ok") continue;
    const pane = findPane(row, view.listing.panes, "tmux_sessions");
    if (!pane) continue;
    const report = reports ? readReport(ws, row.name) : undefined;
    if (report && reportIsFresh(report, { nowMs, rowEpoch: rowEpoch(row, "tmux_sessions"), paneId: pane.id, staleMs: stale })) {
      pane.status = report.state;
      pane.liveSource = "hook";
      if (report.state === "blocked") {
        pane.reason = report.reason ?? "waiting for a decision (hook)";
        pane.dialog = "permission";
      }
      continue;
    }
    if (detect && typeof row.agent === "string") wanted.push({ row, pane, kind: row.agent, server });
  }
  if (wanted.length === 0) return;
  const { detectScreen, hasScreenRules, questionOf } = await import("../../agents/screen/detect.ts");
  // one capture call per server, for the panes of kinds that have screen rules
  const byServer = new Map<string, { server: string; targets: Target[] }>();
  for (const t of wanted) {
    if (!hasScreenRules(t.kind)) continue;
    const key = serverKey("tmux", t.server);
    if (!byServer.has(key)) byServer.set(key, { server: t.server, targets: [] });
    byServer.get(key)!.targets.push(t);
  }
  await Promise.all(
    [...byServer.values()].map(async ({ server, targets }) => {
      const mux = muxFor("tmux", server);
      // the screens the listing's own call captured; the others in one more call
      const pre = views.find((v) => v.backend === "tmux" && v.server === server)?.screens;
      const screens = new Map(pre ?? []);
      try {
        const ids = targets.map((t) => t.pane.id).filter((id) => !screens.has(id));
        if (ids.length > 0) {
          const got = mux.screens ? await mux.screens(ids) : new Map(await Promise.all(ids.map(async (id) => [id, await mux.screen(id)] as const)));
          for (const [id, sc] of got) screens.set(id, sc);
        }
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
        const q = questions && v.dialog === "permission" ? questionOf(t.kind, sc) : undefined;
        if (q) questions!.set(t.pane, q);
      }
    }),
  );
}
