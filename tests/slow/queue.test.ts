// The queue (docs/jobs.md#the-queue, issue 28) with real processes: demo agents on a private tmux
// server, the workspace's daemon giving waiting jobs their turn (no broker: the journals are the
// channel). A pool of five takes fifty jobs, each once, never two at once to one agent; a job to a
// busy agent waits and is typed after the first ends; priorities hold and a low job is not
// starved; a waiting job is cancelled without touching its agent.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { type Host, makeHost } from "../helpers/team.ts";
import { TMUX_BIN } from "../helpers/tmux.ts";

const NO_BROKER = { MQTT_BROKER: "127.0.0.1", MQTT_PORT: "9" };

let sb: Sandbox;
let n = 0;
const hosts: Host[] = [];
/** a workspace of its own (a host folder: HOME, workspace, tmux server, daemon) */
function workspace(extra: Record<string, string> = {}): Host {
  // schedules every second or two (the floor, a minute, is lowered for these tests)
  const h = makeHost(sb.root, `q${++n}`, NO_BROKER, { MAM_STATE_POLL_MS: "200", MAM_MIN_EVERY_S: "1", ...extra });
  hosts.push(h);
  return h;
}

interface JobRow {
  job_id: string;
  status: string;
  agent_session: string;
  priority?: string;
  position?: number;
}
const jobs = async (h: Host): Promise<JobRow[]> => JSON.parse(await h.ok(["job", "list", "--json"])).jobs;
const submit = async (h: Host, args: string[]): Promise<string> => (await h.ok(["job", "submit", ...args])).trim();
const count = (hay: string, needle: string) => hay.split(needle).length - 1;

beforeAll(() => {
  sb = makeSandbox("mam-queue-");
});
afterEach(async () => {
  for (const h of hosts.splice(0)) await h.stop();
});
afterAll(async () => {
  await sb.cleanup();
});

