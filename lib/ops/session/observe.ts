// Looking at reality: one listing per server, then the pure classification. Shared by
// `mam status` (read-only) and `mam reconcile` (which then applies the actions).
import { existsSync } from "node:fs";
import type { Backend, MuxFactory, MuxPane } from "../../mux/types.ts";
import type { RegistryData, Row, Section } from "../../registry/types.ts";
import { readReport, reportIsFresh, reportsDir } from "../../agents/reports.ts";
import { rowEpoch } from "../../fleet/adopt.ts";
import { type Classification, type ServerView, classify, findPane, serverKey, serversOf } from "../../fleet/classify.ts";
import { serverOf } from "../../registry/rows.ts";
import { probeTyped } from "./probe.ts";
import { agentKind } from "../../agents/kinds/index.ts";
import type { Env } from "../../sys/paths.ts";
import type { Deps } from "../deps.ts";
import { rowAgent } from "../../fleet/rows.ts";
import type { Question } from "../../agents/screen/question.ts";

export interface Observation extends Classification {
  views: ServerView[];
  /** what the permission dialogs of blocked panes ask (ObserveOptions.questions), by pane */
  questions: Map<MuxPane, Question>;
}

/**
 * list every server the rows name (plus `extra`), one call each, in parallel; `screens`: per
 * serverKey, the panes whose screens that same call captures (tmux, lib/ops/session/live.ts)
 */
export async function listServers(
  data: RegistryData,
  muxFor: MuxFactory,
  extra: { backend: Backend; server: string }[] = [],
  screens: Map<string, string[]> = new Map(),
): Promise<ServerView[]> {
  const wanted = new Map<string, { backend: Backend; server: string }>();
  for (const s of [...serversOf(data), ...extra]) wanted.set(serverKey(s.backend, s.server), s);
  return Promise.all(
    [...wanted.values()].map(async ({ backend, server }): Promise<ServerView> => {
      try {
        const mux = muxFor(backend, server);
        const ids = screens.get(serverKey(backend, server)) ?? [];
        if (ids.length > 0 && mux.listWithScreens) return { backend, server, ...(await mux.listWithScreens(ids)) };
        return { backend, server, listing: await mux.list() };
      } catch (e) {
        return { backend, server, listing: { state: "unreachable", detail: (e as Error).message } };
      }
    }),
  );
}

/** conversation discovery for classify: the newest in the row's folder (its worktree, else the workspace), newer than the row, not owned */
export function discoverer(env: Env) {
  return (kind: string, sinceEpoch: number | undefined, exclude: Set<string>, cwd: string): string | undefined => {
    const store = agentKind(kind).store;
    const c = store?.newest(cwd, env);
    if (!c || exclude.has(c.id)) return undefined;
    if (sinceEpoch !== undefined && c.mtimeMs > 0 && c.mtimeMs < sinceEpoch * 1000 - 1000) return undefined;
    return c.id;
  };
}

/** the conversation id a row's agent reported through its hook, when the report is this agent's */
export function hookReportedId(ws: string) {
  let any: boolean | undefined;
  return (row: Row, section: Section, pane: MuxPane): string | undefined => {
    if (!(any ??= existsSync(reportsDir(ws)))) return undefined;
    const r = readReport(ws, row.name);
    if (!r?.session_id) return undefined;
    // this agent's: not from before the row's start, and from its pane when the report names one
    if (!reportIsFresh(r, { nowMs: r.at_ms, rowEpoch: rowEpoch(row, section), paneId: pane.id, staleMs: Infinity })) return undefined;
    return r.session_id;
  };
}

/**
 * herdr rows of kinds mam typed into a shell: look at their panes' foreground (liveness.ts), in
 * parallel, so that classify can tell a pane whose agent exited
 */
export async function probeTypedRows(data: RegistryData, views: ServerView[], muxFor: MuxFactory): Promise<void> {
  const looks: Promise<void>[] = [];
  for (const view of views) {
    if (view.backend !== "herdr" || view.listing.state !== "ok") continue;
    const panes = view.listing.panes;
    for (const row of data.herdr_sessions) {
      if (row.status !== "running" || serverOf(row, "herdr_sessions") !== view.server) continue;
      const agent = rowAgent(row);
      const pane = findPane(row, panes, "herdr_sessions");
      if (pane) looks.push(probeTyped(muxFor("herdr", view.server), pane, agent));
    }
  }
  await Promise.all(looks);
}

export interface ObserveOptions {
  /** work out LIVE of tmux panes only for these sessions (the daemon: the agents jobs wait on) */
  liveOnly?: Set<string>;
  /** read what blocked agents' permission dialogs ask (status, the daemon); off with MAM_SCREEN_DETECT=0 */
  questions?: boolean;
}

/** the registry's rows next to one listing per server they name (and `extra`), classified */
export async function observe(
  deps: Pick<Deps, "ws" | "env" | "muxFor" | "clock">,
  data: RegistryData,
  extra: { backend: Backend; server: string }[] = [],
  opts: ObserveOptions = {},
): Promise<Observation> {
  const { ws, env, muxFor } = deps;
  const tmuxRows = (data.tmux_sessions ?? []).length > 0;
  const live = tmuxRows ? await import("./live.ts") : undefined;
  const screens = live ? await live.screenTargets(data, ws, env, deps.clock.ms(), opts.liveOnly) : undefined;
  const views = await listServers(data, muxFor, extra, screens);
  // the time the panes were seen (not when the pass began): a pane registered now was there now,
  // so a create that began before it claimed it knows the registration is of its own pane
  const now = deps.clock.epoch();
  await probeTypedRows(data, views, muxFor);
  const questions = new Map<MuxPane, Question>();
  const ask = opts.questions === true && env.MAM_SCREEN_DETECT !== "0";
  if (live) await live.fillTmuxLive(data, views, muxFor, ws, env, deps.clock.ms(), opts.liveOnly, ask ? questions : undefined);
  if (ask) await (await import("./questions.ts")).readBlockedQuestions(data, views, muxFor, questions, opts.liveOnly);
  return { ...classify({ data, views, workspace: ws, now, discover: discoverer(env), folderExists: existsSync, reported: hookReportedId(ws) }), views, questions };
}
