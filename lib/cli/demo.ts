// mam demo: the hello-world (SPEC §8)
import { usageError } from "../sys/errors.ts";
import { out } from "../sys/io.ts";
import { bool, defineCommand, str } from "./command.ts";

export default defineCommand({
  meta: {
    name: "demo",
    description: "the hello-world: two demo agents, a broker and a loop job in a temporary workspace; prints the timeline and the status table, then cleans up",
    examples: ["mam demo", "mam demo --keep            # leave it running and say how to look", "mam demo --mux herdr       # on a private herdr server", "mam demo --dialog          # the worker asks first; mam approve answers", "mam demo --plan            # a plan: three parts in three worktrees, reviewed, merged on main"],
  },
  args: {
    mux: { type: "enum", options: ["tmux", "herdr"], default: "tmux", description: "multiplexer for the two agents" },
    keep: { type: "boolean", description: "keep the sessions, daemon, broker and workspace, and print how to look and clean up" },
    timeout: { type: "string", default: "120", description: "seconds the job may take", valueHint: "S" },
    dialog: { type: "boolean", description: "the worker asks in a permission dialog first; the demo answers it with mam approve (with --keep: you do)" },
    plan: { type: "boolean", description: "a plan instead: three workers in three git worktrees build three parts, each reviewed by its own reviewer, and the merge queue lands them on main (docs/plan.md)" },
  },
  async run({ args }) {
    const t = str(args, "timeout")!;
    if (!/^\d+$/.test(t) || Number(t) < 1) throw usageError(`--timeout must be a whole number of seconds (got '${t}')`);
    if (bool(args, "plan") && bool(args, "dialog")) throw usageError("--plan and --dialog do not go together", "mam demo --dialog shows a dialog answered; mam demo --plan a plan landed");
    const { runDemo } = await import("../demo/run.ts");
    return runDemo({ backend: str(args, "mux") as "tmux" | "herdr", keep: bool(args, "keep"), print: (l) => out(l), env: process.env, timeoutMs: Number(t) * 1000, dialog: bool(args, "dialog"), plan: bool(args, "plan") });
  },
});
