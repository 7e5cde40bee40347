// gemini's resume under load, as a user runs it (issue 39 #6a): `gemini --resume` draws its input
// box at once and only later (seconds on a busy machine) shows "Resuming session...", loads the
// conversation and takes input again. mam took that first box for its prompt: the next job's
// header was typed while gemini resumed and was lost (the job stayed pending, its header never on
// screen), or went to the chat the resume then replaced (the model never saw the earlier
// conversation). mam now waits for gemini's own record that it has loaded the conversation (its
// file grows) before a resume counts as at its prompt. Beside two CPU hogs, with the daemon on:
// stop → resume → a job, RUNS times; every job reaches the model with every earlier job in its
// request.
import { afterEach, expect, test } from "bun:test";
import { jobWorker } from "../fakes/model-api/scripts.ts";
import { geminiLeftovers, type RealAgentWorld, realAgentWorld } from "../helpers/real-agents.ts";
import { create, journal, row, untilIdle } from "../helpers/real-flow.ts";
import { waitFor } from "../helpers/sandbox.ts";

let w: RealAgentWorld | undefined;
let hogs: ReturnType<typeof Bun.spawn>[] = [];
afterEach(async () => {
  for (const h of hogs) h.kill();
  hogs = [];
  await w?.mam(["daemon", "stop"]);
  await w?.cleanup();
  w = undefined;
});

/** stop → resume → job cycles under load (MAM_RESUME_LOAD_RUNS: more to measure a rate) */
const RUNS = Number(process.env.MAM_RESUME_LOAD_RUNS ?? 3);

test(`real gemini beside two CPU hogs, the daemon on: ${RUNS} × stop → resume → a job; each job reaches the model with the earlier conversation`, async () => {
  // the daemon on, as for a user (the harness turns it off)
  w = await realAgentWorld({ script: jobWorker(), env: { MAM_NO_SUBSCRIBER_DAEMON: "0" } });
  const world = w;
  const name = "gres";
  const c = await create(world, "gemini", name);
  expect(c, c.stderr).toMatchObject({ at_prompt: true, onboarding: "sent" });
  const ids: string[] = [];
  /** submit a job once the agent is idle; where it went wrong, else "" */
  const job = async (prompt: string): Promise<string> => {
    await untilIdle(world, name, 120_000);
    const s = await world.mam(["job", "submit", "--to", name, "--prompt", prompt, "--json"]);
    if (s.code !== 0) return `submit failed: ${s.stderr}`;
    const id: string = JSON.parse(s.stdout).job_id;
    const done = await world.mam(["job", "wait", id, "--timeout", "120"], 150_000);
    if (done.code !== 0) return `job ${id} did not end: ${done.stdout}${done.stderr}\n${await world.screen(`=${name}:`)}`;
    const turn = world.api.turns("gemini").find((t) => t.lastUserText.includes(`Job ${id} delegated`));
    const missing = ids.filter((e) => !turn?.userTexts.some((u) => u.includes(`Job ${e} delegated`)));
    ids.push(id);
    return missing.length ? `job ${id} reached the model without the earlier job(s) ${missing.join(", ")}` : "";
  };
  expect(await job("say hello")).toBe("");
  const lost: string[] = [];
  hogs = [0, 1].map(() => Bun.spawn(["sh", "-c", "exec yes > /dev/null"]));
  for (let i = 0; i < RUNS; i++) {
    const stop = await world.mam(["stop", name]);
    expect(stop.code, stop.stdout + stop.stderr).toBe(0);
    expect(row(world, name)).toMatchObject({ status: "stopped", resumable: true });
    await waitFor(() => geminiLeftovers(world.sb.root).length === 0, 10_000, 100);
    const r = await world.mam(["resume", name, "--json"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const res = JSON.parse(r.stdout);
    expect(res, r.stderr).toMatchObject({ from: "own", at_prompt: true, warnings: [] });
    expect(res.daemon_pid).toBeNumber();
    const why = await job(`say hello, run ${i + 1}`);
    if (why) lost.push(`run ${i + 1}: ${why}`);
  }
  for (const h of hogs) h.kill();
  hogs = [];
  expect(lost).toEqual([]);
  expect(journal(world, ids.at(-1)!).map((e) => e.event)).toContain("completed");
  const end = await world.mam(["stop", name]);
  expect(end.code, end.stdout + end.stderr).toBe(0);
}, 900_000);
