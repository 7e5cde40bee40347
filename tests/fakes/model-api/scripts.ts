// Ready-made scripts for the model endpoint (server.ts): what a well-behaved agent does with
// mam's texts. Pure functions of the Turn, so a test reads as its script.
import type { Reply, Script, Turn } from "./server.ts";

/**
 * the `<mam> job event <id> <event> …` line of a mam text (job header, review, feedback), whole:
 * <mam> is `mam`, an absolute path (quoted when it needs it) or bun and mam.ts (agentMam)
 */
export function eventLine(text: string, event: string): string | undefined {
  const m = new RegExp(`^\\s*(\\S.* job event [0-9a-f]{8} ${event} .*)$`, "m").exec(text);
  return m?.[1];
}

/** fill in the quoted placeholder detail of a header line */
export function withDetail(line: string, detail: string): string {
  return line.replace(/--detail "[^"]*"$/, `--detail "${detail.replaceAll('"', "")}"`);
}

/** is this a mam job header (or review / feedback text) with event commands to run? */
export function isJobText(t: Turn): boolean {
  return eventLine(t.lastUserText, "started") !== undefined || eventLine(t.lastUserText, "completed") !== undefined;
}

/**
 * A worker: a job text → run its `started` line (when it has one), then its `completed` line, each
 * with the shell tool, then end the turn; any other message → `answer` (default "ready").
 */
export function jobWorker(opts: { answer?: (t: Turn) => string; detail?: string; delayMs?: number } = {}): Script {
  return (t: Turn): Reply => {
    if (!isJobText(t)) return { text: opts.answer ? opts.answer(t) : "ready", delayMs: opts.delayMs };
    const steps = [eventLine(t.lastUserText, "started"), eventLine(t.lastUserText, "completed")]
      .filter((l): l is string => l !== undefined)
      .map((l, i) => withDetail(l, i === 0 && l.includes(" started ") ? "starting the job" : (opts.detail ?? "done: job finished")));
    const step = t.toolOutputs.length;
    if (step < steps.length) return { shell: steps[step], delayMs: opts.delayMs };
    return { text: `job done (${t.toolOutputs.map((o) => o.trim().split("\n")[0]).join(" | ")})` };
  };
}

/**
 * A worker that picks its job up again after an interruption: a turn refused at a limit, then the
 * user's `continue` (real-limits.md, "Resuming after the reset": the CLIs send the pending tool
 * result with the new message, so the job header is no longer the last user text). The job is the
 * newest job text of the conversation; its steps done are the tool results seen since it. `onStep`
 * is called before a step is answered (a test turns a limit on there: api.refuse). `onResume`: a
 * command it runs first after a continue, as a model looks around before it goes on.
 */
export function resumingWorker(opts: { onStep?: (step: number, t: Turn) => void; detail?: string; onResume?: string } = {}): Script {
  /** per job text: the tool results seen after it, before a later user message (a `continue`) */
  const seen = new Map<string, number>();
  return (t: Turn): Reply => {
    const header = t.userTexts.findLast((u) => eventLine(u, "started") !== undefined || eventLine(u, "completed") !== undefined);
    if (header === undefined) return { text: "ready" };
    const steps = [eventLine(header, "started"), eventLine(header, "completed")]
      .filter((l): l is string => l !== undefined)
      .map((l, i) => withDetail(l, i === 0 && l.includes(" started ") ? "starting the job" : (opts.detail ?? "done: job finished")));
    const resumed = t.lastUserText !== header;
    if (resumed && opts.onResume !== undefined && t.toolOutputs.length === 0) return { shell: opts.onResume };
    const before = resumed ? (seen.get(header) ?? 0) : 0;
    const done = before + Math.max(0, t.toolOutputs.length - (resumed && opts.onResume !== undefined ? 1 : 0));
    if (t.lastUserText === header) seen.set(header, t.toolOutputs.length);
    opts.onStep?.(done, t);
    if (done < steps.length) return { shell: steps[done] };
    return { text: "job done" };
  };
}