describe.skipIf(!TMUX_BIN)("the queue", () => {
  test("fifty jobs to a pool of five: each completes once, and no agent ever holds two", async () => {
    const h = workspace();
    const pool = ["p1", "p2", "p3", "p4", "p5"];
    for (const p of pool) await h.demo(p, "worker", ["--think-ms", "300"]);
    // a second look, ten times a second, at who holds what
    let watching = true;
    const overlaps: string[] = [];
    const watcher = (async () => {
      while (watching) {
        const r = await h.mam(["job", "list", "--json"]);
        if (r.code === 0) {
          const held = new Map<string, string[]>();
          for (const j of JSON.parse(r.stdout).jobs as JobRow[]) {
            // a pool job a submit is still writing (its record there, its `queued` not yet) shows
            // as pending for "role:worker": the role, not an agent (CI saw two such at once)
            if ((j.status === "pending" || j.status === "running") && !j.agent_session.startsWith("role:")) held.set(j.agent_session, [...(held.get(j.agent_session) ?? []), j.job_id]);
          }
          for (const [a, ids] of held) if (ids.length > 1) overlaps.push(`${a}: ${ids.join(" ")}`);
        }
        await Bun.sleep(100);
      }
    })();
    // five scripts submit ten each at the same time, faster than the pool works: a line forms
    const ids = (
      await Promise.all(
        [0, 1, 2, 3, 4].map(async (k) => {
          const mine: string[] = [];
          for (let i = 0; i < 10; i++) mine.push(await submit(h, ["--to-role", "worker", "--prompt", `task ${k * 10 + i}`]));
          return mine;
        }),
      )
    ).flat();
    const w = await h.mam(["job", "wait", ...ids, "--timeout", "240"], {}, 300_000);
    watching = false;
    await watcher;
    expect(w.code, `${w.stdout}${w.stderr}\n${h.log()}`).toBe(0);
    expect(overlaps).toEqual([]);
    const done = await jobs(h);
    expect(done.filter((j) => j.status === "completed")).toHaveLength(50);
    for (const j of done) expect(pool).toContain(j.agent_session);
    // each job's header was typed once, into one pane
    const screens = pool.map((p) => h.screen(p)).join("\n");
    for (const id of ids) expect(count(screens, `[mam] Job ${id} delegated`)).toBe(1);
    // and each was reported once
    for (const id of ids) expect(h.journal(id).filter((e) => e.event === "completed")).toHaveLength(1);
    // the work was shared
    expect(new Set(done.map((j) => j.agent_session)).size).toBe(5);
    // and jobs did wait their turn: the daemon gave them out
    expect(ids.filter((id) => h.journal(id).some((e) => e.event === "dispatched")).length).toBeGreaterThan(10);
  }, 360_000);

  test("a job to a busy agent waits its turn and is typed once the first one has ended; a waiting job's cancel never reaches the agent", async () => {
    const h = workspace();
    await h.demo("w", "worker", ["--think-ms", "700"]);
    const first = await submit(h, ["--to", "w", "--prompt", "first"]);
    const second = await h.mam(["job", "submit", "--to", "w", "--prompt", "second"]);
    expect(second.code).toBe(0);
    const id2 = second.stdout.trim();
    expect(second.stderr).toContain(`job ${id2} waits its turn for w (position 1)`);
    const third = await submit(h, ["--to", "w", "--prompt", "third"]);
    const st = JSON.parse(await h.ok(["job", "status", third, "--json"]));
    expect(st, `${JSON.stringify(h.journal(first))}\n${JSON.stringify(h.journal(id2))}\n${JSON.stringify(h.journal(third))}\n${h.log()}`).toMatchObject({ status: "queued", position: 2 });
    expect(await h.ok(["job", "status", third])).toContain("queued (position 2)");
    // cancel the third while it waits: the agent is never told
    const c = await h.ok(["job", "cancel", third]);
    expect(c).toContain(third);
    expect(c).not.toContain("told");
    const w = await h.mam(["job", "wait", first, id2, "--timeout", "60"], {}, 90_000);
    expect(w.code, h.log()).toBe(0);
    const screen = h.screen("w");
    // the second header came after the first job's end
    expect(screen.indexOf(`[mam] Job ${id2} delegated`)).toBeGreaterThan(screen.indexOf(`[mam] Job ${first} delegated`));
    expect(count(screen, `[mam] Job ${id2} delegated`)).toBe(1);
    const firstEnd = h.journal(first).find((e) => e.event === "completed")!;
    const dispatched = h.journal(id2).find((e) => e.event === "dispatched")!;
    expect(Date.parse(dispatched.timestamp)).toBeGreaterThanOrEqual(Date.parse(firstEnd.timestamp));
    expect(h.journal(id2).map((e) => e.event)).toEqual(["queued", "dispatched", "started", "progress", "completed"]);
    expect(screen).not.toContain(third);
    expect(JSON.parse(await h.ok(["job", "status", third, "--json"])).status).toBe("cancelled");
  }, 120_000);

  test("priorities: high before normal before low; a low job is not starved by highs that keep coming", async () => {
    const h = workspace({ MAM_QUEUE_AGING_S: "2" });
    await h.demo("solo", "worker", ["--think-ms", "150"]);
    const busy = await submit(h, ["--to-role", "worker", "--prompt", "keep it busy"]);
    const normal = await submit(h, ["--to-role", "worker", "--prompt", "normal one"]);
    const low = await submit(h, ["--to-role", "worker", "--priority", "low", "--prompt", "low one"]);
    const high = await submit(h, ["--to-role", "worker", "--priority", "high", "--prompt", "high one"]);
    // highs keep coming, one every 0.4 s for 8 s
    const highs: string[] = [];
    for (let i = 0; i < 20; i++) {
      highs.push(await submit(h, ["--to-role", "worker", "--priority", "high", "--prompt", `more high ${i}`]));
      await Bun.sleep(400);
    }
    const all = [busy, normal, low, high, ...highs];
    const w = await h.mam(["job", "wait", ...all, "--timeout", "180"], {}, 240_000);
    expect(w.code, h.log()).toBe(0);
    const at = (id: string) => Date.parse(h.journal(id).find((e) => e.event === "dispatched")?.timestamp ?? "0");
    // the first high went before the normal and the low that were there first
    expect(at(high)).toBeLessThanOrEqual(at(normal));
    expect(at(normal)).toBeLessThanOrEqual(at(low));
    // the low one got its turn before the highs stopped coming
    const lastHigh = Math.max(...highs.map(at));
    expect(at(low)).toBeLessThan(lastHigh);
    expect(JSON.parse(await h.ok(["job", "status", low, "--json"])).priority).toBe("low");
  }, 300_000);
});

interface ScheduleRow {
  schedule_id: string;
  next_at: number | null;
  runs: { due: string; at: string; job_id: string | null; note: string }[];
  ended?: { why: string };
}
const schedules = async (h: Host): Promise<ScheduleRow[]> => JSON.parse(await h.ok(["job", "list", "--scheduled", "--json"])).schedules;

