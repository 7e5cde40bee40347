// The unattended team with the real CLIs (issue 34, docs/unattended.md), as one run the test
// (tests/real-agents/unattended.test.ts) and the soak (bench/unattended.ts) share: two real
// claudes and a real codex in one pool (role worker), `jobs` jobs submitted one after the other to
// the role with --failover worker, and nobody at the keyboard. Mid-run (once a third of the jobs
// are done) the scripted endpoint puts claude c1 over its 5-hour limit (only c1: the endpoint tells
// the claudes apart by Claude Code's session header); c2, made with --restart on-failure, is
// killed with -9 in the middle of its first job's last step. Offline; no broker.
import { eventLine, resumingWorker } from "../fakes/model-api/scripts.ts";
import { type ModelApi, type Reply, startModelApi, type Turn } from "../fakes/model-api/server.ts";
import { type RealAgentHost, realAgentHost } from "./real-agents.ts";
import { TMUX_BIN } from "./tmux.ts";

const NO_BROKER = { MQTT_BROKER: "127.0.0.1", MQTT_PORT: "9" };
/** how long the endpoint holds c2's request before the kill (longer than any wait for it) */
const HOLD_MS = 120_000;

export interface UnattendedOptions {
  jobs: number;
  /** the endpoint answers each step of a job this late (an agent that works a while) */
  stepDelayMs?: number;
  /** bound for each job's wait, seconds */
  waitS?: number;
}

export interface UnattendedRun {
  h: RealAgentHost;
  api: ModelApi;
  jobs: string[];
  /** job ids: the one c1's limit hit, the one c2 was killed in */
  limited: string;
  held: string;
  c1: string;
  /** each job's `job wait` exit status, in order */
  waits: number[];
  /** ms from the run's first submit: c1 limited (the refusal), c2 killed, the last job done */
  limitAt: number;
  killAt: number;
  wallMs: number;
  /** ms each job took from its submit to its `completed`, as `job wait` saw it */
  jobMs: number[];
}

/** the pids of a process and its descendants */
export function processTree(pid: number): number[] {
  const kids = Bun.spawnSync(["ps", "-o", "pid=", "--ppid", String(pid)]).stdout.toString().split(/\s+/).filter(Boolean).map(Number);
  return [pid, ...kids.flatMap(processTree)];
}

const jobOf = (text: string) => / job event ([0-9a-f]{8}) /.exec(eventLine(text, "completed") ?? eventLine(text, "started") ?? "")?.[1];

/** the run (in `root`); the caller stops run.h and run.api */
export async function runUnattended(root: string, o: UnattendedOptions): Promise<UnattendedRun> {
  const s = { limited: "", held: "", completedSteps: 0, c1: "", c2: "", limitAt: 0, t0: 0 };
  const delayMs = o.stepDelayMs ?? 0;
  const worker = resumingWorker({
    onStep: (step, t) => {
      // mid-run, c1 at the second step of a job: its account is over its limit from then on
      if (s.limited === "" && s.c1 !== "" && t.claudeSession === s.c1 && step === 1 && s.completedSteps >= Math.max(3, Math.floor(o.jobs / 3))) {
        s.limited = jobOf(t.userTexts.findLast((u) => jobOf(u) !== undefined) ?? "") ?? "?";
        s.limitAt = performance.now() - s.t0;
        api.refuse({ shape: "subscription", resetsAt: Math.floor(Date.now() / 60_000) * 60 + 2 * 3600, claim: "five_hour" }, (k) => k.headers["x-claude-code-session-id"] === s.c1);
      }
    },
  });
  const api = startModelApi((t: Turn): Reply => {
    const r = worker(t);
    if (r.shell?.includes(" completed ")) {
      // c2's first `completed` is held: claude thinks, and is killed then
      if (s.held === "" && s.c2 !== "" && t.claudeSession === s.c2) {
        s.held = jobOf(r.shell) ?? "?";
        return { ...r, delayMs: HOLD_MS };
      }
      s.completedSteps++;
    }
    return r.shell !== undefined && delayMs > 0 ? { ...r, delayMs } : r;
  });
  const h = realAgentHost(root, "hu", NO_BROKER, api, { subscriber: true });
  const made: Record<string, { session_id: string }> = {};
  for (const [agent, name, extra] of [
    ["claude", "c1", []],
    ["claude", "c2", ["--restart", "on-failure"]],
    ["codex", "x1", []],
  ] as const) {
    const r = await h.mam(["create", "--agent", agent, "--role", "worker", "--session", name, "--mux", "tmux", "--tmux-server", h.tmux, "--no-onboard", ...extra, "--json"], { MAM_PROMPT_WAIT_S: "90" }, 120_000);
    if (r.code !== 0) throw new Error(`create ${name}: ${r.stdout}${r.stderr}`);
    made[name] = JSON.parse(r.stdout);
  }
  s.c1 = made.c1!.session_id;
  s.c2 = made.c2!.session_id;

  // the jobs, from a script, one after the other, to whichever worker is free
  s.t0 = performance.now();
  const jobs: string[] = [];
  const submitted: number[] = [];
  for (let i = 1; i <= o.jobs; i++) {
    submitted.push(performance.now());
    jobs.push((await h.ok(["job", "submit", "--to-role", "worker", "--failover", "worker", "--prompt", `Task ${i}: do it in two steps`])).trim());
  }

  // c2 thinks over its first job's `completed`: kill it and all it started; the daemon brings it back
  const deadline = Date.now() + 300_000;
  while (!(s.held !== "" && api.requests.some((q) => q.headers["x-claude-code-session-id"] === s.c2 && q.reply?.delayMs === HOLD_MS))) {
    if (Date.now() > deadline) throw new Error(`c2 was never given a job to be killed in\n${h.log()}`);
    await Bun.sleep(100);
  }
  const killAt = performance.now() - s.t0;
  const panePid = Number(Bun.spawnSync([TMUX_BIN!, "-L", h.tmux, "list-panes", "-t", "=c2:", "-F", "#{pane_pid}"], { env: h.env }).stdout.toString().trim());
  if (!(panePid > 0)) throw new Error("no pane pid for c2");
  for (const p of processTree(panePid).reverse()) {
    try {
      process.kill(p, "SIGKILL");
    } catch {}
  }

  // every job's end, as the script's user would wait for it
  const waits: number[] = [];
  const jobMs: number[] = [];
  for (const [i, j] of jobs.entries()) {
    const w = await h.mam(["job", "wait", j, "--timeout", String(o.waitS ?? 300)], {}, (o.waitS ?? 300) * 1000 + 20_000);
    waits.push(w.code);
    jobMs.push(performance.now() - submitted[i]!);
  }
  return { h, api, jobs, limited: s.limited, held: s.held, c1: s.c1, waits, limitAt: s.limitAt, killAt, wallMs: performance.now() - s.t0, jobMs };
}

/** what each job's journal says, and who completed it: for messages and the bench */
export function story(r: UnattendedRun): { per: Record<string, number>; lines: string } {
  const per: Record<string, number> = {};
  for (const j of r.jobs) {
    const by = r.h.journal(j).find((e) => e.event === "completed")?.source ?? "none";
    per[by] = (per[by] ?? 0) + 1;
  }
  const lines = r.jobs.map((j) => `${j}: ${r.h.journal(j).map((e) => `${e.event}(${e.source})`).join(" ")}`).join("\n");
  return { per, lines };
}
