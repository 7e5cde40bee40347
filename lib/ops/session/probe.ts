// Looking at a herdr pane's foreground, for the kinds mam typed into its shell (aider, demo,
// shell): herdr may never have detected them, so only the foreground says whether the agent still
// runs (lib/fleet/liveness.ts decides from what is recorded here).
import { isHerdrManaged } from "../../agents/kinds/index.ts";
import { agentGone } from "../../fleet/liveness.ts";
import { nonShellForeground } from "../../mux/procfs.ts";
import type { Mux, MuxPane } from "../../mux/types.ts";

/**
 * Look at the foreground of a herdr pane whose agent kind herdr does not manage, and record it in
 * pane.shellOnly (one `pane process-info`); herdr-managed kinds and tmux need no look. A failed
 * look leaves it unknown (never "gone" on a guess).
 */
export async function probeTyped(mux: Mux, pane: MuxPane, agent: string | undefined): Promise<void> {
  if (mux.backend !== "herdr" || isHerdrManaged(agent) || pane.shellOnly !== undefined) return;
  try {
    const info = await mux.processInfo(pane.id);
    if (info.shellPid === undefined && info.foreground.length === 0) return; // the pane's child is gone: herdr says nothing
    pane.shellOnly = nonShellForeground(info).length === 0;
  } catch {}
}

/** the pane's agent is gone (looking at a typed kind's foreground first) */
export async function paneAgentGone(mux: Mux, pane: MuxPane, agent: string | undefined): Promise<boolean> {
  if (mux.backend !== "herdr") return false;
  await probeTyped(mux, pane, agent);
  return agentGone(pane, agent);
}
