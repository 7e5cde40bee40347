// Starting an agent in a claimed herdr pane (SPEC §5.2 step 3), as real herdr 0.8.0 and 0.8.2
// behave (docs/herdr-compat.md):
//
// * herdr kinds: `herdr agent start NAME --kind K --pane P --timeout MS`. herdr types the kind's
//   command into the pane's shell and the CLI polls until the agent is ready (0.8.2: idle; an
//   agent blocked at a start dialog ends the call with agent_not_ready and keeps its name, which
//   the driver takes as started: herdr.ts). An agent that exits at start does NOT end the call
//   early: 0.8.0 and 0.8.2 keep polling and answer `timeout` after the whole --timeout
//   (src/cli/agent.rs wait_for_named_agent; audit #4). So mam watches the pane while the call
//   runs (`pane process-info` every START_WATCH_MS, the visible screen while nothing runs): the agent
//   was in the foreground and the bare shell is back (CONFIRM_MS), or the command was typed (the
//   screen changed) or something else ran and the bare shell stays (CONFIRM_UNSEEN_MS: a fresh
//   pane's startup files may still run), or nothing happened within GRACE_MS → "exited right
//   after start", with the pane's last output, in about a second.
// * a pane this claim created may still be running the user's shell startup files (pyenv, conda,
//   direnv hooks run children in the shell's process group), which herdr answers with
//   agent_pane_busy (src/platform/mod.rs:214-225; 0.8.2's CLI itself retries for 2 s): wait
//   until the shell is free, try again, bounded (audit #3). A reused pane that is busy belongs
//   to someone else: AgentPaneBusy.
// * typed kinds: `pane run P <command>`, then the command must own the terminal for settleMs.
// * the pane is labelled `mam:<name>` only once the claim is ours (our command is in its
//   foreground, or the start succeeded), never before.
import { basename } from "node:path";
import { EXIT, MamError } from "../sys/errors.ts";
import { lastOutput } from "./exec.ts";
import { HerdrError } from "./herdr-proto.ts";
import { isShellOnly, nonShellForeground } from "./procfs.ts";
import { AgentPaneBusy, type ForegroundProcess, type MuxPane, type ProcessInfo } from "./types.ts";

/** how often the pane is looked at while `agent start` runs */
export const START_WATCH_MS = 150;
/**
 * a command never seen in the foreground, with the pane's screen unchanged since the call began
 * (nothing typed yet, as far as we can see), counts as gone only after this long
 */
export const GRACE_MS = 5000;
/** the bare shell must be back this long (two looks) after the agent itself was seen */
export const CONFIRM_MS = 250;
/**
 * … and this long when the agent was never recognised (typed only, or something else ran: a
 * fresh pane's startup files may still run between their commands)
 */
export const CONFIRM_UNSEEN_MS = 1000;

/** one look at the pane: its foreground is the agent, something else, or the bare shell */
export type Look = "agent" | "other" | "shell";

/**
 * The pure half of the start watch: fed one look at the pane at a time (ms since the start call
 * began; what owns the foreground; has the screen changed since the call began, i.e. was the
 * command typed), it says when the agent is gone: the bare shell back for confirmMs after the
 * agent was seen, for confirmUnseenMs after it was typed or something ran, or nothing at all for
 * graceMs.
 */
export class StartWatch {
  private seen = false;
  private typed = false;
  private shellSince: number | undefined;

  constructor(
    private readonly graceMs = GRACE_MS,
    private readonly confirmMs = CONFIRM_MS,
    private readonly confirmUnseenMs = CONFIRM_UNSEEN_MS,
  ) {}

  /** the agent itself has been seen in the foreground */
  get appeared(): boolean {
    return this.seen;
  }

