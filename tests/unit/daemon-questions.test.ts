// Only the daemon's own observations are the source of a question (review B2: A4, N4). A dialog's
// question (a permission_required from monitor, or carrying data.question) is the daemon's: `mam job
// event` refuses it, the broker's is taken only when the agent's host's daemon vouches for it
// (lib/team/attest.ts), and mam approve trusts no other.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalJson } from "../../lib/jobs/canonical.ts";
import { isDaemonQuestion, type JobEvent, signEvent } from "../../lib/jobs/event.ts";
import { ingestEvent } from "../../lib/jobs/ingest.ts";
import { appendEvent, type JobSpec, readJournal, registerJob } from "../../lib/jobs/store.ts";
import { jobEvent } from "../../lib/ops/table/job.ts";
import { attest, vouchedQuestion } from "../../lib/team/attest.ts";
import type { Team } from "../../lib/team/config.ts";
import { runOp, testDeps } from "../helpers/ops.ts";

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));
const tempWs = () => {
  const d = mkdtempSync(join(tmpdir(), "mam-dq-"));
  roots.push(d);
  return d;
};
const spec = (over: Partial<JobSpec> = {}): JobSpec => ({
  agent_session: "wrk", agent: "claude", prompt: "do it", delegator: "lead", type: "single", reviewer_session: null,
  max_iterations: null, timeout_sec: 3600, idle_timeout_sec: 120, expected_artifacts: [], topic_prefix_base: "mam/jobs", ...over,
});
const team: Team = { schema_version: 1, team: "lab", secret: Buffer.alloc(32, 7).toString("base64url"), since: "2026-12-01T00:00:00Z" };
const question = { title: "Bash command", subject: "ls -la", question: "Do you want to proceed?", choices: [], fingerprint: "0123456789abcdef" };

test("which events are the daemon's questions", () => {
  expect(isDaemonQuestion({ event: "permission_required", source: "monitor", data: {} })).toBe(true);
  expect(isDaemonQuestion({ event: "permission_required", source: "wrk", data: { question } })).toBe(true);
  expect(isDaemonQuestion({ event: "permission_required", source: "wrk", data: { session: "wrk" } })).toBe(false);
  expect(isDaemonQuestion({ event: "progress", source: "wrk", data: { question } })).toBe(false);
});

test("mam job event refuses the daemon's source and a question; an agent's own permission_required without one is journalled", async () => {
  const ws = tempWs();
  const r = await registerJob(ws, spec());
  const deps = testDeps(ws);
  const report = (event: string, source: string, data?: object) => runOp(jobEvent, deps, { job_id: r.job_id, event, source, ...(data ? { data } : {}) });
  await expect(report("permission_required", "monitor", { session: "wrk", question })).rejects.toThrow("is the daemon's own");
  await expect(report("permission_required", "wrk", { session: "wrk", question })).rejects.toThrow("a permission_required with data.question is the daemon's own");
  await expect(report("progress", "monitor")).rejects.toThrow("{{source}} monitor is the daemon's own");
  expect(readJournal(ws, r.job_id)).toEqual([]);
  await report("permission_required", "wrk", { session: "wrk" });
  expect(readJournal(ws, r.job_id).map((e) => [e.event, e.source])).toEqual([["permission_required", "wrk"]]);
});

test("from the broker: a question is taken only when the daemon of the agent's host vouches for it", async () => {
  const ws = tempWs();
  const r = await registerJob(ws, spec({ agent_session: "wrk@hostB" }));
  const topic = `mam/jobs/${r.job_id}/events`;
  let seq = 0;
  const ev = (over: Partial<JobEvent> = {}): JobEvent => ({
    schema_version: 1, seq: ++seq, origin: "b0b0b0b0b0b0b0b0", job_id: r.job_id, event: "permission_required", timestamp: "2026-12-01T00:00:00Z",
    detail: "wrk: Bash command", source: "monitor", data: { session: "wrk@hostB", question }, ...over,
  });
  const wire = (e: JobEvent) => Buffer.from(canonicalJson(signEvent(e, r.auth_token)));
  const vouched = (t: Team | undefined) => (rec: Parameters<typeof vouchedQuestion>[2], e: JobEvent) => vouchedQuestion(t, "hostA", rec, e);
  const logs: string[] = [];
  const ingest = (e: JobEvent, t: Team | null = team) => ingestEvent(ws, topic, wire(e), (l) => logs.push(l), undefined, false, (l) => logs.push(l), vouched(t ?? undefined));

  // a token holder's forgery: signed with the job's token, with source monitor or a question, no attestation
  for (const forged of [ev(), ev({ source: "wrk" }), ev({ data: { session: "wrk@hostB" } })]) {
    expect(await ingest(forged)).toMatchObject({ outcome: "dropped", reason: "not-vouched" });
  }
  // vouched for by hostB's daemon: taken
  const real = ev();
  const good = { ...real, data: { ...real.data, ...attest(team, "hostB", real) } };
  expect(await ingest(good)).toMatchObject({ outcome: "appended" });
  // vouched for by a host that is not the agent's, by another team, for another question, or replayed with another seq: dropped
  const other = ev();
  expect(await ingest({ ...other, data: { ...other.data, ...attest(team, "hostC", other) } })).toMatchObject({ outcome: "dropped", reason: "not-vouched" });
  const otherTeam = { ...team, secret: Buffer.alloc(32, 9).toString("base64url") };
  const t2 = ev();
  expect(await ingest({ ...t2, data: { ...t2.data, ...attest(otherTeam, "hostB", t2) } })).toMatchObject({ outcome: "dropped", reason: "not-vouched" });
  const t3 = ev();
  const a3 = attest(team, "hostB", t3);
  expect(await ingest({ ...t3, data: { ...t3.data, question: { ...question, subject: "rm -rf build" }, ...a3 } })).toMatchObject({ outcome: "dropped", reason: "not-vouched" });
  expect(await ingest({ ...good, seq: ++seq })).toMatchObject({ outcome: "dropped", reason: "not-vouched" });
  // no team here: no other host's daemon to vouch
  const t4 = ev();
  expect(await ingest({ ...t4, data: { ...t4.data, ...attest(team, "hostB", t4) } }, null)).toMatchObject({ outcome: "dropped", reason: "not-vouched" });
  expect(readJournal(ws, r.job_id).map((e) => e.seq)).toEqual([good.seq]);
  expect(logs.some((l) => l.includes("is the daemon's own, and no daemon of the team vouches for it"))).toBe(true);
  // an agent's own permission_required without a question is still taken
  expect(await ingest(ev({ source: "wrk", data: { session: "wrk@hostB" } }))).toMatchObject({ outcome: "appended" });
});

test("the daemon vouches for the dialog it journals (appendEvent's vouch), over its identity", async () => {
  const ws = tempWs();
  const r = await registerJob(ws, spec({ agent_session: "wrk@hostB" }));
  const a = await appendEvent(ws, r.job_id, { event: "permission_required", detail: "d", source: "monitor", data: { session: "wrk@hostB", question } }, { vouch: (e) => attest(team, "hostB", e) });
  expect(a!.payload.data.attest).toMatchObject({ host: "hostB" });
  expect(vouchedQuestion(team, "hostA", r, a!.payload)).toBeUndefined();
  expect(vouchedQuestion(team, "hostB", r, a!.payload)).toContain("this host's daemon");
});
