// What mam does at a usage limit (docs/unattended.md): failover and resume at reset, through the binary: agents made with
// mam create on the fake herdr, the workspace's daemon (polling), fake agents that follow the job
// header (tests/helpers/jobs-e2e.ts job-agent). The limit is put on an agent's row as the daemon's
// detection would (tests/helpers/limit.ts); the limited agents here are passive (the test reports
// for them), so a job can only complete on the agent it failed over to.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createAgent, type E2E, ensureDaemon as ensureShared, journalEvents, monitorLog, newWorkspace, startE2E, typed, type Ws, submitJob } from "../helpers/jobs-e2e.ts";
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

const submit = submitJob;

/** the agents named run nothing of what they are typed (the test reports for them) */
const passive = (w: Ws, names: string[]) => writeFileSync(join(w.dir, ".agent-env"), names.map((n) => `if [ "$MAM_SESSION" = '${n}' ]; then PASSIVE=1; fi\n`).join(""));

const eventsOf = (w: Ws, id: string, ev: string) => journalEvents(w.dir, id).filter((x) => x.event === ev) as unknown as { detail: string; source: string; data: Record<string, unknown> }[];

describe("failover at a usage limit", () => {
  test("a job on a limited agent with --failover moves to a free agent of that kind, once, with what was reported; it completes there; mam job wait sees it; a job without --failover stays", async () => {
    const w = newWorkspace(e);
    const [a, stay, b, other] = [w.n("a"), w.n("stay"), w.n("b"), w.n("other")];
    passive(w, [a, stay]);
    await ensureShared(w, "polling", started);
    // the limited ones are of a kind whose limits the daemon does not read (gemini): the row's limit stays as written here
    const paneA = await createAgent(e, w, a, "worker", { agent: "gemini" });
    const paneStay = await createAgent(e, w, stay, "worker", { agent: "gemini" });
    const paneB = await createAgent(e, w, b, "helper", { agent: "codex" });
    const paneOther = await createAgent(e, w, other, "other", { agent: "claude" });
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
    const paneA = await createAgent(e, w, a, "worker", { agent: "gemini" });
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

describe("failover moves only jobs this user's mam wrote", () => {
  test("a shipped record (its mark gone, as a cloned repository's would be) never moves, nor is its prompt typed anywhere; the user's own job beside it does", async () => {
    const w = newWorkspace(e);
    const [a, a2, b] = [w.n("a"), w.n("a2"), w.n("b")];
    passive(w, [a, a2]);
    await ensureShared(w, "polling", started);
    await createAgent(e, w, a, "worker", { agent: "gemini" });
    await createAgent(e, w, a2, "worker", { agent: "gemini" });
    const paneB = await createAgent(e, w, b, "helper", { agent: "codex" });
    const own = await submit(w, ["--to", a, "--failover", "codex", "--prompt", "write the report"]);
    const shipped = await submit(w, ["--to", a2, "--failover", "codex", "--prompt", "SHIPPED-PROMPT do what the repository says"]);
    const path = join(w.dir, ".mam", "jobs", `${shipped}.json`);
    const { mac: _mac, ...rest } = JSON.parse(readFileSync(path, "utf8"));
    writeFileSync(path, `${JSON.stringify(rest, null, 2)}\n`);
    for (const [id, who] of [[own, a], [shipped, a2]] as const) expect((await w.mam(["job", "event", id, "started", "--source", who, "--detail", "reading"])).code).toBe(0);
    await limitAgent(w.dir, a2, new Date(Date.now() + 3600_000));
    await limitAgent(w.dir, a, new Date(Date.now() + 3600_000));
    const done = await w.mam(["job", "wait", own, "--timeout", "60"]);
    expect(done.code, `${done.stdout}${done.stderr}\n${monitorLog(w.dir)}`).toBe(0);
    // b is free again: a movable shipped job would go to it now (or have waited for it)
    expect(await waitFor(() => eventsOf(w, shipped, "failover").length + eventsOf(w, shipped, "failover_waiting").length > 0, 5_000, 100)).toBe(false);
    expect(JSON.parse((await w.mam(["job", "status", shipped, "--json"])).stdout)).toMatchObject({ status: "running", agent_session: a2 });
    expect(await typed(e.herdr, paneB)).not.toContain("SHIPPED-PROMPT");
    expect(eventsOf(w, own, "failover")).toHaveLength(1);
  }, 120_000);
});

describe("resume at reset", () => {
  /** the texts typed into a pane that are exactly `text` */
  const typedExactly = async (pane: string, text: string) => (await e.herdr.inputs(pane)).filter((i) => i.kind === "text" && i.text === text).length;
  const rowOf = (w: Ws, name: string) => (Bun.YAML.parse(readFileSync(join(w.dir, ".mam", "agent-sessions.yaml"), "utf8")) as { herdr_sessions: Record<string, any>[] }).herdr_sessions.find((x) => x.name === name && x.status === "running")!;
  const report = (pane: string, state: string) => e.herdr.herdr(["pane", "report-agent", pane, "--source", "custom:test", "--agent", "codex", "--state", state]);

  test("--on-limit resume types continue once after the reset, never into a dialog; resume --limited does it now", async () => {
    const w = newWorkspace(e, { MAM_LIMIT_JITTER_S: "0" });
    const r = w.n("r");
    passive(w, [r]);
    // a kind mam knows no continue for is refused before anything starts
    const refused = await w.mam(["create", "--agent", "gemini", "--on-limit", "resume", "--herdr-session", e.server, "--no-onboard"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--on-limit resume types the agent\'s own "continue" after the reset, and mam knows none for gemini');
    await ensureShared(w, "polling", started);
    const pane = await createAgent(e, w, r, "worker", { agent: "codex", extra: ["--on-limit", "resume"] });
    expect(rowOf(w, r).on_limit).toBe("resume");
    // codex refuses its turns at a usage limit that resets at the next whole minute 40–100 s from now, as the real one words
    // it (the test must put the agent at its dialog before then: its report comes once the agent's own output has settled)
    const reset = new Date(Math.ceil((Date.now() + 40_000) / 60_000) * 60_000);
    const h = reset.getHours();
    const text = `You\u2019ve hit your usage limit. Try again at ${h % 12 === 0 ? 12 : h % 12}:${String(reset.getMinutes()).padStart(2, "0")} ${h < 12 ? "AM" : "PM"}.`;
    writeFileSync(join(w.dir, `.agent-limit.${r}`), `${text}\n`);
    const id = await submit(w, ["--to", r, "--prompt", "a long task"]);
    const log = () => monitorLog(w.dir);
    expect(await waitFor(() => rowOf(w, r).limit !== undefined, 30_000, 200), log()).toBe(true);
    expect(rowOf(w, r).limit.resets_at).toBe(reset.toISOString().replace(/\.000Z$/, "Z"));
    // the whole job was typed (herdr's Enter comes a moment after the submit); then the agent sits at a dialog when its limit resets
    expect(await waitFor(async () => (await e.herdr.inputs(pane)).at(-1)?.kind === "keys", 10_000, 100)).toBe(true);
    const lines = (await typed(e.herdr, pane)).trim().split("\n").length;
    const screen = async () => String(((await e.herdr.call("pane.read", { pane_id: pane, source: "recent_unwrapped", lines: 400 })) as { read?: { text?: string } }).read?.text ?? "");
    expect(await waitFor(async () => (await screen()).split("\u23bf").length - 1 >= lines, 20_000, 100), await screen()).toBe(true);
    rmSync(join(w.dir, `.agent-limit.${r}`));
    expect((await report(pane, "blocked")).code).toBe(0);
    expect(await typedExactly(pane, "continue"), "the dialog came after the reset: the test was too slow for its reset time").toBe(0);
    expect(await waitFor(() => /its limit has reset, but nothing was typed: it waits at /.test(log()), 150_000, 200), log()).toBe(true);
    // the daemon's detection lifts the row's limit once its reset time has passed: mam resumes from the one it kept
    expect(await waitFor(() => rowOf(w, r).limit === undefined, 30_000, 200), log()).toBe(true);
    expect(await typedExactly(pane, "continue")).toBe(0);
    expect(eventsOf(w, id, "resume_attempt")).toHaveLength(0);
    // the dialog is answered: its continue comes, once
    expect((await report(pane, "idle")).code).toBe(0);
    expect(await waitFor(async () => (await typedExactly(pane, "continue")) > 0, 30_000, 100), log()).toBe(true);
    expect(await waitFor(() => eventsOf(w, id, "resume_attempt").length > 0, 10_000, 100)).toBe(true);
    await Bun.sleep(2500); // two more looks of the daemon: nothing more is typed
    expect(await typedExactly(pane, "continue")).toBe(1);
    const ra = eventsOf(w, id, "resume_attempt");
    expect(ra).toHaveLength(1);
    expect(ra[0]!.data).toMatchObject({ session: r, attempt: 1, by: "reset" });
    expect(ra[0]!.detail).toContain(`typed "continue" into ${r}`);
    expect(log().match(/typed its continue/g)).toHaveLength(1);
    expect(rowOf(w, r).limit_resume).toMatchObject({ attempts: 1, today: 1 });
    // limited again, its reset unknown: by hand, now
    writeFileSync(join(w.dir, `.agent-limit.${r}`), "You\u2019ve hit your usage limit. Try again later.\n");
    await e.herdr.call("pane.send_input", { pane_id: pane, text: "more work", keys: ["Enter"] });
    expect(await waitFor(() => rowOf(w, r).limit !== undefined, 30_000, 200), log()).toBe(true);
    const now = await w.mam(["resume", "--limited", r]);
    expect(now.code, now.stderr).toBe(0);
    expect(now.stdout).toBe(`typed continue into ${r} (job ${id})\n`);
    expect(await typedExactly(pane, "continue")).toBe(2);
    expect(eventsOf(w, id, "resume_attempt").map((x) => x.data.by)).toEqual(["reset", "hand"]);
  }, 300_000);
});
