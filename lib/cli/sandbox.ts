// mam sandbox explain NAME: what a sandboxed session's agent sees and reaches (docs/sandbox.md).
// And the two halves a sandboxed agent's pane runs (hidden): `exec`, its supervisor outside, and
// `inner`, the relays inside (--net model), lib/sandbox/supervise.ts.
import { agentKind, commandLine } from "../agents/kinds/index.ts";
import { allRows } from "../registry/rows.ts";
import { realDeps } from "../ops/wiring.ts";
import { EXIT, notFound, usageError } from "../sys/errors.ts";
import { out, outJson } from "../sys/io.ts";
import { resolveWorkspace } from "../sys/paths.ts";
import { visible } from "../sys/sanitize.ts";
import { NET_MODES, type NetMode, parseEndpoint, type SandboxSpec } from "../sandbox/plan.ts";
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

const defaults = defineCommand({
  meta: {
    name: "default",
    description: "the sandbox this workspace's creates get when given no --sandbox (and MAM_SANDBOX is unset): show it, set it (bwrap), or forget it (none)",
    examples: [
      "mam sandbox default                                   # what it is",
      "mam sandbox default bwrap                             # --net model, the kind's model endpoint",
      "mam sandbox default bwrap --allow 127.0.0.1:8080      # and a local model server",
      "mam sandbox default none                              # forget it",
    ],
  },
  args: {
    mode: { type: "positional", description: "bwrap, or none to forget the default", valueHint: "bwrap|none", required: false },
    net: { type: "string", description: "with bwrap: none, model (default) or all", valueHint: "none|model|all" },
    allow: { type: "string", multiple: true, description: "with --net model: another endpoint HOST:PORT", valueHint: "HOST:PORT" },
    ...workspaceArg,
    ...jsonArg,
  },
  async run({ args }) {
    const { defaultPath, readSandboxDefault, writeSandboxDefault } = await import("../sandbox/default.ts");
    const ws = resolveWorkspace(str(args, "workspace"));
    const mode = str(args, "mode");
    const allow = list(args.allow);
    if (mode === undefined) {
      if (args.net !== undefined || allow.length) throw usageError("--net and --allow go with a mode: mam sandbox default bwrap --net …");
      const d = readSandboxDefault(ws);
      if (args.json) outJson({ workspace: ws, default: d ?? null });
      else out(d ? `${ws}: --sandbox bwrap --net ${d.net ?? "model"}${(d.allow ?? []).map((a) => ` --allow ${a}`).join("")} (${defaultPath(ws)})` : `${ws}: no sandbox default (creates run without one unless given --sandbox or MAM_SANDBOX)`);
      return EXIT.OK;
    }
    if (mode !== "bwrap" && mode !== "none") throw usageError(`'${visible(mode.slice(0, 40))}' is not a sandbox: give bwrap or none`);
    if (mode === "none") {
      if (args.net !== undefined || allow.length) throw usageError("--net and --allow go with bwrap");
      writeSandboxDefault(ws, undefined);
      if (args.json) outJson({ workspace: ws, default: null });
      else out(`${ws}: no sandbox default now`);
      return EXIT.OK;
    }
    const net = str(args, "net");
    if (net !== undefined && !(NET_MODES as readonly string[]).includes(net)) throw usageError(`--net: '${visible(net.slice(0, 40))}' is not one of ${NET_MODES.join(", ")}`);
    for (const a of allow) if (!parseEndpoint(a)) throw usageError(`--allow: '${visible(a.slice(0, 80))}' is not HOST:PORT`, "e.g. api.anthropic.com:443 or 127.0.0.1:8080");
    if (allow.length && (net ?? "model") !== "model") throw usageError("--allow goes with --net model");
    const d = { sandbox: "bwrap" as const, ...(net !== undefined ? { net: net as NetMode } : {}), ...(allow.length ? { allow } : {}) };
    writeSandboxDefault(ws, d);
    if (args.json) outJson({ workspace: ws, default: d });
    else out(`${ws}: creates given no --sandbox run in --sandbox bwrap --net ${d.net ?? "model"}${allow.map((a) => ` --allow ${a}`).join("")}`);
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
  subCommands: { explain, default: defaults, exec, inner },
});
