// bench area `usage` (issue 25, docs/cost.md): the daemon's usage meter over 20 claude sessions with
// 50 MB of transcript each (lines shaped as Claude Code writes them: typed messages, assistant
// messages with their usage, large tool results). In a warm process (lib/ops/react/meter.ts): the
// time to the first totals from nothing (the whole 1 GB), after a daemon restart (the ledger on
// disk: nothing new), an incremental poll with nothing new (wall time and CPU per poll) and with
// one new answer. Then the daemon itself (`mam daemon ensure`, a stub herdr answering a listing
// of the 20 panes): its CPU over BENCH_DAEMON_SECONDS (default 30) once it has counted them all.
// BENCH_USAGE_MB shrinks the transcripts for a quick look.
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readLedger } from "../lib/cost/ledger.ts";
import { jobStore } from "../lib/jobs/store.ts";
import { UsageMeter } from "../lib/ops/react/meter.ts";
import { readRegistry } from "../lib/registry/load.ts";
import { baseEnv, cpuPercent, medP90, ms, NO_BROKER, paneListing, procUsage, type Row, registryYaml, secondsFrom, startDaemon, stopDaemon } from "./common.ts";

const AGENTS = 20;
const SERVER = "bench";

/** one round of a conversation (~65 KB): a typed message, an answer with a tool use, its large result, a closing answer */
function round(i: number, sid: string, at: string): string {
  const big = "x".repeat(60_000);
  const usage = (n: number) => `"usage":{"input_tokens":${100 + n},"cache_creation_input_tokens":${n},"cache_read_input_tokens":${2000 + n},"output_tokens":${10 + n},"service_tier":"standard"}`;
  const meta = `"sessionId":"${sid}","version":"2.1.197","gitBranch":"main","userType":"external","timestamp":"${at}"`;
  return [
    `{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"please go on with part ${i} of the work and report when done"},"uuid":"u${i}a",${meta}}`,
    `{"parentUuid":"u${i}a","isSidechain":false,"type":"assistant","message":{"id":"msg_${i}_a","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"tool_use","id":"toolu_${i}","name":"Read","input":{"file_path":"/abs/workspace/src/file${i}.ts"}}],"stop_reason":"tool_use",${usage(i % 50)}},"requestId":"req_${i}a","uuid":"a${i}a",${meta}}`,
    `{"parentUuid":"a${i}a","isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_${i}","type":"tool_result","content":"${big}"}]},"uuid":"u${i}b",${meta}}`,
    `{"parentUuid":"u${i}b","isSidechain":false,"type":"assistant","message":{"id":"msg_${i}_b","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"text","text":"part ${i} done"}],"stop_reason":"end_turn",${usage((i + 7) % 50)}},"requestId":"req_${i}b","uuid":"a${i}b",${meta}}`,
  ].join("\n");
}

/** a transcript of about `mb` MB */
function transcript(mb: number, sid: string): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < mb * 1e6; i++) {
    const r = round(i, sid, "2026-12-01T10:00:00.000Z");
    parts.push(r);
    size += r.length + 1;
  }
  return `${parts.join("\n")}\n`;
}

