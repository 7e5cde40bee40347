// mam ui's pure parts: who may talk to the server (lib/ui/guard.ts), what the page is given
// (lib/ui/model.ts) and which actions it may ask for (lib/ui/actions.ts parseAction).
import { describe, expect, test } from "bun:test";
import { checkRequest, hostAllowed, newUiToken, originAllowed, tokenMatches } from "../../lib/ui/guard.ts";
import { boardCard, daemonView, rosterView, jobViewModel, jobsView, laneOf, spread, teamView } from "../../lib/ui/model.ts";
import { cardOf } from "../../lib/jobs/board.ts";
import { rosterDoc } from "../../lib/ops/team.ts";
import { workspaceId } from "../../lib/team/messages.ts";
import { parseAction, httpStatusOf } from "../../lib/ui/actions.ts";
import type { JobEvent } from "../../lib/jobs/event.ts";
import type { JobRecord } from "../../lib/jobs/store.ts";
import type { StatusLine } from "../../lib/ops/session/status.ts";
import { MamError } from "../../lib/sys/errors.ts";

describe("guard", () => {
  const tok = newUiToken();
  test("tokens are 32 random bytes, URL-safe, different each time", () => {
    expect(tok).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(newUiToken()).not.toBe(tok);
  });
  test("token: only the exact token matches", () => {
    expect(tokenMatches(tok, tok)).toBe(true);
    expect(tokenMatches(`${tok}x`, tok)).toBe(false);
    expect(tokenMatches(tok.slice(1), tok)).toBe(false);
    expect(tokenMatches(`${tok.slice(0, -1)}${tok.endsWith("A") ? "B" : "A"}`, tok)).toBe(false);
    expect(tokenMatches("", tok)).toBe(false);
    expect(tokenMatches(null, tok)).toBe(false);
    expect(tokenMatches(undefined, tok)).toBe(false);
  });
  test("host: 127.0.0.1:<port> and localhost:<port> only", () => {
    expect(hostAllowed("127.0.0.1:8765", 8765)).toBe(true);
    expect(hostAllowed("LOCALHOST:8765", 8765)).toBe(true);
    for (const h of ["127.0.0.1", "127.0.0.1:8766", "evil.example:8765", "localhost.evil.example:8765", "[::1]:8765", "0.0.0.0:8765", "", null]) {
      expect(hostAllowed(h, 8765)).toBe(false);
    }
  });
  test("origin: absent or our own", () => {
    expect(originAllowed(null, 80)).toBe(true);
    expect(originAllowed("http://127.0.0.1:80", 80)).toBe(true);
    expect(originAllowed("http://localhost:80", 80)).toBe(true);
    expect(originAllowed("http://evil.example", 80)).toBe(false);
    expect(originAllowed("null", 80)).toBe(false);
  });
  const base = { method: "GET", host: "127.0.0.1:9000", origin: null, token: tok, contentType: null };
  const ro = { actions: false, isAction: false };
  test("requests: host first (421), then the token (403)", () => {
    expect(checkRequest(base, 9000, tok, ro)).toEqual({ ok: true });
    expect(checkRequest({ ...base, host: "attacker.example:9000", token: null }, 9000, tok, ro)).toMatchObject({ ok: false, status: 421 });
    expect(checkRequest({ ...base, token: null }, 9000, tok, ro)).toMatchObject({ ok: false, status: 403 });
    expect(checkRequest({ ...base, token: "nope" }, 9000, tok, ro)).toMatchObject({ ok: false, status: 403 });
  });
  test("actions: POST only to the action route, only with --allow-actions, same origin, JSON", () => {
    const post = { ...base, method: "POST", contentType: "application/json" };
    expect(checkRequest(post, 9000, tok, { actions: false, isAction: true })).toMatchObject({ status: 403, reason: expect.stringContaining("--allow-actions") });
    expect(checkRequest(post, 9000, tok, { actions: true, isAction: true })).toEqual({ ok: true });
    expect(checkRequest(post, 9000, tok, { actions: true, isAction: false })).toMatchObject({ status: 403 });
    expect(checkRequest({ ...post, origin: "http://evil.example" }, 9000, tok, { actions: true, isAction: true })).toMatchObject({ status: 403 });
    expect(checkRequest({ ...post, contentType: "text/plain" }, 9000, tok, { actions: true, isAction: true })).toMatchObject({ status: 415 });
    expect(checkRequest({ ...post, token: null }, 9000, tok, { actions: true, isAction: true })).toMatchObject({ status: 403 });
  });
});

