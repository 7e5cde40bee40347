// A pool whose agents are mostly at their usage limit (issue 34, docs/unattended.md#failover): three
// demo workers of one role, two of them limited (their rows' limit written as the daemon's
// detection writes it: tests/helpers/limit.ts). Ten jobs to the role, submitted one after the
// other: all ten complete on the third, in the order they were submitted, and the limited two are
// given none. Through the binary, a real tmux, the workspace's daemon; no broker.
import { afterAll, expect, test } from "bun:test";
import { limitAgent } from "../helpers/limit.ts";
import { anchoredPids, makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { type Host, makeHost } from "../helpers/team.ts";
import { TMUX_BIN } from "../helpers/tmux.ts";

const NO_BROKER = { MQTT_BROKER: "127.0.0.1", MQTT_PORT: "9" };
let sb: Sandbox | undefined;
let h: Host | undefined;

afterAll(async () => {
  await h?.stop();
  if (sb) {
    const root = sb.root;
    await waitFor(() => anchoredPids(root).length === 0, 10_000, 100);
    await sb.cleanup();
  }
}, 60_000);

test.skipIf(!TMUX_BIN)("a pool of three, two at their limit: ten jobs to the role all complete on the third, in the order submitted; the limited two get none", async () => {
  sb = makeSandbox("mam-pl-");
  h = makeHost(sb.root, "pl", NO_BROKER);
  for (const w of ["w1", "w2", "w3"]) await h.demo(w, "worker", ["--think-ms", "150"]);
  const later = new Date(Date.now() + 3600_000);
  await limitAgent(h.ws, "w1", later);
  await limitAgent(h.ws, "w2", null);
  const jobs: string[] = [];
  for (let i = 1; i <= 10; i++) jobs.push((await h.ok(["job", "submit", "--to-role", "worker", "--prompt", `part ${i}`])).trim());
  for (const j of jobs) {
    const w = await h.mam(["job", "wait", j, "--timeout", "60"]);
    expect(w.code, `${j}: ${w.stdout}${w.stderr}\n${h.log()}`).toBe(0);
  }
  const done = jobs.map((j) => h!.journal(j).find((e) => e.event === "completed")!);
  expect(done.map((e) => e.source)).toEqual(Array(10).fill("w3"));
  // in order: each job started after the one before it completed (one agent, one job at a time)
  for (let i = 1; i < jobs.length; i++) {
    const started = h.journal(jobs[i]!).find((e) => e.event === "started")!;
    expect(Date.parse(started.timestamp), `${jobs[i]} started before ${jobs[i - 1]} completed`).toBeGreaterThanOrEqual(Date.parse(done[i - 1]!.timestamp));
  }
  // the limited two were never given a job, and still are limited
  for (const j of jobs) expect(JSON.parse(await h.ok(["job", "status", j, "--json"])).agent_session).toBe("w3");
  const st = JSON.parse(await h.ok(["status", "--json"])).sessions;
  for (const w of ["w1", "w2"]) expect(st.find((s: { name: string }) => s.name === w).limit, w).toBeDefined();
}, 180_000);
