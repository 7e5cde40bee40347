// mam agent-report: what an agent's hooks call to tell mam its state (docs/agent-state.md).
// With --hook KIND it reads the hook's JSON from stdin and NEVER fails the agent: whatever goes
// wrong is one line on stderr and exit 0 (a hook's exit 2 would block the agent's tool call).
import { EXIT, MamError, usageError } from "../sys/errors.ts";
import { err, out } from "../sys/io.ts";
import { isValidName } from "../sys/names.ts";
import { resolveWorkspace } from "../sys/paths.ts";
import { recordKey } from "../sys/record-key.ts";
import { HOOK_KINDS } from "../agents/kinds/index.ts";
import { defineCommand, str, workspaceArg } from "./command.ts";

const STATES = ["working", "blocked", "idle"] as const;

export default defineCommand({
  meta: {
    name: "agent-report",
    description: "record what an agent is doing (called by the agent's hooks; see mam hooks install)",
    examples: [
      "mam agent-report --hook claude < hook-input.json          # what `mam hooks install claude` sets up",
      'mam agent-report --state blocked --reason "waiting for the API key" --session api-worker-claude',
    ],
  },
  args: {
    hook: { type: "string", description: "the agent kind whose hook is calling (claude, codex): read the hook's JSON input from stdin", valueHint: "KIND" },
    state: { type: "string", description: "report this state directly: working, blocked or idle", valueHint: "STATE" },
    reason: { type: "string", description: "with --state blocked: what the agent waits for", valueHint: "TEXT" },
    session: { type: "string", description: "the mam session reporting (default: MAM_SESSION, which mam gives its agents)", valueHint: "NAME" },
    "session-id": { type: "string", description: "the agent's conversation id (recorded in the session's row)", valueHint: "ID" },
    ...workspaceArg,
  },
  async run({ args }) {
    const hook = str(args, "hook");
    try {
      return await report(args, hook);
    } catch (e) {
      if (hook === undefined) throw e;
      err(`mam agent-report: ${e instanceof MamError ? e.render() : (e as Error).message}`);
      return 0;
    }
  },
});

async function report(args: Record<string, unknown>, hook: string | undefined): Promise<number> {
  const a = args as Parameters<typeof str>[0];
  const state = str(a, "state");
  if (hook !== undefined && !Object.hasOwn(HOOK_KINDS, hook)) throw usageError(`--hook must be one of ${Object.keys(HOOK_KINDS).join(", ")} (got '${hook}')`);
  if (hook === undefined && state === undefined) throw usageError("give --hook KIND (from an agent's hook) or --state STATE");
  if (hook !== undefined && state !== undefined) throw usageError("--hook and --state contradict each other", "give one of them");
  if (state !== undefined && !(STATES as readonly string[]).includes(state)) throw usageError(`--state must be working, blocked or idle (got '${state}')`);
  const session = str(a, "session") ?? process.env.MAM_SESSION;
  if (!session) {
    // an agent mam did not start (the user's own claude in this folder): nothing to record
    if (hook !== undefined) return 0;
    throw usageError("no session to report for", "give --session NAME (agents started by mam have MAM_SESSION)");
  }
  if (!isValidName(session)) throw usageError(`invalid session name '${session}'`);
  const ws = resolveWorkspace(str(a, "workspace") ?? process.env.MAM_WORKSPACE);
  let hookInput: Record<string, unknown> | undefined;
  if (hook !== undefined) {
    const text = await Bun.stdin.text();
    try {
      hookInput = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new MamError(`the ${hook} hook input is not JSON: ${text.slice(0, 80)}`, EXIT.FAIL);
    }
    if (!hookInput || typeof hookInput !== "object" || Array.isArray(hookInput)) throw new MamError(`the ${hook} hook input is not a JSON object`, EXIT.FAIL);
  }
  const { recordAgentReport } = await import("../ops/session/agent-report.ts");
  const sessionId = str(a, "session-id");
  const r = await recordAgentReport(
    {
      ws,
      session,
      ...(hook ? { kind: hook, hookInput } : { state: state as (typeof STATES)[number], reason: str(a, "reason"), sessionId }),
      pane: process.env.TMUX_PANE || process.env.HERDR_PANE_ID || undefined,
      nowMs: Date.now(),
      key: recordKey(process.env, false),
    },
    async () => (await import("../ops/wiring.ts")).realDeps(ws, process.env).registry,
  );
  if (hook === undefined) out(r.report ? `recorded ${session}: ${r.report.state}${r.report.reason ? ` (${r.report.reason})` : ""}` : `nothing recorded for ${session}`);
  return 0;
}