describe.skipIf(!TMUX_BIN)("schedules", () => {
  test("a run fires within a second of its time; every N repeats; overlap skip skips a run while the last one works; cancel stops it", async () => {
    const h = workspace();
    await h.demo("w", "worker", ["--think-ms", "900"]);
    const sid = (await h.ok(["job", "submit", "--to", "w", "--prompt", "tick", "--at", "+3s", "--every", "2s"])).trim();
    expect(sid).toMatch(/^s[0-9a-f]{7}$/);
    // three runs due: the first submitted, the next skipped while its job (about 3 s) runs
    expect(await waitFor(async () => (await schedules(h))[0]!.runs.length >= 3, 20_000, 200), h.log()).toBe(true);
    const [s] = await schedules(h);
    const first = s!.runs[0]!;
    expect(first.job_id).toMatch(/^[0-9a-f]{8}$/);
    expect(Date.parse(first.at) - Date.parse(first.due)).toBeLessThanOrEqual(1000);
    const rec = JSON.parse(await h.ok(["job", "status", first.job_id!, "--json"]));
    expect(Date.parse(rec.created_at) - Date.parse(first.due)).toBeLessThanOrEqual(1000);
    expect(s!.runs.some((r) => r.note.startsWith("skipped: the previous run's job"))).toBe(true);
    const c = await h.ok(["job", "cancel", sid]);
    expect(c).toContain(`schedule ${sid} cancelled`);
    const n = (await schedules(h))[0]!.runs.length;
    await Bun.sleep(4500);
    const after = (await schedules(h))[0]!;
    expect(after.runs.length).toBe(n);
    expect(after.ended?.why).toBe("cancelled");
    expect(await h.ok(["job", "list", "--scheduled"])).toContain("ended (cancelled)");
  }, 90_000);

  test("runs missed while no daemon ran: once runs one when a daemon runs again, skip runs none", async () => {
    const h = workspace();
    await h.demo("w", "worker", ["--think-ms", "50"]);
    const once = (await h.ok(["job", "submit", "--to", "w", "--prompt", "once", "--at", "+2s", "--every", "1s", "--missed", "once"])).trim();
    const skip = (await h.ok(["job", "submit", "--to", "w", "--prompt", "skip", "--at", "+2s", "--every", "1s", "--missed", "skip"])).trim();
    await h.ok(["daemon", "stop"]);
    // a minute and more: what was due is late, not on time
    await Bun.sleep(63_000);
    const before = await schedules(h);
    expect(before.every((s) => s.runs.length === 0)).toBe(true);
    await h.ok(["daemon", "ensure"]);
    expect(await waitFor(async () => (await schedules(h)).every((s) => s.runs.length >= 1), 15_000, 200), h.log()).toBe(true);
    await h.ok(["job", "cancel", once]);
    await h.ok(["job", "cancel", skip]);
    const by = new Map((await schedules(h)).map((s) => [s.schedule_id, s]));
    const o = by.get(once)!.runs[0]!;
    expect(o.note).toMatch(/^late \(\d+ missed while no daemon ran; run once\): submitted$/);
    expect(o.job_id).toMatch(/^[0-9a-f]{8}$/);
    const k = by.get(skip)!.runs[0]!;
    expect(k.job_id).toBeNull();
    expect(k.note).toMatch(/^missed \d+ run\(s\) while no daemon ran; skipped \(--missed skip\)$/);
    // one late run, then on time again
    expect(by.get(once)!.runs.filter((r) => r.note.startsWith("late")).length).toBe(1);
  }, 120_000);

  test("bad times and durations are usage errors, nothing written", async () => {
    const h = workspace();
    await h.demo("w", "worker");
    for (const [flag, v, msg] of [
      ["--at", "tomorrow", "'tomorrow' is not a time"],
      ["--every", "5", "'5' is not a duration"],
    ] as const) {
      const r = await h.mam(["job", "submit", "--to", "w", "--prompt", "x", flag, v]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(msg);
    }
    const past = await h.mam(["job", "submit", "--to", "w", "--prompt", "x", "--at", "2020-01-01T00:00:00Z"]);
    expect(past.code).toBe(2);
    expect(past.stderr).toContain("has passed");
    const often = await h.mam(["job", "submit", "--to", "w", "--prompt", "x", "--every", "30s"], { MAM_MIN_EVERY_S: "60" });
    expect(often.code).toBe(2);
    expect(often.stderr).toContain("ERROR: --every 30s is shorter than the shortest period between runs (1m); give --every 1m or more");
    const nobody = await h.mam(["job", "submit", "--to", "nobody", "--prompt", "x", "--every", "1h"]);
    expect(nobody.code).toBe(3);
    expect(await schedules(h)).toEqual([]);
  }, 60_000);
});

describe.skipIf(!TMUX_BIN)("a whole team", () => {
  test("resume --all brings a stopped team of ten back one at a time, a stagger apart, never past the cap; create --max-running refuses past it", async () => {
    const h = workspace();
    const names = ["t01", "t02", "t03", "t04", "t05", "t06", "t07", "t08", "t09", "t10"];
    for (const t of names) await h.demo(t, "worker");
    for (const t of names.slice(1)) await h.ok(["stop", t]);
    // demo agents keep no conversation: they come back fresh
    const r = await h.mam(["resume", "--all", "--fresh", "--stagger", "1s", "--max-running", "7", "--json"], {}, 120_000);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.running_before).toBe(1);
    expect(out.resumed.map((x: { name: string }) => x.name), r.stdout).toEqual(["t02", "t03", "t04", "t05", "t06", "t07"]);
    expect(out.left.map((x: { name: string }) => x.name), r.stdout).toEqual(["t08", "t09", "t10"]);
    expect(out.left[0].why).toContain("the cap");
    const starts = out.resumed.map((x: { started_at: string }) => Date.parse(x.started_at));
    for (let i = 1; i < starts.length; i++) expect(starts[i] - starts[i - 1]).toBeGreaterThanOrEqual(1000);
    const status = JSON.parse(await h.ok(["status", "--json"])).sessions as { name: string; status: string }[];
    expect(status.filter((s) => s.status === "running").map((s) => s.name).sort()).toEqual(["t01", "t02", "t03", "t04", "t05", "t06", "t07"]);
    // the cap on create, per role
    const more = await h.mam(["create", "--agent", "demo", "--role", "worker", "--session", "t11", "--mux", "tmux", "--tmux-server", h.tmux, "--max-running", "7"]);
    expect(more.code).toBe(4);
    expect(more.stderr).toContain("7 sessions of role 'worker' run already");
    expect((await h.mam(["resume", "t08", "--stagger", "1s"])).stderr).toContain("--stagger goes with --all");
    // the workspace's cap, whatever the role: create, resume and resume --all start none past it
    const cap = { MAM_MAX_RUNNING: "7" };
    const lead = await h.mam(["create", "--agent", "demo", "--role", "lead", "--session", "l1", "--mux", "tmux", "--tmux-server", h.tmux], cap);
    expect(lead.code).toBe(4);
    expect(lead.stderr).toContain("7 sessions run already in this workspace (the cap: MAM_MAX_RUNNING=7); nothing was started");
    expect((await h.mam(["resume", "t08", "--fresh"], cap)).stderr).toContain("(the cap: MAM_MAX_RUNNING=7)");
    const all = JSON.parse(await h.ok(["resume", "--all", "--fresh", "--stagger", "0", "--json"], cap));
    expect(all.resumed).toEqual([]);
    expect(all.left.map((x: { why: string }) => x.why)).toEqual(Array(3).fill("7 running in the workspace: the cap (MAM_MAX_RUNNING=7)"));
    expect((await h.mam(["status"], { MAM_MAX_RUNNING: "lots" })).code).toBe(0); // only what starts sessions reads it
    const bad = await h.mam(["resume", "t08", "--fresh"], { MAM_MAX_RUNNING: "lots" });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("MAM_MAX_RUNNING 'lots' is not a whole number ≥ 1");
  }, 180_000);
});

test("a pool with no session of that role is refused, nothing registered", async () => {
  const h = workspace();
  const r = await h.mam(["job", "submit", "--to-role", "nobody", "--prompt", "x"]);
  expect(r.code).toBe(3);
  expect(r.stderr).toContain("no running session has the role 'nobody'");
  expect((await jobs(h)).length).toBe(0);
  const both = await h.mam(["job", "submit", "--to", "a", "--to-role", "b", "--prompt", "x"]);
  expect(both.code).toBe(2);
  expect(both.stderr).toContain("give exactly one of --to and --to-role");
});
