// Test controls, in a namespace real herdr does not have (it would answer invalid_request):
//   fake.inputs {pane_id}            → {type:"fake_inputs", pane_id, inputs:[{at, kind, text?|keys?}]}
//   fake.pane.write {pane_id, text}  → ok; text fed to the pane's screen as if printed
//   fake.pane.exit {pane_id}         → ok; the pane's processes are killed (a crash): pane_exited
//   fake.state {}                    → {type:"fake_state", schema_violations, panes, …} internals
//   fake.respond {result}            → {id, result}: the given result, as is (tests the schema self-check)
//   fake.restart {}                  → ok; as if the server restarted (core.ts restart())
import type { MethodDef } from "../context.ts";
import type { FakeHerdr } from "../core.ts";
import { ApiError } from "../model.ts";

function needString(p: Record<string, unknown>, k: string): string {
  const v = p[k];
  if (typeof v !== "string") throw new ApiError("invalid_params", `missing string param ${k}`);
  return v;
}

export const fakeMethods: Record<string, MethodDef> = {
  "fake.inputs": {
    run: (h: FakeHerdr, p) => {
      const id = needString(p, "pane_id");
      const log = h.inputLogs.get(id);
      if (!log) throw new ApiError("pane_not_found", `pane ${id} not found`);
      return { type: "fake_inputs", pane_id: id, inputs: log };
    },
  },
  "fake.pane.write": {
    run: async (h: FakeHerdr, p) => {
      const pane = h.state.pane(needString(p, "pane_id"));
      await pane.term.screen.write(needString(p, "text"));
      h.notify();
      return { type: "ok" };
    },
  },
  "fake.pane.exit": {
    run: (h: FakeHerdr, p) => {
      const pane = h.state.pane(needString(p, "pane_id"));
      pane.term.killNow();
      return { type: "ok" };
    },
  },
  "fake.restart": {
    run: (h: FakeHerdr, _p, ctx) => {
      h.dropConnections(ctx.conn);
      h.restart();
      return { type: "ok" };
    },
  },
  "fake.respond": {
    run: (_h: FakeHerdr, p) => p.result,
  },
  "fake.state": {
    run: (h: FakeHerdr) => ({
      type: "fake_state",
      pid: process.pid,
      settle_ms: h.cfg.settleMs,
      schema_violations: h.violations,
      waiting: h.waiting,
      notifications: h.notices,
      panes: h.state.allPanes().map((p) => ({
        pane_id: p.id,
        shell_pid: p.term.pid,
        ends: p.term.ends,
        foreground: p.term.foreground(),
        size: { cols: p.term.screen.cols, rows: p.term.screen.rows },
        bracketed_paste: p.term.screen.bracketedPaste,
        title: p.term.screen.title,
        agent: p.agent ?? null,
        internal: p.internal,
        status: p.status,
        unseen: p.unseen,
        name: p.name ?? null,
        pending: p.pending ?? null,
        authority: p.authority ?? null,
      })),
    }),
  },
};
