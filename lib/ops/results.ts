// The pieces the operations' result shapes share (zod/mini): a job's record and view, a journal
// event, a usage, a permission dialog, the team's hosts. Each op states its own result beside its
// input (`result` in its lib/ops/table/ entry): the MCP tool's output schema and the `--json`
// document are that shape. Objects are loose: fields may be added later without breaking a client;
// the fields named here are always there. Builders, not values, so a command builds only the
// shapes it shows (as inputs are thunks: lib/ops/op.ts).
import * as z from "zod/mini";

export const str = () => z.string();
export const strOrNull = () => z.nullable(z.string());
export const int = () => z.int();
/** a result's notices as the printed lines --json and MCP carry (lib/sys/notice.ts withNoticeLines) */
export const warnings = () => z.array(z.string());

export const eventOut = () =>
  z.looseObject({
    seq: int(),
    job_id: str(),
    event: str(),
    timestamp: str(),
    detail: str(),
    source: str(),
    data: z.record(z.string(), z.unknown()),
  });

/** a usage (docs/cost.md): unknown says why, never a zero */
export const usageOut = () =>
  z.looseObject({
    known: z.boolean(),
    tokens: z.nullable(z.looseObject({ input: int(), output: int(), cache_write: int(), cache_read: int(), total: int() })),
    usd: z.nullable(z.number()),
    models: z.record(z.string(), z.unknown()),
  });

const jobUsageOut = () => z.extend(usageOut(), { by_session: z.record(z.string(), usageOut()), by_iteration: z.record(z.string(), usageOut()) });

/** a job's record as a result shows it (without its token) */
export const jobRecordShape = () => ({
  job_id: str(),
  status: str(),
  type: z.enum(["single", "loop"]),
  agent_session: str(),
  delegator: strOrNull(),
  created_at: str(),
  updated_at: str(),
});

/** what a permission dialog asks (lib/agents/screen/question.ts) */
export const questionOut = () =>
  z.looseObject({
    kind: str(),
    what: z.enum(["command", "file", "tool", "other"]),
    title: str(),
    subject: str(),
    body: z.array(str()),
    notes: z.array(str()),
    question: str(),
    choices: z.array(z.looseObject({ n: int(), label: str(), key: str(), role: z.enum(["yes", "always", "no", "other"]) })),
    fingerprint: str(),
  });

/** a job with its status from the journal, its last event and its usage (lib/jobs/query.ts) */
export const jobViewOut = () =>
  z.looseObject({
    ...jobRecordShape(),
    events: int(),
    last_event: z.nullable(eventOut()),
    usage: jobUsageOut(),
    budget_usd: z.nullable(z.number()),
    max_tokens: z.nullable(int()),
  });

/** a schedule (job submit --at / --every: lib/ops/job/schedule.ts) */
export const scheduleOut = () =>
  z.looseObject({
    schedule_id: str(),
    created_at: str(),
    job: z.looseObject({}),
    next_at: z.nullable(z.number()),
    every_s: z.nullable(z.number()),
    runs: z.array(z.looseObject({})),
  });

/** the team's hosts and their workspaces' agents (team show, status --fleet: lib/ops/team.ts) */
export const rosterOut = () =>
  z.looseObject({
    team: str(),
    host: str(),
    broker: str(),
    reachable: z.boolean(),
    workspaces: z.array(
      z.looseObject({
        host: str(),
        workspace: str(),
        online: z.boolean(),
        last_seen: str(),
        here: z.boolean(),
        agents: z.array(z.looseObject({ name: str(), address: str(), agent: strOrNull(), role: strOrNull(), live: str(), job: z.nullable(z.looseObject({ id: str(), status: str() })) })),
      }),
    ),
    warnings: warnings(),
  });

/** a team's broker as this machine reaches it (null: each machine's MQTT_BROKER) */
export const teamBrokerOut = () => z.nullable(z.looseObject({ host: str(), port: int(), tls: z.boolean() }));

/** a notification sink as mam shows it (without its secrets) */
export const sinkOut = () => z.looseObject({ id: str(), type: z.enum(["desktop", "webhook", "command"]), on: z.array(str()), target: str() });
