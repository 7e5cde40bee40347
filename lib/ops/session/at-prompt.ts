// Typing into an agent, safely: mam types only into an agent at its input prompt, never into a
// dialog (a start dialog such as "trust this folder", a permission prompt: text + Enter would
// answer it for the user), and checks that what it typed was submitted, not left in the input box.
// Shared by create / resume (the onboarding), job submit and the daemon (job texts), and stop.
// deliver() is the one place mam types a text into an agent, so it is where the text is made safe
// to type (typeable, lib/sys/sanitize.ts: no control character or escape sequence of a prompt or a
// relayed detail reaches the pane raw) and where a shell is kept from running prose (a kind that
// reads commands gets only a job's command line).
//
// What mam sees of a pane: herdr's agent status (tmux has none) and the screen detector's verdict
// on the visible screen (lib/agents/screen/detect.ts), which knows each kind's prompt, dialogs and
// input box. herdr 0.8.0 counts claude's first-run trust dialog as idle: the screen wins.
// MAM_SCREEN_DETECT=0 leaves the screen out (then only herdr's status speaks). A look and the
// typing are two steps: herdr 0.8.2 itself refuses a prompt to an agent that became blocked in
// between (agent_blocked; mam checks first on 0.8.0), which the caller sees as the same dialog.
import type { ScreenVerdict } from "../../agents/screen/detect.ts";
import { AgentBlocked, AgentGone, type LiveStatus, type Mux, type MuxPane, type PaneScreen } from "../../mux/types.ts";
import { readsCommands } from "../../agents/kinds/index.ts";
import { EXIT, MamError } from "../../sys/errors.ts";
import { type Notice, warning } from "../../sys/notice.ts";
import type { Env } from "../../sys/paths.ts";
import { typeable } from "../../sys/sanitize.ts";
import type { TextKind } from "../../jobs/runtime.ts";
import { paneAgentGone } from "./probe.ts";

export type PaneState =
  /** at its input prompt: text may be typed */
  | { at: "prompt" }
  /** waiting for the user: a start dialog, a permission prompt, a question */
  | { at: "dialog"; dialog: "start" | "permission" | "limit" | "question"; name?: string; reason?: string }
  | { at: "working" }
  /** nothing known says where it is (a kind without screen rules, a screen no rule matches) */
  | { at: "unknown" }
  | { at: "gone"; why: string };

/** pure: where the agent is, from herdr's status (tmux: unknown) and the screen's verdict (undefined: not looked) */
export function paneStateOf(status: LiveStatus, v: ScreenVerdict | undefined): PaneState {
  if (v?.state === "blocked") {
    return { at: "dialog", dialog: v.dialog ?? "question", ...(v.name ? { name: v.name } : {}), ...(v.reason ? { reason: v.reason } : {}) };
  }
  if (status === "blocked") return { at: "dialog", dialog: "question", reason: "herdr reports it blocked" };
  if (v?.state === "working" || status === "working") return { at: "working" };
  if (v?.state === "idle" || status === "idle" || status === "done") return { at: "prompt" };
  return { at: "unknown" };
}

/** "its "trust this folder" dialog", "a permission prompt (Bash command: …)": what the agent waits at */
export function waitingAt(s: Extract<PaneState, { at: "dialog" }>): string {
  const why = s.reason ? ` (${s.reason})` : "";
  if (s.dialog === "start") return s.name ? `its "${s.name}" dialog` : `a start dialog${why}`;
  if (s.dialog === "permission") return `a permission prompt${why}`;
  if (s.dialog === "limit") return `its usage limit's menu${why}`;
  return `a question${why}`;
}

/** what a refused prompt (AgentBlocked) says the agent waits at: herdr only knows it is blocked */
export const BLOCKED_AT: Extract<PaneState, { at: "dialog" }> = { at: "dialog", dialog: "question", reason: "herdr reports it blocked" };

/** how the user gets to the pane to answer it */
export function answerHint(backend: "herdr" | "tmux", server: string, name: string, paneId: string): string {
  return backend === "tmux" ? `tmux -L ${server} attach -t ${name}` : `herdr --session ${server}, pane ${paneId}`;
}

/**
 * look at the pane once: gone, a dialog, working, at its prompt, unknown. herdr: `listed` is the
 * pane as a listing just showed it (else mam lists the panes itself).
 */
export async function lookAt(mux: Mux, paneId: string, kind: string, env: Env, listed?: MuxPane): Promise<PaneState> {
  return (await lookWithScreen(mux, paneId, kind, env, listed)).state;
}

