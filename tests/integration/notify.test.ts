// Notifications (issue 26 part 3) through the binary: mam notify add|list|remove|test with the
// sinks kept 0600 and their secrets never printed; the daemon sending exactly one notification per
// transition to a loopback HTTP receiver (a job that blocks, is approved and completes: the dialog,
// then the end; nothing while idle), naming the mam approve command and mam ui's link; an agent
// that dies while its job runs is one notification; a host of the team that goes offline is one.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLAUDE_LOOKALIKE } from "../helpers/agent-screens.ts";
import { mosquittoPath, startMosquitto } from "../helpers/brokers.ts";
import { startSubscriber, unreachableBrokerEnv } from "../helpers/daemon.ts";
import { MAM_CMD, run, runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { formTeam, makeHost } from "../helpers/team.ts";
import type { Team } from "../../lib/team/config.ts";
import { onlineTopic, workspaceId } from "../../lib/team/messages.ts";
import { open } from "../../lib/team/seal.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName, writeScript } from "../helpers/tmux.ts";

interface Hit {
  path: string;
  body: any;
}

/** a webhook receiver on loopback: what it got, in order; `fail` makes it answer 500 */
function receiver() {
  const hits: Hit[] = [];
  let fail = false;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      hits.push({ path: url.pathname, body: await req.json().catch(() => null) });
      return fail ? new Response("no", { status: 500 }) : new Response("ok");
    },
  });
  return {
    hits,
    url: (path: string) => `http://127.0.0.1:${server.port}${path}`,
    failing(v: boolean) {
      fail = v;
    },
    stop: () => server.stop(true),
  };
}

let sb: Sandbox;
let rx: ReturnType<typeof receiver>;
beforeEach(() => {
  sb = makeSandbox("mam-nt-");
  rx = receiver();
});
afterEach(async () => {
  await rx.stop();
  await sb.cleanup();
});

const mam = (args: string[], extra: Record<string, string> = {}, stdin?: string) => runMam(args, { env: sb.with(extra), cwd: sb.ws, stdin, timeoutMs: 30_000 });
const stateFile = (f: string) => join(sb.home, ".local", "state", "mam", f);