const session = (name: string, live: string, extra: Partial<StatusLine> = {}): StatusLine => ({
  name,
  agent: "claude",
  role: "worker",
  status: "running",
  live,
  mux: "tmux",
  server: "mam",
  pane: "%1",
  job: null,
  drift: [],
  why: { kind: "idle", text: "at its prompt, no job" },
  ...extra,
});

const record = (over: Partial<JobRecord> = {}): JobRecord => ({
  schema_version: 1,
  job_id: "0123abcd",
  status: "pending",
  created_at: "2026-01-01T10:00:00Z",
  updated_at: "2026-01-01T10:00:00Z",
  prompt: "do   the\nthing",
  agent: "demo",
  agent_session: "w",
  delegator: "lead",
  type: "single",
  reviewer_session: null,
  max_iterations: null,
  iteration: 1,
  topic_prefix: "mam/jobs/0123abcd",
  timeout_sec: 3600,
  idle_timeout_sec: 120,
  expected_artifacts: [],
  last_seq: 0,
  auth_token: "secret-token",
  ...over,
});

let seq = 0;
const ev = (event: string, source: string, at: string, data: Record<string, unknown> = {}, detail = ""): JobEvent =>
  ({ schema_version: 1, seq: ++seq, job_id: "0123abcd", event, timestamp: `2026-01-01T10:${at}Z`, detail, source, data: { ...data, hmac_sig: "abc" } }) as unknown as JobEvent;

