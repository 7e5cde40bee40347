// agent.* methods: start (the server half of the two-phase start, herdr.md §3.6), get, list,
// focus, rename, read, send_keys, prompt (with the 300 ms Enter and the 5 s stall rule), wait.
// 0.8.2: agent.prompt refuses a blocked agent with agent_blocked before it sends anything
// (src/app/api/agents.rs handle_agent_prompt, 9351b058).
import { type AgentKind, canonicalKind, executableFor, unsupportedKindMessage } from "../../common/kinds.ts";
import { AGENT_NAME_RE, AGENT_NAME_RULE, refreshPane } from "../agents.ts";
import { type Ctx, type MethodDef, waitFor } from "../context.ts";
import type { FakeHerdr } from "../core.ts";
import { ApiError, type Pane, type Status } from "../model.ts";
import { checkKeys, readResult } from "./io.ts";
import { hostsAgent } from "./structure.ts";

const ok = { type: "ok" };
export const DEFAULT_START_TIMEOUT_MS = 30_000;
const ENTER_DELAY_MS = 300;
const STALL_MS = 5000;
const DEFAULT_UNTIL: Status[] = ["idle", "done", "blocked"];

/** quote one word for a POSIX shell */
export function shellQuote(w: string): string {
  if (w !== "" && /^[A-Za-z0-9_@%+=:,./-]+$/.test(w)) return w;
  return `'${w.replace(/'/g, `'\\''`)}'`;
}

function candidates(ps: Pane[]): string {
  return ps.map((p) => `terminal_id=${p.terminalId} pane_id=${p.id} workspace_id=${p.ws.id} tab_id=${p.tab.id} cwd=${p.cwd}`).join("; ");
}

/** an agent target: a current pane id hosting an agent, or a unique live name */
export function resolveAgent(h: FakeHerdr, target: string): Pane {
  const byId = h.state.findPane(target);
  if (byId) {
    if (hostsAgent(byId)) return byId;
    throw new ApiError("agent_not_found", "agent target does not currently host an agent");
  }
  const named = h.state.allPanes().filter((p) => p.name === target);
  if (named.length === 1) return named[0]!;
  if (named.length > 1) throw new ApiError("agent_target_ambiguous", `agent target ${target} is ambiguous; candidates: ${candidates(named)}`);
  throw new ApiError("agent_not_found", `agent target ${target} not found`);
}

function requireLive(p: Pane, target: string): void {
  if (p.pending || p.agent === undefined) throw new ApiError("agent_not_ready", `agent ${target} is not an active named agent`);
}

/** agent.send_keys needs a known agent only, pending or not (src/app/api/agents.rs handle_agent_send_keys) */
function requireAgent(p: Pane, target: string): void {
  if (p.agent === undefined) throw new ApiError("agent_not_ready", `agent ${target} is not an active named agent`);
}

function checkName(h: FakeHerdr, name: string, self?: Pane): void {
  if (!AGENT_NAME_RE.test(name)) throw new ApiError("invalid_agent_name", AGENT_NAME_RULE);
  const others = h.state.allPanes().filter((p) => p !== self && p.name === name);
  if (others.length) throw new ApiError("agent_name_taken", `agent name ${name} is already used; candidates: ${candidates(others)}`);
}

/** the pinned identity of an agent for waits: it must stay the same occupant */
function pin(p: Pane): () => boolean {
  const kind = p.agent;
  const name = p.name;
  const term = p.terminalId;
  return () => p.closed || p.terminalId !== term || (kind !== undefined && p.agent !== kind) || (name !== undefined && p.name !== name);
}

const notRunning = () => new ApiError("agent_not_running", "agent is no longer running in the target pane");

export const agentMethods: Record<string, MethodDef> = {
  "agent.start": {
    run: (h, p) => {
      const name: string = p.name;
      if (!AGENT_NAME_RE.test(name)) throw new ApiError("invalid_agent_name", AGENT_NAME_RULE);
      const kind: AgentKind | undefined = canonicalKind(p.kind, h.cfg.release);
      if (!kind) throw new ApiError("unsupported_agent_kind", unsupportedKindMessage(p.kind, h.cfg.release));
      const args: string[] = p.args ?? [];
      if (args.some((a) => /[\x00-\x1f\x7f]/.test(a))) throw new ApiError("invalid_agent_argument", "agent arguments must not contain control characters");
      // real 0.8.0's order (src/app/agents.rs:147-205): name, kind, args, name taken, pane, busy,
      // and the timeout last
      checkName(h, name);
      const pane = h.state.findPane(p.pane_id);
      if (!pane) throw new ApiError("agent_pane_not_found", `agent target pane ${p.pane_id} not found`);
      if (hostsAgent(pane) || !pane.term.shellFree()) throw new ApiError("agent_pane_busy", `agent target pane ${pane.id} is not an available shell`);
      const timeout: number = p.timeout_ms ?? DEFAULT_START_TIMEOUT_MS;
      if (p.timeout_ms !== undefined && p.timeout_ms !== null && (p.timeout_ms <= 3000 || p.timeout_ms > 300_000))
        throw new ApiError("invalid_agent_timeout", "agent start timeout must be greater than 3000ms and at most 300000ms");
      const argv = [executableFor(kind), ...args];
      const now = Date.now();
      pane.name = name;
      pane.ready = false;
      pane.pending = { name, kind, startedAt: now, settleAt: now + h.cfg.settleMs, deadline: now + timeout };
      pane.revision++;
      // herdr's encode_api_submission: the command line (bracketed when the shell asked) + Enter
      pane.term.pasteText(argv.map(shellQuote).join(" "));
      pane.term.pressKeys(["Enter"]);
      return { type: "agent_started", agent: h.state.agentInfo(pane), argv };
    },
  },
  "agent.get": { run: (h, p) => ({ type: "agent_info", agent: h.state.agentInfo(resolveAgent(h, p.target)) }) },
  "agent.list": { run: (h) => ({ type: "agent_list", agents: h.state.allPanes().filter(hostsAgent).map((x) => h.state.agentInfo(x)) }) },
  "agent.focus": {
    run: (h, p) => {
      const pane = resolveAgent(h, p.target);
      h.focusPane(pane);
      return { type: "agent_info", agent: h.state.agentInfo(pane) };
    },
  },
  "agent.rename": {
    run: (h, p) => {
      const pane = resolveAgent(h, p.target);
      if (pane.pending) throw new ApiError("agent_launch_pending", "agent name cannot change while startup is pending");
      const name: string | null | undefined = p.name;
      if (name === undefined || name === null || name === "") pane.name = undefined;
      else {
        checkName(h, name, pane);
        pane.name = name;
      }
      pane.revision++;
      return { type: "agent_info", agent: h.state.agentInfo(pane) };
    },
  },
  "agent.read": {
    run: (h, p) => {
      const pane = resolveAgent(h, p.target);
      return { type: "pane_read", read: readResult(pane, p.source, p.lines, p.format) };
    },
  },
  "agent.send_keys": {
    run: (h, p) => {
      const pane = resolveAgent(h, p.target);
      requireAgent(pane, p.target);
      checkKeys(p.keys);
      pane.term.pressKeys(p.keys);
      return ok;
    },
  },
  "agent.prompt": {
    long: true,
    run: async (h, p, ctx: Ctx) => {
      const start = await h.serialize(() => {
        if (p.text === "") throw new ApiError("empty_agent_prompt", "agent prompt must not be empty");
        const pane = resolveAgent(h, p.target);
        refreshPane(h, pane);
        if (h.cfg.release === "0.8.2" && pane.internal === "blocked") throw new ApiError("agent_blocked", `agent ${p.target} is blocked and requires interactive input`);
        requireLive(pane, p.target);
        const seq = pane.stateChangeSeq;
        const wasWorking = pane.internal === "working";
        // encode_api_submission_parts (src/app/api/agents.rs:101-106): the text bracketed when
        // the app asked for it; Enter 300 ms later
        pane.term.pasteText(p.text);
        const info = h.state.agentInfo(pane);
        return { pane, seq, wasWorking, info, gone: pin(pane) };
      });
      const enter = new Promise<void>((resolve) =>
        setTimeout(() => {
          void h.serialize(() => {
            if (!start.pane.closed) start.pane.term.pressKeys(["Enter"]);
            resolve();
          });
        }, ENTER_DELAY_MS),
      );
      if (!p.wait) return { type: "agent_prompted", agent: start.info };
      await enter;
      const until: Status[] = p.wait.until?.length ? p.wait.until : DEFAULT_UNTIL;
      const timeoutMs: number | null | undefined = p.wait.timeout_ms;
      const t0 = Date.now();
      const pane = start.pane;
      return waitFor(
        h,
        ctx,
        () => {
          if (start.gone()) throw notRunning();
          const changed = pane.stateChangeSeq > start.seq;
          if (!changed && !start.wasWorking) {
            if (Date.now() - t0 >= STALL_MS) {
              if (timeoutMs === undefined || timeoutMs === null || timeoutMs > STALL_MS)
                throw new ApiError("agent_prompt_stalled", `agent did not change state within ${STALL_MS}ms after the prompt`);
            }
            return undefined;
          }
          return until.includes(pane.status) ? { type: "agent_prompted", agent: h.state.agentInfo(pane) } : undefined;
        },
        timeoutMs,
        () => new ApiError("timeout", "timed out waiting for agent status"),
      );
    },
  },
  "agent.wait": {
    long: true,
    run: async (h, p, ctx: Ctx) => {
      const { pane, gone } = await h.serialize(() => {
        const pane = resolveAgent(h, p.target);
        return { pane, gone: pin(pane) };
      });
      const until: Status[] = p.until?.length ? p.until : DEFAULT_UNTIL;
      return waitFor(
        h,
        ctx,
        () => {
          if (gone()) throw notRunning();
          return until.includes(pane.status) ? { type: "agent_info", agent: h.state.agentInfo(pane) } : undefined;
        },
        p.timeout_ms,
        () => new ApiError("timeout", "timed out waiting for agent status"),
      );
    },
  },
};
