// The queue (docs/jobs.md#the-queue, issue 28) with the real Claude Code: a job for a claude that
// is in the middle of another one waits its turn (queued, position 1, nothing typed into the busy
// pane), and the workspace's daemon types it once the first job has ended and claude is back at
// its prompt, as its own message in the same conversation. Offline against the scripted model
// endpoint; no broker (the journals are the channel); the test presses no key.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { isJobText, jobWorker } from "../fakes/model-api/scripts.ts";
import { type ModelApi, type Reply, startModelApi, type Turn } from "../fakes/model-api/server.ts";
import { type RealAgentHost, realAgentHost, endRealAgentHost } from "../helpers/real-agents.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { TMUX_BIN } from "../helpers/tmux.ts";

const NO_BROKER = { MQTT_BROKER: "127.0.0.1", MQTT_PORT: "9" };

let sb: Sandbox;
let api: ModelApi;
let H: RealAgentHost;

/** a user message as the user typed it: claude adds its own <system-reminder> blocks to it */
const typedPart = (t: string) => t.replace(/<system-reminder>[\s\S]*?<\/system-reminder>\s*/g, "").trim();

/** claude does jobs as jobWorker does, but holds the `completed` of a "Take your time" job 8 s (working) */
function worker(): (t: Turn) => Reply {
  const w = jobWorker({ detail: "done: job finished" });
  return (t) => {
    const r = w(t);
    if (isJobText(t) && t.lastUserText.includes("Task: Take your time") && t.toolOutputs.length === 1) return { ...r, delayMs: 8000 };
    return r;
  };
}

const events = (id: string) => H.journal(id).map((e) => e.event);

describe.skipIf(!TMUX_BIN)("the queue with the real claude", () => {
  beforeAll(async () => {
    sb = makeSandbox("mam-rq-");
    api = startModelApi(worker());
    H = realAgentHost(sb.root, "hq", NO_BROKER, api);
    const c = JSON.parse(await H.ok(["create", "--agent", "claude", "--role", "worker", "--session", "w", "--mux", "tmux", "--tmux-server", H.tmux, "--json"]));
    expect(c).toMatchObject({ at_prompt: true, onboarding: "sent", warnings: [] });
    expect(await waitFor(() => api.turns("anthropic").length >= 1, 30_000, 100)).toBe(true);
  }, 180_000);

  afterAll(async () => {
    await endRealAgentHost(H, api, sb);
  }, 60_000);

  test("a job for a busy claude waits its turn and is typed at its prompt once the first job has ended", async () => {
    const first = (await H.ok(["job", "submit", "--to", "w", "--prompt", "Take your time"])).trim();
    // claude has begun the first job (its `started` ran) and is working on it
    expect(await waitFor(() => events(first).includes("started"), 60_000, 100), `${H.visible("w")}\n${H.log()}`).toBe(true);
    const s = await H.mam(["job", "submit", "--to", "w", "--prompt", "Second task", "--json"]);
    expect(s.code, s.stdout + s.stderr).toBe(0);
    const second: string = JSON.parse(s.stdout).job_id;
    expect(JSON.parse(await H.ok(["job", "status", second, "--json"]))).toMatchObject({ status: "queued", position: 1 });
    // nothing of the second job reaches claude while it works on the first
    await Bun.sleep(2000);
    expect(events(first)).not.toContain("completed");
    expect(H.visible("w")).not.toContain(`Job ${second} delegated`);
    expect(api.turns("anthropic").some((t) => t.userTexts.some((u) => u.includes(`Job ${second} delegated`)))).toBe(false);

    const waited = await H.mam(["job", "wait", first, second, "--timeout", "120"], {}, 150_000);
    expect(waited.code, `${waited.stdout}${waited.stderr}\n${H.visible("w")}\n${H.log()}`).toBe(0);
    expect(events(first)).toEqual(["started", "completed"]);
    expect(events(second)).toEqual(["queued", "dispatched", "started", "completed"]);
    // dispatched after the first job's end
    const firstEnd = H.journal(first).find((e) => e.event === "completed")!;
    const dispatched = H.journal(second).find((e) => e.event === "dispatched")!;
    expect(Date.parse(dispatched.timestamp)).toBeGreaterThanOrEqual(Date.parse(firstEnd.timestamp));
    // the model saw the second header as its own message, once, after the first job's last
    // command, in the same conversation
    const reqs = api.requests.filter((r) => r.turn?.main);
    const firstDone = reqs.findIndex((r) => r.reply?.shell?.includes(`job event ${first} completed`));
    const secondAt = reqs.findIndex((r) => r.turn!.lastUserText.includes(`Job ${second} delegated`));
    expect(firstDone).toBeGreaterThanOrEqual(0);
    expect(secondAt).toBeGreaterThan(firstDone);
    const header = reqs[secondAt]!.turn!;
    expect(typedPart(header.lastUserText)).toStartWith(`[mam] Job ${second} delegated to you (w)`);
    expect(header.userTexts.filter((u) => u.includes(`Job ${second} delegated`))).toHaveLength(1);
    expect(header.userTexts.some((u) => u.includes(`Job ${first} delegated`))).toBe(true);
    expect(H.visible("w")).not.toContain("Do you want to proceed?");
  }, 240_000);
});
