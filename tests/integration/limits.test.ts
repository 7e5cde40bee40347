// Usage limits (issue 34; docs/unattended.md), through the compiled binary: a fake claude on the
// fake herdr refuses its turns at a limit as the real one does (its synthetic rate_limit line in
// its transcript, the limit line on its screen: tests/fakes/agents/fake-agent, "Limits"), and the
// workspace's daemon sees it. mam status says limited until T (text and JSON), the job it works on
// journals `limited` once, a job queued for it stays queued and says why, a pool job goes to the
// other agent of the role; then a turn answered lifts the limit (`unlimited` once) and the queued
// job gets its turn. A loopback webhook gets one "limited" notification per transition.
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createAgent, type E2E, ensureDaemon, journalEvents, monitorLog, newWorkspace, startE2E, type Ws, submitJob } from "../helpers/jobs-e2e.ts";
import { waitFor } from "../helpers/sandbox.ts";

let e: E2E;
beforeAll(async () => {
  e = await startE2E("mam-limits-");
});
afterAll(async () => {
  await e.cleanup();
});

const started: Ws[] = [];
afterEach(async () => {
  for (const w of started.splice(0)) await w.mam(["daemon", "stop"]);
});

const submit = submitJob;

const jobJson = async (w: Ws, id: string) => JSON.parse((await w.mam(["job", "status", id, "--json"])).stdout);
const sessionJson = async (w: Ws, name: string) => JSON.parse((await w.mam(["status", "--json"])).stdout).sessions.find((s: { name: string }) => s.name === name);
const count = (w: Ws, id: string, event: string) => journalEvents(w.dir, id).filter((x) => x.event === event).length;

/** "3:07am (UTC)": a time as claude prints a reset, two hours from now; and that instant */
function resetIn2h(): { words: string; iso: string } {
  const t = new Date(Math.floor((Date.now() + 2 * 3600_000) / 60_000) * 60_000);
  const h = t.getUTCHours();
  const words = `${h % 12 === 0 ? 12 : h % 12}:${String(t.getUTCMinutes()).padStart(2, "0")}${h < 12 ? "am" : "pm"} (UTC)`;
  return { words, iso: t.toISOString().replace(/\.000Z$/, "Z") };
}

