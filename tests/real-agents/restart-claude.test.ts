// Dead agents come back (docs/unattended.md#dead-agents, issue 34 item 4) with the real Claude Code:
// a claude made with --restart on-failure is killed with -9 in the middle of its job; the
// workspace's daemon resumes the same conversation (claude --resume <its id>), journals `restarted`
// once, does not type the job again, and tells claude once to continue it. Offline against the scripted model endpoint; no broker.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { isJobText, jobWorker } from "../fakes/model-api/scripts.ts";
import { type ModelApi, type Reply, startModelApi, type Turn } from "../fakes/model-api/server.ts";
import { type RealAgentHost, realAgentHost, endRealAgentHost } from "../helpers/real-agents.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { TMUX_BIN } from "../helpers/tmux.ts";
import { processTree } from "../helpers/unattended.ts";

const NO_BROKER = { MQTT_BROKER: "127.0.0.1", MQTT_PORT: "9" };

let sb: Sandbox;
let api: ModelApi;
let H: RealAgentHost;

/** claude runs the job's `started`, then thinks for two minutes before its `completed`: it is killed then */
function worker(): (t: Turn) => Reply {
  const w = jobWorker({ detail: "done" });
  return (t) => {
    const r = w(t);
    return isJobText(t) && t.toolOutputs.length === 1 ? { ...r, delayMs: 120_000 } : r;
  };
}

describe.skipIf(!TMUX_BIN)("a dead claude comes back", () => {
  beforeAll(async () => {
    sb = makeSandbox("mam-rr-");
    api = startModelApi(worker());
    H = realAgentHost(sb.root, "hr", NO_BROKER, api);
  }, 60_000);

  afterAll(async () => {
    await endRealAgentHost(H, api, sb);
  }, 60_000);

  test("killed with -9 mid-job: the daemon resumes the same conversation, restarted once, the job not typed again, told to continue it", async () => {
    const c = JSON.parse(await H.ok(["create", "--agent", "claude", "--role", "worker", "--session", "w", "--mux", "tmux", "--tmux-server", H.tmux, "--no-onboard", "--restart", "on-failure", "--json"]));
    expect(c).toMatchObject({ at_prompt: true, warnings: [] });
    const sid: string = c.session_id;
    const id = (await H.ok(["job", "submit", "--to", "w", "--prompt", "Count the files"])).trim();
    expect(await waitFor(() => H.journal(id).some((e) => e.event === "started"), 90_000, 100), `${H.visible("w")}\n${H.log()}`).toBe(true);
    // claude's request after its `started` (the one the endpoint holds) is in before the kill: the
    // turns counted from here on are the resumed claude's only
    expect(await waitFor(() => api.turns("anthropic").some((t) => isJobText(t) && t.toolOutputs.length === 1), 30_000, 50)).toBe(true);
    const turnsBefore = api.turns("anthropic").length;
    // claude thinks (its request is held): kill it and everything it started
    const panePid = Number(Bun.spawnSync([TMUX_BIN!, "-L", H.tmux, "list-panes", "-t", "=w:", "-F", "#{pane_pid}"], { env: H.env }).stdout.toString().trim());
    expect(panePid).toBeGreaterThan(0);
    for (const p of processTree(panePid).reverse()) {
      try {
        process.kill(p, "SIGKILL");
      } catch {}
    }
    // the daemon sees the session gone and resumes claude's own conversation
    expect(await waitFor(() => H.journal(id).some((e) => e.event === "restarted"), 90_000, 200), H.log()).toBe(true);
    const st = JSON.parse(await H.ok(["status", "--json"])).sessions.find((s: { name: string }) => s.name === "w");
    expect(st).toMatchObject({ status: "running", restart: "restarting (1/3 this hour)" });
    const reg = await Bun.file(`${H.ws}/.mam/agent-sessions.yaml`).text();
    expect(reg).toContain(`claude --resume ${sid}`);
    const restarted = H.journal(id).filter((e) => e.event === "restarted");
    expect(restarted).toHaveLength(1);
    expect(restarted[0]!.detail).toContain(`its conversation ${sid} resumed`);
    // claude shows the conversation it resumed: the job it had; the job was not typed again
    const screen = await (async () => {
      let s = "";
      await waitFor(() => (s = H.visible("w")).includes("Count the files"), 30_000, 200);
      return s;
    })();
    expect(screen).toContain("Count the files");
    // the job is not typed again: the resumed claude gets one notice to continue it, and no new
    // turn reaches the model carrying the job's header
    const told = () => api.turns("anthropic").slice(turnsBefore).filter((t) => t.lastUserText.includes(`Continue job ${id} where you stopped`));
    expect(await waitFor(() => told().length > 0, 60_000, 200), H.log()).toBe(true);
    const after = api.turns("anthropic").slice(turnsBefore);
    expect(after.filter((t) => t.lastUserText.includes(`Job ${id} delegated`))).toHaveLength(0);
    // the daemon logs the notice once it has seen it typed: after the model may already have it
    expect(await waitFor(() => H.log().includes(`restart: w: told to continue ${id}`), 30_000, 200), H.log()).toBe(true);
    expect(H.log()).toContain("restart: w restarted (attempt 1/3 this hour)");
  }, 300_000);
});
