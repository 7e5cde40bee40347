// The unattended team (issue 34, docs/unattended.md), short version, with the real CLIs: two real
// claudes and a real codex in one pool (role worker), twelve jobs submitted one after the other
// to the role with --failover worker, and nobody at the keyboard. Mid-run the scripted endpoint
// puts one claude over its 5-hour limit (only that claude: the endpoint tells them apart by
// Claude Code's session header), and the other claude is killed with -9 in the middle of a job (it
// was made with --restart on-failure). The run ends with 12 completed, each once; no job typed
// twice into one agent; nothing typed into the limited claude after its limit; and the journals
// tell the story: `limited` and `failover` on the job the limit hit, `restarted` on the job of the
// killed claude. Offline against the scripted model endpoint; no broker (the journals are the channel).
import { afterAll, expect, test } from "bun:test";
import { eventLine, resumingWorker } from "../fakes/model-api/scripts.ts";
import { type ModelApi, type Reply, startModelApi, type Turn } from "../fakes/model-api/server.ts";
import { type RealAgentHost, realAgentHost } from "../helpers/real-agents.ts";
import { anchoredPids, makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { TMUX_BIN } from "../helpers/tmux.ts";

const NO_BROKER = { MQTT_BROKER: "127.0.0.1", MQTT_PORT: "9" };
const JOBS = 12;

let sb: Sandbox | undefined;
let api: ModelApi | undefined;
let H: RealAgentHost | undefined;

afterAll(async () => {
  await H?.stop();
  await api?.stop();
  if (sb) {
    const root = sb.root;
    await waitFor(() => anchoredPids(root).length === 0, 10_000, 100);
    await sb.cleanup();
  }
}, 60_000);

/** the pids of a process and its descendants */
function tree(pid: number): number[] {
  const kids = Bun.spawnSync(["ps", "-o", "pid=", "--ppid", String(pid)]).stdout.toString().split(/\s+/).filter(Boolean).map(Number);
  return [pid, ...kids.flatMap(tree)];
}

const jobOf = (text: string) => / job event ([0-9a-f]{8}) /.exec(eventLine(text, "completed") ?? eventLine(text, "started") ?? "")?.[1];

test.skipIf(!TMUX_BIN)(
  "an unattended team: real claude ×2 and codex, 12 jobs to the role; one claude over its limit mid-run, the other killed once: 12 completed, none doubled, nothing typed into the limit",
  async () => {
    sb = makeSandbox("mam-un-");
    const world = sb;
    /** the run as the endpoint sees it */
    const run = { limited: "", held: "", completedSteps: 0, c1: "", c2: "" };
    const worker = resumingWorker({
      onStep: (step, t) => {
        // mid-run (three jobs done), c1 at the second step of a job: its account is over its limit from now on
        if (run.limited === "" && run.c1 !== "" && t.claudeSession === run.c1 && step === 1 && run.completedSteps >= 3) {
          run.limited = jobOf(t.userTexts.findLast((u) => jobOf(u) !== undefined) ?? "") ?? "?";
          a.refuse({ shape: "subscription", resetsAt: Math.floor(Date.now() / 60_000) * 60 + 2 * 3600, claim: "five_hour" }, (k) => k.headers["x-claude-code-session-id"] === run.c1);
        }
      },
    });
    const a = (api = startModelApi((t: Turn): Reply => {
      const r = worker(t);
      if (r.shell?.includes(" completed ")) {
        // c2's first `completed` is held: claude thinks, and is killed then
        if (run.held === "" && run.c2 !== "" && t.claudeSession === run.c2) {
          run.held = jobOf(r.shell) ?? "?";
          return { ...r, delayMs: 120_000 };
        }
        run.completedSteps++;
      }
      return r;
    }));
    const h = (H = realAgentHost(world.root, "hu", NO_BROKER, a, { subscriber: true }));
    const made: Record<string, any> = {};
    for (const [agent, name, extra] of [
      ["claude", "c1", []],
      ["claude", "c2", ["--restart", "on-failure"]],
      ["codex", "x1", []],
    ] as const) {
      const r = await h.mam(["create", "--agent", agent, "--role", "worker", "--session", name, "--mux", "tmux", "--tmux-server", h.tmux, "--no-onboard", ...extra, "--json"], { MAM_PROMPT_WAIT_S: "90" }, 120_000);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      made[name] = JSON.parse(r.stdout);
      expect(made[name]).toMatchObject({ at_prompt: true });
    }
    run.c1 = made.c1.session_id;
    run.c2 = made.c2.session_id;
    expect(run.c1).toMatch(/^[0-9a-f-]{36}$/);

    // twelve jobs from a script, one after the other, to whichever worker is free
    const jobs: string[] = [];
    for (let i = 1; i <= JOBS; i++) jobs.push((await h.ok(["job", "submit", "--to-role", "worker", "--failover", "worker", "--prompt", `Task ${i}: do it in two steps`])).trim());

    // c2 thinks over its first job's `completed`: kill it and all it started; the daemon brings it back
    expect(await waitFor(() => run.held !== "" && a.requests.some((q) => q.headers["x-claude-code-session-id"] === run.c2 && q.reply?.delayMs === 120_000), 180_000, 100), h.log()).toBe(true);
    const panePid = Number(Bun.spawnSync([TMUX_BIN!, "-L", h.tmux, "list-panes", "-t", "=c2:", "-F", "#{pane_pid}"], { env: h.env }).stdout.toString().trim());
    expect(panePid).toBeGreaterThan(0);
    for (const p of tree(panePid).reverse()) {
      try {
        process.kill(p, "SIGKILL");
      } catch {}
    }

    const why = () => `${jobs.map((j) => `${j}: ${h.journal(j).map((e) => `${e.event}(${e.source})`).join(" ")}`).join("\n")}\n${h.log()}\n--- c1\n${h.visible("c1")}\n--- c2\n${h.visible("c2")}\n--- x1\n${h.visible("x1")}`;
    for (const j of jobs) {
      const w = await h.mam(["job", "wait", j, "--timeout", "300"], {}, 320_000);
      expect(w.code, `${j}: ${w.stdout}${w.stderr}\n${why()}`).toBe(0);
    }

    // 12 completed, each once
    for (const j of jobs) expect(h.journal(j).filter((e) => e.event === "completed"), `${j}\n${why()}`).toHaveLength(1);
    // the limit: on the job it hit, limited then failover then completed by another agent, each once
    expect(run.limited, why()).toMatch(/^[0-9a-f]{8}$/);
    const lim = h.journal(run.limited).map((e) => e.event);
    for (const ev of ["limited", "failover", "completed"]) expect(lim.filter((e) => e === ev), `${run.limited}: ${lim}`).toHaveLength(1);
    expect(lim.indexOf("limited")).toBeLessThan(lim.indexOf("failover"));
    expect(h.journal(run.limited).find((e) => e.event === "completed")!.source).not.toBe("c1");
    // nothing reached the model from c1 after its limit but the one refused request
    expect(a.requests.filter((q) => q.headers["x-claude-code-session-id"] === run.c1 && q.status === 429 && q.turn?.main)).toHaveLength(1);
    // the kill: the held job restarted once on c2's own conversation, and completed
    expect(h.journal(run.held).filter((e) => e.event === "restarted"), why()).toHaveLength(1);
    // no job typed twice into one agent: in each conversation every job header is there once
    const conversations = new Map<string, string[]>();
    for (const q of a.requests) if (q.turn?.main) conversations.set(q.headers["x-claude-code-session-id"] ?? q.api, q.turn.userTexts);
    for (const [who, texts] of conversations) {
      for (const j of jobs) expect(texts.filter((u) => u.includes(`Job ${j} delegated`)).length, `${who}: ${j}`).toBeLessThanOrEqual(1);
    }
    // all three took part (the pool spreads the work), and the story is in the daemon's log
    const by = new Set(jobs.map((j) => h.journal(j).find((e) => e.event === "completed")!.source));
    expect([...by].sort(), why()).toEqual(["c2", "x1", ...(by.has("c1") ? ["c1"] : [])].sort());
    expect(h.log()).toContain("limits: c1 is limited until");
    expect(h.log()).toContain("restart: c2 restarted (attempt 1/3 this hour)");
  },
  900_000,
);
