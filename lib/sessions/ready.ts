// May mam type its onboarding prompt into a freshly started agent now? (audit #6; shared by the
// herdr and tmux sides: one decision, fed by whatever the backend can see.)
//
// herdr counts an agent as started once it is `idle` OR `blocked` after its settle time
// (src/terminal/state.rs:1874-1886), and 0.8.0's rules see claude's first-run "trust this folder"
// dialog as idle. Text typed into a dialog answers it (Enter takes the default) and the onboarding
// is lost, so mam never types into one: it waits while the agent works, and gives up on a dialog
// or a `blocked` agent, leaving it for the user (mam never answers start dialogs).
//
// Inputs: the multiplexer's status of the pane and, where available, the screen detector's
// verdict (lib/agents/screen/detect.ts on the agent-state branch: { state, dialog? }).
import type { LiveStatus } from "../mux/types.ts";

/** the screen detector's verdict, as far as this decision needs it */
export interface ScreenHint {
  state: "working" | "blocked" | "idle" | "unknown";
  reason?: string;
  dialog?: "start" | "permission";
}

export type Readiness =
  /** type the prompt now */
  | { kind: "ready" }
  /** look again a little later (the agent is busy) */
  | { kind: "wait"; why: string }
  /** do not type at all: the agent waits for the user */
  | { kind: "refuse"; why: string };

export function onboardReadiness(status: LiveStatus, screen?: ScreenHint): Readiness {
  if (screen?.dialog) return { kind: "refuse", why: `it shows a ${screen.dialog} dialog${screen.reason ? ` (${screen.reason})` : ""}` };
  if (status === "blocked" || screen?.state === "blocked") return { kind: "refuse", why: `it is waiting for a decision (blocked)${screen?.reason ? `: ${screen.reason}` : ""}` };
  if (status === "working" || screen?.state === "working") return { kind: "wait", why: "it is still working" };
  return { kind: "ready" };
}
