// mam reconcile --subscribe [--idle-timeout S] [--timeout S] [--workspace DIR] (SPEC §6.2): the
// per-workspace subscriber daemon in the foreground (`mam daemon ensure` starts it detached).
// The one-shot pass (`mam reconcile [--once] [--dry-run] [--json]`, SPEC §6.1) goes in runOnce.
import { usageError } from "../sys/errors.ts";
import { resolveWorkspace } from "../sys/paths.ts";
import { out, outJson } from "../sys/io.ts";
import { type ParsedArgs, bool, defineCommand, str, workspaceArg } from "./command.ts";

/** a non-negative number of seconds given on the command line */
export function parseSecondsFlag(raw: string, flag: string): number {
  if (!/^\d+(\.\d+)?$/.test(raw)) throw usageError(`--${flag} must be a number of seconds >= 0 (got '${raw}')`);
  return Number(raw);
}

async function runSubscribe(args: ParsedArgs): Promise<number> {
  const idleTimeoutS = parseSecondsFlag(str(args, "idle-timeout") ?? "3600", "idle-timeout");
  const timeoutS = parseSecondsFlag(str(args, "timeout") ?? "0", "timeout");
  const ws = resolveWorkspace(str(args, "workspace"));
  const { runDaemon } = await import("../daemon/loop.ts");
  const { defaultHooks } = await import("../daemon/hooks.ts");
  return runDaemon({ ws, idleTimeoutS, timeoutS, hooks: defaultHooks() });
}

async function runOnce(args: ParsedArgs): Promise<number> {
  for (const f of ["idle-timeout", "timeout"]) {
    if (str(args, f) !== undefined) throw usageError(`--${f} goes with --subscribe`, "see: mam reconcile --help");
  }
  const ws = resolveWorkspace(str(args, "workspace"));
  const [{ reconcileOnce }, { reconcileText }] = await Promise.all([import("../ops/reconcile.ts"), import("../ops/reconcile-text.ts")]);
  const r = await reconcileOnce(ws, process.env, { dryRun: bool(args, "dry-run") });
  if (bool(args, "json")) outJson(r);
  else out(reconcileText(r));
  return 0;
}

export default defineCommand({
  meta: {
    name: "reconcile",
    description: "keep the registry true: one reconcile pass, or with --subscribe the workspace's subscriber daemon in the foreground",
    examples: [
      "mam reconcile                                   # one pass: mark dead panes terminated, register unknown agent panes, …",
      "mam reconcile --dry-run --json                  # what a pass would do, as JSON",
      "mam reconcile --subscribe                       # the daemon in the foreground (idle exit after 3600 s)",
      "mam reconcile --subscribe --idle-timeout 0      # never idle out (what mam daemon ensure starts)",
      "mam reconcile --subscribe --timeout 60 --workspace ~/proj",
    ],
  },
  args: {
    once: { type: "boolean", description: "one pass, then exit (the default without --subscribe)" },
    "dry-run": { type: "boolean", description: "compute drift and actions, write nothing" },
    json: { type: "boolean", description: "print the pass as one JSON document: {timestamp, yaml_path, servers, drifts, actions}" },
    subscribe: { type: "boolean", description: "run the subscriber daemon: MQTT job events, else polling; one per workspace (.mam/monitor.lock)" },
    "idle-timeout": { type: "string", description: "with --subscribe: exit after S seconds without an event or running work (default 3600; 0 = never)", valueHint: "S" },
    timeout: { type: "string", description: "with --subscribe: exit after S seconds in any case (default 0 = no limit)", valueHint: "S" },
    ...workspaceArg,
  },
  run({ args }) {
    if (bool(args, "subscribe")) {
      for (const f of ["once", "dry-run", "json"]) if (bool(args, f)) throw usageError(`--${f} does not go with --subscribe`);
      return runSubscribe(args);
    }
    return runOnce(args);
  },
});
