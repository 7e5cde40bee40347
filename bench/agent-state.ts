// bench area `agent-state` (issue 12), on a real tmux (private server) with 20 claude look-alikes
// (tests/helpers/agent-screens.ts, drawing claude's real screens):
//   (a) the screen detector on one screen, in process (every claude/codex fixture, µs per call)
//   (b) `mam status --json` over 20 tmux agents, whole process (one listing + one batched capture)
//   (c) the subscriber daemon watching the 20 agents of 20 running jobs for BENCH_AGENT_SECONDS
//       (default 60): CPU % of one core and RSS (MAM_STATE_POLL_MS default 1000, no broker)
//   (d) an agent turning blocked → its `permission_required` in the job's journal (p50 / p95 of 10)
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { detectScreen } from "../lib/agents/screen/detect.ts";
import { cpuPercent, mamSync, medP90, ms, NO_BROKER, pct, procUsage, ROOT, type Row, secondsFrom } from "./common.ts";

const N = 20;

function classifyRow(): Row {
  const root = join(ROOT, "tests", "fixtures", "screens");
  const screens: { kind: string; text: string; title: string }[] = [];
  for (const kind of ["claude", "codex"]) {
    for (const file of readdirSync(join(root, kind)).filter((x) => x.endsWith(".txt"))) {
      const base = join(root, kind, file.slice(0, -4));
      let title = "";
      try {
        title = readFileSync(`${base}.title`, "utf8").trim();
      } catch {}
      screens.push({ kind, text: readFileSync(`${base}.txt`, "utf8"), title });
    }
  }
  const per: number[] = [];
  for (const s of screens) {
    for (let i = 0; i < 200; i++) detectScreen(s.kind, s); // warm up
    const n = 2000;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) detectScreen(s.kind, s);
    per.push(((performance.now() - t0) * 1000) / n);
  }
  return { what: `screen detector: one screen (${screens.length} claude/codex fixtures, in process) (median / max)`, target: "µs", measured: `${pct(per, 50).toFixed(1)} µs / ${Math.max(...per).toFixed(1)} µs`, ok: null };
}

export async function benchAgentState(bin: string): Promise<Row[]> {
  const rows: Row[] = [classifyRow()];
  const { makeSandbox, waitFor } = await import("../tests/helpers/sandbox.ts");
  const { killTmuxServer, TMUX_BIN, tmuxServerName, writeScript } = await import("../tests/helpers/tmux.ts");
  const { CLAUDE_LOOKALIKE } = await import("../tests/helpers/agent-screens.ts");
  if (!TMUX_BIN) throw new Error("bench agent-state needs tmux");
  const sb = makeSandbox("mam-bench-as-");
  writeScript(sb.bin, "claude", CLAUDE_LOOKALIKE);
  const server = tmuxServerName("mambas");
  const env = sb.with({ TMUX_TMPDIR: sb.root, MAM_AGENT_SETTLE_S: "0.2", MAM_MUX: "tmux" });
  const mam = (args: string[]) => mamSync(bin, args, env, sb.ws);
  const keys = (session: string, text: string) => {
    Bun.spawnSync([TMUX_BIN, "-L", server, "send-keys", "-t", `=${session}:`, "-l", text], { env });
    Bun.spawnSync([TMUX_BIN, "-L", server, "send-keys", "-t", `=${session}:`, "Enter"], { env });
  };
  let daemon: ReturnType<typeof Bun.spawn> | undefined;
  try {
    for (let i = 0; i < N; i++) mam(["create", "--agent", "claude", "--session", `a${i}`, "--tmux-server", server, "--no-onboard"]);
    // (b) status over 20 tmux agents
    const st: number[] = [];
    for (let i = 0; i < 23; i++) {
      const t0 = performance.now();
      const out = mam(["status", "--json"]);
      const dt = performance.now() - t0;
      if (i === 0) {
        const lives = (JSON.parse(out).sessions as { live: string }[]).map((s) => s.live);
        if (lives.length !== N || lives.some((l) => l !== "idle")) throw new Error(`status did not see ${N} idle agents: ${lives.join(",")}`);
      }
      if (i >= 3) st.push(dt);
    }
    const stMed = pct(st, 50);
    rows.push({ what: `\`mam status --json\` over ${N} tmux agents (screen detector), whole process (median / p90)`, target: "≤ 120 ms", measured: medP90(st), ok: stMed <= 120 });

    // (c) the daemon watching 20 agents of 20 running jobs
    const jobs: string[] = [];
    for (let i = 0; i < N; i++) {
      const id = mam(["job", "submit", "--to", `a${i}`, "--prompt", "bench"]).trim();
      mam(["job", "event", id, "started", "--detail", "go"]);
      jobs.push(id);
    }
    const seconds = secondsFrom("BENCH_AGENT_SECONDS", 60);
    const denv = { ...env, ...NO_BROKER };
    delete (denv as Record<string, string>).MAM_NO_SUBSCRIBER_DAEMON;
    daemon = Bun.spawn([bin, "reconcile", "--subscribe", "--idle-timeout", "0", "--workspace", sb.ws], { env: denv, cwd: sb.ws, stdout: "ignore", stderr: "ignore" });
    const pid = daemon.pid;
    await Bun.sleep(3000); // start-up and the first passes are not the steady state
    const a = procUsage(pid);
    await Bun.sleep(seconds * 1000);
    const b = procUsage(pid);
    const cpu = cpuPercent(a, b, seconds);
    const rss = b.rssKiB / 1024;
    rows.push({ what: `subscriber daemon watching ${N} tmux agents of ${N} running jobs, ${seconds} s, MAM_STATE_POLL_MS 1000: CPU / RSS`, target: "≤ 2 % of one core, ≤ 70 MiB", measured: `${cpu.toFixed(2)} % / ${rss.toFixed(1)} MiB`, ok: cpu <= 2 && rss <= 70 });

    // (d) blocked → permission_required in the journal
    const lat: number[] = [];
    const perms = (id: string) => readFileSync(join(sb.ws, ".mam", "jobs", `${id}.events.ndjson`), "utf8").split("\n").filter((l) => l.includes('"permission_required"')).length;
    for (let k = 0; k < 10; k++) {
      const i = k % N;
      const before = perms(jobs[i]!);
      keys(`a${i}`, `ask touch f${k}`);
      const t0 = performance.now();
      if (!(await waitFor(() => perms(jobs[i]!) > before, 10_000, 5))) throw new Error(`no permission_required for a${i}`);
      lat.push(performance.now() - t0);
      keys(`a${i}`, "1");
      await Bun.sleep(1200 + ((k * 137) % 700)); // unblocked again, seen by a poll; varied phase against the poll timer
    }
    const p95 = pct(lat, 95);
    rows.push({ what: "agent turns blocked → `permission_required` in the job's journal (10 dialogs, MAM_STATE_POLL_MS 1000) (p50 / p95)", target: "≤ 2 s p95", measured: `${ms(pct(lat, 50))} / ${ms(p95)}`, ok: p95 <= 2000 });
  } finally {
    if (daemon) {
      daemon.kill("SIGTERM");
      await daemon.exited;
    }
    await killTmuxServer(server, env, sb.root);
    await sb.cleanup();
  }
  return rows;
}
