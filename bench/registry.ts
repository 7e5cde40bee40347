// bench area `registry` (SPEC §10): the registry's locked read-modify-write under contention (20
// processes × 25 updates of one compiled writer, tests/fixtures/registry-writer.ts), one update as
// a whole process and in a warm one, and `mam registry check --json` (a full read) at 200 and 500
// rows.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { medP90, ms, pct, registryYaml, ROOT, type Row, timeProcess } from "./common.ts";

const WRITER = join(ROOT, "tests", "fixtures", "registry-writer.ts");

/** the test writer compiled like mam (bytecode, one file), so a whole-process update costs what a mam command would */
async function compiledWriter(dir: string): Promise<string> {
  const outfile = join(dir, "registry-writer");
  const r = (await Bun.build({ entrypoints: [WRITER], bytecode: true, format: "esm", compile: { outfile }, throw: false } as never)) as unknown as { success: boolean; logs: unknown[] };
  if (!r.success) throw new Error(`cannot compile ${WRITER}: ${r.logs.join("\n")}`);
  return outfile;
}

/** a workspace under dir holding a registry of n rows; the workspace */
function workspaceOf(dir: string, name: string, n: number): string {
  const ws = join(dir, name);
  mkdirSync(join(ws, ".mam"), { recursive: true });
  writeFileSync(join(ws, ".mam", "agent-sessions.yaml"), registryYaml(n, { name: "api-worker" }));
  return ws;
}

export async function benchRegistry(bin: string): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), "mam-bench-"));
  try {
    const yaml = join(dir, ".mam", "agent-sessions.yaml");
    const env = { ...process.env, NO_COLOR: "1" };
    const w = await compiledWriter(dir);
    const t0 = performance.now();
    const procs = Array.from({ length: 20 }, (_, i) => Bun.spawn([w, yaml, "incr", String(i), "25"], { env, stdout: "ignore", stderr: "inherit" }));
    const codes = await Promise.all(procs.map((p) => p.exited));
    const secs = (performance.now() - t0) / 1000;
    if (codes.some((c) => c !== 0)) throw new Error(`registry writers exited ${codes.join(",")}`);
    const { readRegistry } = await import("../lib/registry/load.ts");
    const count = Number(readRegistry(yaml).herdr_sessions.find((r) => r.name === "counter")?.count ?? 0);
    const rate = 500 / secs;
    const lost = 500 - count;
    const single = timeProcess([w, yaml, "once"], 20);
    const big = join(workspaceOf(dir, "big", 200), ".mam", "agent-sessions.yaml");
    const singleBig = timeProcess([w, big, "once"], 20);
    const check = timeProcess([bin, "registry", "check", "--workspace", join(dir, "big"), "--json"], 20);
    const checkBig = timeProcess([bin, "registry", "check", "--workspace", workspaceOf(dir, "big500", 500), "--json"], 20);
    const { mutateRegistry } = await import("../lib/registry/mutate.ts");
    const inproc: number[] = [];
    for (let i = 0; i < 23; i++) {
      const t = performance.now();
      await mutateRegistry(big, (d) => {
        d.herdr_sessions[i % 200]!.last_visible_note = `bench ${i}`;
      });
      if (i >= 3) inproc.push(performance.now() - t);
    }
    return [
      { what: "registry: 20 processes × 25 updates at once (compiled writer, process start included)", target: "0 lost, ≥ 150 updates/s", measured: `${lost} lost, ${Math.round(rate)} updates/s (${secs.toFixed(2)} s)`, ok: lost === 0 && rate >= 150 },
      { what: "registry: one update, whole compiled process, 21 rows (median / p90)", target: "-", measured: medP90(single), ok: null },
      { what: "registry: one update, whole compiled process, 200 rows (median / p90)", target: "-", measured: medP90(singleBig), ok: null },
      { what: "registry: one update in a warm process, 200 rows (median)", target: "-", measured: ms(pct(inproc, 50)), ok: null },
      { what: "`mam registry check --json` (a full read), 200 rows, whole process (median / p90)", target: "-", measured: medP90(check), ok: null },
      { what: "`mam registry check --json` (a full read), 500 rows, whole process (median / p90)", target: "-", measured: medP90(checkBig), ok: null },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
