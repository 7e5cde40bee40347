// Captures real conversation files of claude and codex for the usage meter's fixtures:
//   bun tests/real-agents/capture-usage.ts
// One harness world (tests/helpers/real-agents.ts: isolated config, private tmux, the scripted
// model endpoint answering with known usage, a different number on every answer). Claude: two jobs,
// the first answer with two content blocks (text + tool use), a stop and a resume, a third job, then
// /clear (a new conversation id) and a typed message. Codex: two jobs, a stop and a resume, a third
// job. Writes tests/fixtures/usage/: the files as the CLIs wrote them, with the sandbox's paths
// replaced by /tmp/mam-fixture and mam's path by `mam`, and strings longer than 2000 characters
// (the agents' own instructions and listings) elided; `answers.json` (each answer the endpoint gave:
// the job whose header started its turn, its usage) and `jobs.json` (each job's agent and the
// timestamp of its end).
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { eventLine, isJobText, withDetail } from "../fakes/model-api/scripts.ts";
import type { Reply, Turn } from "../fakes/model-api/server.ts";
import { MAM_CMD } from "../helpers/mam.ts";
import { realAgentWorld, typeAndSubmit } from "../helpers/real-agents.ts";

// MAM_CAPTURE_OUT: write them elsewhere (to compare another version of the CLIs with the fixtures)
const OUT = process.env.MAM_CAPTURE_OUT ?? join(import.meta.dir, "..", "fixtures", "usage");
const FIXTURE_ROOT = "/tmp/mam-fixture";

let n = 0;
/** a worker whose first answer to a job has a text block and a tool use */
function script(t: Turn): Reply {
  n++;
  const usage = { input: 100 + n, output: 7 + n, cache_write: 3 * n, cache_read: 1000 + n };
  if (!isJobText(t)) return { text: "ready", usage };
  const steps = [eventLine(t.lastUserText, "started"), eventLine(t.lastUserText, "completed")].filter((l): l is string => l !== undefined);
  const step = t.toolOutputs.length;
  if (step === 0) return { text: "on it", shell: withDetail(steps[0]!, "starting"), usage };
  if (step < steps.length) return { shell: withDetail(steps[step]!, "done"), usage };
  return { text: "job done", usage };
}

/** the job a header names, if any */
const jobOf = (text: string) => /\[mam\] Job ([0-9a-f]{8}) delegated/.exec(text)?.[1] ?? null;

const w = await realAgentWorld({ script });
try {
  const mam = async (args: string[]) => {
    const r = await w.mam(args, 150_000);
    if (r.code !== 0) throw new Error(`mam ${args.join(" ")}: exit ${r.code}\n${r.stdout}${r.stderr}`);
    return r.stdout.trim();
  };
  const job = async (to: string, prompt: string) => {
    const id = await mam(["job", "submit", "--to", to, "--prompt", prompt]);
    await mam(["job", "wait", id, "--timeout", "120"]);
    await Bun.sleep(2000); // the wrap-up answer after `completed`
    return id;
  };
  for (const [agent, name] of [["claude", "wrk"], ["codex", "cdx"]] as const) {
    await mam(["create", "--agent", agent, "--mux", "tmux", "--tmux-server", w.server, "--session", name]);
    await job(name, "first job");
    await job(name, "second job");
    await mam(["stop", name]);
    await mam(["resume", name]);
    await job(name, "third job");
  }
  await w.tmux(["send-keys", "-t", "=wrk:", "-l", "/clear"]);
  await Bun.sleep(500);
  await w.tmux(["send-keys", "-t", "=wrk:", "Enter"]);
  await Bun.sleep(3000);
  await typeAndSubmit(w, "=wrk:", "hello after clear");
  await Bun.sleep(3000);

  const ws = w.sb.ws;
  const mamPath = MAM_CMD.join(" ");
  const key = (p: string) => p.replace(/[^A-Za-z0-9]/g, "-");
  const paths = (text: string) => text.replaceAll(mamPath, "mam").replaceAll(key(ws), key(`${FIXTURE_ROOT}/ws`)).replaceAll(w.sb.root, FIXTURE_ROOT);
  const clean = (text: string) =>
    paths(
      text
        .split("\n")
      .map((line) => {
        if (line === "") return line;
        const shorten = (v: unknown): unknown => {
          if (typeof v === "string") return v.length > 2000 ? `<elided: ${v.length} characters>` : v;
          if (Array.isArray(v)) return v.map(shorten);
          if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shorten(x)]));
          return v;
        };
        return JSON.stringify(shorten(JSON.parse(line)));
      })
      .join("\n"),
    );
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(join(OUT, "claude", "sessions"), { recursive: true });
  mkdirSync(join(OUT, "codex"), { recursive: true });
  const projects = join(w.claudeConfigDir, "projects", key(ws));
  for (const f of readdirSync(projects).filter((f) => f.endsWith(".jsonl"))) writeFileSync(join(OUT, "claude", f), clean(readFileSync(join(projects, f), "utf8")));
  for (const f of readdirSync(join(w.claudeConfigDir, "sessions"))) writeFileSync(join(OUT, "claude", "sessions", f), clean(readFileSync(join(w.claudeConfigDir, "sessions", f), "utf8")));
  const rollouts: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith(".jsonl") && rollouts.push(join(d, e.name));
  };
  walk(join(w.codexHome, "sessions"));
  for (const f of rollouts) writeFileSync(join(OUT, "codex", basename(f)), clean(readFileSync(f, "utf8")));

  // each answer: the api, the job whose header began its turn (the last user text), its usage
  const answers = w.api.requests
    .filter((r) => r.turn?.main)
    .map((r) => ({ api: r.api, job: jobOf(r.turn!.lastUserText), usage: r.usage }));
  writeFileSync(join(OUT, "answers.json"), `${JSON.stringify(answers, null, 1)}\n`);
  const jobsDir = join(ws, ".mam", "jobs");
  const jobs = readdirSync(jobsDir)
    .filter((f) => /^[0-9a-f]{8}\.json$/.test(f))
    .map((f) => {
      const rec = JSON.parse(readFileSync(join(jobsDir, f), "utf8"));
      const evs = readFileSync(join(jobsDir, `${rec.job_id}.events.ndjson`), "utf8").trim().split("\n").map((l) => JSON.parse(l));
      return { job_id: rec.job_id, agent_session: rec.agent_session, created_at: rec.created_at, ended_at: evs.find((e) => e.event === "completed")?.timestamp ?? null };
    })
    .sort((a, b) => (a.created_at < b.created_at ? -1 : 1));
  writeFileSync(join(OUT, "jobs.json"), `${JSON.stringify(jobs, null, 1)}\n`);
  writeFileSync(join(OUT, "agent-sessions.yaml"), paths(readFileSync(join(ws, ".mam", "agent-sessions.yaml"), "utf8")));
  console.log(`wrote ${OUT}`);
} finally {
  await w.cleanup();
}
