// What the dashboard may change (only with --allow-actions): an allow-list over the operations
// table (lib/ops). The page posts `{"action": "<op name>", "input": {…}}`; only the fields this
// list names come from the page, the rest is fixed here (a stop from the page is graceful and
// says so in its reason); the op checks the input as it checks the CLI's. The answer is the op's
// one text, its notices after it.
import type { Deps } from "../ops/deps.ts";
import { opNamed } from "../ops/index.ts";
import { parseInput } from "../ops/input.ts";
import type { AnyOp } from "../ops/op.ts";
import { MamError, usageError } from "../sys/errors.ts";
import { plainSpelling, spellFields } from "../sys/fields.ts";
import { noticesOf } from "../sys/notice.ts";

interface Allowed {
  /** the input fields the page gives */
  fields: string[];
  /** of those, the ones the page must give (an op may default them; the page may not) */
  required?: string[];
  /** the input fields this front door sets */
  fixed?: Record<string, unknown>;
}

/** the operations the page may run, and which of their fields it gives */
export const UI_ACTIONS: Record<string, Allowed> = {
  "session.stop": { fields: ["name"], fixed: { mode: "graceful", reason: "stopped from mam ui" } },
  "session.resume": { fields: ["name"], fixed: { fresh: false, start_server: false } },
  "session.send": { fields: ["name", "text"] },
  "session.prune": { fields: ["names"], fixed: { dry_run: false } },
  "job.cancel": { fields: ["job_id"] },
  // the page answers only the dialog it shows (its fingerprint), with the one-time yes or the no:
  // an "always" choice is the command line's (--choice), never a button's
  "session.approve": { fields: ["target", "fingerprint", "deny"], required: ["fingerprint"] },
};

export interface UiAction {
  op: AnyOp;
  input: Record<string, unknown>;
}

/** parse a POST body into an allowed op and its checked input, or throw a usage error naming what is wrong */
export function parseAction(body: unknown): UiAction {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw usageError("the action body is not a JSON object");
  const b = body as { action?: unknown; input?: unknown };
  const allowed = typeof b.action === "string" && Object.hasOwn(UI_ACTIONS, b.action) ? UI_ACTIONS[b.action]! : undefined;
  const op = allowed ? opNamed(b.action as string) : undefined;
  if (!allowed || !op) throw usageError(`unknown action ${JSON.stringify(b.action)} (${Object.keys(UI_ACTIONS).join(", ")})`);
  const given = b.input ?? {};
  if (typeof given !== "object" || given === null || Array.isArray(given)) throw usageError(`the ${op.name} action's input is not a JSON object`);
  const extra = Object.keys(given).filter((k) => !allowed.fields.includes(k));
  if (extra.length) throw usageError(`the ${op.name} action takes only ${allowed.fields.join(", ")} (not ${extra.join(", ")})`);
  const missing = (allowed.required ?? []).filter((k) => !Object.hasOwn(given, k));
  if (missing.length) throw usageError(`the ${op.name} action needs ${missing.join(", ")} from the page`);
  try {
    return { op, input: parseInput(op, { ...given, ...allowed.fixed }) as Record<string, unknown> };
  } catch (e) {
    throw e instanceof MamError ? e.spelled((s) => spellFields(s, plainSpelling)) : e;
  }
}

/** run an action; the one line the page shows */
export async function runAction(deps: Deps, a: UiAction): Promise<string> {
  let out: unknown;
  try {
    out = await a.op.run(deps, a.input as never, { signal: new AbortController().signal, progress: () => {}, surface: "ui", form: "text" });
  } catch (e) {
    throw e instanceof MamError ? e.spelled((s) => spellFields(s, plainSpelling)) : e;
  }
  return [a.op.text(out, { color: false }), ...noticesOf(out).filter((n) => n.level !== "info").map((n) => n.text)].filter((l) => l !== "").join("; ");
}

/** the HTTP status for an error: usage 400, not found 404, conflict 409, the rest 500 */
export function httpStatusOf(e: unknown): number {
  if (!(e instanceof MamError)) return 500;
  return ({ 2: 400, 3: 404, 4: 409 } as Record<number, number>)[e.exitCode] ?? 500;
}