  /** true once the agent is gone */
  feed(elapsedMs: number, look: Look, screenChanged = false): boolean {
    if (screenChanged) this.typed = true;
    if (look !== "shell") {
      if (look === "agent") this.seen = true;
      else this.typed = true; // our command, unrecognised, or the shell's startup files
      this.shellSince = undefined;
      return false;
    }
    if (!this.seen && !this.typed && elapsedMs < this.graceMs) return false;
    this.shellSince ??= elapsedMs;
    return elapsedMs - this.shellSince >= (this.seen ? this.confirmMs : this.confirmUnseenMs);
  }
}

/** what the start logic needs from the herdr driver */
export interface HerdrOps {
  json(args: string[], opts?: { timeoutMs?: number; paneId?: string; signal?: AbortSignal }): Promise<Record<string, unknown>>;
  call(args: string[], opts?: { timeoutMs?: number; paneId?: string }): Promise<string>;
  processInfo(paneId: string): Promise<ProcessInfo>;
  read(paneId: string, lines: number): Promise<string>;
  /** the visible screen's text */
  visible(paneId: string): Promise<string>;
  close(paneId: string): Promise<void>;
  label(paneId: string, label: string): Promise<void>;
  /** the pane's record in `pane list`, undefined when it is gone */
  pane(paneId: string): Promise<MuxPane | undefined>;
}

/** read the pane's last lines, close it, throw the start failure of SPEC §5.2 */
export async function failStart(ops: HerdrOps, paneId: string, agent: string, how: string, typed: string): Promise<never> {
  let text = "";
  try {
    text = await ops.read(paneId, 50);
  } catch {}
  try {
    await ops.close(paneId);
  } catch {}
  throw new MamError(`${agent} ${how} in ${paneId}; last output: ${lastOutput(text, 5, typed)}`, EXIT.FAIL);
}

/** a foreground process is the agent `exe`: by its name, or the program or script it runs (node/bun/python wrappers) */
export function isExe(p: ForegroundProcess, exe: string): boolean {
  return [p.name, p.argv[0], p.argv[1]].some((w) => w !== undefined && basename(w) === exe);
}

/** the pane's bare shell owns its foreground now, and still does CONFIRM_MS later (or the pane is gone) */
async function bareShellStays(ops: HerdrOps, paneId: string): Promise<boolean> {
  const bare = async () => {
    try {
      const info = await look(ops, paneId);
      return info === undefined || nonShellForeground(info).length === 0;
    } catch {
      return false; // a failed look decides nothing
    }
  };
  if (!(await bare())) return false;
  await Bun.sleep(CONFIRM_MS);
  return bare();
}

/** processInfo, or undefined when the pane is gone */
async function look(ops: HerdrOps, paneId: string): Promise<ProcessInfo | undefined> {
  try {
    return await ops.processInfo(paneId);
  } catch (e) {
    if (e instanceof HerdrError && e.code === "pane_not_found") return undefined;
    throw e;
  }
}

/** wait (bounded) until nothing but the shell owns the pane's terminal; false on the deadline */
export async function waitShellFree(ops: HerdrOps, paneId: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    const info = await look(ops, paneId);
    if (!info) return false;
    if (info.shellPid !== undefined && isShellOnly(info)) return true;
    if (Date.now() >= deadline) return false;
    await Bun.sleep(100);
  }
}

export interface ManagedStart {
  args: string[];
  /** deadline of the whole CLI call */
  callMs: number;
  paneId: string;
  /** label to set once the claim is ours */
  label: string;
  /** the executable herdr types (the kind's): seeing it in the foreground means the claim is ours */
  exe: string;
}

/**
 * ok: herdr's answer, and the agent's process as the watch last saw it in the foreground (its pid
 * for the row, without another `pane process-info`; undefined when the start was too quick to see)
 */
export type ManagedOutcome = { kind: "ok"; result: Record<string, unknown>; agent?: ForegroundProcess } | { kind: "exited" };

/**
 * run `agent start` while watching the pane; "exited" as soon as the watch says the agent is
 * gone (the CLI call is then killed: herdr would only answer `timeout` at its deadline)
 */
