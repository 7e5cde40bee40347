// `herdr agent start NAME --kind K --pane P [--timeout MS] [-- ARGS…]`: the client half of the
// two-phase start (herdr.md §3.6). agent.start claims the pane and types the command; then
// agent.get NAME (else the pane) every 100 ms until the agent is ready, another terminal or name
// owns it (agent_name_not_found), another kind shows up (agent_kind_mismatch), or the deadline
// (timeout). An agent that exits at start is not found any more, which the CLI keeps polling
// through: it ends in `timeout` after the whole --timeout, in both releases.
//
// 0.8.0 (src/cli/agent.rs:272-562): ready = interactive_ready (the server counts idle or blocked
// as ready); not ready and no launch pending → agent_start_failed.
// 0.8.2 (src/cli/agent.rs at v0.8.2; 7ae4b056, 37644cab): before the start the pane's terminal
// is pinned (pane.get); agent_pane_busy is retried every 100 ms for up to 2 s while that same
// terminal's shell is still the only thing in its foreground (its startup files running); a start
// answered for another terminal is agent_name_not_found; while waiting, `blocked` ends the call
// at once with agent_not_ready (the agent stays, with its name), `working`/`unknown` keep it
// waiting, `idle`/`done` with interactive_ready is success, without launch_pending agent_start_failed.
import type { Json } from "../common/client.ts";
import { canonicalKind } from "../common/kinds.ts";
import { CliUsage, type Parsed, parseU64 } from "./args.ts";
import { type CliCtx, call, cliRelease, err, failWith, line, out, ping } from "./io.ts";

const ID = "cli:agent:start";
export const POLL_MS = 100;
export const DEFAULT_TIMEOUT_MS = 30_000;
/** 0.8.2's PANE_SHELL_READINESS_RETRY_TIMEOUT */
export const BUSY_RETRY_MS = 2000;
/** herdr's agent start settle (3 s) and largest timeout (300 s): only timeouts between retry busy */
const SETTLE_MS = 3000;
const MAX_TIMEOUT_MS = 300_000;
/** the shells herdr recognises in a pane (src/platform/mod.rs is_pane_shell_process_name) */
const SHELLS = new Set(["sh", "bash", "dash", "zsh", "fish", "ksh", "mksh", "csh", "tcsh", "elvish", "xonsh", "nu", "pwsh", "powershell", "cmd"]);

const nameLost = (name: string) => failWith(ID, "agent_name_not_found", `named agent ${name} no longer owns the target terminal`);

/** the pane's terminal id, or undefined when pane.get fails (0.8.2 pane_terminal_id) */
async function paneTerminal(ctx: CliCtx, pane: string): Promise<string | undefined> {
  const r = await call(ctx, `${ID}:pane`, "pane.get", { pane_id: pane });
  const t = ((r.result as Json | undefined)?.pane as Json | undefined)?.terminal_id;
  return typeof t === "string" ? t : undefined;
}

/** the pane's shell owns its foreground and is among its processes (0.8.2 pane_shell_is_initializing) */
async function shellInitializing(ctx: CliCtx, pane: string): Promise<boolean> {
  const r = await call(ctx, `${ID}:process_info`, "pane.process_info", { pane_id: pane });
  const pi = ((r.result as Json | undefined)?.process_info ?? {}) as Json;
  const shell = pi.shell_pid;
  if (typeof shell !== "number" || pi.foreground_process_group_id !== shell) return false;
  const procs = Array.isArray(pi.foreground_processes) ? (pi.foreground_processes as Json[]) : [];
  const isShell = (n: unknown) => typeof n === "string" && SHELLS.has(n.slice(n.lastIndexOf("/") + 1).replace(/^-/, "").toLowerCase());
  return procs.some((p) => p.pid === shell && (isShell(p.name) || (Array.isArray(p.argv) && isShell(p.argv[0]))));
}

