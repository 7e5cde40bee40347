// Dead agents come back, opt-in (issue 34 item 4), through the binary: fake agents on the fake herdr
// made with `mam create --restart on-failure`, the workspace's daemon. An agent killed with -9 is
// resumed in the same conversation, its job journals `restarted` once, its delegator is told, and
// nothing is typed into it again; a crash loop stops after --max-restarts with one notification; a
// `mam stop` (soft or hard) is never restarted.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startMosquitto, type TestBroker } from "../helpers/brokers.ts";
import { createAgent, type E2E, ensureDaemon as ensureShared, journalEvents, monitorLog, newWorkspace, startE2E, typed, waitTyped, type Ws, submitJob } from "../helpers/jobs-e2e.ts";
import { waitFor } from "../helpers/sandbox.ts";
import { parse, stringify } from "yaml";

let e: E2E;
let mosq: TestBroker;
let hits: { workspace?: string; kind?: string; session?: string; title?: string }[] = [];
let rx: ReturnType<typeof Bun.serve>;
beforeAll(async () => {
  e = await startE2E("mam-rs-");
  mosq = await startMosquitto(join(e.sb.root, "mosq"));
  rx = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      hits.push((await req.json().catch(() => ({}))) as never);
      return new Response("ok");
    },
  });
});
afterAll(async () => {
  rx?.stop(true);
  await mosq?.stop();
  await e.cleanup();
});

const started: Ws[] = [];
afterEach(async () => {
  for (const w of started.splice(0)) await w.mam(["daemon", "stop"]);
});

const submit = submitJob;

const events = (w: Ws, id: string) => journalEvents(w.dir, id).map((x) => `${x.event}:${x.source}`);
const count = (hay: string, needle: string) => hay.split(needle).length - 1;

/** the session's row as mam status --json shows it */
async function statusOf(w: Ws, name: string): Promise<{ status: string; pane: string | null; live: string; restart?: string }> {
  const r = await w.mam(["status", "--json"]);
  return JSON.parse(r.stdout).sessions.find((s: { name: string }) => s.name === name);
}

/** SIGKILL the agent in the pane (herdr keeps the pane, a bare shell) */
async function killAgent(pane: string): Promise<void> {
  const info = (await e.herdr.call("pane.process_info", { pane_id: pane })) as { process_info: { shell_pid: number; foreground_processes: { pid: number }[] } };
  const pids = info.process_info.foreground_processes.map((p) => p.pid).filter((p) => p !== info.process_info.shell_pid);
  expect(pids.length).toBeGreaterThan(0);
  for (const p of pids) process.kill(p, "SIGKILL");
}

const screen = async (pane: string) => String(((await e.herdr.call("pane.read", { pane_id: pane, source: "recent_unwrapped", lines: 200 })) as { read: { text: string } }).read.text);

async function report(w: Ws, id: string, source: string, ev: string, detail: string): Promise<void> {
  const token = JSON.parse(await Bun.file(join(w.dir, ".mam", "jobs", `${id}.json`)).text()).auth_token as string;
  const r = await w.mam(["job", "event", id, ev, "--detail", detail, "--source", source, "--token", token]);
  expect(r.code, r.stderr).toBe(0);
}

const transports: ["polling" | "mqtt", () => Record<string, string>][] = [
  ["polling", () => ({})],
  ["mqtt", () => mosq.env],
];