test("mam notify add|list|remove|test: sinks kept 0600, secrets never printed, each sink gets its test", async () => {
  const secret = "tk_very-secret-topic-42";
  const fakeNotifySend = join(sb.root, "notify-send.log");
  writeFileSync(join(sb.bin, "notify-send"), `#!/bin/sh\nprintf '%s\\n' "$@" >> '${fakeNotifySend}'\n`, { mode: 0o755 });
  const cmdOut = join(sb.root, "cmd.json");

  const a1 = await mam(["notify", "add", "webhook", rx.url(`/json/${secret}?auth=${secret}`)]);
  expect(a1.code, a1.stderr).toBe(0);
  expect(a1.stdout).toBe(`added sink 1: webhook → http://127.0.0.1:${new URL(rx.url("/")).port}/… (json), on dialog, ended, died, offline, limited, gave_up\n`);
  // from stdin: the URL never in argv
  const a2 = await mam(["notify", "add", "webhook", "-", "--format", "slack", "--on", "ended"], {}, `${rx.url(`/slack/${secret}`)}\n`);
  expect(a2.code, a2.stderr).toBe(0);
  const a3 = await mam(["notify", "add", "webhook", rx.url(`/ntfy-topic-${secret}`), "--format", "ntfy", "--on", "dialog", "--on", "died"]);
  expect(a3.code, a3.stderr).toBe(0);
  expect((await mam(["notify", "add", "desktop", "--on", "dialog"])).code).toBe(0);
  expect((await mam(["notify", "add", "command", `cat > '${cmdOut}' # ${secret}`])).code).toBe(0);
  for (const r of [a1, a2, a3]) expect(r.stdout + r.stderr).not.toContain(secret);
  // kept 0600 in a 0700 folder, and holding what was given
  expect(statSync(stateFile("notify.json")).mode & 0o777).toBe(0o600);
  expect(statSync(join(sb.home, ".local", "state", "mam")).mode & 0o777).toBe(0o700);
  expect(readFileSync(stateFile("notify.json"), "utf8")).toContain(rx.url(`/slack/${secret}`));

  const list = await mam(["notify", "list", "--json"]);
  expect(list.code).toBe(0);
  expect(list.stdout).not.toContain(secret);
  expect(JSON.parse(list.stdout).sinks.map((s: { id: string; type: string; on: string[]; target: string }) => [s.id, s.type, s.on.join(","), s.target])).toEqual([
    ["1", "webhook", "dialog,ended,died,offline,limited,gave_up", `http://127.0.0.1:${new URL(rx.url("/")).port}/… (json)`],
    ["2", "webhook", "ended", `http://127.0.0.1:${new URL(rx.url("/")).port}/… (slack)`],
    ["3", "webhook", "dialog,died", `http://127.0.0.1:${new URL(rx.url("/")).port}/… (ntfy)`],
    ["4", "desktop", "dialog", "notify-send"],
    ["5", "command", "dialog,ended,died,offline,limited,gave_up", "cat …"],
  ]);
  expect((await mam(["notify", "list"])).stdout).not.toContain(secret);

  const t = await mam(["notify", "test"]);
  expect(t.code, t.stdout + t.stderr).toBe(0);
  expect(t.stdout).toBe(["sink 1 (webhook): sent", "sink 2 (webhook): sent", "sink 3 (webhook): sent", "sink 4 (desktop): sent", "sink 5 (command): sent", ""].join("\n"));
  const byPath = (p: string) => rx.hits.find((h) => h.path.startsWith(p))!;
  expect(byPath("/json/").body).toMatchObject({ source: "mam", kind: "test", title: "mam: a test notification", workspace: sb.ws });
  expect(byPath("/slack/").body).toEqual({ text: expect.stringContaining("*mam: a test notification*") });
  // ntfy: JSON publishing at the server's root, the topic in the body
  expect(rx.hits.find((h) => h.path === "/")!.body).toMatchObject({ topic: `ntfy-topic-${secret}`, title: "mam: a test notification", tags: ["bell"] });
  expect(readFileSync(fakeNotifySend, "utf8").split("\n")).toEqual(["--app-name=mam", "--urgency=normal", "mam: a test notification", `from ${require("node:os").hostname().split(".")[0]}, workspace ${sb.ws}`, ""]);
  expect(JSON.parse(readFileSync(cmdOut, "utf8"))).toMatchObject({ source: "mam", kind: "test" });

  // a sink that fails: exit 1, said without its URL
  rx.failing(true);
  const bad = await mam(["notify", "test", "1"]);
  expect(bad.code).toBe(1);
  expect(bad.stdout).toBe("sink 1 (webhook): FAILED: HTTP 500\n");
  rx.failing(false);

  // bad input changes nothing
  const before = readFileSync(stateFile("notify.json"), "utf8");
  for (const [args, code, msg] of [
    [["notify", "add", "desktop", "http://x"], 2, "a desktop sink takes no TARGET"],
    [["notify", "add", "webhook", "ftp://x/y"], 2, "the webhook URL must be http or https (got ftp:)"],
    [["notify", "add", "webhook", "not a url"], 2, "the webhook URL is not a URL"],
    [["notify", "add", "webhook"], 2, "a webhook sink needs its URL as TARGET"],
    [["notify", "add", "webhook", "https://ntfy.sh/", "--format", "ntfy"], 2, "an ntfy webhook names its topic"],
    [["notify", "add", "command"], 2, "a command sink needs its command line as TARGET"],
    [["notify", "add", "desktop", "--format", "slack"], 2, "--format is a webhook's"],
    [["notify", "add", "desktop", "--on", "lunch"], 2, "--on must be one of dialog, ended, died, offline"],
    [["notify", "add", "pager"], 2, "TYPE must be one of desktop, webhook, command"],
    [["notify", "remove", "9"], 3, "no notification sink 9"],
    [["notify", "remove", "x/y"], 2, "invalid sink id 'x/y'"],
    [["notify", "test", "9"], 3, "no notification sink 9"],
  ] as [string[], number, string][]) {
    const r = await mam(args);
    expect({ args, code: r.code }).toEqual({ args, code });
    expect(r.stderr).toContain(`ERROR: ${msg}`);
  }
  expect(readFileSync(stateFile("notify.json"), "utf8")).toBe(before);

  const rm = await mam(["notify", "remove", "2"]);
  expect(rm.code).toBe(0);
  expect(rm.stdout).toContain("removed sink 2 (webhook → http://127.0.0.1:");
  expect(JSON.parse((await mam(["notify", "list", "--json"])).stdout).sinks.map((s: { id: string }) => s.id)).toEqual(["1", "3", "4", "5"]);
}, 60_000);