/** lookAt, with the screen it read (so that typing right after it need not read it again) */
async function lookWithScreen(mux: Mux, paneId: string, kind: string, env: Env, listed?: MuxPane): Promise<{ state: PaneState; screen?: PaneScreen }> {
  const gone = (why: string) => ({ state: { at: "gone" as const, why } });
  let status: LiveStatus = "unknown";
  if (mux.backend === "herdr") {
    let pane = listed;
    if (!pane) {
      const l = await mux.list();
      if (l.state === "ok") {
        pane = l.panes.find((p) => p.id === paneId);
        if (!pane) return gone("its pane is gone");
        listed = pane; // its title is the screen's (no pane get)
      }
    }
    if (pane) {
      if (await paneAgentGone(mux, pane, kind)) return gone(`its agent exited; pane ${paneId} is a bare shell`);
      status = pane.status;
    }
  }
  let verdict: ScreenVerdict | undefined;
  let screen: PaneScreen | undefined;
  if (env.MAM_SCREEN_DETECT !== "0") {
    const { detectScreen } = await import("../../agents/screen/detect.ts");
    try {
      screen = await mux.screen(paneId, listed);
      verdict = detectScreen(kind, screen);
    } catch (e) {
      // tmux panes end with their agent
      if (mux.backend === "tmux" && (e as { kind?: string }).kind === "missing") return gone("its pane is gone (the agent exited)");
    }
  }
  return { state: paneStateOf(status, verdict), screen };
}

/** seconds create and resume wait for a new agent's input prompt (MAM_PROMPT_WAIT_S, default 30) */
export function promptWaitMs(env: Env): number {
  const raw = env.MAM_PROMPT_WAIT_S;
  const v = Number(raw);
  return raw !== undefined && raw !== "" && Number.isFinite(v) && v >= 0 ? v * 1000 : 30_000;
}

/**
 * ms the prompt must stay in view before a new agent counts as at it: Gemini CLI 0.61.0 draws its
 * input box about 0.2 s before its trust dialog replaces the screen, and text typed on that first
 * box answers the dialog (shared/reference/real-gemini.md)
 */
export const PROMPT_STEADY_MS = 1_000;

/**
 * look until the agent is at its prompt (seen steadily for PROMPT_STEADY_MS), at a dialog or gone,
 * for up to waitMs; else the last look (the prompt, when it was in view but not yet for long).
 * `started`: the pane as the start just returned it (herdr: its status and title), which the
 * first look uses instead of listing the panes again. `expected`: the start dialog the agent's own
 * records say it will show (read again at every look; null: none): while it names one, a prompt
 * in view does not count (the input box a TUI draws before its dialog is not its prompt), and at
 * the end of the wait the agent is taken to wait at that dialog, shown or not yet. `loaded`: a
 * resumed agent's records say it has loaded its conversation (false: a prompt in view does not
 * count yet; the caller checks it again after the wait)
 */
export async function waitForPrompt(
  mux: Mux,
  paneId: string,
  kind: string,
  env: Env,
  waitMs: number,
  started?: MuxPane,
  signal?: AbortSignal,
  expected?: () => string | null,
  loaded?: () => boolean,
): Promise<PaneState> {
  const deadline = Date.now() + waitMs;
  let since: number | undefined;
  for (let first = true; ; first = false) {
    const s = await lookAt(mux, paneId, kind, env, first && started?.id === paneId ? started : undefined);
    if (s.at === "dialog" || s.at === "gone") return s;
    const dialog = expected?.() ?? null;
    if (s.at !== "prompt" || dialog !== null || (loaded && !loaded())) since = undefined;
    else if (waitMs === 0 || Date.now() - (since ??= Date.now()) >= PROMPT_STEADY_MS) return s;
    // the caller was interrupted (a create's Ctrl-C): the last look
    if (Date.now() >= deadline || signal?.aborted) return dialog !== null ? expectedDialog(kind, dialog) : s;
    await Bun.sleep(200);
  }
}

/** pure: the state of an agent whose records say it shows start dialog `name` (on screen or not yet) */
export function expectedDialog(kind: string, name: string): Extract<PaneState, { at: "dialog" }> {
  return { at: "dialog", dialog: "start", name, reason: `${kind}'s own settings say it asks this at start` };
}

/**
 * pure: after the wait, may mam type into the new agent? At its prompt yes; at a dialog or gone
 * never; still working yes (a busy agent queues the text); unknown only when mam did not wait
 * (MAM_PROMPT_WAIT_S=0) or cannot know the kind's prompt (no screen rules)
 */
export function mayType(s: PaneState, knowsPrompt: boolean, waited: boolean): boolean {
  if (s.at === "prompt" || s.at === "working") return true;
  if (s.at === "unknown") return !knowsPrompt || !waited;
  return false;
}

/** pure: does the input box still hold `text` (or the agent's stand-in for a paste)? */
export function holdsText(box: string, text: string): boolean {
  const norm = (s: string) => s.replace(/\s+/g, " ").trim().toLowerCase();
  const b = norm(box);
  if (b === "") return false;
  if (b.includes("[pasted")) return true;
  const head = norm(text.split("\n").find((l) => l.trim() !== "") ?? "").slice(0, 24);
  return head !== "" && b.includes(head);
}

export type PromptOutcome = "submitted" | "unchecked" | "left-in-box";

/** ms a TUI at its prompt may take to show typed text in its input box (real ones: well under 1 s) */
const LAND_MS = 2_000;
/** ms between the text showing in the box and Enter: an Enter inside the typing burst is taken as part of a paste */
const ENTER_GAP_MS = 300;
/** ms to see the box clear after an Enter */
const LEAVE_MS = 2_000;

