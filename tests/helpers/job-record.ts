// A job record for unit tests: a running loop job abc12345 of worker `wrk` (claude) delegated by
// `lead`, reviewed by `rev`; each test overrides what it looks at.
import type { JobRecord } from "../../lib/jobs/store.ts";

export function loopJob(over: Partial<JobRecord> = {}, at = "2026-12-01T00:00:00Z"): JobRecord {
  return {
    schema_version: 1,
    job_id: "abc12345",
    status: "running",
    created_at: at,
    updated_at: at,
    prompt: "build it",
    agent: "claude",
    agent_session: "wrk",
    delegator: "lead",
    type: "loop",
    reviewer_session: "rev",
    max_iterations: 3,
    iteration: 1,
    topic_prefix: "mam/jobs/abc12345",
    timeout_sec: 3600,
    idle_timeout_sec: 120,
    expected_artifacts: [],
    last_seq: 2,
    auth_token: "tok",
    ...over,
  };
}
