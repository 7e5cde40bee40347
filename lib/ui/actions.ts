// What the dashboard may change (only with --allow-actions): the operations whose entry in the
// table (lib/ops) has a `ui` block. The page posts `{"action": "<op name>", "input": {…}}`; only
// the fields that block names come from the page, the rest is fixed there (a stop from the page is
// graceful and says so in its reason); the op checks the input as it checks the CLI's. The answer is the op's
// one text, its notices after it.
import type { Deps } from "../ops/deps.ts";
import { OPS } from "../ops/index.ts";
import { parseInput } from "../ops/input.ts";
import type { AnyOp } from "../ops/op.ts";
import { MamError, usageError } from "../sys/errors.ts";
import { plainSpelling, spellFields } from "../sys/fields.ts";
import { noticesOf } from "../sys/notice.ts";

/** the operations the page may run, in the table's order: those whose entry has a `ui` block (the fields the page gives) */
export const uiActions = (): AnyOp[] => OPS.filter((o) => o.ui && !o.readOnly);

export interface UiAction {
  op: AnyOp;
  input: Record<string, unknown>;
}

/** parse a POST body into an allowed op and its checked input, or throw a usage error naming what is wrong */
export function parseAction(body: unknown): UiAction {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw usageError("the action body is not a JSON object");
  const b = body as { action?: unknown; input?: unknown };
  const actions = uiActions();
  const op = actions.find((o) => o.name === b.action);
  const allowed = op?.ui;
  if (!op || !allowed) throw usageError(`unknown action ${JSON.stringify(b.action)} (${actions.map((o) => o.name).join(", ")})`);
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
