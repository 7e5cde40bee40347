// Many processes on one registry at once, and writers killed with SIGKILL at random points.
// The writers are tests/fixtures/registry-writer.ts, run by bun: a thin driver of the real
// lib/registry module (mam's own commands that write the registry come later).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { readRegistry } from "../../lib/registry/load.ts";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

const WRITER = join(import.meta.dir, "..", "fixtures", "registry-writer.ts");

let sb: Sandbox;
let yaml: string;
beforeEach(() => {
  sb = makeSandbox("mam-rc-");
  yaml = join(sb.ws, ".mam", "agent-sessions.yaml");
});
afterEach(() => sb.cleanup());

const writer = (...args: string[]) => Bun.spawn([process.execPath, WRITER, yaml, ...args], { env: sb.env, cwd: sb.ws, stdout: "pipe", stderr: "pipe" });
const temps = () => readdirSync(join(sb.ws, ".mam")).filter((f) => f.endsWith(".tmp"));

describe("concurrent writers", () => {
  test("20 processes × 25 updates at once: all 500 present, file valid, no temp files", async () => {
    const t0 = performance.now();
    const procs = Array.from({ length: 20 }, (_, i) => writer("incr", String(i), "25"));
    const codes = await Promise.all(procs.map((p) => p.exited));
    const secs = (performance.now() - t0) / 1000;
    const errs = await Promise.all(procs.map((p) => new Response(p.stderr).text()));
    expect(errs.filter((e) => e !== "")).toEqual([]);
    expect(codes).toEqual(Array(20).fill(0));
    console.log(`registry: 20 processes x 25 updates = 500 in ${secs.toFixed(2)} s → ${Math.round(500 / secs)} updates/s (process start included)`);
    const d = readRegistry(yaml);
    expect(d.herdr_sessions.length).toBe(21);
    expect(d.herdr_sessions.find((r) => r.name === "counter")!.count).toBe(500);
    for (let i = 0; i < 20; i++) expect(d.herdr_sessions.find((r) => r.name === `w-${i}`)?.count).toBe(25);
    expect(temps()).toEqual([]);
    const check = await runMam(["registry", "check", "--json"], { env: sb.env, cwd: sb.ws });
    expect(check.code).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({ ok: true, rows: { herdr_sessions: 21, tmux_sessions: 0 }, backup: { ok: true } });
  });
});

describe("kill -9 at random points", () => {
  /** every row of the file at the same generation: old content or new, never a mix */
  function generation(path: string): number {
    const d = readRegistry(path);
    expect(d.herdr_sessions.length).toBe(30);
    const gens = new Set(d.herdr_sessions.map((r) => r.gen as number));
    expect(gens.size).toBe(1);
    for (const r of d.herdr_sessions) expect(r.note).toBe(`row ${String(r.name).slice(2)} `.repeat(8).trim());
    return [...gens][0]!;
  }

  test("60 writers killed mid-flight: registry and .bak always parse and hold one whole version", async () => {
    const setup = writer("gen", "30", "2");
    expect(await setup.exited).toBe(0);
    expect(generation(yaml)).toBe(1);
    let seed = 4242;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    let last = 1;
    let afterReady = 0;
    let advanced = 0;
    for (let i = 0; i < 60; i++) {
      const p = writer("gen", "30", "0");
      if (i % 2 === 0) {
        await Bun.sleep(rnd(60)); // during start-up, the first read or the first write
      } else {
        const reader = p.stdout.getReader();
        const { value } = await reader.read(); // "ready": the writer is in its write loop
        reader.releaseLock();
        if (new TextDecoder().decode(value ?? new Uint8Array()).startsWith("ready")) afterReady++;
        await Bun.sleep(rnd(25));
      }
      p.kill(9);
      expect(await p.exited).toBe(137);
      const g = generation(yaml);
      expect(g).toBeGreaterThanOrEqual(last);
      if (g > last) advanced++;
      last = g;
      const gb = generation(`${yaml}.bak`);
      expect([g - 1, g]).toContain(gb);
      expect(readFileSync(yaml, "utf8").startsWith("# mam agent registry")).toBe(true);
    }
    console.log(`registry kill -9: 60 kills (${afterReady} inside the write loop), the registry advanced ${advanced} times, now at generation ${last}; temp files left by killed writers: ${temps().length}`);
    expect(afterReady).toBe(30);
    expect(advanced).toBeGreaterThan(10);
    // the next writer cleans up what the killed ones left
    const final = writer("gen", "30", "1");
    expect(await final.exited).toBe(0);
    expect(generation(yaml)).toBe(last + 1);
    expect(temps()).toEqual([]);
  });
});
