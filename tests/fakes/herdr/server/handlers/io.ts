// Pane input and output: send_text / send_keys / send_input, read, wait_for_output, process_info,
// and the agent state reports report_agent / release_agent (herdr.md §2.5, §3.3, §4.2).
import { firstInvalidKey } from "../../common/keys.ts";
import { dropDeadAuthority, refreshPane } from "../agents.ts";
import { type Ctx, type MethodDef, waitFor } from "../context.ts";
import { ApiError, type Internal, type Pane } from "../model.ts";
import { procInfo } from "../procfs.ts";
import type { ReadFormat, ReadSource } from "../screen.ts";

const ok = { type: "ok" };

export function checkKeys(keys: string[]): void {
  const bad = firstInvalidKey(keys);
  if (bad !== undefined) throw new ApiError("invalid_key", `unsupported key ${bad}`);
}

export function readResult(p: Pane, source: ReadSource, lines: number | null | undefined, format: ReadFormat | undefined): Record<string, unknown> {
  const fmt: ReadFormat = format ?? "text";
  const r = p.term.screen.read(source, lines ?? undefined, fmt);
  return { pane_id: p.id, workspace_id: p.ws.id, tab_id: p.tab.id, source, format: fmt, text: r.text, revision: 0, truncated: r.truncated };
}

export type LineMatcher = (line: string) => boolean;

export function compileMatch(m: { type: string; value: string }): LineMatcher {
  if (m.type === "regex") {
    let re: RegExp;
    try {
      re = new RegExp(m.value);
    } catch (e) {
      throw new ApiError("invalid_regex", `invalid regex: ${(e as Error).message}`);
    }
    return (l) => re.test(l);
  }
  return (l) => l.includes(m.value);
}

/** the first line of the read that matches, or undefined */
export function matchRead(read: Record<string, unknown>, m: LineMatcher): string | undefined {
  for (const line of String(read.text).split("\n")) if (m(line)) return line;
  return undefined;
}

/** herdr 0.8.0's process_info (api/panes.rs): empty fields omitted, tty and argv0 never set on Linux */
function processInfo(p: Pane): Record<string, unknown> {
  const r: Record<string, unknown> = { pane_id: p.id };
  if (p.term.exited) return r;
  r.shell_pid = p.term.pid;
  const job = p.term.job();
  if (!job) return r;
  r.foreground_process_group_id = job.pgid;
  const procs = job.pids.map((pid) => procInfo(pid)).filter((x) => x !== undefined);
  if (procs.length) r.foreground_processes = procs;
  return r;
}

export const ioMethods: Record<string, MethodDef> = {
  "pane.process_info": {
    run: (h, p) => {
      const pane = p.pane_id ? h.state.pane(p.pane_id) : h.state.focusedPane(h.state.focusedWs());
      if (!pane) throw new ApiError("pane_not_found", "pane not found");
      return { type: "pane_process_info", process_info: processInfo(pane) };
    },
  },
  "pane.send_text": {
    run: (h, p) => {
      h.state.pane(p.pane_id).term.typeText(p.text);
      return ok;
    },
  },
  "pane.send_keys": {
    run: (h, p) => {
      const pane = h.state.pane(p.pane_id);
      checkKeys(p.keys);
      pane.term.pressKeys(p.keys);
      return ok;
    },
  },
  "pane.send_input": {
    run: (h, p) => {
      const pane = h.state.pane(p.pane_id);
      const keys: string[] = p.keys ?? [];
      checkKeys(keys);
      // encode_api_input: the text bracketed when the app asked for it, then the keys
      if (p.text) pane.term.pasteText(p.text);
      if (keys.length) pane.term.pressKeys(keys);
      return ok;
    },
  },
  "pane.read": {
    run: (h, p) => ({ type: "pane_read", read: readResult(h.state.pane(p.pane_id), p.source, p.lines, p.format) }),
  },
  "pane.wait_for_output": {
    long: true,
    run: async (h, p, ctx: Ctx) => {
      const { pane, matcher } = await h.serialize(() => ({ pane: h.state.pane(p.pane_id), matcher: compileMatch(p.match) }));
      const source: ReadSource = p.source === "recent" ? "recent_unwrapped" : p.source;
      return waitFor(
        h,
        ctx,
        () => {
          if (pane.closed) throw new ApiError("pane_not_found", `pane ${pane.id} not found`);
          const read = readResult(pane, source, p.lines, p.format);
          const line = matchRead(read, matcher);
          return line === undefined ? undefined : { type: "output_matched", pane_id: pane.id, revision: 0, matched_line: line, read };
        },
        p.timeout_ms,
        () => new ApiError("timeout", "timed out waiting for output"),
      );
    },
  },
  "pane.report_agent": {
    run: (h, p) => {
      const pane = h.state.pane(p.pane_id);
      const source = String(p.source).trim();
      if (!source) throw new ApiError("invalid_params", "source must not be empty");
      dropDeadAuthority(pane);
      const a = pane.authority;
      const seq: number | undefined = p.seq ?? undefined;
      if (a && a.source === source && seq !== undefined && a.seq !== undefined && seq <= a.seq) return ok; // stale
      pane.authority = {
        source,
        agent: p.agent,
        state: p.state as Internal,
        seq: seq ?? a?.seq,
        message: p.message ?? undefined,
        pid: a?.source === source ? a.pid : undefined,
        endsAtReport: a?.source === source ? a.endsAtReport : pane.term.ends,
      };
      if (p.agent_session_id) pane.session = { source, agent: p.agent, kind: "id", value: p.agent_session_id };
      else if (p.agent_session_path) pane.session = { source, agent: p.agent, kind: "path", value: p.agent_session_path };
      refreshPane(h, pane);
      h.notify();
      return ok;
    },
  },
  "pane.release_agent": {
    run: (h, p) => {
      const pane = h.state.pane(p.pane_id);
      const a = pane.authority;
      const seq: number | undefined = p.seq ?? undefined;
      if (a && a.source === String(p.source).trim() && !(seq !== undefined && a.seq !== undefined && seq < a.seq)) {
        pane.authority = undefined;
        refreshPane(h, pane);
        h.notify();
      }
      return ok;
    },
  },
};

