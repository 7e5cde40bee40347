// bench area `sandbox` (docs/sandbox.md): what a bubblewrap sandbox adds, on tmux with the demo
// agent and no broker.
//   (a) a process started through the supervisor (`mam sandbox exec … -- /bin/true`, net none and
//       net model with one relay) against /bin/true alone: the start of a sandboxed agent;
//   (b) `mam create --agent demo --no-onboard` with and without `--sandbox bwrap`, whole process,
//       then `mam stop --hard`;
//   (c) a job's round trip: submit → `job wait` returns completed, the demo agent in a sandbox
//       (its reports through the supervisor) and not;
//   (d) one `mam job event` from inside (through the supervisor's socket) and outside.
// Needs bwrap: MAM_BWRAP, else ~/.cache/mam/bwrap (.ci/run unpacks it there), else PATH.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bwrapBin, bwrapWorks } from "../tests/helpers/bwrap.ts";
import { medP90, ms, pct, type Row } from "./common.ts";

function timed(argv: string[], env: Record<string, string>, cwd: string): number {
  const t0 = performance.now();
  const r = Bun.spawnSync(argv, { env, cwd, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${argv.join(" ")} exited ${r.exitCode}: ${r.stderr.toString()}`);
  return performance.now() - t0;
}

export async function benchSandbox(bin: string): Promise<Row[]> {
  const bwrap = bwrapBin();
  if (!bwrapWorks(bwrap)) return [{ what: "sandbox (bwrap)", target: "—", measured: `skipped: bwrap does not work here (${bwrap ?? "not found"})`, ok: null }];
  const root = mkdtempSync(join(tmpdir(), "mam-bench-sbx-"));
  const ws = join(root, "ws");
  const home = join(root, "home");
  Bun.spawnSync(["mkdir", "-p", ws, home]);
  const server = `mambsbx${process.pid}`;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    HOME: home,
    TMUX_TMPDIR: root,
    MAM_BWRAP: bwrap!,
    MAM_MUX: "tmux",
    MAM_TMUX_SERVER: server,
    MQTT_BROKER: "127.0.0.1",
    MQTT_PORT: "9",
    RECONCILE_POLL_INTERVAL: "1",
    NO_COLOR: "1",
  };
  const mam = (args: string[]) => [bin, ...args, "--workspace", ws];
  const N = 10;
  try {
    // (a) the start of a sandboxed process
    const bare = Array.from({ length: N }, () => timed(["/bin/true"], env, ws));
    const exec = (net: string, allow: string[] = []) => [bin, "sandbox", "exec", "--workspace", ws, "--session", "b", "--kind", "demo", "--net", net, ...allow.flatMap((a) => ["--allow", a]), "--bwrap", bwrap!, "--", "/bin/true"];
    const none = Array.from({ length: N }, () => timed(exec("none"), env, ws));
    const model = Array.from({ length: N }, () => timed(exec("model", ["127.0.0.1:9"]), env, ws));

    // (b) create, with and without the sandbox
    const creates = (extra: string[]) =>
      Array.from({ length: 5 }, (_x, i) => {
        const name = `c${extra.length ? "s" : "p"}${i}`;
        const t = timed(mam(["create", "--agent", "demo", "--role", "worker", "--session", name, "--no-onboard", ...extra]), { ...env, MAM_NO_SUBSCRIBER_DAEMON: "1" }, ws);
        timed(mam(["stop", name, "--hard"]), env, ws);
        return t;
      });
    const plainCreate = creates([]);
    const sbxCreate = creates(["--sandbox", "bwrap", "--net", "none"]);

    // (c) a job's round trip, the daemon running
    timed(mam(["daemon", "ensure"]), env, ws);
    const roundTrip = (session: string) =>
      Array.from({ length: 5 }, () => {
        const t0 = performance.now();
        const id = Bun.spawnSync(mam(["job", "submit", "--to", session, "--prompt", "bench"]), { env, cwd: ws, stdout: "pipe" }).stdout.toString().trim();
        timed(mam(["job", "wait", id, "--timeout", "60"]), env, ws);
        return { ms: performance.now() - t0, id };
      });
    timed(mam(["create", "--agent", "demo", "--role", "worker", "--session", "jp", "--no-onboard"]), env, ws);
    timed(mam(["create", "--agent", "demo", "--role", "worker", "--session", "js", "--no-onboard", "--sandbox", "bwrap", "--net", "none"]), env, ws);
    const plainTrip = roundTrip("jp");
    const sbxTrip = roundTrip("js");

    // (d) one report, from inside (through the socket) and outside
    const id = sbxTrip[0]!.id;
    const report = ["job", "event", id, "progress", "--detail", "bench", "--source", "js", "--workspace", ws];
    const outside = Array.from({ length: N }, () => timed([bin, ...report], { ...env, MAM_SESSION: "js" }, ws));
    const loop = `for i in $(seq ${N}); do s=$(date +%s%N); ${bin} ${report.join(" ")} >/dev/null 2>&1 || exit 1; e=$(date +%s%N); echo $(( (e - s) / 1000 )); done`;
    const inner = Bun.spawnSync([bin, "sandbox", "exec", "--workspace", ws, "--session", "js", "--kind", "demo", "--net", "none", "--bwrap", bwrap!, "--", "sh", "-c", loop], { env, cwd: ws, stdout: "pipe", stderr: "pipe" });
    if (inner.exitCode !== 0) throw new Error(`reports from inside failed: ${inner.stderr.toString()}`);
    const inside = inner.stdout.toString().trim().split("\n").map((us) => Number(us) / 1000);

    return [
      { what: "sandbox: start through the supervisor, net none (median / p90)", target: "—", measured: `${medP90(none)} (bare /bin/true ${ms(pct(bare, 50))})`, ok: null },
      { what: "sandbox: start through the supervisor, net model, one relay (median / p90)", target: "—", measured: medP90(model), ok: null },
      { what: "sandbox: `mam create --no-onboard` demo, plain / --sandbox bwrap (median)", target: "—", measured: `${ms(pct(plainCreate, 50))} / ${ms(pct(sbxCreate, 50))} (+${ms(pct(sbxCreate, 50) - pct(plainCreate, 50))})`, ok: null },
      { what: "sandbox: job round trip submit → wait completed, demo agent, plain / sandboxed (median)", target: "—", measured: `${ms(pct(plainTrip.map((x) => x.ms), 50))} / ${ms(pct(sbxTrip.map((x) => x.ms), 50))}`, ok: null },
      { what: "sandbox: one `mam job event`, outside / from inside through the supervisor (median)", target: "—", measured: `${ms(pct(outside, 50))} / ${ms(pct(inside, 50))}`, ok: null },
    ];
  } finally {
    Bun.spawnSync(mam(["daemon", "stop"]), { env, cwd: ws });
    Bun.spawnSync(["tmux", "-L", server, "kill-server"], { env });
    rmSync(root, { recursive: true, force: true });
  }
}
