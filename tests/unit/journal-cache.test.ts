// JournalCache's jobs at rest: quiet() with one stat, or none while the jobs folder is watched and
// the watch named no change of the journal (lib/jobs/journal-index.ts), on a temp workspace with a
// clock of the test's own.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JournalCache, WATCHED_TRUST_MS } from "../../lib/jobs/journal-index.ts";
import { appendEvent, type JobSpec, registerJob } from "../../lib/jobs/store.ts";

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));
const spec: JobSpec = {
  agent_session: "wrk", agent: "claude", prompt: "do it", delegator: "lead", type: "single", reviewer_session: null,
  max_iterations: null, timeout_sec: 3600, idle_timeout_sec: 120, expected_artifacts: [], topic_prefix_base: "mam/jobs",
};

/** a workspace with one ended job, read and put to rest in a cache whose clock the test moves */
async function resting() {
  const ws = mkdtempSync(join(tmpdir(), "mam-jcache-"));
  roots.push(ws);
  const job = await registerJob(ws, spec);
  const other = await registerJob(ws, spec);
  await appendEvent(ws, job.job_id, { event: "completed", detail: "done", source: "wrk" });
  const clock = { t: 1_000 };
  const cache = new JournalCache(() => clock.t);
  cache.get(ws, job.job_id);
  cache.rest(job.job_id);
  const late = () => appendEvent(ws, job.job_id, { event: "progress", detail: "late", source: "wrk" });
  return { ws, id: job.job_id, other: other.job_id, clock, cache, late };
}

test("not watched: every quiet() looks, and a late event wakes the job at once", async () => {
  const { ws, id, cache, late } = await resting();
  expect(cache.quiet(ws, id)).toBe(true);
  await late();
  expect(cache.quiet(ws, id)).toBe(false);
  expect(cache.quiet(ws, id)).toBe(false); // no longer at rest: read again by the caller
});

test("watched: a change the watch names wakes the job at once; a file of another job, or no job's, does not", async () => {
  const { ws, id, other, cache, late } = await resting();
  cache.watched(true);
  expect(cache.quiet(ws, id)).toBe(true);
  await late();
  cache.fileChanged(`${other}.events.ndjson`);
  cache.fileChanged("cursor.json");
  cache.fileChanged(".tmp-123");
  expect(cache.quiet(ws, id)).toBe(true); // trusted: nothing named its journal
  cache.fileChanged(`${id}.events.ndjson`);
  expect(cache.quiet(ws, id)).toBe(false);
});

test("watched: a change the watch missed is seen once the last look is WATCHED_TRUST_MS old", async () => {
  const { ws, id, clock, cache, late } = await resting();
  cache.watched(true);
  await late();
  clock.t += WATCHED_TRUST_MS - 1;
  expect(cache.quiet(ws, id)).toBe(true);
  clock.t += 1;
  expect(cache.quiet(ws, id)).toBe(false);
});

test("watched: a look that finds the journal as it was renews the trust; a change with no name, or the watch lost, makes every job looked at", async () => {
  const { ws, id, clock, cache, late } = await resting();
  cache.watched(true);
  clock.t += WATCHED_TRUST_MS;
  expect(cache.quiet(ws, id)).toBe(true); // looked: unchanged
  await late();
  clock.t += WATCHED_TRUST_MS - 1;
  expect(cache.quiet(ws, id)).toBe(true); // trusted since that look
  cache.fileChanged(undefined);
  expect(cache.quiet(ws, id)).toBe(false);

  const b = await resting();
  b.cache.watched(true);
  await b.late();
  expect(b.cache.quiet(b.ws, b.id)).toBe(true);
  b.cache.watched(false);
  expect(b.cache.quiet(b.ws, b.id)).toBe(false);
});