export async function benchUsage(bin: string): Promise<Row[]> {
  const mb = Number(process.env.BENCH_USAGE_MB) > 0 ? Number(process.env.BENCH_USAGE_MB) : 50;
  const root = mkdtempSync(join(tmpdir(), "mam-bench-us-"));
  try {
    const ws = join(root, "ws");
    const claude = join(root, "claude");
    const project = join(claude, "projects", ws.replace(/[^A-Za-z0-9]/g, "-"));
    mkdirSync(join(ws, ".mam"), { recursive: true });
    mkdirSync(project, { recursive: true });
    const yaml = join(ws, ".mam", "agent-sessions.yaml");
    writeFileSync(yaml, registryYaml(AGENTS, { server: SERVER, ws }));
    const sids = Array.from({ length: AGENTS }, (_, i) => `3f0c1b2a-${String(i).padStart(4, "0")}-4bbb-8ccc-dddddddddddd`);
    const text = transcript(mb, sids[0]!);
    for (const sid of sids) writeFileSync(join(project, `${sid}.jsonl`), text);
    const env = { ...baseEnv(root), CLAUDE_CONFIG_DIR: claude };
    const registry = { path: yaml, read: (o?: Parameters<typeof readRegistry>[1]) => readRegistry(yaml, o), mutate: () => Promise.reject(new Error("read only")) };
    const meter = () => new UsageMeter({ ws, jobs: jobStore(ws), env, registry, log: () => {} });

    // from nothing: every byte of every transcript
    const cold = meter();
    const t0 = performance.now();
    let polls = 0;
    for (let p = await cold.poll(); ; p = await cold.poll()) {
      polls++;
      if (!p.behind) break;
    }
    const coldMs = performance.now() - t0;
    const l = readLedger(ws);
    if (l === "none" || l === "broken" || Object.keys(l.sessions).length !== AGENTS) throw new Error("the meter did not count every session");
    const perSession = Object.values(l.sessions[`bench-worker-0`]!.total).reduce((n, t) => n + t.input + t.output + t.cache_write + t.cache_read, 0);

    // a daemon restart: a new meter, the ledger on disk, nothing new
    const t1 = performance.now();
    const warm = meter();
    const first = await warm.poll();
    const restartMs = performance.now() - t1;
    if (first.facts !== 0) throw new Error("a restart read lines again");

    // incremental polls with nothing new: wall time and CPU
    const idle: number[] = [];
    const c0 = process.cpuUsage();
    for (let i = 0; i < 200; i++) {
      const s = performance.now();
      await warm.poll();
      idle.push(performance.now() - s);
    }
    const c1 = process.cpuUsage(c0);
    const cpuPerPoll = (c1.user + c1.system) / 1000 / 200;

    // one new answer in one of the 20 files
    const one: number[] = [];
    const extra = round(999_999, sids[0]!, new Date().toISOString()).split("\n")[3]!;
    for (let i = 0; i < 50; i++) {
      appendFileSync(join(project, `${sids[i % AGENTS]!}.jsonl`), `${extra.replace("msg_999999_b", `msg_new_${i}`)}\n`);
      const s = performance.now();
      const p = await warm.poll();
      one.push(performance.now() - s);
      if (p.facts !== 1) throw new Error(`one new answer read as ${p.facts} facts`);
    }

    // the daemon: idle with these 20 sessions counted
    const stub = join(root, "herdr");
    writeFileSync(join(root, "answer.json"), paneListing(ws, AGENTS));
    writeFileSync(stub, `#!/bin/sh\nexec cat '${join(root, "answer.json")}'\n`);
    chmodSync(stub, 0o755);
    const denv = { ...env, ...NO_BROKER, MAM_HERDR_BIN: stub };
    const seconds = secondsFrom("BENCH_DAEMON_SECONDS", 30);
    const pid = await startDaemon(bin, ws, denv, "polling");
    let daemon = { cpu: Number.NaN, rss: Number.NaN };
    try {
      await Bun.sleep(3000); // settle (the ledger is current: nothing to read)
      const a = procUsage(pid);
      await Bun.sleep(seconds * 1000);
      const b = procUsage(pid);
      daemon = { cpu: cpuPercent(a, b, seconds), rss: b.rssKiB / 1024 };
      if (!readFileSync(join(ws, ".mam", "monitor.log"), "utf8").includes("daemon started")) throw new Error("no daemon log");
    } finally {
      stopDaemon(bin, ws, denv);
    }
    const total = `${AGENTS} agents × ${mb} MB`;
    return [
      {
        what: `usage meter, ${total} of claude transcripts, incremental poll with nothing new, in the daemon's process (median / p90; CPU per poll)`,
        target: "≤ 5 ms",
        measured: `${medP90(idle)}; ${ms(cpuPerPoll)} CPU`,
        ok: idle.slice().sort((a, b) => a - b)[100]! <= 5,
      },
      { what: `usage meter, ${total}: a poll that reads one new answer in one of the files (median / p90)`, target: "-", measured: medP90(one), ok: null },
      { what: `usage meter, ${total}: time to the first totals after a daemon restart (the ledger on disk, nothing new)`, target: "-", measured: ms(restartMs), ok: null },
      {
        what: `usage meter, ${total}: time to the first totals from nothing (every byte read; ${(perSession / 1e6).toFixed(1)} M tokens per session)`,
        target: "-",
        measured: `${(coldMs / 1000).toFixed(2)} s in ${polls} polls (${((AGENTS * mb) / (coldMs / 1000)).toFixed(0)} MB/s)`,
        ok: null,
      },
      {
        what: `idle subscriber daemon metering ${total} (polling, RECONCILE_POLL_INTERVAL 15 s): RSS / CPU over ${seconds} s`,
        target: "≤ 1 % of one core",
        measured: `${daemon.rss.toFixed(1)} MiB / ${daemon.cpu.toFixed(2)} %`,
        ok: daemon.cpu <= 1,
      },
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
