// The output schemas of the MCP tools, by tool name: the shape of each tool's structured result, published to
// clients (outputSchema) and checked by the SDK on every successful call. Objects are loose
// (fields may be added later without breaking clients); the fields named here are always there.
import { z } from "zod";

const str = z.string();
const strOrNull = z.string().nullable();

export const eventOut = z.looseObject({
  seq: z.number().int(),
  job_id: str,
  event: str,
  timestamp: str,
  detail: str,
  source: str,
  data: z.record(z.string(), z.unknown()),
});

const count = z.number().int();
/** a usage (docs/cost.md): unknown says why, never a zero */
const usageOut = z.looseObject({
  known: z.boolean(),
  tokens: z.looseObject({ input: count, output: count, cache_write: count, cache_read: count, total: count }).nullable(),
  usd: z.number().nullable(),
  models: z.record(z.string(), z.unknown()),
});
const jobUsageOut = usageOut.extend({ by_session: z.record(z.string(), usageOut), by_iteration: z.record(z.string(), usageOut) });

const jobRecordOut = {
  job_id: str,
  status: str,
  type: z.enum(["single", "loop"]),
  agent_session: str,
  delegator: strOrNull,
  created_at: str,
  updated_at: str,
};
/** what a permission dialog asks (lib/agents/screen/question.ts) */
const questionOut = z.looseObject({
  kind: str,
  what: z.enum(["command", "file", "tool", "other"]),
  title: str,
  subject: str,
  body: z.array(str),
  notes: z.array(str),
  question: str,
  choices: z.array(z.looseObject({ n: z.number().int(), label: str, key: str, role: z.enum(["yes", "always", "no", "other"]) })),
  fingerprint: str,
});
const jobViewOut = z.looseObject({
  ...jobRecordOut,
  events: z.number().int(),
  last_event: eventOut.nullable(),
  usage: jobUsageOut,
  budget_usd: z.number().nullable(),
  max_tokens: z.number().int().nullable(),
});

export const OUTPUTS = {
  session_status: z.looseObject({
    workspace: str,
    registry: str,
    sessions: z.array(
      z.looseObject({
        name: str,
        agent: strOrNull,
        role: strOrNull,
        status: str,
        live: str,
        mux: str,
        server: str,
        pane: strOrNull,
        job: z.looseObject({ id: str, status: str }).nullable(),
        drift: z.array(str),
        usage: z.looseObject({ job: usageOut.nullable(), today: usageOut, total: usageOut }),
        question: questionOut.optional(),
      }),
    ),
  }),
  session_approve: z.looseObject({
    session: str,
    job_id: strOrNull,
    answer: z.enum(["approved", "denied"]),
    choice: z.looseObject({ n: z.number().int(), label: str, key: str, role: str }),
    question: questionOut,
    key: str,
    answered: z.boolean(),
    seq: z.number().int().nullable(),
    told: z.boolean(),
    warnings: z.array(str),
  }),
  session_create: z.looseObject({
    name: str,
    agent: str,
    role: str,
    mux: z.enum(["herdr", "tmux"]),
    server: str,
    pane: str,
    adopted: z.boolean(),
    session_id: strOrNull,
    job_id: strOrNull,
    watchdog_pid: z.number().int().nullable(),
    start_command: str,
    warnings: z.array(str),
  }),
  session_stop: z.looseObject({ name: str, status: str, already: z.boolean(), pane: strOrNull, session_id: strOrNull, purged: z.array(str) }),
  session_resume: z.looseObject({ name: str, already: z.boolean(), pane: str, session_id: strOrNull, from: str }),
  job_submit: z.looseObject(jobRecordOut),
  job_status: jobViewOut,
  job_list: z.looseObject({ workspace: str, jobs: z.array(jobViewOut) }),
  job_logs: z.looseObject({ job_id: str, total: z.number().int(), events: z.array(eventOut) }),
  job_cancel: z.looseObject({ job_id: str, cancelled: z.boolean(), status: str, told: strOrNull, warnings: z.array(str) }),
  session_prune: z.looseObject({ removed: z.array(z.looseObject({ name: str, status: str, mux: str, server: str })), dry_run: z.boolean(), warnings: z.array(str) }),
  job_wait: z.looseObject({
    outcome: z.enum(["done", "timeout", "interrupted", "attention"]),
    jobs: z.array(z.looseObject({ job_id: str, status: str, last_event: eventOut.nullable() })),
    event: eventOut.optional(),
    all_completed: z.boolean(),
  }),
  registry_reconcile: z.looseObject({
    timestamp: str,
    yaml_path: str,
    servers: z.record(z.string(), z.looseObject({ reachable: z.boolean(), state: str, panes: z.number() })),
    drifts: z.array(z.looseObject({ name: str, kind: str })),
    actions: z.array(z.unknown()),
    dry_run: z.boolean(),
  }),
  team_show: z.looseObject({
    team: str,
    host: str,
    broker: str,
    reachable: z.boolean(),
    workspaces: z.array(
      z.looseObject({
        host: str,
        workspace: str,
        online: z.boolean(),
        last_seen: str,
        here: z.boolean(),
        agents: z.array(z.looseObject({ name: str, address: str, agent: strOrNull, role: strOrNull, live: str, job: z.looseObject({ id: str, status: str }).nullable() })),
      }),
    ),
    warnings: z.array(str),
  }),
} as const;
