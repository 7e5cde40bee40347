// mam sandbox explain NAME: what a sandboxed session's agent sees and reaches (docs/sandbox.md).
// And the two halves a sandboxed agent's pane runs (hidden): `exec`, its supervisor outside, and
// `inner`, the relays inside (--net model), lib/sandbox/supervise.ts.
import { agentKind, commandLine } from "../agents/kinds/index.ts";
import { allRows } from "../registry/rows.ts";
import { realDeps } from "../ops/wiring.ts";
import { EXIT, notFound, usageError } from "../sys/errors.ts";
import { out, outJson } from "../sys/io.ts";
import { resolveWorkspace } from "../sys/paths.ts";
import { NET_MODES, type NetMode, type SandboxSpec } from "../sandbox/plan.ts";
import { defineCommand, jsonArg, str, workspaceArg } from "./command.ts";

const list = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : typeof v === "string" ? [v] : []);

const explain = defineCommand({
  meta: {
    name: "explain",
    description: "print what a sandboxed session's agent sees (each mount, in bwrap's order) and what network it reaches",
    examples: ["mam sandbox explain api-worker", "mam sandbox explain api-worker --json    # {name, sandbox, cwd, mounts, net, allow}"],
  },
  args: {
    name: { type: "positional", description: "the session", valueHint: "NAME", required: true },
    ...workspaceArg,
    ...jsonArg,
  },
  async run({ args }) {
    const ws = resolveWorkspace(str(args, "workspace"));
    const name = str(args, "name")!;
    const row = allRows(realDeps(ws, process.env).registry.read()).find((r) => r.name === name);
    if (!row) throw notFound(`no session '${name}' in ${ws}`, "see: mam status");
    const spec = row.sandbox as SandboxSpec | undefined;
    if (!spec || spec.mode !== "bwrap") {
      if (args.json) outJson({ name, sandbox: "none" });
      else out(`${name}: no sandbox (it runs as you, with everything you can read and reach)`);
      return EXIT.OK;
    }
    const { planFor } = await import("../sandbox/supervise.ts");
    const { explainText } = await import("../sandbox/plan.ts");
    const kind = agentKind(String(row.agent));
    const cwd = typeof row.worktree?.path === "string" ? row.worktree.path : ws;
    const plan = planFor({ ws, cwd, kind: kind.kind, program: commandLine(kind, [])[0]!, net: spec.net, env: process.env, socketDir: "<the supervisor's socket folder>" });
    if (args.json) outJson({ name, sandbox: spec.mode, cwd: plan.cwd, mounts: plan.mounts, net: spec.net, allow: spec.allow ?? [] });
    else out(`${name}: sandbox bwrap, --net ${spec.net}\n${explainText(plan, spec.allow ?? [])}`);
    return EXIT.OK;
  },
});

const exec = defineCommand({
  meta: { name: "exec", hidden: true, passthrough: true, description: "run an agent in its sandbox, as its supervisor (what a sandboxed session's pane runs)" },
  args: {
    workspace: { type: "string", required: true, description: "the workspace" },
    session: { type: "string", required: true, description: "the session" },
    kind: { type: "string", required: true, description: "the agent kind" },
    net: { type: "string", required: true, description: "none, model or all" },
    allow: { type: "string", multiple: true, description: "net model: an endpoint HOST:PORT" },
    bwrap: { type: "string", required: true, description: "bwrap's path" },
  },
  async run({ args, rest }) {
    const net = str(args, "net") as NetMode;
    if (!NET_MODES.includes(net)) throw usageError(`--net must be one of ${NET_MODES.join(", ")}`);
    if (!rest.length) throw usageError("give the agent's command after --");
    const { superviseExec } = await import("../sandbox/supervise.ts");
    const ws = str(args, "workspace")!;
    const jobs = realDeps(ws, process.env).jobs;
    const jobAgent = (id: string) => {
      try {
        const r = jobs.read(id);
        return r ? r.agent_session : undefined;
      } catch {
        return undefined; // an unreadable record is no job of its
      }
    };
    return superviseExec({ ws, session: str(args, "session")!, kind: str(args, "kind")!, net, allow: list(args.allow), bwrap: str(args, "bwrap")!, argv: rest, jobAgent }, process.env);
  },
});

const inner = defineCommand({
  meta: { name: "inner", hidden: true, passthrough: true, description: "inside a sandbox with --net model: the relays' inner halves, then the agent" },
  args: {
    relay: { type: "string", multiple: true, description: "HOST:PORT=SOCKET" },
    proxy: { type: "string", description: "the CONNECT proxy's socket" },
  },
  async run({ args, rest }) {
    if (!rest.length) throw usageError("give the agent's command after --");
    const { runInner } = await import("../sandbox/supervise.ts");
    return runInner(list(args.relay), str(args, "proxy"), rest, process.env);
  },
});

export default defineCommand({
  meta: { name: "sandbox", description: "what a sandboxed agent sees and reaches (mam create --sandbox bwrap; docs/sandbox.md)" },
  subCommands: { explain, exec, inner },
});
