// What the dashboard may change (only with --allow-actions), each through the same use case as
// the CLI: stop (lib/sessions/stop.ts), resume (lib/sessions/resume.ts), cancel a job
// (lib/jobs/cancel.ts), send a line to an agent (the job runtime's prompt, what job submit types
// with). Input is checked here, before anything runs; errors are MamErrors like the CLI's.
import { MamError, notFound, usageError } from "../sys/errors.ts";
import { checkJobId, checkName } from "../sys/names.ts";
import type { Env } from "../sys/paths.ts";

export type UiAction =
  | { action: "stop"; name: string }
  | { action: "resume"; name: string }
  | { action: "cancel"; job: string }
  | { action: "send"; name: string; text: string };

export const MAX_LINE = 4000;

/** parse a POST body into an action, or throw a usage error naming what is wrong */
export function parseAction(body: unknown): UiAction {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw usageError("the action body is not a JSON object");
  const b = body as Record<string, unknown>;
  const s = (k: string) => {
    const v = b[k];
    if (typeof v !== "string") throw usageError(`the ${b.action} action needs a string '${k}'`);
    return v;
  };
  switch (b.action) {
    case "stop":
    case "resume":
      return { action: b.action, name: checkName(s("name"), "session name") };
    case "cancel":
      return { action: "cancel", job: checkJobId(s("job")) };
    case "send": {
      const name = checkName(s("name"), "session name");
      const text = s("text");
      if (text.trim() === "") throw usageError("the line to send is empty");
      if (text.length > MAX_LINE) throw usageError(`the line to send is longer than ${MAX_LINE} characters`);
      // one line of printable text: no newline, escape or other control character reaches the pane
      if (/[\u0000-\u001f\u007f]/.test(text)) throw usageError("the line to send has a control character (newline, escape, …); send one line of text");
      return { action: "send", name, text };
    }
    default:
      throw usageError(`unknown action ${JSON.stringify(b.action)} (stop, resume, cancel, send)`);
  }
}

/** run an action; the one-line result the page shows */
export async function runAction(ws: string, a: UiAction, env: Env): Promise<string> {
  switch (a.action) {
    case "stop": {
      const { stopSession } = await import("../ops/session/stop.ts");
      const r = await stopSession({ ws, name: a.name, mode: "graceful", purge: false, reason: "stopped from mam ui", env });
      return r.already ? `${a.name} is already ${r.status}` : `${a.name} ${r.status}`;
    }
    case "resume": {
      const { resumeSession } = await import("../ops/session/resume.ts");
      const r = await resumeSession({ ws, name: a.name, fresh: false, startServer: false, env });
      return [r.already ? `${a.name} is already running (pane ${r.pane})` : `resumed ${a.name} in pane ${r.pane}`, ...r.warnings].join("; ");
    }
    case "cancel": {
      const { cancelJob } = await import("../ops/job/cancel.ts");
      const r = await cancelJob(ws, a.job, env);
      const msg = r.cancelled ? `job ${a.job} cancelled${r.told ? `; told ${r.told}` : ""}` : `job ${a.job} has already ended (${r.status}); nothing to cancel`;
      return [msg, ...r.warnings].join("; ");
    }
    case "send": {
      const { loadJobRuntime } = await import("../jobs/runtime.ts");
      const rt = await loadJobRuntime(ws, env);
      const s = await rt.findSession(a.name);
      if (!s) throw notFound(`no running session ${a.name} with a live pane`, "see: mam status");
      // never into a pane whose agent is gone (a herdr pane left as a bare shell would run it)
      if (s.gone) throw new MamError(`session '${a.name}' has no agent any more (${s.gone}); nothing was sent`, 1, `mam resume ${a.name} starts it again`);
      const w = await rt.prompt(s, a.text);
      return w ? `sent to ${a.name}; ${w.replace(/^WARNING: /, "")}` : `sent to ${a.name}`;
    }
  }
}

/** the HTTP status for an error: usage 400, not found 404, conflict 409, the rest 500 */
export function httpStatusOf(e: unknown): number {
  if (!(e instanceof MamError)) return 500;
  return ({ 2: 400, 3: 404, 4: 409 } as Record<number, number>)[e.exitCode] ?? 500;
}
