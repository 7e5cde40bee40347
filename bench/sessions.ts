// bench area `sessions` (SPEC §10), on the fake herdr (compiled, dist/fake-herdr) and fake agents:
//   (a) `mam create` latency with the agent's ready time excluded: the whole `mam create` process
//       minus the duration of its one `herdr agent start` call (herdr's readiness wait: the agent
//       launch, the fake's 150 ms settle, the CLI's 100 ms polling), timed by a bash wrapper in
//       front of the fake herdr that logs every call's start and end (EPOCHREALTIME). Everything
//       else — pane claim (split + shell ready), label, registry write, the first look at the
//       agent's screen, the end-of-create reconcile — is in. The target row is `--no-onboard`;
//       the default create (onboarding prompt, with the driver's fixed 300 ms pause before its
//       Enter) is reported beside it, and a row says where the `--no-onboard` time goes: before
//       the first herdr call (process start; `mam --version` beside it), each kind of herdr call
//       (outside the agent start), and mam's own work. The subscriber daemon is disabled
//       (MAM_NO_SUBSCRIBER_DAEMON=1).
//   (b) `mam status --json` with 200 rows on the fake herdr, whole process.
//   (c) 10 concurrent `mam create` in one folder on one server: total time, panes, rows.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildFakeHerdr } from "../scripts/test.ts";
import { mamSync, medP90, ms, pct, registryYaml, type Row, timeProcess } from "./common.ts";

type Reg = { herdr_sessions?: Record<string, any>[] };

/** where one create's time went, from the herdr calls it made (ms) */
interface CreateParts {
  /** its `herdr agent start` call (the agent's ready time, excluded from the target row) */
  agentStart: number;
  /** spawn → its first herdr call: process start, loading, the registry */
  beforeFirst: number;
  /** covered by herdr calls outside the agent start (calls made in parallel count once) */
  inCalls: number;
  /** covered by no herdr call: mam's own work, before, between and after them */
  own: number;
  /** per call ("pane list", "pane split", …; `--version`): how many, and their time outside the agent start */
  kinds: Record<string, { n: number; ms: number }>;
}

/** pure: a create's parts from the lines its herdr calls logged ("<start µs> <end µs> <words>"), its spawn (epoch µs) and its wall time (ms) */
function createParts(log: string, spawnUs: number, wholeMs: number): CreateParts {
  const calls = log
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [a, b, ...w] = line.split(" ");
      const words = w[0] === "--session" ? w.slice(2) : w;
      return { s: Number(a) / 1000, e: Number(b) / 1000, kind: words[0]?.startsWith("-") ? words[0]! : words.slice(0, 2).join(" ") };
    });
  const start = calls.find((c) => c.kind === "agent start");
  if (!start) throw new Error("the create made no `herdr agent start` call");
  const outside = (c: { s: number; e: number }) => Math.max(0, c.e - c.s - Math.max(0, Math.min(c.e, start.e) - Math.max(c.s, start.s)));
  let union = 0;
  let reach = -Infinity;
  for (const c of [...calls].sort((x, y) => x.s - y.s)) {
    if (c.e > reach) union += c.e - Math.max(c.s, reach);
    reach = Math.max(reach, c.e);
  }
  const kinds: CreateParts["kinds"] = {};
  for (const c of calls) {
    if (c.kind === "agent start") continue;
    const k = (kinds[c.kind] ??= { n: 0, ms: 0 });
    k.n++;
    k.ms += outside(c);
  }
  const agentStart = start.e - start.s;
  return { agentStart, beforeFirst: Math.min(...calls.map((c) => c.s)) - spawnUs / 1000, inCalls: union - agentStart, own: wholeMs - union, kinds };
}

/** "a / b / c" of the medians of each part over the creates: one line of the breakdown row */
function partsLine(ps: CreateParts[], version: number): string {
  const med = (f: (p: CreateParts) => number) => pct(ps.map(f), 50);
  const names = [...new Set(ps.flatMap((p) => Object.keys(p.kinds)))].sort();
  const kinds = names.map((k) => `${k} ${med((p) => p.kinds[k]?.n ?? 0)}× ${ms(med((p) => p.kinds[k]?.ms ?? 0))}`).join(", ");
  return `before the first herdr call ${ms(med((p) => p.beforeFirst))} (\`mam --version\` whole process: ${ms(version)}); mam's own work in all ${ms(med((p) => p.own))}; herdr calls outside the agent start ${ms(med((p) => p.inCalls))} (${kinds})`;
}


