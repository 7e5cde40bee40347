// `herdr agent start NAME --kind K --pane P [--timeout MS] [-- ARGS…]`: the client half of the
// two-phase start (herdr.md §3.6, real 0.8.0 src/cli/agent.rs:272-562). agent.start claims the
// pane and types the command; then agent.get NAME (else the pane) every 100 ms until
// interactive_ready (success), another terminal or name (agent_name_not_found), another kind
// (agent_kind_mismatch), or the deadline (timeout). An agent that exits at start is not found
// any more, which the CLI keeps polling through: it ends in `timeout` after the whole --timeout.
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
  // src/cli/agent.rs:501-562 (wait_for_named_agent): agent.get NAME, else agent.get PANE; when
  // both fail (the typed command ended, or the agent came and went) it sleeps and keeps polling:
  // such a start ends in `timeout` at the deadline, never in agent_start_failed
  for (;;) {
    if (Date.now() >= deadline) {
      await call(ctx, ID, "agent.get", { target: name });
      return failWith(ID, "timeout", "timed out waiting for agent startup");
    }
    let r = await call(ctx, ID, "agent.get", { target: name });
    if (r.error) r = await call(ctx, ID, "agent.get", { target: pane });
    if (r.error) {
      await Bun.sleep(POLL_MS);
      continue;
    }
    const a = (r.result as Json).agent as Json;
    if (a.terminal_id !== terminal) return failWith(ID, "agent_name_not_found", `named agent ${name} no longer owns the target terminal`);
    if (typeof a.agent === "string" && expected && canonicalKind(a.agent) !== expected)
      return failWith(ID, "agent_kind_mismatch", `expected ${expected}, detected ${a.agent}`);
    if (a.name !== name) return failWith(ID, "agent_name_not_found", `named agent ${name} no longer owns the target terminal`);
    if (a.interactive_ready === true) {
      await out(line({ id: ID, result: { type: "agent_started", agent: a, argv } }));
      return 0;
    }
    if (a.launch_pending !== true) return failWith(ID, "agent_start_failed", "agent process exited before becoming interactive");
    await Bun.sleep(POLL_MS);
  }
}