export async function agentStart(ctx: CliCtx, p: Parsed, agentArgs: string[]): Promise<number> {
  const name = p.pos.name!;
  const kind = p.flags["--kind"];
  const pane = p.flags["--pane"];
  if (kind === undefined) throw new CliUsage("missing required --kind");
  if (pane === undefined) throw new CliUsage("missing required --pane");
  const timeout = parseU64("--timeout", p.flags["--timeout"]);
  const r082 = cliRelease(ctx.env) === "0.8.2";
  await ping(ctx, ID);
  const params: Json = { name, kind, pane_id: pane, args: agentArgs };
  if (timeout !== undefined) params.timeout_ms = timeout;
  const total = timeout ?? DEFAULT_TIMEOUT_MS;
  const pinned = r082 ? await paneTerminal(ctx, pane) : undefined;
  let started: Json;
  for (let retryUntil: number | undefined; ; ) {
    started = await call(ctx, ID, "agent.start", params);
    if (!started.error) break;
    const code = (started.error as Json).code;
    const retryable = r082 && code === "agent_pane_busy" && total > SETTLE_MS && total <= MAX_TIMEOUT_MS && pinned !== undefined;
    if (!retryable || (await paneTerminal(ctx, pane)) !== pinned || !(await shellInitializing(ctx, pane))) break;
    retryUntil ??= Date.now() + BUSY_RETRY_MS;
    if (Date.now() >= retryUntil) break;
    await Bun.sleep(Math.min(POLL_MS, retryUntil - Date.now()));
    if (Date.now() >= retryUntil || (await paneTerminal(ctx, pane)) !== pinned || !(await shellInitializing(ctx, pane))) break;
  }
  if (started.error) {
    await err(line(started));
    return 1;
  }
  const t0 = Date.now();
  const result = started.result as Json;
  const terminal = (result.agent as Json).terminal_id;
  const argv = result.argv;
  const expected = canonicalKind(kind, cliRelease(ctx.env));
  if (pinned !== undefined && pinned !== terminal) return nameLost(name);
  const deadline = t0 + total;
  // wait_for_named_agent: agent.get NAME, else agent.get PANE; when both fail (the typed command
  // ended, or the agent came and went) it sleeps and keeps polling: such a start ends in
  // `timeout` at the deadline, never in agent_start_failed
  for (;;) {
    if (Date.now() >= deadline) {
      await call(ctx, `${ID}:timeout`, "agent.get", { target: name });
      return failWith(ID, "timeout", "timed out waiting for agent startup");
    }
    let r = await call(ctx, ID, "agent.get", { target: name });
    if (r.error) r = await call(ctx, ID, "agent.get", { target: pane });
    if (r.error) {
      await Bun.sleep(POLL_MS);
      continue;
    }
    const a = (r.result as Json).agent as Json;
    if (a.terminal_id !== terminal) return nameLost(name);
    if (typeof a.agent === "string" && expected && canonicalKind(a.agent, cliRelease(ctx.env)) !== expected)
      return failWith(ID, "agent_kind_mismatch", `expected ${expected}, detected ${a.agent}`);
    if (a.name !== name) return nameLost(name);
    const ready = async () => {
      await out(line({ id: ID, result: { type: "agent_started", agent: a, argv } }));
      return 0;
    };
    if (r082) {
      const status = a.agent_status;
      if (status === "blocked") return failWith(ID, "agent_not_ready", `agent ${name} is blocked during startup and is not ready for prompts`);
      if (status === "idle" || status === "done") {
        if (a.interactive_ready === true) return ready();
        if (a.launch_pending !== true) return failWith(ID, "agent_start_failed", "agent process exited before becoming interactive");
      }
    } else {
      if (a.interactive_ready === true) return ready();
      if (a.launch_pending !== true) return failWith(ID, "agent_start_failed", "agent process exited before becoming interactive");
    }
    await Bun.sleep(POLL_MS);
  }
}