describe("an agent killed with -9 comes back in its conversation", () => {
  for (const [mode, env] of transports) {
    test(`${mode}: resumed once, its job journals restarted once, the delegator told, the job not typed again, one notice to continue it`, async () => {
      // a passive worker reads its job and reports nothing: the test reports for it
      const w = newWorkspace(e, env(), { agent: { PASSIVE: "1" } });
      await ensureShared(w, mode, started);
      const [lead, wk] = [w.n("lead"), w.n("wk")];
      const dp = await createAgent(e, w, lead, "lead");
      const made = await w.mam(["create", "--agent", "claude", "--role", "worker", "--session", wk, "--herdr-session", e.server, "--no-onboard", "--restart", "on-failure", "--json"]);
      expect(made.code, made.stderr).toBe(0);
      const { pane: wp, session_id: sid } = JSON.parse(made.stdout) as { pane: string; session_id: string };
      const id = await submit(w, ["--to", wk, "--from", lead, "--prompt", "summarise the README"]);
      expect(await waitFor(async () => (await screen(wp)).includes("got: Run started now"), 20_000, 100)).toBe(true);
      await report(w, id, wk, "started", "reading");
      expect(count(await typed(e.herdr, wp), "summarise the README")).toBe(1);
      const before = await typed(e.herdr, wp);

      await killAgent(wp);
      // the daemon resumes it: running again in a new pane, the same conversation
      expect(await waitFor(async () => events(w, id).includes("restarted:monitor"), 30_000, 100), monitorLog(w.dir)).toBe(true);
      const st = await statusOf(w, wk);
      expect(st).toMatchObject({ status: "running", restart: "restarting (1/3 this hour)" });
      const np = st.pane!;
      expect(await waitFor(async () => (await screen(np)).includes(`resumed ${sid}`), 20_000, 100), await screen(np)).toBe(true);
      const restarted = journalEvents(w.dir, id).find((x) => x.event === "restarted")!;
      expect(restarted.detail).toContain(`${wk} restarted (attempt 1/3 this hour) after `);
      expect(restarted.detail).toContain(`its conversation ${sid} resumed, the job not sent again`);
      // the delegator hears of it once
      expect(await waitTyped(e.herdr, dp, `[mam] job ${id} restarted: ${wk} restarted (attempt 1/3 this hour)`), monitorLog(w.dir)).toBe(true);
      // the job goes on: the agent finishes it
      await report(w, id, wk, "completed", "done");
      const wait = await w.mam(["job", "wait", id, "--timeout", "30"]);
      expect({ code: wait.code, out: wait.stdout }).toEqual({ code: 0, out: `${id} completed: done\n` });
      expect(events(w, id)).toEqual([`started:${wk}`, "restarted:monitor", `completed:${wk}`]);
      // the job's text went in once; since the kill, the resume's command line into the pane's
      // shell (herdr keeps the pane of an agent that died: the resume reuses it), then one notice
      // to the resumed agent to continue the job
      expect(count(await typed(e.herdr, wp), "summarise the README")).toBe(1);
      expect(await waitTyped(e.herdr, np, `Continue job ${id} where you stopped`), monitorLog(w.dir)).toBe(true);
      const since = np === wp ? (await typed(e.herdr, wp)).slice(before.length) : await typed(e.herdr, np);
      expect(since).toStartWith(`claude --resume ${sid} `);
      expect(since.slice(since.indexOf("[mam]"))).toStartWith("[mam] Your process ended (");
      expect(count(since, "[mam]")).toBe(1);
      expect(await waitTyped(e.herdr, dp, `[mam] job ${id} completed: done`)).toBe(true);
      expect(count(await typed(e.herdr, dp), `[mam] job ${id} restarted`)).toBe(1);
      expect(count(monitorLog(w.dir), `restart: ${wk} restarted`)).toBe(1);
    }, 120_000);
  }
});

test("a crash loop: it stops after --max-restarts, the job ends in error, one notification", async () => {
  const w = newWorkspace(e, {}, { agent: { PASSIVE: "1" } });
  expect((await w.mam(["notify", "add", "webhook", `http://127.0.0.1:${rx.port}/hook`])).code).toBe(0);
  await ensureShared(w, "polling", started);
  const [lead, wk] = [w.n("lead"), w.n("loop")];
  const dp = await createAgent(e, w, lead, "lead");
  const wp = await createAgent(e, w, wk, "worker", { extra: ["--restart", "on-failure", "--max-restarts", "2"] });
  const id = await submit(w, ["--to", wk, "--from", lead, "--prompt", "a job to crash on"]);
  expect(await waitFor(async () => (await screen(wp)).includes("got: Run started now"), 20_000, 100)).toBe(true);
  await report(w, id, wk, "started", "reading");
  // from its next start on, the agent exits at once
  writeFileSync(join(w.dir, ".fake-agent-exit-at-start"), "");
  await killAgent(wp);
  const wait = await w.mam(["job", "wait", id, "--timeout", "60"]);
  expect({ code: wait.code, out: wait.stdout }, monitorLog(w.dir)).toEqual({ code: 1, out: `${id} error: agent exited\n` });
  expect(events(w, id)).toEqual([`started:${wk}`, "restart_gave_up:monitor", "error:monitor"]);
  expect(journalEvents(w.dir, id)[1]!.detail).toStartWith(`gave up restarting ${wk}: it died again after 2 restarts within the hour (max 2): its restart failed (`);
  expect(count(monitorLog(w.dir), `restart: ${wk}: attempt `)).toBe(2);
  const st = await statusOf(w, wk);
  expect(st).toMatchObject({ status: "terminated", restart: "gave up restarting" });
  expect((await w.mam(["status"])).stdout).toContain(`${wk}: gave up restarting`);
  expect(await waitTyped(e.herdr, dp, `[mam] job ${id} restart_gave_up: gave up restarting ${wk}`)).toBe(true);
  // one notification, of giving up (its deaths before were restarts, not news); checked again after more ticks
  const mine = () => hits.filter((h) => h.workspace === w.dir);
  expect(await waitFor(() => mine().length >= 1, 10_000, 100)).toBe(true);
  await Bun.sleep(2500);
  expect(mine().map((h) => [h.kind, h.session, h.title])).toEqual([["gave_up", wk, `mam: gave up restarting ${wk} (job ${id})`]]);
  expect(count(monitorLog(w.dir), `restart: ${wk}: gave up restarting`)).toBe(1);
}, 120_000);

