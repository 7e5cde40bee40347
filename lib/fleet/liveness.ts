// Is a session's agent still in its pane? On herdr an agent that exits leaves its pane open as
// a bare shell (herdr types the agent's command into the pane's shell; src/app/agents.rs:193-214),
// so "the pane exists" is not "the agent lives" (audit #1):
// * herdr-managed kinds: herdr clears the pane's agent when it exits, so a pane with no agent and
//   status `unknown` has none left (src/app/api_helpers.rs:99-110);
// * kinds mam typed into the shell (aider, demo, shell): herdr may never have detected them; the
//   pane's foreground says it (`pane process-info`: only the shell left → gone; looked at by
//   lib/ops/session/probe.ts, which records it in pane.shellOnly).
// tmux panes end with their agent: the pane's existence is enough there.
import { isHerdrManaged } from "../agents/kinds/index.ts";
import type { MuxPane } from "../mux/types.ts";

/** pure: the herdr pane of a row whose agent kind is `agent` holds no agent any more */
export function agentGone(pane: MuxPane, agent: string | undefined): boolean {
  if (pane.shellOnly === true) return true;
  if (!isHerdrManaged(agent)) return false;
  return pane.agent === undefined && pane.agentName === undefined && pane.status === "unknown";
}