/** what the input box shows of the text: holds it, clear of it, a dialog instead, or no box to see */
type BoxView = "holds" | "clear" | "dialog" | "unseen";

async function pollFor(look: () => Promise<BoxView>, done: (v: BoxView) => boolean, ms: number): Promise<BoxView> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await look();
    if (done(v) || Date.now() >= end) return v;
    await Bun.sleep(150);
  }
}

/** a shell runs what is typed: text (not a job's command line) is refused before anything is typed */
function refuseProseIntoShell(kind: string, paneId: string, as: TextKind): void {
  if (as === "prose" && readsCommands(kind)) {
    throw new MamError(
      `the ${kind} in ${paneId} would run the text as commands; nothing was typed`,
      EXIT.USAGE,
      "a shell session takes jobs whose prompt is a command (mam runs it), and no other text",
    );
  }
}

/**
 * submit `text` to the agent, made safe to type first (typeable: control characters and escape
 * sequences shown as `\x1b`, line breaks kept; never prose into a shell). Where mam can see the
 * agent's input box (tmux, kinds whose rules name one, the box on screen) it types the text, waits
 * until the box shows it, presses Enter, and checks the box let go of it: while the box still holds
 * it, Enter again (twice at the most). Never presses anything at a dialog. Elsewhere: Mux.submit,
 * unchecked.
 */
export async function deliver(mux: Mux, paneId: string, kind: string, raw: string, managed: boolean, env: Env, seen?: PaneScreen, as: TextKind = "prose"): Promise<PromptOutcome> {
  refuseProseIntoShell(kind, paneId, as);
  const text = typeable(raw);
  const detect = mux.backend === "tmux" && env.MAM_SCREEN_DETECT !== "0" ? await import("../../agents/screen/detect.ts") : undefined;
  if (!detect?.hasInputBox(kind)) {
    await mux.submit(paneId, text, managed);
    return "unchecked";
  }
  /** the box's view of a screen: the one the caller just read, once, else a fresh read */
  const look = async (): Promise<BoxView> => {
    let sc = seen;
    seen = undefined;
    try {
      sc ??= await mux.screen(paneId);
    } catch {
      return "unseen";
    }
    if (detect.detectScreen(kind, sc).state === "blocked") return "dialog";
    const box = detect.inputBoxText(kind, sc);
    return box === undefined ? "unseen" : holdsText(box, text) ? "holds" : "clear";
  };
  // no input box on screen (an agent whose screen mam does not know): typed and sent unchecked
  const before = await look();
  if (before === "dialog") throw new MamError(`a dialog opened in ${paneId} just before mam typed; nothing was typed`, EXIT.FAIL, "answer it there, then try again");
  if (before === "unseen") {
    await mux.submit(paneId, text, managed);
    return "unchecked";
  }
  await mux.sendText(paneId, text, false);
  const landed = await pollFor(look, (v) => v === "holds" || v === "dialog", LAND_MS);
  // a dialog opened under the text: no Enter into it
  if (landed === "dialog") return "left-in-box";
  await Bun.sleep(ENTER_GAP_MS);
  for (let enter = 0; ; enter++) {
    await mux.sendKeys(paneId, ["Enter"]);
    const v = await pollFor(look, (x) => x !== "holds", LEAVE_MS);
    if (v !== "holds") return landed === "holds" ? "submitted" : "unchecked";
    if (enter === 2) return "left-in-box";
  }
}

/**
 * type a text into a running session's agent (job header, review, feedback, cancel notice; a
 * shell's job command line as "command"): look first, refuse a dialog (MamError exit 1, nothing
 * typed) or a gone agent (AgentGone), deliver; a warning line when the text stayed in the input box
 */
export async function typeInto(
  mux: Mux,
  s: { name: string; paneId: string; agent: string; backend: "herdr" | "tmux"; server: string },
  text: string,
  managed: boolean,
  env: Env,
  as: TextKind = "prose",
): Promise<Notice | undefined> {
  refuseProseIntoShell(s.agent, s.paneId, as);
  const { state: st, screen } = await lookWithScreen(mux, s.paneId, s.agent, env);
  if (st.at === "gone") throw new AgentGone(s.paneId, st.why);
  const atDialog = (d: Extract<PaneState, { at: "dialog" }>) =>
    new MamError(`session '${s.name}' waits at ${waitingAt(d)} in ${s.paneId}; nothing was typed`, EXIT.FAIL, `answer it there (${answerHint(s.backend, s.server, s.name, s.paneId)}), then try again`);
  if (st.at === "dialog") throw atDialog(st);
  let delivery: PromptOutcome;
  try {
    delivery = await deliver(mux, s.paneId, s.agent, text, managed, env, screen, as);
  } catch (e) {
    // blocked between the look and the typing: herdr refused it, nothing was typed
    if (e instanceof AgentBlocked) throw atDialog(BLOCKED_AT);
    throw e;
  }
  return delivery === "left-in-box" ? warning(`the text stayed in ${s.name}'s input box in ${s.paneId}: press Enter there (${answerHint(s.backend, s.server, s.name, s.paneId)})`) : undefined;
}