test("mam stop, soft or hard, is no death: never restarted", async () => {
  const w = newWorkspace(e, mosq.env);
  await ensureShared(w, "mqtt", started);
  const [soft, hard, probe] = [w.n("soft"), w.n("hard"), w.n("probe")];
  for (const n of [soft, hard, probe]) await createAgent(e, w, n, "worker", { extra: ["--restart", "on-failure"] });
  expect((await w.mam(["stop", soft])).code).toBe(0);
  expect((await w.mam(["stop", hard, "--hard", "--yes"])).code).toBe(0);
  // a death the daemon restarts: once it has, it has looked at the stopped rows too
  await killAgent((await statusOf(w, probe)).pane!);
  expect(await waitFor(() => monitorLog(w.dir).includes(`restart: ${probe} restarted`), 30_000, 100), monitorLog(w.dir)).toBe(true);
  expect(await statusOf(w, soft)).toMatchObject({ status: "stopped" });
  expect(await statusOf(w, hard)).toMatchObject({ status: "terminated" });
  expect((await statusOf(w, soft)).restart).toBeUndefined();
  expect(monitorLog(w.dir)).not.toContain(`restart: ${soft}`);
  expect(monitorLog(w.dir)).not.toContain(`restart: ${hard}`);
}, 120_000);

test("a row whose restart policy this user's mam did not write (a cloned repository's) is ended, never resumed, and named once", async () => {
  // polling: its reconcile pass ends the shipped row as any other whose agent went
  const w = newWorkspace(e);
  await ensureShared(w, "polling", started);
  const [shipped, probe] = [w.n("shipped"), w.n("probe")];
  const sp = await createAgent(e, w, shipped, "worker");
  await createAgent(e, w, probe, "worker", { extra: ["--restart", "on-failure"] });
  // the row as a cloned repository ships it: restart on-failure written by hand, no mark of this user's mam
  expect((await w.mam(["daemon", "stop"])).code).toBe(0);
  const reg = join(w.dir, ".mam", "agent-sessions.yaml");
  const doc = parse(readFileSync(reg, "utf8")) as Record<string, { name: string; restart?: string; policy_mac?: string }[]>;
  const rows = Object.values(doc).flatMap((v) => (Array.isArray(v) ? v : []));
  expect(rows.find((r) => r.name === probe)!.policy_mac).toMatch(/^[0-9a-f]{64}$/);
  rows.find((r) => r.name === shipped)!.restart = "on-failure";
  writeFileSync(reg, stringify(doc));
  await ensureShared(w, "polling", started);
  await killAgent(sp);
  await killAgent((await statusOf(w, probe)).pane!);
  // the daemon restarts its own row; by then it has looked at the shipped one too
  expect(await waitFor(() => monitorLog(w.dir).includes(`restart: ${probe} restarted`), 30_000, 100), monitorLog(w.dir)).toBe(true);
  expect(await waitFor(async () => (await statusOf(w, shipped)).status === "terminated", 20_000, 100), monitorLog(w.dir)).toBe(true);
  await Bun.sleep(2500); // more ticks: still not resumed, still named once
  expect(await statusOf(w, shipped)).toMatchObject({ status: "terminated" });
  const log = monitorLog(w.dir);
  expect(log).not.toContain(`restart: ${shipped} restarted`);
  expect(log).not.toContain(`restart: ${shipped}: restarting`);
  expect(count(log, `restart: ${shipped} has restart on-failure, but mam will not restart it: it carries no mark of this user's mam`)).toBe(1);
  expect(log).toContain("re-create it with mam create ... --restart on-failure");
}, 120_000);

test("create: --max-restarts needs --restart on-failure; a kind with no conversation cannot restart", async () => {
  const w = newWorkspace(e);
  const a = await w.mam(["create", "--agent", "claude", "--role", "worker", "--max-restarts", "2", "--herdr-session", e.server]);
  expect({ code: a.code, err: a.stderr }).toEqual({ code: 2, err: expect.stringContaining("ERROR: --max-restarts goes with --restart on-failure") });
  const b = await w.mam(["create", "--agent", "aider", "--role", "worker", "--restart", "on-failure", "--herdr-session", e.server]);
  expect({ code: b.code, err: b.stderr }).toEqual({ code: 2, err: expect.stringContaining("ERROR: aider sessions cannot be resumed, so they cannot restart") });
  const c = await w.mam(["create", "--agent", "claude", "--role", "worker", "--restart", "always", "--herdr-session", e.server]);
  expect(c.code).toBe(2);
  expect(c.stderr).toContain("--restart");
});
