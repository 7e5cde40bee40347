// Issue 26 with the real CLIs (npm run test:agents): the real claude at its Bash permission dialog
// and the real codex at its approval prompt, each given a job by mam (scripted model endpoint):
//   * mam approve JOB → the agent's own key for the one-time yes: the command runs, the job completes;
//   * mam approve JOB --deny → the agent's no; the agent, which then waits for the user, is told,
//     and ends the job as it reports (here: error, "the user said no");
//   * the dialog changed (the user answered in the pane, the agent asked something else): an
//     approve of the first question is refused and nothing is pressed; the second is answered by
//     its own fingerprint.
// The test presses no key but the one the user presses in the pane in the third case.
import { afterEach, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { eventLine, isJobText, withDetail } from "../fakes/model-api/scripts.ts";
import type { Reply, Turn } from "../fakes/model-api/server.ts";
import { startSubscriber } from "../helpers/daemon.ts";
import { type RealAgentWorld, realAgentWorld, waitScreen, claudeFooter } from "../helpers/real-agents.ts";
import { waitFor } from "../helpers/sandbox.ts";

let w: RealAgentWorld | undefined;
afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

type Kind = "claude" | "codex";
type Ev = { event: string; detail: string; source: string; data: Record<string, any> };

const TOLD_NO = /^\[mam\] .+ said no to /m;

/**
 * the worker: a job text → started, then each command (codex: asking to run it outside its sandbox,
 * which asks the user), then completed; told that the user said no → report error
 */
function worker(kind: Kind, commands: (root: string) => string[], root: () => string) {
  return (t: Turn): Reply => {
    if (TOLD_NO.test(t.lastUserText)) {
      const line = eventLine(t.lastUserText, "error");
      return t.toolOutputs.length === 0 && line ? { shell: withDetail(line, "the user said no") } : { text: "stopped: the user said no" };
    }
    if (!isJobText(t)) return { text: "ready" };
    const cmds = commands(root());
    const steps = [withDetail(eventLine(t.lastUserText, "started")!, "starting"), ...cmds, withDetail(eventLine(t.lastUserText, "completed")!, "made the files")];
    const i = t.toolOutputs.length;
    if (i >= steps.length) return { text: "job done" };
    return { shell: steps[i]!, ...(kind === "codex" && i >= 1 && i <= cmds.length ? { escalate: true } : {}) };
  };
}

async function world(kind: Kind, commands: (root: string) => string[]): Promise<{ w: RealAgentWorld; pane: string; journal: (id: string) => Ev[]; stop: () => Promise<void> }> {
  let root = "";
  const world = await realAgentWorld({ script: worker(kind, commands, () => root) });
  w = world;
  root = world.sb.root;
  if (kind === "codex") {
    // codex asks before a command that leaves its sandbox
    writeFileSync(join(world.codexHome, "config.toml"), `approval_policy = "on-request"\n${readFileSync(join(world.codexHome, "config.toml"), "utf8")}`);
  }
  // claude 2.1.332 runs in auto mode by default (it asks for fewer commands): the permission mode that asks, in every version
  const ask = kind === "claude" ? ["--", "--permission-mode", "default"] : [];
  const c = await world.mam(["create", "--agent", kind, "--mux", "tmux", "--tmux-server", world.server, "--session", "wrk", "--no-onboard", ...ask]);
  expect(c.code, c.stdout + c.stderr).toBe(0);
  const pane = "=wrk:";
  await waitScreen(world, pane, (s) => (kind === "claude" ? claudeFooter(s) : s.includes("? for shortcuts") && s.includes("mock-model")), `${kind}'s prompt`, 60_000);
  const d = startSubscriber(world.sb, join(world.sb.root, "daemon.log"), { ...world.env, MQTT_BROKER: "127.0.0.1", MQTT_PORT: "9", MAM_STATE_POLL_MS: "300" });
  const journal = (id: string): Ev[] => {
    const f = join(world.sb.ws, ".mam", "jobs", `${id}.events.ndjson`);
    return existsSync(f) ? readFileSync(f, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Ev) : [];
  };
  return { w: world, pane, journal, stop: () => d.kill() };
}

/** the key of the question's No: 3 in claude 2.1.197 and codex, 4 in claude 2.1.332 (it adds a choice) */
const noKey = (q: { choices: { key: string; role: string }[] }) => q.choices.find((c) => c.role === "no")!.key;

/** the question of the job's n-th permission_required, once the daemon journalled it */
async function asked(journal: (id: string) => Ev[], id: string, n: number, subject: string): Promise<{ fingerprint: string; choices: { n: number; key: string; role: string }[] }> {
  const perms = () => journal(id).filter((e) => e.event === "permission_required");
  expect(await waitFor(() => perms().length >= n && perms()[n - 1]!.data.question?.subject !== undefined, 90_000, 200)).toBe(true);
  const q = perms()[n - 1]!.data.question;
  expect(q.subject).toBe(subject);
  return q;
}

const KEYS: Record<Kind, { yes: string; always: string; no: string }> = { claude: { yes: "1", always: "2", no: "3" }, codex: { yes: "y", always: "p", no: "esc" } };

for (const kind of ["claude", "codex"] as const) {
  test(`real ${kind}: mam approve JOB presses its one-time yes; the command runs and the job completes`, async () => {
    const file = (root: string) => join(root, `made-by-${kind}.txt`);
    const x = await world(kind, (root) => [`touch ${file(root)}`]);
    try {
      const sub = await x.w.mam(["job", "submit", "--to", "wrk", "--prompt", "make the file"]);
      expect(sub.code, sub.stderr).toBe(0);
      const id = sub.stdout.trim();
      const q = await asked(x.journal, id, 1, `touch ${file(x.w.sb.root)}`);
      // claude 2.1.332 adds "3. Yes, and switch to auto mode" (role other: never pressed unasked) and its No moves to 4
      expect(q.choices.filter((c) => c.role !== "other").map((c) => [c.key, c.role])).toEqual([
        [KEYS[kind].yes, "yes"],
        [KEYS[kind].always, "always"],
        [noKey(q), "no"],
      ]);
      // status shows the same question
      const st = JSON.parse((await x.w.mam(["status", "--json"])).stdout).sessions.find((s: { name: string }) => s.name === "wrk");
      expect(st).toMatchObject({ live: "blocked", question: { fingerprint: q.fingerprint } });
      const ap = await x.w.mam(["approve", id]);
      expect(ap.code, ap.stderr + (await x.w.screen(x.pane))).toBe(0);
      expect(ap.stdout).toContain(`pressed ${KEYS[kind].yes} (`);
      const wait = await x.w.mam(["job", "wait", id, "--timeout", "90"], 120_000);
      expect(wait.code, `${wait.stdout}${wait.stderr}\n${await x.w.screen(x.pane)}`).toBe(0);
      expect(x.journal(id).map((e) => e.event)).toEqual(["started", "permission_required", "approved", "completed"]);
      expect(existsSync(file(x.w.sb.root))).toBe(true);
      expect(x.journal(id).find((e) => e.event === "approved")!.data).toMatchObject({ session: "wrk", via: "cli", choice: { role: "yes" }, fingerprint: q.fingerprint });
    } finally {
      await x.stop();
    }
  }, 300_000);

  test(`real ${kind}: mam approve JOB --deny presses its no; it is told, and the job ends as it reports`, async () => {
    const file = (root: string) => join(root, `never-by-${kind}.txt`);
    const x = await world(kind, (root) => [`touch ${file(root)}`]);
    try {
      const id = (await x.w.mam(["job", "submit", "--to", "wrk", "--prompt", "make the file"])).stdout.trim();
      const q = await asked(x.journal, id, 1, `touch ${file(x.w.sb.root)}`);
      const no = await x.w.mam(["approve", id, "--deny"]);
      expect(no.code, no.stderr + (await x.w.screen(x.pane))).toBe(0);
      expect(no.stdout).toContain(`pressed ${noKey(q)} (`);
      expect(no.stdout).toContain("told wrk that the answer is no");
      expect(no.stderr).not.toContain("WARNING");
      const wait = await x.w.mam(["job", "wait", id, "--timeout", "90"], 120_000);
      expect(wait.code, `${wait.stdout}${wait.stderr}\n${await x.w.screen(x.pane)}`).toBe(1);
      const evs = x.journal(id);
      expect(evs.map((e) => e.event)).toEqual(["started", "permission_required", "denied", "error"]);
      expect(evs[3]).toMatchObject({ source: "wrk", detail: "the user said no" });
      expect(existsSync(file(x.w.sb.root))).toBe(false);
      // what the model was told: the no, and the command that ends the job
      const told = x.w.api.turns().find((t) => TOLD_NO.test(t.lastUserText))!;
      expect(told.lastUserText).toContain(`said no to ${kind === "claude" ? "Bash command" : "the command"}: touch ${file(x.w.sb.root)} (job ${id})`);
      expect(told.lastUserText).toContain(`job event ${id} error`);
    } finally {
      await x.stop();
    }
  }, 300_000);

  test(`real ${kind}: an approve after the dialog changed is refused and presses nothing; the new one is answered by its fingerprint`, async () => {
    const files = (root: string) => [join(root, `first-${kind}.txt`), join(root, `second-${kind}.txt`)];
    const x = await world(kind, (root) => files(root).map((f) => `touch ${f}`));
    try {
      const id = (await x.w.mam(["job", "submit", "--to", "wrk", "--prompt", "make the files"])).stdout.trim();
      const [f1, f2] = files(x.w.sb.root);
      const q1 = await asked(x.journal, id, 1, `touch ${f1}`);
      // the user answers in the pane (a moment after the dialog came: claude 2.1.332 drops a key
      // that arrives just as its dialog is shown, its "early key guard"); the agent asks something else
      await Bun.sleep(1500);
      await x.w.tmux(["send-keys", "-t", x.pane, KEYS[kind].yes]);
      const q2 = await asked(x.journal, id, 2, `touch ${f2}`);
      expect(q2.fingerprint).not.toBe(q1.fingerprint);
      const stale = await x.w.mam(["approve", id, "--fingerprint", q1.fingerprint]);
      expect(stale.code).toBe(4);
      expect(stale.stderr).toContain(`the dialog of wrk is not the one you answer (${q1.fingerprint})`);
      expect(stale.stderr).toContain(`touch ${f2}`);
      const byJob = await x.w.mam(["approve", id]);
      expect(byJob.code).toBe(4);
      expect(byJob.stderr).toContain(`changed since job ${id} told you (2 questions since the last answer)`);
      // nothing pressed: the same dialog is still there
      await Bun.sleep(1000);
      const st = JSON.parse((await x.w.mam(["status", "--json"])).stdout).sessions.find((s: { name: string }) => s.name === "wrk");
      expect(st).toMatchObject({ live: "blocked", question: { fingerprint: q2.fingerprint } });
      expect(existsSync(f2)).toBe(false);
      const ok = await x.w.mam(["approve", "wrk", "--fingerprint", q2.fingerprint]);
      expect(ok.code, ok.stderr).toBe(0);
      const wait = await x.w.mam(["job", "wait", id, "--timeout", "90"], 120_000);
      expect(wait.code, `${wait.stdout}${wait.stderr}\n${await x.w.screen(x.pane)}`).toBe(0);
      expect(x.journal(id).map((e) => e.event)).toEqual(["started", "permission_required", "permission_required", "approved", "completed"]);
      expect(existsSync(f1) && existsSync(f2)).toBe(true);
    } finally {
      await x.stop();
    }
  }, 300_000);
}