describe.skipIf(!TMUX_BIN)("the daemon's notifications (a claude look-alike on tmux)", () => {
  let server: string;
  let env: Record<string, string>;
  const tmux = (args: string[]) => run([TMUX_BIN!, "-L", server, ...args], { env });
  beforeEach(() => {
    writeScript(sb.bin, "claude", CLAUDE_LOOKALIKE);
    server = tmuxServerName("mamnt");
    env = sb.with({ TMUX_TMPDIR: sb.root, MAM_AGENT_SETTLE_S: "0.3", MAM_MUX: "tmux", ...unreachableBrokerEnv, RECONCILE_POLL_INTERVAL: "1", MAM_STATE_POLL_MS: "200" });
  });
  afterEach(async () => {
    await killTmuxServer(server, env, sb.root);
  });
  const m = (args: string[]) => runMam(args, { env, cwd: sb.ws, timeoutMs: 30_000 });
  const keys = async (session: string, text: string) => {
    await tmux(["send-keys", "-t", `=${session}:`, "-l", text]);
    await tmux(["send-keys", "-t", `=${session}:`, "Enter"]);
  };

  test("a job that blocks, is approved and completes: exactly one webhook per transition, none while idle; the dialog names mam approve and the dashboard", async () => {
    expect((await m(["notify", "add", "webhook", rx.url("/hook")])).code).toBe(0);
    expect((await m(["create", "--agent", "claude", "--session", "wrk", "--tmux-server", server, "--no-onboard"])).code).toBe(0);
    const d = startSubscriber(sb, join(sb.root, "daemon.log"), env);
    // mam ui runs for the workspace: notifications link to its forwarding page
    const ui = Bun.spawn([...MAM_CMD, "ui", "--port", "0", "--workspace", sb.ws], { env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    try {
      expect(await waitFor(() => existsSync(join(sb.ws, ".mam", "ui.json")), 10_000, 100)).toBe(true);
      await Bun.sleep(2500); // idle: an agent at its prompt, no job
      expect(rx.hits).toEqual([]);
      const id = (await m(["job", "submit", "--to", "wrk", "--prompt", "make x"])).stdout.trim();
      expect((await m(["job", "event", id, "started", "--detail", "go"])).code).toBe(0);
      await Bun.sleep(1500); // working: no transition worth telling
      expect(rx.hits).toEqual([]);
      await keys("wrk", "ask touch x");
      expect(await waitFor(() => rx.hits.length >= 1, 10_000, 100)).toBe(true);
      await Bun.sleep(1500); // the same dialog, seen again and again: still one
      expect(rx.hits).toHaveLength(1);
      const dlg = rx.hits[0]!.body;
      expect(dlg).toMatchObject({ source: "mam", kind: "dialog", job_id: id, session: "wrk", title: `mam: wrk waits for you (job ${id})`, question: { title: "Bash command", subject: "touch x" } });
      const fp = dlg.question.fingerprint as string;
      expect(dlg.approve).toBe(`mam approve ${id} --fingerprint ${fp} --workspace ${sb.ws}`);
      expect(dlg.deny).toBe(`mam approve ${id} --fingerprint ${fp} --workspace ${sb.ws} --deny`);
      expect(dlg.text).toContain("Bash command: touch x — Do you want to proceed?");
      expect(dlg.text).toContain(`approve: mam approve ${id} --fingerprint ${fp}`);
      // the dashboard's link: mam ui's 0600 forwarding page, to this agent; never the token
      expect(dlg.dashboard).toMatch(/^file:\/\/\/.*\/open-\d+\.html#agent=wrk$/);
      const page = (dlg.dashboard as string).slice("file://".length).split("#")[0]!;
      expect(statSync(page).mode & 0o777).toBe(0o600);
      expect(JSON.stringify(dlg)).not.toContain("token=");

      // the user runs the command the notification names
      const ap = await runMam(dlg.approve.split(" ").slice(1), { env, cwd: sb.root, timeoutMs: 30_000 });
      expect(ap.code, ap.stderr).toBe(0);
      await Bun.sleep(1500);
      expect(rx.hits).toHaveLength(1); // an answer is not news to the one who gave it
      expect((await m(["job", "event", id, "completed", "--detail", "made x"])).code).toBe(0);
      expect(await waitFor(() => rx.hits.length >= 2, 10_000, 100)).toBe(true);
      expect(rx.hits[1]!.body).toMatchObject({ kind: "ended", job_id: id, status: "completed", title: `mam: job ${id} completed (wrk)` });
      expect(rx.hits[1]!.body.text).toContain("made x");
      await Bun.sleep(2500); // idle again
      expect(rx.hits.map((h) => h.body.kind)).toEqual(["dialog", "ended"]);
      // a daemon that starts again over the same journals tells nothing twice
      await d.kill();
      const d2 = startSubscriber(sb, join(sb.root, "daemon2.log"), env);
      await Bun.sleep(2500);
      await d2.kill();
      expect(rx.hits).toHaveLength(2);
    } finally {
      ui.kill("SIGTERM");
      await ui.exited;
      await d.kill();
    }
    // the ui's note and page go with it
    expect(existsSync(join(sb.ws, ".mam", "ui.json"))).toBe(false);
  }, 120_000);

  test("a worker's forged question is refused (review A4, B2): mam job event takes no question and not the daemon's source; the real dialog's notification arrives", async () => {
    expect((await m(["notify", "add", "webhook", rx.url("/hook")])).code).toBe(0);
    expect((await m(["create", "--agent", "claude", "--session", "wrk", "--tmux-server", server, "--no-onboard"])).code).toBe(0);
    const d = startSubscriber(sb, join(sb.root, "daemon.log"), env);
    try {
      const id = (await m(["job", "submit", "--to", "wrk", "--prompt", "build it"])).stdout.trim();
      expect((await m(["job", "event", id, "started", "--detail", "go"])).code).toBe(0);
      // the review's repro: six harmless questions carrying another dialog's fingerprint, to fill the rate limit
      const forged = JSON.stringify({ session: "wrk", question: { title: "Bash command", subject: "ls -la", question: "Do you want to proceed?", choices: [], fingerprint: "0123456789abcdef" } });
      for (let i = 0; i < 6; i++) {
        const f = await m(["job", "event", id, "permission_required", "--source", "monitor", "--data", forged]);
        expect(f.code).toBe(2);
        expect(f.stderr).toContain("ERROR: --source monitor is the daemon's own");
      }
      const f2 = await m(["job", "event", id, "permission_required", "--source", "wrk", "--data", forged]);
      expect(f2.code).toBe(2);
      expect(f2.stderr).toContain("ERROR: a permission_required with data.question is the daemon's own");
      // an agent may still say it waits, without a question: its delegator hears it, no dialog notification
      expect((await m(["job", "event", id, "permission_required", "--source", "wrk", "--detail", "need a decision"])).code).toBe(0);
      const journal = () => readFileSync(join(sb.ws, ".mam", "jobs", `${id}.events.ndjson`), "utf8").trim().split("\n").map((l) => JSON.parse(l));
      expect(journal().filter((e) => e.data?.question !== undefined)).toEqual([]);
      // the real dialog: its notification arrives, with its own question and fingerprint
      await keys("wrk", "ask rm -rf build");
      expect(await waitFor(() => rx.hits.some((h) => h.body.kind === "dialog"), 15_000, 100), readFileSync(join(sb.root, "daemon.log"), "utf8")).toBe(true);
      const dialogs = rx.hits.filter((h) => h.body.kind === "dialog").map((h) => h.body);
      expect(dialogs).toHaveLength(1);
      expect(dialogs[0]).toMatchObject({ job_id: id, question: { title: "Bash command", subject: "rm -rf build" } });
      const fp = dialogs[0].question.fingerprint as string;
      expect(fp).toMatch(/^[0-9a-f]{16}$/);
      expect(fp).not.toBe("0123456789abcdef");
      expect(journal().filter((e) => e.data?.question !== undefined).map((e) => [e.source, e.data.question.fingerprint])).toEqual([["monitor", fp]]);
      expect(readFileSync(join(sb.root, "daemon.log"), "utf8")).toContain("permission_required from wrk, not the daemon's; no notification");
      // the forged fingerprint answers nothing: refused, nothing pressed
      const bad = await m(["approve", id, "--fingerprint", "0123456789abcdef"]);
      expect(bad.code, bad.stderr).toBe(4);
    } finally {
      await d.kill();
    }
  }, 120_000);

  test("an agent that dies while its job runs: one 'died', not also an 'ended'; the reconcile pass finding the row gone says nothing more", async () => {
    expect((await m(["notify", "add", "webhook", rx.url("/hook")])).code).toBe(0);
    expect((await m(["create", "--agent", "claude", "--session", "wrk", "--tmux-server", server, "--no-onboard"])).code).toBe(0);
    const id = (await m(["job", "submit", "--to", "wrk", "--prompt", "make x"])).stdout.trim();
    expect((await m(["job", "event", id, "started", "--detail", "go"])).code).toBe(0);
    const log = join(sb.root, "daemon.log");
    const d = startSubscriber(sb, log, env);
    try {
      await Bun.sleep(1500);
      await tmux(["kill-session", "-t", "=wrk"]);
      expect(await waitFor(() => rx.hits.length >= 1, 10_000, 100)).toBe(true);
      // the reconcile pass (every second here) marks the row terminated meanwhile
      expect(await waitFor(() => readFileSync(log, "utf8").includes("wrk: running → terminated"), 10_000, 100)).toBe(true);
      await Bun.sleep(1500);
      expect(rx.hits.map((h) => h.body.kind)).toEqual(["died"]);
      expect(rx.hits[0]!.body).toMatchObject({ session: "wrk", job_id: id, title: `mam: wrk died (job ${id})` });
      expect(rx.hits[0]!.body.text).toContain(`start it again: mam resume wrk --workspace ${sb.ws}`);
    } finally {
      await d.kill();
    }
  }, 60_000);
});

describe.skipIf(!TMUX_BIN)("the 'died' notification names the command that starts the agent again", () => {
  test("a demo agent keeps no conversation: its hint is mam resume NAME --fresh, which works (issue 39 item 7)", async () => {
    const server = tmuxServerName("mamntf");
    const env = sb.with({ TMUX_TMPDIR: sb.root, MAM_AGENT_SETTLE_S: "0.3", MAM_MUX: "tmux", ...unreachableBrokerEnv, RECONCILE_POLL_INTERVAL: "1", MAM_STATE_POLL_MS: "200" });
    const m = (args: string[]) => runMam(args, { env, cwd: sb.ws, timeoutMs: 30_000 });
    const d = startSubscriber(sb, join(sb.root, "daemon.log"), env);
    try {
      expect((await m(["notify", "add", "webhook", rx.url("/hook"), "--on", "died"])).code).toBe(0);
      expect((await m(["create", "--agent", "demo", "--session", "dm", "--tmux-server", server, "--no-onboard"])).code).toBe(0);
      await run([TMUX_BIN!, "-L", server, "kill-session", "-t", "=dm"], { env });
      expect(await waitFor(() => rx.hits.length >= 1, 15_000, 100)).toBe(true);
      const text = rx.hits[0]!.body.text as string;
      expect(text).toContain(`start it again: mam resume dm --fresh --workspace ${sb.ws}`);
      // the line as the user runs it
      const again = await runMam(text.split("\n").find((l) => l.startsWith("start it again: "))!.slice("start it again: mam ".length).split(" "), { env, cwd: sb.root, timeoutMs: 30_000 });
      expect(again.code, again.stderr).toBe(0);
    } finally {
      await d.kill();
      await killTmuxServer(server, env, sb.root);
    }
  }, 60_000);
});

describe.skipIf(!mosquittoPath() || !TMUX_BIN)("a host of the team goes offline", () => {
  test("its daemon's goodbye gives one 'offline' on the other host; its first state is not news", async () => {
    const broker = await startMosquitto(join(sb.root, "broker"));
    const A = makeHost(sb.root, "hostA", broker.env);
    const B = makeHost(sb.root, "hostB", broker.env);
    try {
      await formTeam([A, B]);
      await A.ok(["notify", "add", "webhook", rx.url("/a"), "--on", "offline"]);
      await B.ok(["daemon", "ensure"]);
      await A.ok(["daemon", "ensure"]);
      expect(await waitFor(() => A.log().includes("MQTT Monitor: subscribed") && B.log().includes("MQTT Monitor: subscribed"), 15_000, 100)).toBe(true);
      await Bun.sleep(1500);
      expect(rx.hits).toEqual([]);
      await B.ok(["daemon", "stop"]);
      expect(await waitFor(() => rx.hits.length >= 1, 15_000, 100)).toBe(true);
      expect(rx.hits[0]!.body).toMatchObject({ kind: "offline", title: "mam: host hostB went offline (team lab)", host: "hostA" });
      // back, and offline again: one more
      await B.ok(["daemon", "ensure"]);
      await Bun.sleep(2000);
      await B.ok(["daemon", "stop"]);
      expect(await waitFor(() => rx.hits.length >= 2, 15_000, 100)).toBe(true);
      await Bun.sleep(1500);
      expect(rx.hits.map((h) => h.body.kind)).toEqual(["offline", "offline"]);
    } finally {
      await A.stop();
      await B.stop();
      await broker.stop();
    }
  }, 90_000);

  test("a captured `offline` replayed while the host runs: no notification, and the fleet shows it online (review T6)", async () => {
    const broker = await startMosquitto(join(sb.root, "broker"));
    const A = makeHost(sb.root, "hostA", broker.env);
    const B = makeHost(sb.root, "hostB", broker.env);
    const mqtt = await import("mqtt");
    const c = await mqtt.connectAsync({ host: "127.0.0.1", port: broker.port, protocolVersion: 4, clean: true, reconnectPeriod: 0 } as never);
    try {
      await formTeam([A, B]);
      const team = JSON.parse(readFileSync(join(B.home, ".local", "state", "mam", "team.json"), "utf8")) as Team;
      const topic = onlineTopic("mam/team/lab", "hostB", workspaceId(B.ws));
      // a broker user without the secret keeps what B's online topic carried: B's goodbye among it
      const seen: Buffer[] = [];
      c.on("message", (t, p) => t === topic && p.length > 0 && seen.push(Buffer.from(p)));
      await c.subscribeAsync(topic, { qos: 1 });
      await A.ok(["notify", "add", "webhook", rx.url("/a"), "--on", "offline"]);
      await B.ok(["daemon", "ensure"]);
      await A.ok(["daemon", "ensure"]);
      expect(await waitFor(() => A.log().includes("MQTT Monitor: subscribed") && B.log().includes("MQTT Monitor: subscribed"), 15_000, 100)).toBe(true);
      const offline = () => seen.find((p) => { const o = open(team, p); return o.ok && (o.body as { online: boolean }).online === false; });
      await B.ok(["daemon", "stop"]);
      expect(await waitFor(() => offline() !== undefined && rx.hits.length >= 1, 15_000, 100)).toBe(true);
      const captured = offline()!;
      await B.ok(["daemon", "ensure"]);
      const fleetB = async () => (JSON.parse(await A.ok(["status", "--fleet", "--json"])).workspaces as { host: string; online: boolean }[]).find((w) => w.host === "hostB")?.online;
      expect(await waitFor(async () => (await fleetB()) === true, 15_000, 200)).toBe(true);
      const hits = rx.hits.length;
      // the replay, retained: it replaces B's online state on the broker
      await c.publishAsync(topic, captured, { qos: 1, retain: true });
      expect(await waitFor(() => A.log().includes("team: ignored an offline state of hostB/"), 15_000, 100), A.log()).toBe(true);
      expect(await fleetB()).toBe(true);
      expect(rx.hits.length).toBe(hits);
    } finally {
      await c.endAsync();
      await A.stop();
      await B.stop();
      await broker.stop();
    }
  }, 90_000);
});
