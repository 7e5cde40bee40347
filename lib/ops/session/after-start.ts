// Right after create / resume started an agent: wait until it is at its input prompt, then type
// its onboarding (create). A start dialog (trust this folder, sign-in, first-run setup) is the
// user's to answer: mam types nothing into it, the session stays registered (status shows it
// blocked) and a WARNING says what the agent waits at and where to answer it. Never an error: the
// agent runs.
import { isHerdrManaged, startDialogOf } from "../../agents/kinds/index.ts";
import { AgentBlocked, type Mux, type MuxPane } from "../../mux/types.ts";
import { processEnviron } from "../../mux/procfs.ts";
import { type Notice, warning } from "../../sys/notice.ts";
import type { Env } from "../../sys/paths.ts";
import { answerHint, BLOCKED_AT, deliver, mayType, promptWaitMs, waitForPrompt, waitingAt } from "./at-prompt.ts";

export interface AfterStart {
  /** the agent showed its input prompt (false: a dialog, gone, or it never showed one in time) */
  at_prompt: boolean;
  /** what the agent waits at when it is not at its prompt ("its "trust this folder" dialog"), else null */
  waiting_at: string | null;
  /** the onboarding text: sent, not sent (the agent was not ready for it), or off (--no-onboard, resume) */
  onboarding: "sent" | "not sent" | "off";
  warnings: Notice[];
}

export interface StartedAgent {
  mux: Mux;
  name: string;
  kind: string;
  backend: "herdr" | "tmux";
  server: string;
  paneId: string;
  env: Env;
  /** the onboarding text to type once the agent is at its prompt (undefined: none) */
  text?: string;
  /** the folder the agent runs in (the workspace or its worktree): where its records say whether it asks a start dialog */
  cwd: string;
  /** the pane as the start returned it (a kind herdr manages: its status and title as `agent start` answered; the first look needs no listing) */
  started?: MuxPane;
  /** aborted (the create was interrupted): stop waiting for the prompt, type nothing */
  signal?: AbortSignal;
  /** the pid of the pane's process (the agent, or the shell that starts it): its environment says where the agent's records are */
  pid?: number;
  /** a resume: whether the agent's records say it has loaded the conversation (resumeLoadedOf; undefined: the screen alone decides) */
  loaded?: () => boolean;
}

/** does mam know when this kind is at its prompt (screen rules, or herdr's own status of a kind it manages) */
async function knowsPrompt(a: StartedAgent): Promise<boolean> {
  if (a.backend === "herdr" && isHerdrManaged(a.kind)) return true;
  if (a.env.MAM_SCREEN_DETECT === "0") return false;
  return (await import("../../agents/screen/detect.ts")).hasScreenRules(a.kind);
}

/**
 * pure: the environment the agent's records are found with: the agent's own (its multiplexer's,
 * as its process started: CLAUDE_CONFIG_DIR, ANTHROPIC_API_KEY, GEMINI_CLI_HOME …) when mam could
 * read it and it is that session's (MAM_SESSION), else mam's
 */
export function recordsEnv(own: Env, agent: Record<string, string> | undefined, session: string): Env {
  return agent && agent.MAM_SESSION === session ? agent : own;
}

export async function afterStart(a: StartedAgent): Promise<AfterStart> {
  // an agent whose prompt mam cannot see (no screen rules, not managed by herdr) gets one look
  // (a dialog is still seen when its kind has rules for one): nothing to wait for
  const known = await knowsPrompt(a);
  const waitMs = known ? promptWaitMs(a.env) : 0;
  // herdr's answer to a managed start is fresh (status and title as the agent came up); a typed
  // kind's pane record is the one claimed before its command ran, so its first look lists again
  const fresh = a.backend === "herdr" && isHerdrManaged(a.kind) ? a.started : undefined;
  const env = recordsEnv(a.env, a.pid !== undefined ? processEnviron(a.pid) : undefined, a.name);
  // what the agent's own records say about its start dialogs (gemini's folder trust): while they
  // say it will ask, nothing is typed, however steady the screen looks (a TUI may draw its input
  // box before the dialog, and on a loaded machine for longer than any wait)
  // and after a resume, whether it has loaded the conversation: until then its input box is not
  // its prompt (gemini draws it at once, then loads for seconds, and text typed meanwhile is lost)
  const st = await waitForPrompt(a.mux, a.paneId, a.kind, a.env, waitMs, fresh, a.signal, () => startDialogOf(a.kind, a.cwd, env), a.loaded);
  const hint = answerHint(a.backend, a.server, a.name, a.paneId);
  const notSent = a.text !== undefined ? "; the onboarding was not sent" : "";
  const out = (at_prompt: boolean, waiting_at: string | null, onboarding: AfterStart["onboarding"], warnings: string[]): AfterStart => ({ at_prompt, waiting_at, onboarding, warnings: warnings.map(warning) });
  const atDialog = (d: Extract<typeof st, { at: "dialog" }>) => {
    const at = waitingAt(d);
    return out(false, at, a.text !== undefined ? "not sent" : "off", [`${a.kind} waits at ${at} in ${a.paneId}: answer it there (${hint})${notSent}`]);
  };
  if (a.signal?.aborted) return out(st.at === "prompt", null, a.text !== undefined ? "not sent" : "off", []);
  if (st.at === "dialog") return atDialog(st);
  if (st.at === "gone") {
    return out(false, null, a.text !== undefined ? "not sent" : "off", [`${a.kind} in ${a.name} is gone after it started (${st.why})${notSent}; see: mam status`]);
  }
  if (a.loaded && !a.loaded()) {
    return out(false, null, a.text !== undefined ? "not sent" : "off", [
      `${a.kind} has not loaded its conversation within ${waitMs / 1000} s in ${a.paneId}: give it a job once it shows its prompt there (${hint})${notSent}`,
    ]);
  }
  if (!mayType(st, known, waitMs > 0)) {
    return out(false, null, a.text !== undefined ? "not sent" : "off", [
      `${a.kind} did not show its input prompt within ${waitMs / 1000} s in ${a.paneId}: look at it there (${hint})${notSent}`,
    ]);
  }
  const atPrompt = st.at === "prompt";
  if (a.text === undefined) return out(atPrompt, null, "off", []);
  try {
    const d = await deliver(a.mux, a.paneId, a.kind, a.text, isHerdrManaged(a.kind), a.env);
    if (d === "left-in-box") return out(atPrompt, null, "not sent", [`the onboarding stayed in ${a.name}'s input box in ${a.paneId}: press Enter there (${hint})`]);
  } catch (e) {
    // it went to a dialog after the look (herdr 0.8.2 refused the text; 0.8.0: mam's own check)
    if (e instanceof AgentBlocked) return atDialog(BLOCKED_AT);
    return out(atPrompt, null, "not sent", [`${a.name} started, but the onboarding could not be sent (${(e as Error).message}); send it instructions yourself`]);
  }
  return out(atPrompt, null, "sent", []);
}
