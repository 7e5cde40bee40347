// May mam type its onboarding prompt into a freshly started agent now? (audit #6; shared by the
// herdr and tmux sides: one decision, fed by whatever the backend can see.)
//
// herdr counts an agent as started once it is `idle` OR `blocked` after its settle time
// (src/terminal/state.rs:1874-1886), and 0.8.0's rules see claude's first-run "trust this folder"
// dialog as idle. Text typed into a dialog answers it (Enter takes the default) and the onboarding
// is lost, so mam never types into one: it waits while the agent works, and gives up on a dialog
// or a `blocked` agent, leaving it for the user (mam never answers start dialogs).
//
// Inputs: the multiplexer's status of the pane (herdr's agent status; tmux has none) and the
// screen detector's verdict on the pane's visible screen (lib/agents/screen/detect.ts), which
// sees the dialogs herdr 0.8.0's rules miss. MAM_SCREEN_DETECT=0 leaves the screen out.
import type { Mux, LiveStatus } from "../mux/types.ts";
import type { Env } from "../sys/paths.ts";

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

/**
 * look at the new agent until it may get the onboarding prompt: ready, or refused (a dialog, a
 * blocked agent). While it works, look again for up to waitMs, then type anyway (a busy TUI
 * queues the prompt). A look that fails decides nothing by itself.
 */
export async function awaitOnboardReady(mux: Mux, paneId: string, kind: string, env: Env, waitMs = 10_000): Promise<Readiness> {
  const deadline = Date.now() + waitMs;
  const detect = env.MAM_SCREEN_DETECT !== "0";
  const { detectScreen } = detect ? await import("../agents/screen/detect.ts") : { detectScreen: undefined };
  for (;;) {
    let status: LiveStatus = "unknown";
    if (mux.backend === "herdr") {
      const l = await mux.list();
      status = (l.state === "ok" ? l.panes.find((p) => p.id === paneId)?.status : undefined) ?? "unknown";
    }
    let hint: ScreenHint | undefined;
    if (detectScreen) {
      try {
        hint = detectScreen(kind, await mux.screen(paneId));
      } catch {}
    }
    const r = onboardReadiness(status, hint);
    if (r.kind !== "wait") return r;
    if (Date.now() >= deadline) return { kind: "ready" };
    await Bun.sleep(250);
  }
}
