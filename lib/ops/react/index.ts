// The daemon's reactions, as a table (docs/architecture.md#the-daemons-reactions): what the daemon
// does with each hook event, one entry per reaction (./reaction.ts says what an entry is). The
// daemon's feed (lib/daemon/feed.ts) loops over this table as the front doors loop over OPS.
//
// The order is the order within each event, and it matters:
//   reconcile   team.link → reconcile.pass → job.react → acks.resend → merge.queue (what a killed
//               daemon left merging starts again)
//   event       team.link (takes the team's topics) → job.ingest → job.react
//   jobsChanged job.react → queue.dispatch → merge.queue (a fix job is typed after the agent's next)
//   poll        reconcile.pass → job.timeouts → job.react → limits.watch → merge.queue → usage.meter
//               → job.rest → team.refresh → notify.queued
//   watch       team.link → schedule.fire → notices.later (the notice about a job that stopped
//               comes before the agent's next job) → limits.watch (an agent that just hit its
//               limit gets no queued job) → limit.failover (a job under way before one waiting
//               its turn) → queue.dispatch → merge.queue → jobs.waited → usage.meter
//               → agents.restart (a dead agent's row ends, and comes back, before its job's watch
//               looks) → agents.watch → limit.resume
//   connected   team.link
import { acksResend } from "./acks-resend.ts";
import { agentsRestart } from "./agents-restart.ts";
import { agentsWatch } from "./agents-watch.ts";
import { jobIngest } from "./job-ingest.ts";
import { jobReact } from "./job-react.ts";
import { jobRest } from "./job-rest.ts";
import { jobTimeouts } from "./job-timeouts.ts";
import { jobsWaited } from "./jobs-waited.ts";
import { limitFailover } from "./limit-failover.ts";
import { limitResume } from "./limit-resume.ts";
import { limitsWatch } from "./limits-watch.ts";
import { mergeQueue } from "./merge-queue.ts";
import { noticesLater } from "./notices-later.ts";
import { notifyQueued } from "./notify-queued.ts";
import { queueDispatch } from "./queue-dispatch.ts";
import type { AnyReaction } from "./reaction.ts";
import { reconcilePass } from "./reconcile-pass.ts";
import { scheduleFire } from "./schedule-fire.ts";
import { teamLink } from "./team-link.ts";
import { teamRefresh } from "./team-refresh.ts";
import { usageMeter } from "./usage-meter.ts";

export const REACTIONS: readonly AnyReaction[] = [
  teamLink,
  reconcilePass,
  jobIngest,
  jobTimeouts,
  jobReact,
  acksResend,
  scheduleFire,
  noticesLater,
  limitsWatch,
  limitFailover,
  queueDispatch,
  mergeQueue,
  jobsWaited,
  usageMeter,
  agentsRestart,
  agentsWatch,
  limitResume,
  jobRest,
  teamRefresh,
  notifyQueued,
] as AnyReaction[];
