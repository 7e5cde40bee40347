// mam shell-job: what mam types into a shell session for a job to it (docs/jobs.md, "Jobs to a
// shell"). Runs the job's command in the pane and reports on it (lib/ops/job/shell-run.ts); its
// exit status is the command's, so the shell's `$?` says how it went.
import { runShellJob } from "../ops/job/shell-run.ts";
import { realDeps } from "../ops/wiring.ts";
import { EXIT, usageError } from "../sys/errors.ts";
import { err } from "../sys/io.ts";
import { isValidJobId } from "../sys/names.ts";
import { noticeLine } from "../sys/notice.ts";
import { resolveWorkspace } from "../sys/paths.ts";
import { visible } from "../sys/sanitize.ts";
import { defineCommand, str, workspaceArg } from "./command.ts";

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
/** a shell's exit status for a command ended by a signal */
const SIGNAL_EXIT: Record<string, number> = { SIGHUP: 129, SIGINT: 130, SIGKILL: 137, SIGTERM: 143 };

export default defineCommand({
  meta: {
    name: "shell-job",
    description: "run a job given to a shell session: its prompt is the command (mam job submit types this line into the shell)",
    examples: ["mam shell-job abc12345 --workspace ~/proj     # what a shell session shows for job abc12345"],
  },
  args: {
    job_id: { type: "positional", description: "the job to run (8 hex digits)", valueHint: "JOB_ID", required: true },
    ...workspaceArg,
  },
  async run({ args }) {
    const id = str(args, "job_id") ?? "";
    if (!isValidJobId(id)) throw usageError(`invalid job id '${visible(id.slice(0, 80))}'`, "job ids are 8 lowercase hex digits");
    const ws = resolveWorkspace(str(args, "workspace") ?? process.env.MAM_WORKSPACE);
    const ac = new AbortController();
    const handlers = SIGNALS.map((s) => [s, () => ac.abort(s)] as const);
    for (const [s, h] of handlers) process.on(s, h);
    try {
      const r = await runShellJob(realDeps(ws, process.env), id, {
        output: (fd, chunk) => (fd === 1 ? process.stdout : process.stderr).write(chunk),
        progress: (line) => err(visible(line)),
        signal: ac.signal,
        cwd: process.cwd(),
      });
      for (const n of r.warnings) err(noticeLine(n));
      const how = r.signal ? `killed by ${r.signal}` : `exit ${r.exit_code}`;
      err(r.status === "completed" || r.status === "error" ? `[mam] job ${id} ${r.status} (${how})` : `[mam] job ${id} was ${r.status} meanwhile; the command was stopped (${how})`);
      if (r.signal) return SIGNAL_EXIT[r.signal] ?? EXIT.FAIL;
      return r.exit_code ?? EXIT.FAIL;
    } finally {
      for (const [s, h] of handlers) process.off(s, h);
    }
  },
});
