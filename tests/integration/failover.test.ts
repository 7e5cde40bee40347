// Failover at a usage limit (docs/unattended.md#failover), through the binary: agents made with
// mam create on the fake herdr, the workspace's daemon (polling), fake agents that follow the job
// header (tests/helpers/jobs-e2e.ts job-agent). The limit is put on an agent's row as the daemon's
// detection would (tests/helpers/limit.ts); the limited agents here are passive (the test reports
// for them), so a job can only complete on the agent it failed over to.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createAgent, type E2E, ensureDaemon as ensureShared, journalEvents, monitorLog, newWorkspace, startE2E, typed, type Ws } from "../helpers/jobs-e2e.ts";
import { limitAgent } from "../helpers/limit.ts";
import { waitFor } from "../helpers/sandbox.ts";

let e: E2E;
beforeAll(async () => {
  e = await startE2E("mam-fo-");
});
afterAll(async () => {
  await e.cleanup();
});

const started: Ws[] = [];
afterEach(async () => {
  for (const w of started.splice(0)) await w.mam(["daemon", "stop"]);
});

async function submit(w: Ws, args: string[]): Promise<string> {
  const r = await w.mam(["job", "submit", ...args]);
  if (r.code !== 0 || !/^[0-9a-f]{8}\n$/.test(r.stdout)) throw new Error(`job submit: ${r.code} ${r.stdout}${r.stderr}`);
  return r.stdout.trim();
}

/** the agents named run nothing of what they are typed (the test reports for them) */
const passive = (w: Ws, names: string[]) => writeFileSync(join(w.dir, ".agent-env"), names.map((n) => `if [ "$MAM_SESSION" = '${n}' ]; then PASSIVE=1; fi\n`).join(""));

const eventsOf = (w: Ws, id: string, ev: string) => journalEvents(w.dir, id).filter((x) => x.event === ev) as unknown as { detail: string; source: string; data: Record<string, unknown> }[];

describe("failover at a usage limit", () => {
  test("a job on a limited agent with --failover moves to a free agent of that kind, once, with what was reported; it completes there; mam job wait sees it; a job without --failover stays", async () => {
    const w = newWorkspace(e);
    const [a, stay, b, other] = [w.n("a"), w.n("stay"), w.n("b"), w.n("other")];
    passive(w, [a, stay]);
    await ensureShared(w, "polling", started);
    const paneA = await createAgent(e, w, a, "worker", { agent: "claude" });
    const paneStay = await createAgent(e, w, stay, "worker", { agent: "claude" });
    const paneB = await createAgent(e, w, b, "helper", { agent: "codex" });
    const paneOther = await createAgent(e, w, other, "other", { agent: "gemini" });
    const moving = await submit(w, ["--to", a, "--failover", "nobody,codex", "--prompt", "write the report"]);
    const staying = await submit(w, ["--to", stay, "--prompt", "write the other report"]);
    expect(JSON.parse((await w.mam(["job", "status", moving, "--json"])).stdout).failover).toEqual(["nobody", "codex"]);
    for (const [id, who] of [[moving, a], [staying, stay]] as const) {
      expect((await w.mam(["job", "event", id, "started", "--source", who, "--detail", "reading the code"])).code).toBe(0);
      expect((await w.mam(["job", "event", id, "progress", "--source", who, "--detail", "step 1 of 2 done: the outline is in report.md"])).code).toBe(0);
    }
    // what was typed so far (a submit's Enter may land a moment after it returns: texts only)
    const before = { a: await typed(e.herdr, paneA), stay: await typed(e.herdr, paneStay), other: await typed(e.herdr, paneOther) };
    // the job without --failover's agent first: by the time the other job moves, the daemon has seen both
    await limitAgent(w.dir, stay, null);
    await limitAgent(w.dir, a, new Date(Date.now() + 3600_000));
    const done = await w.mam(["job", "wait", moving, "--timeout", "60"]);
    expect(done.code, `${done.stdout}${done.stderr}\n${monitorLog(w.dir)}`).toBe(0);
    expect(JSON.parse((await w.mam(["job", "status", moving, "--json"])).stdout)).toMatchObject({ status: "completed", agent_session: b, agent: "codex" });
    const fo = eventsOf(w, moving, "failover");
    expect(fo).toHaveLength(1);
    expect(fo[0]!.source).toBe("mam");
    expect(fo[0]!.data).toMatchObject({ from: a, to: b, reason: "You've hit your 5-hour limit" });
    expect(fo[0]!.detail).toContain(`${a} is limited until `);
    expect(eventsOf(w, moving, "completed")[0]!.source).toBe(b);
    // B got the job with what A reported; A and the agent of no target got nothing more
    const toB = await typed(e.herdr, paneB);
    expect(toB).toContain(`[mam] Job ${moving} comes to you (${b}) from ${a}, which reached a usage limit`);
    expect(toB).toContain(`${a} (progress): step 1 of 2 done: the outline is in report.md`);
    expect(toB).toContain(`--source ${b}`);
    expect(await typed(e.herdr, paneA)).toBe(before.a);
    expect(await typed(e.herdr, paneOther)).toBe(before.other);
    // the job without --failover stayed where it was, untouched
    expect(JSON.parse((await w.mam(["job", "status", staying, "--json"])).stdout)).toMatchObject({ status: "running", agent_session: stay });
    expect(eventsOf(w, staying, "failover")).toHaveLength(0);
    expect(eventsOf(w, staying, "failover_waiting")).toHaveLength(0);
    expect(await typed(e.herdr, paneStay)).toBe(before.stay);
    expect(toB).not.toContain(staying);
  }, 120_000);

  test("no free target: failover_waiting once, and the job moves when one frees up", async () => {
    const w = newWorkspace(e);
    const [a, later] = [w.n("a"), w.n("later")];
    passive(w, [a]);
    await ensureShared(w, "polling", started);
    const paneA = await createAgent(e, w, a, "worker", { agent: "claude" });
    const id = await submit(w, ["--to", a, "--failover", "spare", "--prompt", "write the report"]);
    const before = await typed(e.herdr, paneA);
    await limitAgent(w.dir, a, null, "API Error: Request rejected (429)");
    expect(await waitFor(() => eventsOf(w, id, "failover_waiting").length > 0, 20_000, 100), monitorLog(w.dir)).toBe(true);
    expect(eventsOf(w, id, "failover_waiting")[0]!.detail).toContain("no agent of spare is free");
    // a target appears (a free agent of the role): the job goes to it
    const paneLater = await createAgent(e, w, later, "spare", { agent: "codex" });
    const done = await w.mam(["job", "wait", id, "--timeout", "60"]);
    expect(done.code, `${done.stdout}${done.stderr}\n${monitorLog(w.dir)}`).toBe(0);
    expect(eventsOf(w, id, "failover_waiting")).toHaveLength(1);
    expect(eventsOf(w, id, "failover").map((x) => x.data)).toEqual([expect.objectContaining({ from: a, to: later })]);
    expect(await typed(e.herdr, paneLater)).toContain(`${a} reported no progress on it.`);
    expect(await typed(e.herdr, paneA)).toBe(before);
  }, 120_000);
});
