// events.subscribe and events.wait (herdr.md §3.5). Each subscription entry is polled every
// 100 ms and emits at most one event per poll. Lifecycle entries start at sequence 0, so they
// replay what is left in the 512-event ring; per-pane status entries start at the current event.
import { type Ctx, type MethodDef, STREAMING, waitFor } from "../context.ts";
import type { FakeHerdr } from "../core.ts";
import type { HubEvent } from "../events.ts";
import { ApiError, type Pane } from "../model.ts";
import type { ReadSource } from "../screen.ts";
import { compileMatch, type LineMatcher, matchRead, readResult } from "./io.ts";

export const SUBSCRIPTION_POLL_MS = 100;

type Entry =
  | { kind: "lifecycle"; event: string; cursor: number }
  | { kind: "status"; pane: Pane; filter?: string; cursor: number }
  | { kind: "output"; pane: Pane; source: ReadSource; lines?: number; format?: "text" | "ansi"; matcher: LineMatcher; matching: boolean }
  | { kind: "none" };

function entryFor(h: FakeHerdr, s: Record<string, any>): Entry {
  const type: string = s.type;
  if (type === "pane.agent_status_changed") {
    const pane = h.state.pane(s.pane_id);
    return { kind: "status", pane, filter: s.agent_status ?? undefined, cursor: h.hub.seq };
  }
  if (type === "pane.output_matched") {
    const pane = h.state.pane(s.pane_id);
    const source: ReadSource = s.source === "recent" ? "recent_unwrapped" : s.source;
    return { kind: "output", pane, source, lines: s.lines ?? undefined, matcher: compileMatch(s.match), matching: false };
  }
  if (type === "pane.scroll_changed") {
    h.state.pane(s.pane_id);
    return { kind: "none" };
  }
  // lifecycle: workspace.created → workspace_created
  return { kind: "lifecycle", event: type.replace(".", "_"), cursor: 0 };
}

function statusEvent(e: HubEvent): Record<string, unknown> {
  const { type: _t, ...data } = e.data;
  return { event: "pane.agent_status_changed", data };
}

/** the next event of an entry, or undefined */
function poll(h: FakeHerdr, en: Entry): unknown {
  switch (en.kind) {
    case "lifecycle": {
      const r = h.hub.next(en.cursor, (e) => e.event === en.event);
      en.cursor = r.cursor;
      return r.event ? { event: r.event.event, data: r.event.data } : undefined;
    }
    case "status": {
      const r = h.hub.next(en.cursor, (e) => e.event === "pane_agent_status_changed" && e.data.pane_id === en.pane.id && (en.filter === undefined || e.data.agent_status === en.filter));
      en.cursor = r.cursor;
      return r.event ? statusEvent(r.event) : undefined;
    }
    case "output": {
      if (en.pane.closed) return undefined;
      const read = readResult(en.pane, en.source, en.lines, en.format);
      const line = matchRead(read, en.matcher);
      const was = en.matching;
      en.matching = line !== undefined;
      if (line !== undefined && !was) return { event: "pane.output_matched", data: { pane_id: en.pane.id, matched_line: line, read } };
      return undefined;
    }
    default:
      return undefined;
  }
}

export const eventMethods: Record<string, MethodDef> = {
  "events.subscribe": {
    long: true,
    run: async (h, p, ctx: Ctx) => {
      const entries = await h.serialize(() => (p.subscriptions as Record<string, any>[]).map((s) => entryFor(h, s)));
      ctx.conn.send({ id: ctx.id, result: { type: "subscription_started" } });
      // a status filter that already matches sends one event at once
      for (const en of entries) {
        if (en.kind === "status" && en.filter !== undefined && en.pane.status === en.filter) {
          const data: Record<string, unknown> = { pane_id: en.pane.id, workspace_id: en.pane.ws.id, agent_status: en.pane.status };
          if (en.pane.agent) data.agent = en.pane.agent;
          ctx.conn.send({ event: "pane.agent_status_changed", data });
        }
      }
      const iv = setInterval(() => {
        if (ctx.conn.closed || h.stopping) {
          clearInterval(iv);
          ctx.conn.end();
          return;
        }
        for (const en of entries) {
          const ev = poll(h, en);
          if (ev) ctx.conn.send(ev);
        }
      }, SUBSCRIPTION_POLL_MS);
      ctx.conn.onClose(() => clearInterval(iv));
      return STREAMING;
    },
  },
  "events.wait": {
    long: true,
    run: async (h, p, ctx: Ctx) => {
      const m = p.match_event as Record<string, any>;
      const start = await h.serialize(() => {
        if (m.event !== "pane_agent_status_changed")
          throw new ApiError("unsupported_event_wait_match", `events.wait supports only pane_agent_status_changed, not ${m.event}`);
        h.state.pane(m.pane_id);
        return h.hub.seq;
      });
      let cursor = start;
      return waitFor(
        h,
        ctx,
        () => {
          const r = h.hub.next(cursor, (e) => e.event === "pane_agent_status_changed" && e.data.pane_id === m.pane_id && e.data.agent_status === m.agent_status);
          cursor = r.cursor;
          return r.event ? { type: "wait_matched", event: { event: r.event.event, data: r.event.data } } : undefined;
        },
        p.timeout_ms,
        () => new ApiError("timeout", "timed out waiting for event"),
      );
    },
  },
};