test("a limited claude: status says until when, its job journals limited once, a queued job waits and says why, a pool job goes to the other; the limit lifts once", async () => {
  const hits: { kind: string; title: string; key: string }[] = [];
  const rx = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: async (req) => (hits.push((await req.json()) as (typeof hits)[number]), new Response("ok")) });
  const w = newWorkspace(e);
  expect((await w.mam(["notify", "add", "webhook", `http://127.0.0.1:${rx.port}/limits`, "--on", "limited"])).code).toBe(0);
  await ensureDaemon(w, "polling", started);
  const [w1, w2] = [w.n("lim1"), w.n("lim2")];
  const p1 = await createAgent(e, w, w1, "worker");
  await createAgent(e, w, w2, "worker");
  const reset = resetIn2h();
  const text = `You've hit your session limit · resets ${reset.words}`;
  writeFileSync(join(w.dir, `.agent-limit.${w1}`), `${text}\n`);

  const a = await submit(w, ["--to", w1, "--prompt", "first task"]);
  let s: any;
  if (!(await waitFor(async () => (s = await sessionJson(w, w1))?.limit !== undefined, 30_000, 200))) throw new Error(`${w1} never limited: ${JSON.stringify(s)}\n${monitorLog(w.dir)}`);
  expect(s.limit).toEqual({ since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), resets_at: reset.iso, reason: text, source: "records" });
  expect((await sessionJson(w, w2)).limit).toBeUndefined();
  const human = (await w.mam(["status"])).stdout;
  expect(human).toMatch(new RegExp(`${w1} is limited until \\d\\d:\\d\\d \\(You've hit your session limit`));
  expect(await waitFor(async () => count(w, a, "limited") === 1, 10_000, 100)).toBe(true);
  const lim = journalEvents(w.dir, a).find((x) => x.event === "limited") as any;
  expect(lim).toMatchObject({ source: "mam", data: { session: w1, resets_at: reset.iso, reason: text } });

  // a job for it waits its turn, and its place says why
  const b = await submit(w, ["--to", w1, "--prompt", "second task"]);
  expect((await jobJson(w, b)).status).toBe("queued");
  expect((await w.mam(["job", "status", b])).stdout).toMatch(new RegExp(`queued \\(position 1: ${w1} is limited until \\d\\d:\\d\\d\\)`));
  expect((await jobJson(w, b)).waits_for).toMatch(new RegExp(`^${w1} is limited until`));

  // a pool job goes to the agent that is not limited
  const c = await submit(w, ["--to-role", "worker", "--prompt", "pool task"]);
  expect((await w.mam(["job", "wait", c, "--timeout", "60"])).code).toBe(0);
  expect((await jobJson(w, c)).agent_session).toBe(w2);
  expect((await jobJson(w, b)).status).toBe("queued");

  // its next turn gets an answer: the limit is over, said once
  rmSync(join(w.dir, `.agent-limit.${w1}`));
  const r = await e.herdr.herdr(["pane", "run", p1, "continue"]);
  expect(r.code).toBe(0);
  if (!(await waitFor(async () => (s = await sessionJson(w, w1))?.limit === undefined, 30_000, 200))) throw new Error(`${w1} still limited: ${JSON.stringify(s)}\n${monitorLog(w.dir)}`);
  expect(await waitFor(async () => count(w, a, "unlimited") === 1, 10_000, 100)).toBe(true);
  expect(count(w, a, "limited")).toBe(1);
  expect(monitorLog(w.dir)).toContain(`limits: ${w1} is limited until ${reset.iso}`);

  // its first job ends: the queued one gets its turn on it
  expect((await w.mam(["job", "cancel", a])).code).toBe(0);
  expect((await w.mam(["job", "wait", b, "--timeout", "60"])).code).toBe(0);
  expect((await jobJson(w, b)).agent_session).toBe(w1);
  expect(count(w, a, "limited")).toBe(1);
  expect(count(w, a, "unlimited")).toBe(1);
  expect(hits.map((h) => [h.kind, h.title])).toEqual([
    ["limited", `mam: ${w1} is limited until ${reset.iso}`],
    ["limited", `mam: ${w1} is no longer limited`],
  ]);
  rx.stop(true);
}, 180_000);

test("an agent at its limit that reports on its job again: unlimited goes first in the job's history, once, even when the report ends the job before the daemon looks", async () => {
  const w = newWorkspace(e);
  await ensureDaemon(w, "polling", started);
  const w1 = w.n("lim3");
  await createAgent(e, w, w1, "worker");
  writeFileSync(join(w.dir, `.agent-limit.${w1}`), `You've hit your session limit · resets ${resetIn2h().words}\n`);
  const a = await submit(w, ["--to", w1, "--prompt", "a task"]);
  expect(await waitFor(async () => count(w, a, "limited") === 1, 30_000, 100), monitorLog(w.dir)).toBe(true);
  // the daemon is away: only the report can close the limit on the job
  expect((await w.mam(["daemon", "stop"])).code).toBe(0);
  const r = await w.mam(["job", "event", a, "completed", "--source", w1, "--detail", "done after all"]);
  expect(r.code, r.stderr).toBe(0);
  const evs = journalEvents(w.dir, a) as any[];
  expect(evs.map((x) => x.event).slice(-3)).toEqual(["limited", "unlimited", "completed"]);
  const un = evs.find((x) => x.event === "unlimited");
  const lim = evs.find((x) => x.event === "limited");
  expect(un).toMatchObject({ source: "mam", data: { session: w1, since: lim.data.since, why: "it reported completed on the job" } });
  // another report on the ended job journals no second one
  expect((await w.mam(["job", "event", a, "progress", "--source", w1, "--detail", "late"])).code).toBe(0);
  expect(count(w, a, "unlimited")).toBe(1);
}, 120_000);