export async function runManagedStart(ops: HerdrOps, s: ManagedStart): Promise<ManagedOutcome> {
  const ac = new AbortController();
  let labelled = false;
  const labelOnce = async () => {
    if (labelled) return;
    labelled = true;
    await ops.label(s.paneId, s.label).catch(() => {});
  };
  // the screen before the command is typed: a change later means it was typed (an agent that
  // exits before it is ever seen in the foreground is told from one not typed yet)
  const screenNow = () => ops.visible(s.paneId).catch(() => undefined);
  const before = await screenNow();
  const call = ops.json(s.args, { timeoutMs: s.callMs, paneId: s.paneId, signal: ac.signal }).then((result): ManagedOutcome => ({ kind: "ok", result }));
  let stop = false;
  // the watch's pause ends as soon as the call has answered: the create goes on at once, not
  // after the rest of a START_WATCH_MS pause
  let wake!: () => void;
  const stopped = new Promise<void>((r) => (wake = r));
  let seen: ForegroundProcess | undefined;
  const watch = (async (): Promise<ManagedOutcome | undefined> => {
    const w = new StartWatch();
    const t0 = Date.now();
    let changed = false;
    while (!stop) {
      await Promise.race([Bun.sleep(START_WATCH_MS), stopped]);
      if (stop) return undefined;
      let info: ProcessInfo | undefined;
      try {
        info = await look(ops, s.paneId);
      } catch {
        continue; // a failed look decides nothing
      }
      const fg = info ? nonShellForeground(info) : [];
      const mine = fg.find((p) => isExe(p, s.exe));
      const agent = mine !== undefined;
      if (mine) seen = mine;
      if (agent) await labelOnce();
      if (fg.length === 0 && !w.appeared && !changed && before !== undefined) {
        const text = await screenNow();
        changed = text !== undefined && text !== before;
      }
      const what: Look = agent ? "agent" : fg.length > 0 ? "other" : "shell";
      if (info === undefined || w.feed(Date.now() - t0, what, changed)) return { kind: "exited" };
    }
    return undefined;
  })();
  try {
    const first = await Promise.race([call, watch.then((v) => v ?? call)]);
    if (first.kind === "exited") {
      ac.abort();
      await call.catch(() => {});
    } else {
      stop = true;
      wake();
      await watch.catch(() => undefined);
      // herdr counts an agent ready from one look at it (idle, interactive): one that exits in the
      // same moment is gone by the time the call answers. A pane whose bare shell is back, and
      // still is a moment later, holds no agent: the start failed (audit #4, seen under load)
      if (await bareShellStays(ops, s.paneId)) return { kind: "exited" };
      await labelOnce();
    }
    return first.kind === "ok" && seen ? { ...first, agent: seen } : first;
  } finally {
    stop = true;
    wake();
    await watch.catch(() => undefined);
  }
}

/**
 * agent_pane_busy on a pane this claim created: the shell is still running its startup files.
 * Wait until it is free and return (try again). A pane that now hosts someone else's agent is
 * theirs: AgentPaneBusy (kept). One whose shell is still busy at the deadline is closed (nobody
 * uses it) and the start fails naming the wait.
 */
export async function busyFreshPane(ops: HerdrOps, pane: MuxPane, deadline: number, boundMs: number): Promise<void> {
  const now = await ops.pane(pane.id).catch(() => undefined);
  if (now && (now.agent !== undefined || now.status !== "unknown")) throw new AgentPaneBusy(pane.id);
  if (Date.now() < deadline && (await waitShellFree(ops, pane.id, deadline - Date.now()))) {
    await Bun.sleep(200); // free between two startup commands: give the next one its chance first
    return;
  }
  await ops.close(pane.id).catch(() => {});
  throw new MamError(
    `the shell of the new pane ${pane.id} was still busy after ${Math.round(boundMs / 1000)} s (its startup files were still running); the pane is closed`,
    EXIT.FAIL,
    "make the shell's startup files (.bashrc, .zshrc, .zprofile) finish sooner, or raise MAM_HERDR_SHELL_READY_S",
  );
}
