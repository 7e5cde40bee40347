// bench area `reconcile` (SPEC §10): one reconcile pass over 500 rows whose 500 panes live on one
// herdr server. The server is a stub `herdr` (MAM_HERDR_BIN) that prints a prepared 500-pane
// `pane list` answer at once and logs each call, so the pass is measured, not a herdr, and the
// number of listing calls is counted.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { baseEnv, medP90, ms, paneListing, pct, registryYaml, type Row } from "./common.ts";

const N = 500;
const SERVER = "bench";

export async function benchReconcile(bin: string): Promise<Row[]> {
  const root = mkdtempSync(join(tmpdir(), "mam-bench-rc-"));
  try {
    const ws = join(root, "ws");
    mkdirSync(join(ws, ".mam"), { recursive: true });
    const yaml = join(ws, ".mam", "agent-sessions.yaml");
    const calls = join(root, "calls.log");
    const answer = join(root, "answer.json");
    const stub = join(root, "herdr");
    writeFileSync(stub, `#!/bin/sh\necho "$*" >>'${calls}'\nexec cat '${answer}'\n`);
    chmodSync(stub, 0o755);
    const env = { ...baseEnv(root), MAM_HERDR_BIN: stub };
    const pass = (): { ms: number; out: { actions: unknown[]; drifts: unknown[] } } => {
      const t0 = performance.now();
      const r = Bun.spawnSync([bin, "reconcile", "--json", "--workspace", ws], { env });
      const ms = performance.now() - t0;
      if (r.exitCode !== 0) throw new Error(`mam reconcile failed: ${r.stderr}`);
      return { ms, out: JSON.parse(r.stdout.toString()) };
    };
    const callCount = () => readFileSync(calls, "utf8").trim().split("\n").length;

    // steady state: every pane alive, nothing to do
    writeFileSync(answer, paneListing(ws, N, { status: (i) => (i % 3 === 0 ? "working" : "idle") }));
    writeFileSync(yaml, registryYaml(N, { server: SERVER, ws }));
    writeFileSync(calls, "");
    const steady: number[] = [];
    for (let i = 0; i < 23; i++) {
      const r = pass();
      if (r.out.actions.length !== 0) throw new Error(`steady state: ${r.out.actions.length} actions`);
      if (i >= 3) steady.push(r.ms);
    }
    const steadyCalls = callCount() / 23;

    // 50 panes gone: 50 rows terminated, the 500-row registry rewritten (reset between runs)
    writeFileSync(answer, paneListing(ws, N, { alive: (i) => i % 10 !== 0, status: (i) => (i % 3 === 0 ? "working" : "idle") }));
    const drift: number[] = [];
    writeFileSync(calls, "");
    for (let i = 0; i < 13; i++) {
      writeFileSync(yaml, registryYaml(N, { server: SERVER, ws }));
      const r = pass();
      if (r.out.actions.length !== 50) throw new Error(`drift: ${r.out.actions.length} actions`);
      if (i >= 3) drift.push(r.ms);
    }
    const driftCalls = callCount() / 13;

    // in a warm process: the pass itself (listing through the stub, classification, no write)
    const [{ reconcileOnce }, { realDeps }] = await Promise.all([import("../lib/ops/reconcile.ts"), import("../lib/ops/wiring.ts")]);
    const deps = realDeps(ws, env);
    writeFileSync(answer, paneListing(ws, N, { status: (i) => (i % 3 === 0 ? "working" : "idle") }));
    writeFileSync(yaml, registryYaml(N, { server: SERVER, ws }));
    const warm: number[] = [];
    for (let i = 0; i < 23; i++) {
      const t0 = performance.now();
      await reconcileOnce(deps, { dry_run: false });
      if (i >= 3) warm.push(performance.now() - t0);
    }
    const med = pct(steady, 50);
    return [
      {
        what: `reconcile pass, 500 panes / 500 rows, one herdr server (stub herdr printing a 500-pane listing at once), \`mam reconcile --json\` whole process (median / p90); listing calls per pass`,
        target: "≤ 150 ms, one listing call per server",
        measured: `${medP90(steady)}; ${steadyCalls} call(s)`,
        ok: med <= 150 && steadyCalls === 1,
      },
      {
        what: "same with 50 panes gone: 50 rows terminated, the registry rewritten (median / p90); listing calls per pass",
        target: "-",
        measured: `${medP90(drift)}; ${driftCalls} call(s)`,
        ok: null,
      },
      { what: "reconcile pass, 500 panes / 500 rows, in a warm process (stub listing included; median)", target: "-", measured: ms(pct(warm, 50)), ok: null },
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
