// mam doctor [--workspace DIR] [--json]: is this machine ready for mam, piece by piece, each with
// its fix (lib/doctor: probe.ts looks, diagnose.ts decides). Exit 1 when something stops mam from
// working (no agent CLI, no multiplexer, a broker named but down, …), else 0; warnings (an agent
// version mam was not verified on, no daemon while agents run) never fail it.
import { diagnose, doctorExit, doctorText } from "../doctor/diagnose.ts";
import { probe } from "../doctor/probe.ts";
import { out, outJson } from "../sys/io.ts";
import { resolveWorkspace } from "../sys/paths.ts";
import { bool, defineCommand, jsonArg, str, workspaceArg } from "./command.ts";
import { versionInfo } from "./version.ts";

export default defineCommand({
  meta: {
    name: "doctor",
    description: "check this machine and workspace for mam: agent CLIs and their versions, tmux/herdr, the broker, the daemon, hooks; each problem with its fix (exit 1 when one stops mam)",
    examples: ["mam doctor", "mam doctor --json                 # {ok, checks: [{id, name, status, detail, fix}]}", "mam doctor --workspace ~/proj"],
  },
  args: { ...workspaceArg, ...jsonArg },
  async run({ args }) {
    const ws = resolveWorkspace(str(args, "workspace"));
    const checks = diagnose(await probe(versionInfo(), ws, process.env));
    const code = doctorExit(checks);
    if (bool(args, "json")) outJson({ ok: code === 0, checks });
    else out(doctorText(checks));
    return code;
  },
});
