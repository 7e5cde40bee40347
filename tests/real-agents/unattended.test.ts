// The unattended team (issue 34, docs/unattended.md), short version, with the real CLIs: two real
// claudes and a real codex in one pool, twelve jobs to the role from a script with --failover,
// nobody at the keyboard; mid-run one claude goes over its 5-hour limit and the other is killed
// with -9 in the middle of a job (tests/helpers/unattended.ts runs it; `bun run bench --only
// unattended` runs the same longer). It ends with 12 completed, each once; no job typed twice
// into one agent; nothing typed into the limited claude after its limit; and the journals tell
// the story: `limited` and `failover` on the job the limit hit, `restarted` on the killed one's.
import { afterAll, expect, test } from "bun:test";
import { anchoredPids, makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { TMUX_BIN } from "../helpers/tmux.ts";
import { runUnattended, story, type UnattendedRun } from "../helpers/unattended.ts";

const JOBS = 12;

let sb: Sandbox | undefined;
let run: UnattendedRun | undefined;

afterAll(async () => {
  await run?.h.stop();
  await run?.api.stop();
  if (sb) {
    const root = sb.root;
    await waitFor(() => anchoredPids(root).length === 0, 10_000, 100);
    await sb.cleanup();
  }
}, 60_000);

test.skipIf(!TMUX_BIN)(
  "an unattended team: real claude ×2 and codex, 12 jobs to the role; one claude over its limit mid-run, the other killed once: 12 completed, none doubled, nothing typed into the limit",
  async () => {
    sb = makeSandbox("mam-un-");
    const r = (run = await runUnattended(sb.root, { jobs: JOBS }));
    const { h, api: a, jobs } = r;
    const s = story(r);
    const why = `${s.lines}\n${h.log()}\n--- c1\n${h.visible("c1")}\n--- c2\n${h.visible("c2")}\n--- x1\n${h.visible("x1")}`;
    // 12 completed, each once
    expect(r.waits, why).toEqual(Array(JOBS).fill(0));
    for (const j of jobs) expect(h.journal(j).filter((e) => e.event === "completed"), `${j}\n${why}`).toHaveLength(1);
    // the limit: on the job it hit, limited then failover then completed by another agent, each once
    expect(r.limited, why).toMatch(/^[0-9a-f]{8}$/);
    const lim = h.journal(r.limited).map((e) => e.event);
    for (const ev of ["limited", "failover", "completed"]) expect(lim.filter((e) => e === ev), `${r.limited}: ${lim}`).toHaveLength(1);
    expect(lim.indexOf("limited")).toBeLessThan(lim.indexOf("failover"));
    expect(h.journal(r.limited).find((e) => e.event === "completed")!.source).not.toBe("c1");
    // nothing reached the model from c1 after its limit but the one refused request
    expect(a.requests.filter((q) => q.headers["x-claude-code-session-id"] === r.c1 && q.status === 429 && q.turn?.main)).toHaveLength(1);
    // the kill: the job restarted once on c2's own conversation, and completed
    expect(h.journal(r.held).filter((e) => e.event === "restarted"), why).toHaveLength(1);
    // no job typed twice into one agent: in each conversation every job header is there once
    const conversations = new Map<string, string[]>();
    for (const q of a.requests) if (q.turn?.main) conversations.set(q.headers["x-claude-code-session-id"] ?? q.api, q.turn.userTexts);
    for (const [who, texts] of conversations) {
      for (const j of jobs) expect(texts.filter((u) => u.includes(`Job ${j} delegated`)).length, `${who}: ${j}`).toBeLessThanOrEqual(1);
    }
    // c2 and x1 took part (the pool spreads the work; c1 may have had none before its limit)
    expect(s.per.c2, why).toBeGreaterThan(0);
    expect(s.per.x1, why).toBeGreaterThan(0);
    console.log(`unattended: ${JOBS} completed (c1 ${s.per.c1 ?? 0}, c2 ${s.per.c2}, x1 ${s.per.x1}); job ${r.limited} limited on c1 → ${h.journal(r.limited).find((e) => e.event === "completed")!.source}; job ${r.held} restarted on c2`);
    expect(h.log()).toContain("limits: c1 is limited until");
    expect(h.log()).toContain("restart: c2 restarted (attempt 1/3 this hour)");
  },
  900_000,
);
