// mam approve (issue 26) through the binary, on a real tmux with a claude look-alike that draws the
// real claude's Bash permission dialog and takes its keys (tests/helpers/agent-screens.ts): the
// question as data in status --json, the one-time yes only while the dialog is the one named, the
// no, an "always" choice only when named, every answer journalled on the job; refusals change
// nothing on screen. The real claude and codex: tests/real-agents/approvals.test.ts.
import { expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { CLAUDE_LOOKALIKE } from "../helpers/agent-screens.ts";
import { startSubscriber, unreachableBrokerEnv } from "../helpers/daemon.ts";
import { MAM_CMD, type RunResult, run, runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName, writeScript } from "../helpers/tmux.ts";

interface Choice {
  n: number;
  label: string;
  key: string;
  role: string;
}
interface Question {
  what: string;
  title: string;
  subject: string;
  question: string;
  choices: Choice[];
  fingerprint: string;
}
type Session = { name: string; live: string; reason?: string; question?: Question };
type Ev = { event: string; detail: string; source: string; data: Record<string, any> };

interface World {
  sb: Sandbox;
  server: string;
  env: Record<string, string>;
  mam(args: string[]): Promise<RunResult>;
  keys(session: string, text: string): Promise<void>;
  press(session: string, key: string): Promise<void>;
  screen(session: string): Promise<string>;
  session(name: string): Promise<Session>;
}

async function withWorld(fn: (w: World) => Promise<void>): Promise<void> {
  if (!TMUX_BIN) throw new Error("tmux is not installed: these tests need a real tmux (apt install tmux)");
  const sb = makeSandbox("mam-ap-");
  writeScript(sb.bin, "claude", CLAUDE_LOOKALIKE);
  const server = tmuxServerName("mamap");
  const env = sb.with({ TMUX_TMPDIR: sb.root, MAM_AGENT_SETTLE_S: "0.3", MAM_MUX: "tmux", USER: "alice" });
  const tmux = (args: string[]) => run([TMUX_BIN!, "-L", server, ...args], { env });
  const w: World = {
    sb,
    server,
    env,
    mam: (args) => runMam(args, { env, cwd: sb.ws, timeoutMs: 60_000 }),
    async keys(session, text) {
      expect((await tmux(["send-keys", "-t", `=${session}:`, "-l", text])).code).toBe(0);
      await tmux(["send-keys", "-t", `=${session}:`, "Enter"]);
    },
    async press(session, key) {
      expect((await tmux(["send-keys", "-t", `=${session}:`, key])).code).toBe(0);
    },
    screen: async (session) => (await tmux(["capture-pane", "-p", "-J", "-t", `=${session}:`])).stdout,
    async session(name) {
      const r = await w.mam(["status", "--json"]);
      if (r.code !== 0) throw new Error(`status exited ${r.code}: ${r.stderr}`);
      return (JSON.parse(r.stdout) as { sessions: Session[] }).sessions.find((x) => x.name === name)!;
    },
  };
  try {
    await fn(w);
  } finally {
    await killTmuxServer(server, env, sb.root);
    await sb.cleanup();
  }
}

async function create(w: World, name: string): Promise<void> {
  const r = await w.mam(["create", "--agent", "claude", "--session", name, "--tmux-server", w.server, "--no-onboard"]);
  if (r.code !== 0) throw new Error(`create ${name} exited ${r.code}: ${r.stdout}${r.stderr}`);
  expect(await waitFor(async () => (await w.session(name)).live === "idle", 10_000, 100)).toBe(true);
}

/** ask <command> in the look-alike; the question status shows once it is blocked */
async function ask(w: World, name: string, command: string): Promise<Question> {
  await w.keys(name, `ask ${command}`);
  let s: Session | undefined;
  expect(await waitFor(async () => (s = await w.session(name)).question?.subject === command, 10_000, 100)).toBe(true);
  return s!.question!;
}

function journal(w: World, id: string): Ev[] {
  const f = join(w.sb.ws, ".mam", "jobs", `${id}.events.ndjson`);
  return existsSync(f) ? readFileSync(f, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Ev) : [];
}

test("the question as data, then refusals that press nothing, then the one-time yes of the dialog named", async () => {
  await withWorld(async (w) => {
    await create(w, "wrk");
    const q = await ask(w, "wrk", "touch x");
    expect(q).toMatchObject({ what: "command", title: "Bash command", subject: "touch x", question: "Do you want to proceed?" });
    expect(q.choices.map((c) => [c.n, c.key, c.role])).toEqual([
      [1, "1", "yes"],
      [2, "2", "always"],
      [3, "3", "no"],
    ]);
    expect(q.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    // the table says how to answer it
    const table = await w.mam(["status"]);
    expect(table.stdout).toContain("wrk is blocked: Bash command: touch x — Do you want to proceed?");
    expect(table.stdout).toContain(`answer:  mam approve wrk --fingerprint ${q.fingerprint}`);

    const dialog = await w.screen("wrk");
    // no job told about it, no fingerprint given: shown, not pressed
    const bare = await w.mam(["approve", "wrk"]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain("wrk asks: Bash command: touch x — Do you want to proceed? (choices: 1 Yes · 2 Yes, and don't ask again");
    expect(bare.stderr).toContain(`--fingerprint ${q.fingerprint}`);
    // another dialog's fingerprint: refused, with what is there now
    const other = await w.mam(["approve", "wrk", "--fingerprint", "0123456789abcdef"]);
    expect(other.code).toBe(4);
    expect(other.stderr).toContain("the dialog of wrk is not the one you answer (0123456789abcdef): it now asks Bash command: touch x");
    expect(other.stderr).toContain(`to answer this one: --fingerprint ${q.fingerprint}`);
    // bad input changes nothing either
    for (const [args, code, msg] of [
      [["approve", "wrk", "--deny", "--choice", "3", "--fingerprint", q.fingerprint], 2, "--deny and --choice contradict each other"],
      [["approve", "wrk", "--fingerprint", "XYZ"], 2, "invalid fingerprint 'XYZ'"],
      [["approve", "wrk", "--choice", "7", "--fingerprint", q.fingerprint], 2, "--choice 7: the dialog has 3 choices"],
      [["approve", "nobody", "--fingerprint", q.fingerprint], 3, "no running session nobody"],
      [["approve", "wrk@elsewhere"], 2, "wrk@elsewhere is on another host: its dialog is answered there"],
      [["approve", "../etc"], 2, "invalid session or job '../etc'"],
    ] as [string[], number, string][]) {
      const r = await w.mam(args);
      expect({ args, code: r.code, out: r.stdout }).toEqual({ args, code, out: "" });
      expect(r.stderr).toContain(`ERROR: ${msg}`);
    }
    expect(await w.screen("wrk")).toBe(dialog);

    const yes = await w.mam(["approve", "wrk", "--fingerprint", q.fingerprint, "--json"]);
    expect(yes.code, yes.stderr).toBe(0);
    const a = JSON.parse(yes.stdout);
    expect(a).toMatchObject({ session: "wrk", job_id: null, answer: "approved", key: "1", answered: true, seq: null, told: false });
    expect(a.choice).toMatchObject({ n: 1, role: "yes" });
    expect(a.warnings).toEqual(["NOTE: wrk has no open job: the answer is not journalled"]);
    expect(await w.screen("wrk")).toContain("● Bash(touch x) ran");
    expect((await w.session("wrk")).live).toBe("idle");
    // nothing to answer now: refused, saying what is true
    const idle = await w.mam(["approve", "wrk", "--fingerprint", q.fingerprint]);
    expect(idle.code).toBe(1);
    expect(idle.stderr).toContain("ERROR: wrk is not at a dialog (it is idle, at its prompt); nothing was pressed; see: mam status (its LIVE column)");
  });
}, 120_000);

test("a job: its question in the permission_required event, approve by the job id, the no (the agent is told), an always only when named, each journalled", async () => {
  await withWorld(async (w) => {
    await create(w, "wrk");
    const sub = await w.mam(["job", "submit", "--to", "wrk", "--prompt", "make x"]);
    expect(sub.code).toBe(0);
    const id = sub.stdout.trim();
    expect((await w.mam(["job", "event", id, "started", "--detail", "go"])).code).toBe(0);
    const d = startSubscriber(w.sb, join(w.sb.root, "daemon.log"), { ...w.env, ...unreachableBrokerEnv, RECONCILE_POLL_INTERVAL: "30", MAM_STATE_POLL_MS: "200" });
    const perms = () => journal(w, id).filter((e) => e.event === "permission_required");
    try {
      // a second job for wrk waits its turn (wrk has an unfinished job): it is never the one answered
      const sub2 = await w.mam(["job", "submit", "--to", "wrk", "--prompt", "make y"]);
      expect(sub2.code, sub2.stderr).toBe(0);
      const id2 = sub2.stdout.trim();
      expect(JSON.parse((await w.mam(["job", "status", id2, "--json"])).stdout).status).toBe("queued");
      const q1 = await ask(w, "wrk", "touch x");
      expect(await waitFor(() => perms().length === 1, 10_000, 100)).toBe(true);
      expect(perms()[0]!.data).toMatchObject({ session: "wrk", question: { subject: "touch x", fingerprint: q1.fingerprint } });
      expect(perms()[0]!.data.question.choices).toHaveLength(3);
      // no dialog is the queued job's
      const queued = await w.mam(["approve", id2]);
      expect(queued.code).toBe(2);
      expect(queued.stderr).toContain(`ERROR: job ${id2} waits its turn (queued): no agent works on it yet, so no dialog is its`);

      // the job told about one question: approve by the job id alone
      const yes = await w.mam(["approve", id]);
      expect(yes.code, yes.stderr).toBe(0);
      expect(yes.stdout).toMatch(new RegExp(`^approved wrk's dialog \\(Bash command: touch x — Do you want to proceed\\?\\): pressed 1 \\(Yes\\); journalled on job ${id} \\(#\\d+\\)\\n$`));
      const ap = journal(w, id).find((e) => e.event === "approved")!;
      expect(ap.source).toBe("mam");
      expect(ap.data).toMatchObject({ session: "wrk", by: "alice", via: "cli", choice: { n: 1, key: "1", role: "yes" }, fingerprint: q1.fingerprint, question: { title: "Bash command", subject: "touch x" } });
      expect(typeof ap.data.host).toBe("string");
      expect(ap.data.hmac_sig).toMatch(/^[0-9a-f]{64}$/);
      // answered: a second approve of it is refused
      const again = await w.mam(["approve", id]);
      expect(again.code).toBe(1);

      // the no: pressed, journalled, and the agent (waiting for the user, as claude does) is told
      await ask(w, "wrk", "rm -rf build");
      expect(await waitFor(() => perms().length === 2, 10_000, 100)).toBe(true);
      const no = await w.mam(["approve", id, "--deny"]);
      expect(no.code, no.stderr).toBe(0);
      expect(no.stdout).toContain("denied wrk's dialog (Bash command: rm -rf build — Do you want to proceed?): pressed 3 (No)");
      expect(no.stdout).toContain("told wrk that the answer is no");
      const de = journal(w, id).find((e) => e.event === "denied")!;
      expect(de.data).toMatchObject({ by: "alice", choice: { n: 3, role: "no" }, question: { subject: "rm -rf build" } });
      // the look-alike shows the last line it read: the told text ends with the job's error command
      expect(await waitFor(async () => (await w.screen("wrk")).includes(`job event ${id} error --source wrk`), 10_000, 100)).toBe(true);
      expect(await w.screen("wrk")).not.toContain("Bash(rm -rf build) ran");

      // an "always" choice: only by its number
      const q3 = await ask(w, "wrk", "make test");
      expect(await waitFor(() => perms().length === 3, 10_000, 100)).toBe(true);
      // (by the session: the job it works on, not the one queued for it, gets the answer)
      const always = await w.mam(["approve", "wrk", "--choice", "2", "--fingerprint", q3.fingerprint]);
      expect(always.code, always.stderr).toBe(0);
      expect(always.stdout).toContain(`journalled on job ${id} `);
      expect(journal(w, id).filter((e) => e.event === "approved").map((e) => e.data.choice.role)).toEqual(["yes", "always"]);
      expect(journal(w, id2).some((e) => e.event === "approved" || e.event === "denied")).toBe(false);
      expect(await w.screen("wrk")).toContain("● Bash(make test) ran; don't ask again");
      // the answers are mam's: they leave the job running
      const st = JSON.parse((await w.mam(["job", "status", id, "--json"])).stdout);
      expect(st.status).toBe("running");
      // an agent cannot report them
      const forged = await w.mam(["job", "event", id, "approved", "--detail", "me"]);
      expect(forged.code).toBe(2);
    } finally {
      await d.kill();
    }
  });
}, 180_000);

test("the dialog changed since the job told about it: refused, nothing pressed; two answers at once press one key", async () => {
  await withWorld(async (w) => {
    await create(w, "wrk");
    const id = (await w.mam(["job", "submit", "--to", "wrk", "--prompt", "make x"])).stdout.trim();
    const d = startSubscriber(w.sb, join(w.sb.root, "daemon.log"), { ...w.env, ...unreachableBrokerEnv, RECONCILE_POLL_INTERVAL: "30", MAM_STATE_POLL_MS: "200" });
    const perms = () => journal(w, id).filter((e) => e.event === "permission_required");
    try {
      const q1 = await ask(w, "wrk", "touch x");
      expect(await waitFor(() => perms().length === 1, 10_000, 100)).toBe(true);
      // the user answers in the pane; the agent asks something else
      await w.press("wrk", "1");
      expect(await waitFor(async () => (await w.screen("wrk")).includes("Bash(touch x) ran"), 10_000, 100)).toBe(true);
      const q2 = await ask(w, "wrk", "curl example.com | sh");
      expect(q2.fingerprint).not.toBe(q1.fingerprint);
      // refused before and after the daemon told about the second question
      const early = await w.mam(["approve", id, "--fingerprint", q1.fingerprint]);
      expect(early.code).toBe(4);
      expect(early.stderr).toContain("it now asks Bash command: curl example.com | sh — Do you want to proceed?");
      expect(await waitFor(() => perms().length === 2, 10_000, 100)).toBe(true);
      const byJob = await w.mam(["approve", id]);
      expect(byJob.code).toBe(4);
      expect(byJob.stderr).toContain(`the dialog of wrk changed since job ${id} told you (2 questions since the last answer)`);
      expect(byJob.stderr).toContain(`--fingerprint ${q2.fingerprint}`);
      expect(await w.screen("wrk")).toContain("Do you want to proceed?");
      expect(journal(w, id).some((e) => e.event === "approved" || e.event === "denied")).toBe(false);

      // two answers at once: one presses, the other finds the dialog gone
      const both = await Promise.all([w.mam(["approve", "wrk", "--fingerprint", q2.fingerprint]), w.mam(["approve", "wrk", "--fingerprint", q2.fingerprint])]);
      expect(both.map((r) => r.code).sort()).toEqual([0, 1]);
      expect(journal(w, id).filter((e) => e.event === "approved")).toHaveLength(1);
      // the look-alike's prompt got no stray key: it shows the command ran, nothing typed after it
      expect(await w.screen("wrk")).toContain("● Bash(curl example.com | sh) ran");
    } finally {
      await d.kill();
    }
  });
}, 120_000);

test("approve right after status showed the dialog, before the daemon journalled it: the dialog the user saw is answered; with no daemon it is refused, naming it", async () => {
  await withWorld(async (w) => {
    await create(w, "wrk");
    const id = (await w.mam(["job", "submit", "--to", "wrk", "--prompt", "make x"])).stdout.trim();
    // the dialog comes while no daemon runs, so nothing has journalled it yet (status reads the screen)
    const q = await ask(w, "wrk", "touch x");
    const perms = () => journal(w, id).filter((e) => e.event === "permission_required");
    expect(perms()).toHaveLength(0);
    // a script types its approve as soon as status shows the dialog; the daemon (just started, its
    // watch a second and a half apart) journals it while approve waits
    const d = startSubscriber(w.sb, join(w.sb.root, "daemon.log"), { ...w.env, ...unreachableBrokerEnv, RECONCILE_POLL_INTERVAL: "30", MAM_STATE_POLL_MS: "1500" });
    try {
      expect(await waitFor(async () => JSON.parse((await w.mam(["daemon", "status", "--json"])).stdout || "{}").pid > 0, 10_000, 50)).toBe(true);
      expect(perms()).toHaveLength(0);
      const yes = await w.mam(["approve", "wrk"]);
      expect(yes.code, yes.stderr).toBe(0);
      expect(yes.stdout).toContain("approved wrk's dialog (Bash command: touch x — Do you want to proceed?): pressed 1 (Yes)");
      const j = journal(w, id);
      expect(j.findIndex((e) => e.event === "permission_required")).toBeLessThan(j.findIndex((e) => e.event === "approved"));
      expect(j.find((e) => e.event === "approved")!.data.fingerprint).toBe(q.fingerprint);
    } finally {
      await d.kill();
    }
    // no daemon: nothing will journal the next dialog, so approve refuses (without waiting), naming it
    const q2 = await ask(w, "wrk", "make test");
    const bare = await w.mam(["approve", "wrk"]);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain(`job ${id} has told of no question since its last answer`);
    expect(bare.stderr).toContain(`--fingerprint ${q2.fingerprint}`);
  });
}, 120_000);

test("through MCP: the tool answers only the dialog it names, with the once or the no; it offers no choice; the journal names the agent that answered", async () => {
  await withWorld(async (w) => {
    await create(w, "wrk");
    const id = (await w.mam(["job", "submit", "--to", "wrk", "--prompt", "make x"])).stdout.trim();
    const q = await ask(w, "wrk", "touch x");
    // a lead agent's MCP server: mam gives every agent it starts its MAM_SESSION
    const transport = new StdioClientTransport({ command: MAM_CMD[0]!, args: [...MAM_CMD.slice(1), "mcp", "--workspace", w.sb.ws], env: { ...w.env, MAM_SESSION: "lead" }, cwd: w.sb.ws, stderr: "pipe" });
    const client = new Client({ name: "mam-test", version: "1.0.0" });
    await client.connect(transport);
    type Res = { isError?: boolean; content: { text?: string }[]; structuredContent?: Record<string, any> };
    const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }, CallToolResultSchema) as Promise<Res>;
    try {
      const tool = (await client.listTools()).tools.find((t) => t.name === "session_approve")!;
      expect(Object.keys(tool.inputSchema.properties ?? {}).sort()).toEqual(["deny", "fingerprint", "target"]);
      expect(tool.outputSchema).toBeDefined();
      const always = await call("session_approve", { target: "wrk", fingerprint: q.fingerprint, choice: 2 });
      expect(always.isError).toBe(true);
      expect(always.content[0]!.text).toContain("unknown argument 'choice'");
      const wrong = await call("approve", { target: "wrk", fingerprint: "0123456789abcdef" });
      expect(wrong.isError).toBe(true);
      expect(wrong.content[0]!.text).toContain(`to answer this one: fingerprint "${q.fingerprint}"`);
      expect(await w.screen("wrk")).toContain("Do you want to proceed?");
      // the old-style name answers too
      const ok = await call("approve", { target: id, fingerprint: q.fingerprint });
      expect(ok.isError, ok.content[0]?.text).toBeFalsy();
      expect(ok.structuredContent).toMatchObject({ session: "wrk", job_id: id, answer: "approved", key: "1", answered: true });
      const ev = journal(w, id).find((e) => e.event === "approved")!;
      expect(ev.data).toMatchObject({ by: "lead (agent of alice)", via: "mcp" });
    } finally {
      await client.close();
    }
  });
}, 90_000);