describe("view model", () => {
  test("team: blocked first, then working, idle, unknown, dead; unknown LIVE words get the unknown tone", () => {
    const t = teamView([session("a", "idle"), session("b", "dead"), session("c", "blocked", { reason: "Bash command: rm x" }), session("d", "working"), session("e", "weird"), session("f", "blocked")]);
    expect(t.map((s) => s.name)).toEqual(["c", "f", "d", "a", "e", "b"]);
    expect(t[0]).toMatchObject({ tone: "blocked", reason: "Bash command: rm x" });
    expect(t.find((s) => s.name === "e")!.tone).toBe("unknown");
  });
  test("lanes: the reviewer's reports, mam's and the monitor's, the rest the worker's", () => {
    const loop = { type: "loop" as const, reviewer_session: "rev" };
    expect(laneOf({ source: "rev" }, loop)).toBe("reviewer");
    expect(laneOf({ source: "mam" }, loop)).toBe("mam");
    expect(laneOf({ source: "monitor" }, loop)).toBe("mam");
    expect(laneOf({ source: "mam@hostB" }, loop)).toBe("mam"); // another host's mam: a delivery's stages
    expect(laneOf({ source: "w@hostB" }, loop)).toBe("worker");
    expect(laneOf({ source: "w" }, loop)).toBe("worker");
    expect(laneOf({ source: "rev" }, { type: "single", reviewer_session: null })).toBe("worker");
  });
  test("spread: proportional to time, events of the same second kept apart, within [0, 1]", () => {
    expect(spread([])).toEqual([]);
    expect(spread([0])).toEqual([0]);
    expect(spread([0, 5000, 10000])).toEqual([0, 0.5, 1]);
    const xs = spread([0, 0, 0, 10000], 0.1);
    expect(xs[0]).toBe(0);
    expect(xs[1]! - xs[0]!).toBeCloseTo(0.1);
    expect(xs[2]! - xs[1]!).toBeCloseTo(0.1);
    expect(xs[3]).toBe(1);
    const many = spread(Array.from({ length: 40 }, () => 0));
    expect(Math.max(...many)).toBeLessThanOrEqual(1);
    expect(new Set(many).size).toBe(40);
  });
  test("a loop job: lanes, iterations marked, status from the journal, no signature or token", () => {
    seq = 0;
    const events = [
      ev("started", "w", "00:01"),
      ev("completed", "w", "00:05", {}, "done v1"),
      ev("progress", "mam", "00:05", { iteration: 1 }, "iteration 1: review requested from rev"),
      ev("completed", "rev", "00:09", {}, "needs work"),
      ev("progress", "mam", "00:09", { iteration: 2 }, "iteration 2: feedback sent to w"),
      ev("completed", "w", "00:12", {}, "done v2"),
      ev("completed", "rev", "00:15", {}, "PASS"),
    ];
    const j = jobViewModel(record({ type: "loop", reviewer_session: "rev", max_iterations: 3, iteration: 2 }), [...events].reverse());
    expect(j.status).toBe("completed");
    expect(j.lanes).toEqual(["worker", "reviewer", "mam"]);
    expect(j.events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(j.events.map((e) => e.lane)).toEqual(["worker", "worker", "mam", "reviewer", "mam", "worker", "reviewer"]);
    expect(j.events.map((e) => e.iteration)).toEqual([1, 1, 1, 1, 2, 2, 2]);
    expect(j.marks).toEqual([{ iteration: 2, x: j.events[4]!.x }]);
    expect(j.span).toBe(15_000);
    expect(j.events[0]!.at).toBe(1000);
    for (let i = 1; i < j.events.length; i++) expect(j.events[i]!.x).toBeGreaterThan(j.events[i - 1]!.x);
    expect(j.task).toBe("do the thing");
    const text = JSON.stringify(j);
    expect(text).not.toContain("hmac_sig");
    expect(text).not.toContain("secret-token");
    expect(j.events[2]!.data).toBe('{"iteration":1}');
  });
  test("a job without events: pending from its record, an empty axis", () => {
    const j = jobViewModel(record(), []);
    expect(j).toMatchObject({ status: "pending", lanes: ["worker", "mam"], span: 0, events: [], marks: [] });
  });
  test("the board: each job carries mam status --jobs's card (column, who, since, note); a waiting one says what it waits for", () => {
    seq = 0;
    const held = "after jobs aaaaaaaa (running) and bbbbbbbb (queued) complete";
    const queued = [ev("queued", "mam", "00:02", {}, "w is busy")];
    const d = jobViewModel(record({ after: ["aaaaaaaa", "bbbbbbbb"] }), queued, undefined, undefined, held);
    expect(d).toMatchObject({ status: "queued", after: ["aaaaaaaa", "bbbbbbbb"], board: { column: "waiting", who: "w", since: "2026-01-01T10:00:02Z", note: held } });
    // the same words and times as the board's own card, less the id and task the job has already
    const { job_id: _id, task: _task, ...card } = cardOf(record({ after: ["aaaaaaaa", "bbbbbbbb"] }), queued, "queued", held);
    expect(d.board).toEqual(card);
    expect(Object.keys(d.board).sort()).toEqual(["column", "note", "since", "who"]);
    // nothing held: it waits its turn in its line
    expect(jobViewModel(record(), queued).board).toEqual({ column: "queued", who: "w", since: "2026-01-01T10:00:02Z", note: "w is busy" });
    // a pool job waits for a free one of its role
    expect(boardCard(record({ to_role: "worker", agent_session: "role:worker" }), queued, "queued", undefined)).toMatchObject({ column: "queued", who: "a free worker" });
    // working, then a loop's review, then done; an ended job keeps the time it ended
    seq = 0;
    const loopRec = record({ type: "loop", reviewer_session: "rev", max_iterations: 3 });
    const working = [ev("started", "w", "00:03", {}, "on it")];
    expect(jobViewModel(loopRec, working).board).toEqual({ column: "working", who: "w", since: "2026-01-01T10:00:03Z", note: "round 1 of 3" });
    const inReview = [...working, ev("completed", "w", "00:05", {}, "done v1")];
    expect(jobViewModel(loopRec, inReview).board).toMatchObject({ column: "in_review", who: "rev", since: "2026-01-01T10:00:05Z" });
    seq = 0;
    expect(jobViewModel(record(), [ev("started", "w", "00:03"), ev("completed", "w", "00:07", {}, "all done")]).board).toEqual({ column: "done", who: "w", since: "2026-01-01T10:00:07Z", note: "" });
    seq = 0;
    expect(jobViewModel(record(), [ev("started", "w", "00:03"), ev("error", "w", "00:08", {}, "tests fail")]).board).toEqual({ column: "failed", who: "w", since: "2026-01-01T10:00:08Z", note: "error: tests fail" });
    // no events: pending, working since its creation
    expect(jobViewModel(record(), []).board).toEqual({ column: "working", who: "w", since: "2026-01-01T10:00:00Z", note: "" });
  });
  test("jobs newest first", () => {
    const a = jobViewModel(record({ job_id: "aaaaaaaa", created_at: "2026-01-01T10:00:00Z" }), []);
    const b = jobViewModel(record({ job_id: "bbbbbbbb", created_at: "2026-01-02T10:00:00Z" }), []);
    expect(jobsView([a, b]).map((j) => j.id)).toEqual(["bbbbbbbb", "aaaaaaaa"]);
  });
  test("daemon: mode and broker from its status, the log's last lines, dropped events counted", () => {
    const log = ["t1 MQTT Monitor: subscribed to mam/jobs/+/events", "t2 dropped event on mam/jobs/x/events: unknown job", "t3 HMAC verify failed for job x", "t4 ok", ""].join("\n");
    const d = daemonView({ pid: 42, mode: "mqtt", since: "s", broker: "127.0.0.1:1883", log: "/l" }, log, 2);
    expect(d).toEqual({ running: true, pid: 42, mode: "mqtt", since: "s", broker: "127.0.0.1:1883", log: "/l", recent: ["t3 HMAC verify failed for job x", "t4 ok"], dropped: 2 });
    expect(daemonView(undefined, "")).toMatchObject({ running: false, mode: "not running", recent: [], dropped: 0 });
  });
});

describe("the fleet and where jobs run (a machine in a team)", () => {
  const D = "0123abcd.0000000a";
  const D2 = "0123abcd.0000000b";
  test("a job's host: after the @ of its session, else this host; none said outside a team", () => {
    expect(jobViewModel(record({ agent_session: "w@hostB" }), [], "hostA").host).toBe("hostB");
    expect(jobViewModel(record({ agent_session: "w" }), [], "hostA").host).toBe("hostA");
    expect(jobViewModel(record({ agent_session: "w" }), []).host).toBeNull();
    expect(jobViewModel(record({ agent_session: "w@hostB" }), []).host).toBe("hostB"); // a copy, or a record of a team since left
  });
  test("delivery: the newest delivery and its furthest stage; none for a job that never crossed machines", () => {
    seq = 0;
    const offered = ev("offered", "mam", "00:01", { delivery: D, topic: "t", host: "hostB", ws_id: "abc", purpose: "job" });
    const received = ev("received", "mam@hostB", "00:02", { delivery: D, to: "w@hostB", host: "hostB", ws_id: "abc" });
    const delivered = ev("delivered", "mam@hostB", "00:03", { delivery: D });
    expect(jobViewModel(record(), [ev("started", "w", "00:01")]).delivery).toBeNull();
    expect(jobViewModel(record({ agent_session: "w@hostB" }), [offered]).delivery).toEqual({ delivery: D, stage: "offered", purpose: "job", host: "hostB" });
    expect(jobViewModel(record(), [offered, received]).delivery!.stage).toBe("received");
    expect(jobViewModel(record(), [offered, received, delivered, ev("started", "w@hostB", "00:04")]).delivery!.stage).toBe("delivered");
    // an uncertain text that the agent then reported on is delivered; the reverse order stays delivered
    const uncertain = ev("uncertain", "mam@hostB", "00:03", { delivery: D });
    const late = ev("delivered", "mam@hostB", "00:05", { delivery: D });
    expect(jobViewModel(record(), [offered, received, uncertain]).delivery!.stage).toBe("uncertain");
    expect(jobViewModel(record(), [offered, received, uncertain, late]).delivery!.stage).toBe("delivered");
    // an outcome never goes back to received (a late copy of received after the outcome)
    expect(jobViewModel(record(), [offered, delivered, received]).delivery!.stage).toBe("delivered");
    expect(jobViewModel(record(), [offered, received, ev("error", "mam@hostB", "00:03", { delivery: D }, "no running session w on hostB; nothing typed")]).delivery!.stage).toBe("error");
    // a loop's review request to another host is the newest delivery
    const review = ev("offered", "mam", "00:09", { delivery: D2, topic: "t2", host: "hostC", ws_id: "def", purpose: "review" });
    expect(jobViewModel(record(), [offered, received, delivered, review]).delivery).toEqual({ delivery: D2, stage: "offered", purpose: "review", host: "hostC" });
    // the agent's host's copy has no `offered`: received says the host
    expect(jobViewModel(record(), [received, delivered]).delivery).toEqual({ delivery: D, stage: "delivered", purpose: null, host: "hostB" });
  });

  const team = { schema_version: 1 as const, team: "lab", secret: "s", since: "" };
  const self = { team, host: "hostA", ws: "/w/a", broker: "b:1883", prefix: "mam/team/lab" };
  const presence = (host: string, workspace: string, online: boolean, seen: number, agents: { name: string; live: string }[]) => ({
    host,
    workspace,
    ws_id: workspaceId(workspace),
    at: seen,
    protocol: 2,
    online,
    seen,
    agents: agents.map((a) => ({ ...a, agent: "claude", role: "worker", status: "running", job: null })),
  });

  test("rosterDoc: this workspace from its sessions now, the others from the broker, offline ones kept with their last word", () => {
    const fleet = {
      team: "lab",
      reachable: true,
      dropped: 0,
      workspaces: [
        presence("hostC", "/w/c", false, Date.parse("2026-01-01T10:00:00Z"), [{ name: "r", live: "idle" }]),
        presence("hostA", "/w/a", true, 1, [{ name: "stale", live: "idle" }]), // this workspace's old announcement
        presence("hostB", "/w/b", true, Date.parse("2026-01-01T10:05:00Z"), [{ name: "w", live: "working" }]),
      ],
    };
    const d = rosterDoc(self, fleet, [session("lead", "idle"), session("gone", "dead", { status: "stopped" })], Date.parse("2026-01-01T10:06:00Z"));
    expect(d.workspaces.map((w) => `${w.host} ${w.here} ${w.online} ${w.last_seen}`)).toEqual([
      "hostA true true 2026-01-01T10:06:00Z",
      "hostB false true 2026-01-01T10:05:00Z",
      "hostC false false 2026-01-01T10:00:00Z",
    ]);
    expect(d.workspaces[0]!.agents.map((a) => a.address)).toEqual(["lead@hostA"]);
    expect(d.workspaces[1]!.agents[0]).toMatchObject({ address: "w@hostB", live: "working" });
    expect(d.workspaces[2]!.agents[0]).toMatchObject({ address: "r@hostC", live: "offline" });
    expect(d.warnings).toEqual([]);
    const down = rosterDoc(self, { team: "lab", reachable: false, dropped: 0, workspaces: [] }, [session("lead", "idle")]);
    expect(down.reachable).toBe(false);
    expect(down.workspaces.map((w) => w.host)).toEqual(["hostA"]);
    expect(down.warnings.map((w) => w.text)).toEqual(["the team's broker b:1883 does not answer: only this workspace is shown"]);
  });

  test("rosterView: before the first read, reachable is null; the notices as text", () => {
    const doc = rosterDoc(self, { team: "lab", reachable: false, dropped: 2, workspaces: [] }, []);
    expect(rosterView(doc, null)).toMatchObject({ reachable: null, read_at: null });
    const v = rosterView(doc, "2026-01-01T10:00:00Z");
    expect(v).toMatchObject({ reachable: false, read_at: "2026-01-01T10:00:00Z" });
    expect(v.warnings).toHaveLength(2);
    expect(v.warnings[1]).toContain("2 announcement(s)");
  });

  test("RosterCache: one read at a time, at most once per interval; a read that throws is an unreachable broker", async () => {
    const { RosterCache } = await import("../../lib/ui/state.ts");
    let reads = 0;
    let release: () => void = () => {};
    let fail = false;
    const c = new RosterCache(self, async () => {
      reads++;
      await new Promise<void>((r) => (release = r));
      if (fail) throw new Error("boom");
      return { team: "lab", reachable: true, dropped: 0, workspaces: [presence("hostB", "/w/b", true, 5, [{ name: "w", live: "idle" }])] };
    }, 60_000);
    expect(c.due()).toBe(true);
    expect(c.view([]).reachable).toBeNull();
    const p1 = c.refresh();
    const p2 = c.refresh();
    expect(c.due()).toBe(false);
    release();
    await Promise.all([p1, p2]);
    expect(reads).toBe(1);
    expect(c.due()).toBe(false); // the interval has not passed
    expect(c.due(Date.now() + 60_000)).toBe(true);
    const v = c.view([session("lead", "idle")]);
    expect(v.reachable).toBe(true);
    expect(v.workspaces.map((w) => w.host)).toEqual(["hostA", "hostB"]);
    fail = true;
    const p3 = c.refresh();
    release();
    await p3;
    expect(c.view([]).reachable).toBe(false);
  });
});

describe("actions", () => {
  const parsed = (b: unknown) => {
    const a = parseAction(b);
    return { op: a.op.name, input: a.input };
  };
  test("the allowed operations, checked before anything runs; the page gives only what the list names", () => {
    expect(parsed({ action: "session.stop", input: { name: "w1" } })).toEqual({
      op: "session.stop",
      input: { name: "w1", mode: "graceful", reason: "stopped from mam ui", purge: false, remove_worktree: false, force: false, all: false },
    });
    expect(parsed({ action: "session.resume", input: { name: "w1" } })).toEqual({ op: "session.resume", input: { name: "w1", fresh: false, start_server: false, all: false, limited: false } });
    expect(parsed({ action: "job.cancel", input: { job_id: "0123abcd" } })).toEqual({ op: "job.cancel", input: { job_id: "0123abcd" } });
    expect(parsed({ action: "session.send", input: { name: "w1", text: "hello there" } })).toEqual({ op: "session.send", input: { name: "w1", text: "hello there" } });
    expect(parsed({ action: "session.prune", input: { names: ["w1"] } })).toEqual({ op: "session.prune", input: { names: ["w1"], statuses: ["stopped", "terminated"], dry_run: false } });
  });
  test("bad input is a usage error (HTTP 400)", () => {
    const a = (action: string, input: unknown) => ({ action, input });
    const bad = [
      null, [], "x", {}, { action: "rm" }, a("session.stop", {}), a("session.stop", { name: "../x" }), a("session.stop", { name: "a;b" }),
      a("session.stop", { name: "w", mode: "hard" }), a("session.stop", { name: "w", purge: true }), a("job.wait", { job_ids: ["0123abcd"] }), a("session.create", { agent: "claude" }),
      a("job.cancel", { job_id: "nothex!!" }), a("session.send", { name: "w", text: "" }), a("session.send", { name: "w", text: "a\nb" }),
      a("session.send", { name: "w", text: "\u001b[2J" }), a("session.send", { name: "w", text: "x".repeat(4001) }), a("session.stop", "w1"),
    ];
    for (const b of bad) {
      let e: unknown;
      try {
        parseAction(b);
      } catch (x) {
        e = x;
      }
      expect(e, JSON.stringify(b)).toBeInstanceOf(MamError);
      expect(httpStatusOf(e)).toBe(400);
    }
  });
  test("errors map to HTTP statuses", () => {
    expect(httpStatusOf(new MamError("x", 3))).toBe(404);
    expect(httpStatusOf(new MamError("x", 4))).toBe(409);
    expect(httpStatusOf(new MamError("x", 1))).toBe(500);
    expect(httpStatusOf(new Error("x"))).toBe(500);
  });
});

describe("state readers (a temp workspace)", () => {
  const { mkdtempSync, mkdirSync, appendFileSync, writeFileSync, rmSync, unlinkSync } = require("node:fs") as typeof import("node:fs");
  const { tmpdir } = require("node:os") as typeof import("node:os");
  const { join } = require("node:path") as typeof import("node:path");
  const spec = { agent_session: "w", agent: "claude", prompt: "p", delegator: null, type: "single" as const, reviewer_session: null, max_iterations: null, timeout_sec: 60, idle_timeout_sec: 60, expected_artifacts: [], topic_prefix_base: "mam/jobs" };

  test("JobCache: a job is read again only when its record or journal changed; removals are reported", async () => {
    const { JobCache } = await import("../../lib/ui/state.ts");
    const { appendEvent, jobStore, registerJob, recordPath, journalPath } = await import("../../lib/jobs/store.ts");
    const ws = mkdtempSync(join(tmpdir(), "mam-ui-unit-"));
    try {
      const c = new JobCache(jobStore(ws));
      expect(c.refresh()).toEqual({ changed: [], removed: [], problems: [] });
      const r = await registerJob(ws, spec);
      expect(c.refresh().changed.map((j) => j.id)).toEqual([r.job_id]);
      expect(c.refresh().changed).toEqual([]);
      await appendEvent(ws, r.job_id, { event: "started", source: "w", detail: "go" });
      const d = c.refresh();
      expect(d.changed).toHaveLength(1);
      expect(d.changed[0]).toMatchObject({ status: "running", events: [{ seq: 1, event: "started", lane: "worker" }] });
      // a damaged record is a problem, not a crash; the other jobs stay
      const r2 = await registerJob(ws, spec);
      c.refresh();
      writeFileSync(recordPath(ws, r2.job_id), "{not json");
      expect(c.refresh().problems[0]).toContain("is not valid JSON");
      expect(c.all().map((j) => j.id).sort()).toEqual([r.job_id, r2.job_id].sort());
      unlinkSync(recordPath(ws, r.job_id));
      unlinkSync(journalPath(ws, r.job_id));
      expect(c.refresh().removed).toEqual([r.job_id]);
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });

  test("JobCache.place: a waiting job shows its place in line; a place that changed reports the job; a job no longer waiting has none", async () => {
    const { JobCache } = await import("../../lib/ui/state.ts");
    const { appendEvent, jobStore, registerJob } = await import("../../lib/jobs/store.ts");
    const ws = mkdtempSync(join(tmpdir(), "mam-ui-unit-"));
    try {
      const c = new JobCache(jobStore(ws));
      const a = await registerJob(ws, spec);
      const b = await registerJob(ws, spec);
      for (const r of [a, b]) await appendEvent(ws, r.job_id, { event: "queued", source: "mam", detail: "waits", data: { to: "w", position: 1 } });
      c.refresh();
      expect(c.anyQueued()).toBe(true);
      const first = new Map([
        [a.job_id, 1],
        [b.job_id, 2],
      ]);
      expect(c.place(first).map((j) => [j.id, j.position]).sort()).toEqual([[a.job_id, 1], [b.job_id, 2]].sort() as never);
      expect(c.place(first)).toEqual([]);
      // a goes: b moves up; a, no longer waiting, has no place
      await appendEvent(ws, a.job_id, { event: "dispatched", source: "mam", detail: "its turn", data: { to: "w" } });
      c.refresh();
      const moved = c.place(new Map([[b.job_id, 1]]));
      expect(moved.map((j) => [j.id, j.status, j.position])).toEqual([[b.job_id, "queued", 1]]);
      expect(c.get(a.job_id)).toMatchObject({ status: "pending", position: null });
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });

  test("JobCache.place: a job that runs after others moves on the board when they do (their files change, not its own)", async () => {
    const { JobCache } = await import("../../lib/ui/state.ts");
    const { appendEvent, jobStore, registerJob } = await import("../../lib/jobs/store.ts");
    const ws = mkdtempSync(join(tmpdir(), "mam-ui-unit-"));
    try {
      const c = new JobCache(jobStore(ws));
      const a = await registerJob(ws, spec);
      const b = await registerJob(ws, { ...spec, after: [a.job_id] });
      await appendEvent(ws, b.job_id, { event: "queued", source: "mam", detail: "waits", data: { to: "w" } });
      c.refresh();
      // read alone, it is a queued job; told what it waits for, it waits
      expect(c.get(b.job_id)!.board.column).toBe("queued");
      const w1 = `after job ${a.job_id} (pending) completes`;
      expect(c.place(new Map(), new Map([[b.job_id, w1]])).map((j) => [j.id, j.board.column, j.board.note])).toEqual([[b.job_id, "waiting", w1]]);
      expect(c.place(new Map(), new Map([[b.job_id, w1]]))).toEqual([]); // the same words: nothing moved
      // a runs: b's words change though its files did not
      await appendEvent(ws, a.job_id, { event: "started", source: "w", detail: "on it" });
      expect(c.refresh().changed.map((j) => j.id)).toEqual([a.job_id]);
      const w2 = `after job ${a.job_id} (running) completes`;
      expect(c.place(new Map(), new Map([[b.job_id, w2]])).map((j) => [j.id, j.board.note])).toEqual([[b.job_id, w2]]);
      // a completed: b waits its turn in w's line, with a place
      await appendEvent(ws, a.job_id, { event: "completed", source: "w", detail: "done" });
      c.refresh();
      expect(c.place(new Map([[b.job_id, 1]]), new Map()).map((j) => [j.id, j.board.column, j.position])).toEqual([[b.job_id, "queued", 1]]);
      expect(c.get(a.job_id)!.board).toMatchObject({ column: "done", who: "w", note: "" });
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });

  test("DaemonWatch: the log read incrementally (last lines, dropped events), a new log starts over", async () => {
    const { DaemonWatch } = await import("../../lib/ui/state.ts");
    const { monitorLogPath } = await import("../../lib/sys/daemon-files.ts");
    const ws = mkdtempSync(join(tmpdir(), "mam-ui-unit-"));
    try {
      mkdirSync(join(ws, ".mam"));
      const w = new DaemonWatch(ws, 3);
      expect(w.read()).toMatchObject({ running: false, mode: "not running", recent: [], dropped: 0 });
      const log = monitorLogPath(ws);
      appendFileSync(log, "a\ndropped event on t: unknown job\nb\n");
      expect(w.read()).toMatchObject({ recent: ["a", "dropped event on t: unknown job", "b"], dropped: 1 });
      appendFileSync(log, "c\nHMAC verify failed (x)\npart");
      expect(w.read()).toMatchObject({ recent: ["b", "c", "HMAC verify failed (x)"], dropped: 2 });
      appendFileSync(log, "ial\n");
      expect(w.read().recent).toEqual(["c", "HMAC verify failed (x)", "partial"]);
      unlinkSync(log);
      writeFileSync(log, "fresh\n");
      expect(w.read()).toMatchObject({ recent: ["fresh"], dropped: 0 });
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });

  test("jobColumn: the row's delegate_job_id, else the session's newest job", async () => {
    const { jobColumn } = await import("../../lib/ui/state.ts");
    const a = jobViewModel(record({ job_id: "aaaaaaaa", agent_session: "w", created_at: "2026-01-01T10:00:00Z" }), []);
    const b = jobViewModel(record({ job_id: "bbbbbbbb", agent_session: "w", created_at: "2026-01-02T10:00:00Z" }), []);
    const col = jobColumn([a, b]);
    expect(col({ name: "w", status: "running" } as never)).toEqual({ id: "bbbbbbbb", status: "pending" });
    expect(col({ name: "w", status: "running", delegate_job_id: "aaaaaaaa" } as never)).toEqual({ id: "aaaaaaaa", status: "pending" });
    expect(col({ name: "other", status: "running" } as never)).toBeNull();
  });
});
