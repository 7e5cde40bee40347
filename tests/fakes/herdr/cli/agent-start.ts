// `herdr agent start NAME --kind K --pane P [--timeout MS] [-- ARGS…]`: the client half of the
// two-phase start (herdr.md §3.6). agent.start claims the pane and types the command; then
// agent.get NAME every 100 ms until interactive_ready (success), launch_pending gone
// (agent_start_failed), another terminal (agent_name_not_found), another kind
// (agent_kind_mismatch), or the deadline (timeout).
import type { Json } from "../common/client.ts";
import { canonicalKind } from "../common/kinds.ts";
import { CliUsage, type Parsed, parseU64 } from "./args.ts";
import { type CliCtx, call, err, failWith, line, out, ping } from "./io.ts";

const ID = "cli:agent:start";
export const POLL_MS = 100;
export const DEFAULT_TIMEOUT_MS = 30_000;

export async function agentStart(ctx: CliCtx, p: Parsed, agentArgs: string[]): Promise<number> {
  const name = p.pos.name!;
  const kind = p.flags["--kind"];
  const pane = p.flags["--pane"];
  if (kind === undefined) throw new CliUsage("missing required --kind");
  if (pane === undefined) throw new CliUsage("missing required --pane");
  const timeout = parseU64("--timeout", p.flags["--timeout"]);
  await ping(ctx, ID);
  const params: Json = { name, kind, pane_id: pane, args: agentArgs };
  if (timeout !== undefined) params.timeout_ms = timeout;
  const t0 = Date.now();
  const started = await call(ctx, ID, "agent.start", params);
  if (started.error) {
    await err(line(started));
    return 1;
  }
  const result = started.result as Json;
  const terminal = (result.agent as Json).terminal_id;
  const argv = result.argv;
  const expected = canonicalKind(kind);
  const deadline = t0 + (timeout ?? DEFAULT_TIMEOUT_MS);
  for (;;) {
    await Bun.sleep(POLL_MS);
    const r = await call(ctx, ID, "agent.get", { target: name });
    const now = Date.now();
    if (r.error) {
      const code = (r.error as Json).code;
      if (code === "agent_not_found") {
        if (now >= deadline - 2 * POLL_MS) return failWith(ID, "timeout", "timed out waiting for agent startup");
        return failWith(ID, "agent_start_failed", "agent process exited before becoming interactive");
      }
      await err(line({ id: ID, error: r.error }));
      return 1;
    }
    const a = (r.result as Json).agent as Json;
    if (a.terminal_id !== terminal) return failWith(ID, "agent_name_not_found", `agent ${name} no longer owns the target terminal`);
    if (typeof a.agent === "string" && expected && canonicalKind(a.agent) !== expected)
      return failWith(ID, "agent_kind_mismatch", `expected agent kind ${expected} but detected ${a.agent}`);
    if (a.interactive_ready === true) {
      await out(line({ id: ID, result: { type: "agent_started", agent: a, argv } }));
      return 0;
    }
    if (a.launch_pending !== true) {
      if (now >= deadline - 2 * POLL_MS) return failWith(ID, "timeout", "timed out waiting for agent startup");
      return failWith(ID, "agent_start_failed", "agent process exited before becoming interactive");
    }
    if (now >= deadline) return failWith(ID, "timeout", "timed out waiting for agent startup");
  }
}
