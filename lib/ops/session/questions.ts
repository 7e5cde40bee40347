// What blocked agents ask, as data (lib/agents/screen/question.ts), for the panes whose screen mam
// has not read yet: herdr panes herdr reports blocked (mam runs no detector on them) and tmux panes
// a hook report says are blocked. Only blocked panes of kinds whose rules read questions are read:
// one screen per such pane (tmux: one call per server for all of them). A pane whose screen cannot
// be read, or whose dialog no rule reads, simply has no question.
import type { Question } from "../../agents/screen/question.ts";
import { findPane, serverKey, type ServerView } from "../../fleet/classify.ts";
import { rowAgent } from "../../fleet/rows.ts";
import type { MuxFactory, MuxPane, PaneScreen } from "../../mux/types.ts";
import { backendOf, serverOf } from "../../registry/rows.ts";
import { type RegistryData, SECTIONS } from "../../registry/types.ts";

/** add to `questions` what the blocked panes rows hold ask (those not in it yet; `only`: these sessions) */
export async function readBlockedQuestions(data: RegistryData, views: ServerView[], muxFor: MuxFactory, questions: Map<MuxPane, Question>, only?: Set<string>): Promise<void> {
  const { questionOf, readsQuestions } = await import("../../agents/screen/detect.ts");
  const byServer = new Map<string, { view: ServerView; targets: { pane: MuxPane; kind: string }[] }>();
  for (const section of SECTIONS) {
    for (const row of data[section]) {
      if (row.status !== "running" || (only && !only.has(row.name))) continue;
      const kind = rowAgent(row);
      if (!kind || !readsQuestions(kind)) continue;
      const backend = backendOf(section);
      const key = serverKey(backend, serverOf(row, section));
      const view = views.find((v) => serverKey(v.backend, v.server) === key);
      if (!view || view.listing.state !== "ok") continue;
      const pane = findPane(row, view.listing.panes, section);
      if (!pane || pane.status !== "blocked" || pane.dialog === "start" || questions.has(pane)) continue;
      if (!byServer.has(key)) byServer.set(key, { view, targets: [] });
      byServer.get(key)!.targets.push({ pane, kind });
    }
  }
  await Promise.all(
    [...byServer.values()].map(async ({ view, targets }) => {
      const mux = muxFor(view.backend, view.server);
      let screens: Map<string, PaneScreen>;
      try {
        const ids = targets.map((t) => t.pane.id);
        const one = (id: string) => mux.screen(id).then((sc) => [[id, sc] as const], () => []);
        screens = mux.screens ? await mux.screens(ids) : new Map((await Promise.all(ids.map(one))).flat());
      } catch {
        return; // the server failed since it was listed: no question
      }
      for (const t of targets) {
        const sc = screens.get(t.pane.id);
        const q = sc ? questionOf(t.kind, sc) : undefined;
        if (q) questions.set(t.pane, q);
      }
    }),
  );
}
