// mam daemon ensure | status | stop [--workspace DIR] (SPEC §6.3): the workspace's subscriber daemon.
import { notFound } from "../sys/errors.ts";
import { err, out, outJson, table } from "../sys/io.ts";
import { resolveWorkspace } from "../sys/paths.ts";
import { bool, defineCommand, jsonArg, str, workspaceArg } from "./command.ts";

const noneRuns = (ws: string) => notFound(`no subscriber daemon runs for ${ws}`, "start one with: mam daemon ensure");

const ensure = defineCommand({
  meta: {
    name: "ensure",
    description: "print the PID of the workspace's subscriber daemon, starting one (detached) if none runs",
    examples: [
      "mam daemon ensure                       # 12345",
      "mam daemon ensure --workspace ~/proj",
      "MAM_NO_SUBSCRIBER_DAEMON=1 mam daemon ensure   # never starts one; prints the PID of one that runs",
    ],
  },
  args: { ...workspaceArg },
  async run({ args }) {
    const ws = resolveWorkspace(str(args, "workspace"));
    const { ensureDaemonDetailed } = await import("../sys/daemon-proc.ts");
    const r = await ensureDaemonDetailed(ws);
    if (r.started) {
      const { monitorLogPath } = await import("../sys/daemon-files.ts");
      err(`mam: started the subscriber daemon for ${ws} (pid ${r.pid}; log ${monitorLogPath(ws)})`);
    }
    if (r.pid !== undefined) out(String(r.pid));
  },
});

const status = defineCommand({
  meta: {
    name: "status",
    description: "show the workspace's subscriber daemon: pid, mode (mqtt / polling), since, log; exit 3 when none runs",
    examples: ["mam daemon status", "mam daemon status --json   # {pid, mode, since, log, broker}"],
  },
  args: { ...workspaceArg, ...jsonArg },
  async run({ args }) {
    const ws = resolveWorkspace(str(args, "workspace"));
    const { daemonStatus } = await import("../sys/daemon-proc.ts");
    const s = daemonStatus(ws);
    if (!s) throw noneRuns(ws);
    if (bool(args, "json")) {
      outJson(s);
      return;
    }
    const rows = [
      ["pid", String(s.pid ?? "?")],
      ["mode", s.mode],
      ["since", s.since ?? "-"],
      ["broker", s.broker ?? "-"],
      ["log", s.log ?? "-"],
    ];
    out(table(["subscriber daemon", ws], rows));
  },
});

const stop = defineCommand({
  meta: {
    name: "stop",
    description: "stop the workspace's subscriber daemon (SIGTERM, SIGKILL after 5 s); exit 3 when none runs",
    examples: ["mam daemon stop", "mam daemon stop --workspace ~/proj"],
  },
  args: { ...workspaceArg },
  async run({ args }) {
    const ws = resolveWorkspace(str(args, "workspace"));
    const { stopDaemon, STOP_GRACE_MS } = await import("../sys/daemon-proc.ts");
    const r = await stopDaemon(ws);
    if (!r) throw noneRuns(ws);
    if (r.killed) err(`WARNING: the subscriber daemon (pid ${r.pid}) did not stop within ${STOP_GRACE_MS / 1000} s of SIGTERM; killed it (SIGKILL)`);
    out(`stopped the subscriber daemon (pid ${r.pid})`);
  },
});

export default defineCommand({
  meta: {
    name: "daemon",
    description: "the workspace's subscriber daemon (mam reconcile --subscribe, detached): ensure, status, stop",
    examples: ["mam daemon ensure", "mam daemon status --json", "mam daemon stop"],
  },
  subCommands: { ensure, status, stop },
});
