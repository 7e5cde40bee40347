// The table of operations: every use case mam offers, once. The command line (lib/cli/ops.ts), the
// MCP tools (lib/mcp/tools.ts) and the dashboard's actions (lib/ui/actions.ts) are loops over it;
// a new operation is one entry here (in lib/ops/table/) plus its use case (docs/architecture.md).
import type { AnyOp } from "./op.ts";
import { jobCancel, jobEvent, jobList, jobLogs, jobStatus, jobSubmit, jobWait } from "./table/job.ts";
import { sessionApprove, sessionCreate, sessionPrune, sessionResume, sessionSend, sessionStatus, sessionStop } from "./table/session.ts";
import { mergeConfig, mergeEnqueue, mergeRun, mergeStatusOp } from "./table/merge.ts";
import { planRun, planStatusOp } from "./table/plan.ts";
import { notifyAdd, notifyList, notifyRemove, notifyTest } from "./table/notify.ts";
import { teamCode, teamInit, teamJoin, teamLeave, teamShow } from "./table/team.ts";
import { daemonEnsure, daemonStatus, daemonStop, registryCheck, registryRebuild, registryReconcile, registryRestore, worktreeList, worktreeRemove } from "./table/workspace.ts";

/** in the order MCP clients list the tools and `mam --help` lists the commands of a group */
export const OPS: readonly AnyOp[] = [
  sessionStatus,
  sessionCreate,
  sessionStop,
  sessionResume,
  sessionPrune,
  sessionSend,
  sessionApprove,
  jobSubmit,
  jobStatus,
  jobList,
  jobLogs,
  jobCancel,
  jobWait,
  jobEvent,
  planRun,
  planStatusOp,
  mergeEnqueue,
  mergeStatusOp,
  mergeConfig,
  mergeRun,
  registryReconcile,
  worktreeList,
  worktreeRemove,
  daemonEnsure,
  daemonStatus,
  daemonStop,
  registryCheck,
  registryRestore,
  registryRebuild,
  teamShow,
  teamInit,
  teamJoin,
  teamCode,
  teamLeave,
  notifyAdd,
  notifyList,
  notifyRemove,
  notifyTest,
];

/** the op of a name; undefined when there is none */
export function opNamed(name: string): AnyOp | undefined {
  return OPS.find((o) => o.name === name);
}