export async function benchSessions(bin: string): Promise<Row[]> {
  await buildFakeHerdr();
  const { makeSandbox } = await import("../tests/helpers/sandbox.ts");
  const { installFakeAgents, installFakeHerdr, startFakeHerdr } = await import("../tests/helpers/herdr.ts");
  const sb = makeSandbox("mam-bench-s-");
  const server = "mam";
  installFakeAgents(sb.bin);
  const fakeDir = join(sb.root, "fakebin");
  mkdirSync(fakeDir);
  const fake = installFakeHerdr(fakeDir);
  // every herdr call mam makes, as "<start µs> <end µs> <its words>" (EPOCHREALTIME, no fork)
  const calls = join(sb.root, "herdr-calls.log");
  writeFileSync(calls, "");
  // mam finds this wrapper first on PATH; the server and the agents use the fake directly
  writeFileSync(
    join(sb.bin, "herdr"),
    `#!/bin/bash
t0=$EPOCHREALTIME; '${fake}' "$@"; rc=$?; t1=$EPOCHREALTIME
echo "\${t0/./} \${t1/./} $*" >> '${calls}'
exit $rc
`,
    { mode: 0o755 },
  );
  const h = await startFakeHerdr(sb, { session: server, settleMs: 150, binDir: fakeDir });
  const env = sb.env;
  const mam = (args: string[], cwd: string) => mamSync(bin, args, env, cwd);
  const rows: Row[] = [];
  try {
    // (a) create latency; a session that stays makes every timed create split a pane beside it.
    // Two variants, interleaved: --no-onboard (mam's own work) and the default create, whose
    // onboarding prompt gets its Enter after a fixed 300 ms pause (the driver's paste guard).
    const ws = sb.ws;
    mam(["create", "--agent", "claude", "--herdr-session", server, "--session", "anchor", "--no-onboard"], ws);
    const n = 15;
    const quiet = { whole: [] as number[], excl: [] as number[], parts: [] as CreateParts[] };
    const onboard = { whole: [] as number[], excl: [] as number[], parts: [] as CreateParts[] };
    for (let i = 0; i < n + 3; i++) {
      for (const [v, extra] of [[quiet, ["--no-onboard"]], [onboard, []]] as const) {
        const name = `bench-${i}-${extra.length}`;
        const from = readFileSync(calls, "utf8").length;
        const t0 = performance.now();
        const e0 = (performance.timeOrigin + t0) * 1000;
        mam(["create", "--agent", "claude", "--herdr-session", server, "--session", name, "--role", "worker", ...extra], ws);
        const dt = performance.now() - t0;
        const parts = createParts(readFileSync(calls, "utf8").slice(from), e0, dt);
        mam(["stop", name, "--hard"], ws);
        if (i < 3) continue;
        v.whole.push(dt);
        v.excl.push(dt - parts.agentStart);
        v.parts.push(parts);
      }
    }
    const version = pct(timeProcess([bin, "--version"], 20), 50);
    const med = pct(quiet.excl, 50);
    rows.push(
      {
        what: "`mam create --no-onboard` on the fake herdr, agent ready time excluded (whole process minus its `herdr agent start` call; pane split, label, row, reconcile in) (median / p90)",
        target: "≤ 150 ms median",
        measured: medP90(quiet.excl),
        ok: med <= 150,
      },
      { what: "where that create's time goes (median per create; the herdr calls timed by a wrapper, each a process of the fake herdr)", target: "-", measured: partsLine(quiet.parts, version), ok: null },
      { what: "the same with the onboarding prompt (default; its Enter follows the text after a 300 ms pause) (median / p90)", target: "-", measured: medP90(onboard.excl), ok: null },
      { what: "reference: `mam create --no-onboard`, whole process with the agent's start (fake settle 150 ms) (median / p90)", target: "-", measured: medP90(quiet.whole), ok: null },
    );

    // (b) status --json, 200 rows, one listing of the (live) server
    const ws2 = join(sb.root, "ws-status");
    mkdirSync(join(ws2, ".mam"), { recursive: true });
    writeFileSync(join(ws2, ".mam", "agent-sessions.yaml"), registryYaml(200, { server, ws: ws2, paneWs: "w9" }));
    const st: number[] = [];
    for (let i = 0; i < 33; i++) {
      const t0 = performance.now();
      const r = mam(["status", "--json"], ws2);
      const dt = performance.now() - t0;
      if (i === 0 && JSON.parse(r).sessions.length !== 200) throw new Error("status did not list 200 rows");
      if (i >= 3) st.push(dt);
    }
    const stMed = pct(st, 50);
    rows.push({ what: "`mam status --json` with 200 rows, fake herdr, whole process (median / p90)", target: "≤ 80 ms median", measured: medP90(st), ok: stMed <= 80 });

    // (c) 10 concurrent creates in one folder on one server
    const ws3 = join(sb.root, "ws-race");
    mkdirSync(ws3);
    const t0 = performance.now();
    const procs = Array.from({ length: 10 }, (_, i) =>
      Bun.spawn([bin, "create", "--agent", "claude", "--herdr-session", server, "--session", `race-${i}`, "--role", "worker", "--no-onboard"], { env, cwd: ws3, stdout: "ignore", stderr: "pipe" }),
    );
    const codes = await Promise.all(procs.map((p) => p.exited));
    const secs = (performance.now() - t0) / 1000;
    const reg = Bun.YAML.parse(readFileSync(join(ws3, ".mam", "agent-sessions.yaml"), "utf8")) as Reg;
    const got = (reg.herdr_sessions ?? []).filter((r) => r.status === "running");
    const panes = new Set(got.map((r) => r.pane?.id));
    const live = ((await h.call("pane.list", {})).panes as { pane_id: string; label?: string }[]).filter((p) => panes.has(p.pane_id) && p.label?.startsWith("mam:race-"));
    const failed = codes.filter((c) => c !== 0).length;
    const lost = 10 - got.length;
    rows.push({
      what: "10 concurrent `mam create` in one folder, one fake herdr server (settle 150 ms): total time",
      target: "10 distinct panes, 10 rows, 0 lost",
      measured: `${panes.size} distinct panes (${live.length} live, labelled), ${got.length} rows, ${lost} lost, ${failed} failed, ${secs.toFixed(2)} s`,
      ok: panes.size === 10 && live.length === 10 && got.length === 10 && lost === 0 && failed === 0,
    });
  } finally {
    await h.stop();
    await sb.cleanup();
  }
  return rows;
}
