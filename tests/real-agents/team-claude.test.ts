// A team across machines with a real agent (docs/machines.md, issue 24): host A runs a demo lead,
// host B runs the real Claude Code as worker `w` (offline, against the scripted model endpoint,
// its own CLAUDE_CONFIG_DIR trusting B's workspace), host C a real claude that waits at its
// "trust this folder" dialog; one real Mosquitto. A delegates to w@hostB: B's daemon types the
// job header into claude at its prompt, the scripted model makes claude run the header's
// `started` and `completed` commands (with B's workspace and w@hostB as the source), and A's
// journal gets every stage once, in order. A job for C's claude is never typed into its dialog:
// C's daemon answers it with an error and the dialog stays. A job cancelled on A while claude
// works on it: B's daemon tells claude, claude reports `error` on B's copy, and A gets that report
// with no hole in B's numbering (B's copy also journals A's cancel) and no gap logged on either
// host. The test presses no key.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { eventLine, isJobText, jobWorker, withDetail } from "../fakes/model-api/scripts.ts";
import { type ModelApi, type Reply, startModelApi, type Turn } from "../fakes/model-api/server.ts";
import { mosquittoPath, startMosquitto, type TestBroker } from "../helpers/brokers.ts";
import { type RealAgentHost, realAgentHost } from "../helpers/real-agents.ts";
import type { JobEvent } from "../../lib/jobs/event.ts";
import { anchoredPids, makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { doubled, formTeam, type Host, makeHost, stages as allStages, untilAnnounced } from "../helpers/team.ts";

const NO_MOSQUITTO = mosquittoPath() ? undefined : "mosquitto is not installed (apt-get install mosquitto; .ci/run installs it)";
if (NO_MOSQUITTO) console.log(`team-claude tests skipped: ${NO_MOSQUITTO}`);

let sb: Sandbox;
let broker: TestBroker;
let apiB: ModelApi;
let apiC: ModelApi;
let A: Host;
let B: RealAgentHost;
let C: RealAgentHost;

const count = (hay: string, needle: string) => hay.split(needle).length - 1;
/** a user message as the user typed it: claude adds its own <system-reminder> blocks to it */
const typedPart = (t: string) => t.replace(/<system-reminder>[\s\S]*?<\/system-reminder>\s*/g, "").trim();
/**
 * B's claude: does a job as jobWorker does, except that it answers "Take your time" slowly after
 * its `started` (8 s, working), and a cancel notice with the job header's `error` command
 */
function workerB(): (t: Turn) => Reply {
  const worker = jobWorker({ detail: "done: greeting written" });
  return (t) => {
    const cancelled = /^\[mam\] Job ([0-9a-f]{8}) was cancelled/.exec(typedPart(t.lastUserText))?.[1];
    if (cancelled) {
      const header = t.userTexts.find((u) => u.includes(`Job ${cancelled} delegated`));
      const line = header && eventLine(header, "error");
      return t.toolOutputs.length === 0 && line ? { shell: withDetail(line, "stopped as asked") } : { text: "stopped" };
    }
    if (isJobText(t) && t.lastUserText.includes("Task: Take your time") && t.toolOutputs.length === 1) return { text: "working on it", delayMs: 8000 };
    return worker(t);
  };
}

/**
 * the job's stages without B's `usage` reports (docs/cost.md): B's meter sends claude's token
 * counts as they come, at a moment of its own, so where they fall among the stages varies
 */
const stages = (evs: JobEvent[]) => allStages(evs.filter((e) => e.event !== "usage"));

const logs = () => `\nA:\n${A.log()}\nB:\n${B.log()}\nC:\n${C.log()}`;

/** A submits a job for `to` from its lead: the job's id */
async function submitFromA(to: string, prompt: string): Promise<string> {
  const r = await A.mam(["job", "submit", "--to", to, "--from", "lead", "--prompt", prompt]);
  expect(r.code, r.stdout + r.stderr + logs()).toBe(0);
  const id = r.stdout.trim();
  expect(id).toMatch(/^[0-9a-f]{8}$/);
  return id;
}

/** the lead on A is told how the job ended, once (looked at again a while later), and A's journal holds `n` events still */
async function leadToldOnce(id: string, event: string, n: number): Promise<void> {
  const told = `[mam] job ${id} ${event}`;
  expect(await waitFor(() => A.screen("lead").includes(told), 15_000), A.screen("lead") + logs()).toBe(true);
  await Bun.sleep(2000);
  expect(count(A.screen("lead"), told)).toBe(1);
  expect(stages(A.journal(id))).toHaveLength(n);
}

describe.skipIf(!!NO_MOSQUITTO)("a team across machines with the real claude as the worker", () => {
  beforeAll(async () => {
    sb = makeSandbox("mam-rt-");
    broker = await startMosquitto(join(sb.root, "broker"));
    apiB = startModelApi(workerB());
    apiC = startModelApi(jobWorker());
    A = makeHost(sb.root, "hostA", broker.env);
    B = realAgentHost(sb.root, "hostB", broker.env, apiB);
    C = realAgentHost(sb.root, "hostC", broker.env, apiC, { trustClaude: false });
    await formTeam([A, B, C]);
    await A.demo("lead", "lead");
    const w = JSON.parse(await B.ok(["create", "--agent", "claude", "--role", "worker", "--session", "w", "--mux", "tmux", "--tmux-server", B.tmux, "--json"]));
    expect(w).toMatchObject({ at_prompt: true, onboarding: "sent", warnings: [] });
    const d = JSON.parse(await C.ok(["create", "--agent", "claude", "--role", "worker", "--session", "d", "--mux", "tmux", "--tmux-server", C.tmux, "--json"]));
    expect(d).toMatchObject({ at_prompt: false, waiting_at: `its "trust this folder" dialog`, onboarding: "not sent" });
    await untilAnnounced(A, ["lead@hostA", "w@hostB", "d@hostC"], 30_000);
    // claude answered its onboarding and is back at its prompt before the job comes
    expect(await waitFor(() => apiB.turns("anthropic").length >= 1, 30_000, 100)).toBe(true);
  }, 180_000);

  afterAll(async () => {
    for (const h of [A, B, C]) await h?.stop();
    await broker?.stop();
    await apiB?.stop();
    await apiC?.stop();
    await waitFor(() => anchoredPids(sb.root).length === 0, 10_000, 100);
    await sb?.cleanup();
  }, 60_000);

  test("A delegates to w@hostB: B's daemon types the header into claude, claude reports, A sees every stage once and the lead is told once", async () => {
    const before = apiB.turns("anthropic").length;
    const id = await submitFromA("w@hostB", "Write a greeting");
    const waited = await A.mam(["job", "wait", id, "--timeout", "120"], {}, 150_000);
    expect(waited.code, `${waited.stdout}${waited.stderr}\nw:\n${B.visible("w")}${logs()}`).toBe(0);

    await waitFor(() => stages(A.journal(id)).length >= 5, 10_000, 50);
    const evs = A.journal(id);
    expect(doubled(evs)).toEqual([]);
    expect(stages(evs)).toEqual(["offered mam", "received mam@hostB", "delivered mam@hostB", "started w@hostB", "completed w@hostB"]);
    // and what claude's answers cost reached A from B
    expect(await waitFor(() => A.journal(id).some((e) => e.event === "usage"), 15_000, 100), logs()).toBe(true);
    expect(evs.at(-1)!.detail).toBe("done: greeting written");
    // B's copy of the job holds the same stages from B's side, and knows whose job it is
    expect(stages(B.journal(id))).toEqual(["received mam@hostB", "delivered mam@hostB", "started w@hostB", "completed w@hostB"]);
    expect(JSON.parse(await B.ok(["job", "status", id, "--json"]))).toMatchObject({ remote_of: "hostA", agent_session: "w@hostB", delegator: "lead@hostA", status: "completed" });

    // the header reached the model as one message, once, with B's own commands
    const turns = apiB.turns("anthropic").slice(before);
    const headers = new Set(turns.map((t) => t.lastUserText).filter((u) => u.includes(`Job ${id} delegated`)));
    expect(headers.size).toBe(1);
    const header = typedPart([...headers][0]!);
    expect(header).toStartWith(`[mam] Job ${id} delegated to you (w@hostB) by session lead@hostA.`);
    expect(header).toContain(`job event ${id} started --source w@hostB --workspace ${B.ws} `);
    expect(header).not.toContain(A.ws);
    const last = turns.at(-1)!;
    expect(last.userTexts.filter((u) => u.includes(`Job ${id} delegated`))).toHaveLength(1);
    // claude ran exactly those two commands, without a permission prompt
    const ran = apiB.requests.map((q) => q.reply?.shell).filter((c): c is string => c?.includes(`job event ${id}`) === true);
    expect(ran.map((c) => / job event [0-9a-f]{8} (\w+) /.exec(c)![1])).toEqual(["started", "completed"]);
    expect(B.visible("w")).not.toContain("Do you want to proceed?");

    await leadToldOnce(id, "completed", 5);
  }, 200_000);

  test("a job for a claude at its trust dialog on C is never typed into it: C's daemon answers with an error, the dialog stays", async () => {
    const id = await submitFromA("d@hostC", "Trust me");
    const waited = await A.mam(["job", "wait", id, "--timeout", "60"], {}, 90_000);
    expect(waited.code, `${waited.stdout}${waited.stderr}${logs()}`).toBe(1);
    await waitFor(() => stages(A.journal(id)).length >= 3, 10_000, 50);
    const evs = A.journal(id);
    expect(doubled(evs)).toEqual([]);
    expect(stages(evs)).toEqual(["offered mam", "received mam@hostC", "error mam@hostC"]);
    expect(evs.at(-1)!.detail).toMatch(/^d@hostC waits at its "trust this folder" dialog in %\d+ \(answer it there: tmux -L \S+ attach -t d\); nothing typed$/);
    // the dialog is still there, claude never reached the model, the folder is still not trusted
    await Bun.sleep(1500);
    expect(C.visible("d")).toMatch(/trust this folder/i);
    expect(C.visible("d")).not.toContain(id);
    expect(apiC.turns()).toHaveLength(0);
    const cfg = JSON.parse(await Bun.file(join(C.claudeConfigDir, ".claude.json")).text());
    expect(cfg.projects?.[C.ws]?.hasTrustDialogAccepted).not.toBe(true);
    await leadToldOnce(id, "error", 3);
  }, 120_000);

  test("a job cancelled on A while claude works on it: claude is told, its error report reaches A with no hole in B's numbering", async () => {
    const id = await submitFromA("w@hostB", "Take your time");
    // cancel while the model holds its answer after `started` (claude works): the notice is queued
    const slow = () => apiB.turns("anthropic").some((t) => t.lastUserText.includes(`Job ${id} delegated`) && t.toolOutputs.length === 1);
    expect(await waitFor(slow, 60_000, 50), `${B.visible("w")}${logs()}`).toBe(true);
    expect(await waitFor(() => stages(A.journal(id)).includes("started w@hostB"), 15_000, 50), logs()).toBe(true);
    const c = await A.mam(["job", "cancel", id]);
    expect(c.code, c.stdout + c.stderr).toBe(0);
    expect(c.stdout).toContain("w@hostB");
    const notice = `[mam] Job ${id} was cancelled (on hostA): stop working on it.`;
    // claude, still working, queues the notice and takes it as its next message; it reports error
    expect(await waitFor(() => stages(A.journal(id)).includes("error w@hostB"), 60_000, 100), `${B.visible("w")}${logs()}`).toBe(true);
    const evs = A.journal(id);
    expect(doubled(evs)).toEqual([]);
    expect(stages(evs)).toEqual(["offered mam", "received mam@hostB", "delivered mam@hostB", "started w@hostB", "cancelled mam", "error w@hostB"]);
    expect(evs.at(-1)!.detail).toBe("stopped as asked");
    // B's copy journals A's cancel too (and never had A's `offered`), yet numbers its own events
    // 1, 2, 3, … (its four stages and the `usage` reports of its meter): A sees no hole, its ack
    // covers them all (nothing for B to send again). B's events come from two publishers (its
    // daemon's usage, the agent's own report), which may reach A in either order: A then logs a
    // gap that the next message fills; a hole is a number A never gets
    const mine = B.journal(id).filter((e) => e.origin === evs.at(-1)!.origin);
    expect(mine.map((e) => e.seq)).toEqual(mine.map((_, i) => i + 1));
    expect(stages(mine)).toHaveLength(4);
    // A's daemon logs each event once it has journalled it: the last one's line may come a moment after the journal shows it
    for (const e of mine) expect(await waitFor(() => A.log().includes(`origin ${e.origin} seq ${e.seq} `), 10_000, 100), `seq ${e.seq}\n${A.log()}`).toBe(true);
    expect(B.log()).not.toContain(`gap in job ${id}`);
    expect(B.log()).not.toContain(`job ${id}: sent`);
    expect(JSON.parse(await A.ok(["job", "status", id, "--json"])).status).toBe("cancelled");
    expect((await A.mam(["job", "wait", id, "--timeout", "5"])).code).toBe(1);
    // the notice reached the model once, as its own message
    const last = apiB.turns("anthropic").at(-1)!;
    expect(last.userTexts.filter((u) => typedPart(u).startsWith(notice))).toHaveLength(1);
    await leadToldOnce(id, "cancelled", 6);
  }, 180_000);
});
