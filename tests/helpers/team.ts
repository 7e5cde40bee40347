// "Machines" of a team on one machine (docs/machines.md): each host has its own MAM_HOST, HOME,
// workspace, private tmux server and daemon; they share one real broker. Demo agents do the work
// (they follow the job header like a real agent: tests/…/demo-agent). What a host runs goes
// through its `mam` as users run it: on this machine's network, or through a runner, e.g. inside
// a network namespace of tests/helpers/netlab.ts (labRunner), so that the daemon, the tmux server
// and the agents `mam create` starts live there and a cut of the host's link cuts them all off.
import { expect } from "bun:test";
import { mkdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import type { JobEvent } from "../../lib/jobs/event.ts";
import { MAM_CMD, run, type RunResult } from "./mam.ts";
import type { NetLab } from "./netlab.ts";
import { baseEnv, waitFor } from "./sandbox.ts";
import { killTmuxServer, tmuxServerName } from "./tmux.ts";

export interface Host {
  name: string;
  root: string;
  home: string;
  ws: string;
  tmux: string;
  env: Record<string, string>;
  mam(args: string[], extra?: Record<string, string>, timeoutMs?: number): Promise<RunResult>;
  /** mam that must succeed: its stdout */
  ok(args: string[], extra?: Record<string, string>): Promise<string>;
  /** a demo agent session on this host's tmux server */
  demo(name: string, role: "lead" | "worker" | "reviewer", args?: string[]): Promise<void>;
  /** the pane of a session, as its screen shows it now */
  screen(session: string): string;
  /** the job's journal on this host */
  journal(id: string): JobEvent[];
  /** the origin of the events this host's journal of the job wrote itself (undefined: none yet) */
  origin(id: string): string | undefined;
  log(): string;
  stop(): Promise<void>;
}

/** runs a command line for a host (its env and workspace given) */
export type HostRunner = (argv: string[], o: { env: Record<string, string>; cwd: string; timeoutMs?: number }) => Promise<RunResult>;

/** run a host's commands inside its namespace of a network lab (bounded like run: 60 s by default) */
export function labRunner(lab: NetLab, member: string): HostRunner {
  return async (argv, o) => {
    const t0 = performance.now();
    const r = await lab.exec(member, argv, { env: o.env, cwd: o.cwd, timeoutMs: o.timeoutMs ?? 60_000 });
    return { code: r.code, stdout: r.stdout, stderr: r.stderr, ms: performance.now() - t0 };
  };
}

/**
 * a host under `root` (a sandbox's folder); `brokerEnv` points it at the team's broker; `cmd` is
 * the words that run mam (default: the binary the tests run; the bench passes its own); `runner`
 * runs them (default: here, as users run it; labRunner: inside a network namespace)
 */
export function makeHost(root: string, name: string, brokerEnv: Record<string, string>, extra: Record<string, string> = {}, cmd: string[] = MAM_CMD, runner: HostRunner = run): Host {
  const dir = join(root, name);
  const home = join(dir, "home");
  const ws = join(dir, "ws");
  for (const d of [home, ws]) mkdirSync(d, { recursive: true });
  const wsReal = realpathSync(ws);
  const tmux = tmuxServerName(`mt${name}`);
  const env: Record<string, string> = {
    ...baseEnv(),
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    NO_COLOR: "1",
    MAM_HOST: name,
    MAM_WORKSPACE: wsReal,
    RECONCILE_POLL_INTERVAL: "1",
    MAM_BROKER_RETRY_S: "1",
    // the tmux server's socket inside the host's folder: the reaper finds what it left
    TMUX_TMPDIR: dir,
    ...brokerEnv,
    ...extra,
  };
  delete env.TMUX;
  const h: Host = {
    name,
    root: dir,
    home,
    ws: wsReal,
    tmux,
    env,
    mam: (args, more = {}, timeoutMs) => runner([...cmd, ...args], { env: { ...env, ...more }, cwd: wsReal, timeoutMs }),
    async ok(args, more = {}) {
      const r = await h.mam(args, more);
      if (r.code !== 0) throw new Error(`${name}: mam ${args.join(" ")} → ${r.code}\n${r.stdout}${r.stderr}\ndaemon log:\n${h.log()}`);
      return r.stdout;
    },
    async demo(session, role, args = []) {
      await h.ok(["create", "--agent", "demo", "--role", role, "--session", session, "--mux", "tmux", "--tmux-server", tmux, "--", "--role", role === "reviewer" ? "reviewer" : "worker", ...args]);
    },
    screen(session) {
      const r = Bun.spawnSync(["tmux", "-L", tmux, "capture-pane", "-p", "-S", "-2000", "-t", session], { env });
      return r.stdout.toString();
    },
    journal(id) {
      try {
        return readFileSync(join(wsReal, ".mam", "jobs", `${id}.events.ndjson`), "utf8")
          .split("\n")
          .filter((l) => l.trim())
          .map((l) => JSON.parse(l) as JobEvent);
      } catch {
        return [];
      }
    },
    origin(id) {
      try {
        return readFileSync(join(wsReal, ".mam", "jobs", `${id}.origin`), "utf8").trim() || undefined;
      } catch {
        return undefined;
      }
    },
    log() {
      try {
        return readFileSync(join(wsReal, ".mam", "monitor.log"), "utf8");
      } catch {
        return "";
      }
    },
    async stop() {
      await h.mam(["daemon", "stop"]).catch(() => undefined);
      await killTmuxServer(tmux, env, dir);
    },
  };
  return h;
}

/** A makes the team (named `team`), the others join it with A's code */
export async function formTeam(hosts: Host[], team = "lab"): Promise<void> {
  const [first, ...rest] = hosts;
  await first!.ok(["team", "init", team]);
  const code = (await first!.ok(["team", "code"])).trim().split(/\s+/).pop()!;
  for (const h of rest) await h.ok(["team", "join", code]);
}

/** wait until `from` sees each address running in the fleet */
export async function untilAnnounced(from: Host, addresses: string[], timeoutMs = 20_000): Promise<void> {
  let last = "";
  const ok = await waitFor(async () => {
    const r = await from.mam(["status", "--fleet", "--json"]);
    last = r.stdout + r.stderr;
    if (r.code !== 0) return false;
    const doc = JSON.parse(r.stdout) as { workspaces: { online: boolean; agents: { address: string }[] }[] };
    const seen = new Set(doc.workspaces.filter((w) => w.online).flatMap((w) => w.agents.map((a) => a.address)));
    return addresses.every((a) => seen.has(a));
  }, timeoutMs, 200);
  if (!ok) throw new Error(`${from.name} does not see ${addresses.join(", ")} in the fleet:\n${last}`);
}

/**
 * the host's journal of a job once it holds n events: `mam job wait` hears the broker too, so it
 * may return before the daemon has journalled the event that ended the job
 */
export async function journalled(h: Host, id: string, n: number, timeoutMs = 10_000): Promise<JobEvent[]> {
  await waitFor(() => h.journal(id).length >= n, timeoutMs, 50);
  return h.journal(id);
}

/** (event, source) of a journal, in order */
export const stages = (evs: JobEvent[]) => evs.map((e) => `${e.event} ${e.source}`);

/** the identities (origin#seq) that appear more than once */
export const doubled = (evs: JobEvent[]) => {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const e of evs) {
    const k = `${e.origin ?? ""}#${e.seq}`;
    if (seen.has(k)) out.push(k);
    seen.add(k);
  }
  return out;
};

export interface FleetWorld {
  A: Host;
  /** a second workspace of hostA: same host name, same HOME (so the same team) */
  A2: Host;
  B: Host;
  C: Host;
  all: Host[];
}

/**
 * the dashboard's fleet tests' world: team `lab` of hostA, hostB and hostC, and a second workspace
 * on hostA; demo agents lead@hostA, side@hostA (A2), w@hostB (worker), r@hostC (reviewer), every
 * one announced to A when this returns
 */
export async function fleetWorld(root: string, brokerEnv: Record<string, string>): Promise<FleetWorld> {
  const [A, B, C] = ["hostA", "hostB", "hostC"].map((n) => makeHost(root, n, brokerEnv)) as [Host, Host, Host];
  await formTeam([A, B, C]);
  const A2 = makeHost(root, "hostA2", brokerEnv, { MAM_HOST: "hostA", HOME: A.home, XDG_CONFIG_HOME: join(A.home, ".config") });
  const w: FleetWorld = { A, A2, B, C, all: [A, A2, B, C] };
  await A.demo("lead", "lead");
  await A2.demo("side", "worker");
  await B.demo("w", "worker", ["--think-ms", "50"]);
  await C.demo("r", "reviewer");
  await untilAnnounced(A, ["w@hostB", "r@hostC", "lead@hostA", "side@hostA"]);
  return w;
}

/** the events of one origin, as `seq event source`, in journal order */
export const ofOrigin = (evs: JobEvent[], origin: string | undefined) => evs.filter((e) => e.origin === origin).map((e) => `${e.seq} ${e.event} ${e.source}`);

/** how many times `needle` appears in `hay` */
export const occurrences = (hay: string, needle: string) => hay.split(needle).length - 1;

/** has the host's journal of the job reached this stage (`event source`)? */
export const hasStage = (h: Host, id: string, stage: string) => stages(h.journal(id)).includes(stage);

/** a host's journal of the job, one `origin#seq event source` a line, for failure messages */
export const journalText = (h: Host, id?: string) => (id ? h.journal(id).map((e) => `  ${e.origin}#${e.seq} ${e.event} ${e.source}`).join("\n") : "");

/** wait for `cond` (bounded), or fail with `what` and the story of what happened */
export async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs: number, story: () => string): Promise<void> {
  if (!(await waitFor(cond, timeoutMs, 100))) throw new Error(`not within ${timeoutMs} ms: ${what}\n${story()}`);
}

/**
 * nothing lost, nothing doubled: the delegator's journal holds the worker host's own events
 * exactly as the worker host's journal orders them, neither has an identity twice, and the job's
 * header was typed once into `session` on the worker host
 */
export function expectWhole(delegator: Host, worker: Host, id: string, session: string, story: string): void {
  const a = delegator.journal(id);
  const b = worker.journal(id);
  expect(doubled(a), story).toEqual([]);
  expect(doubled(b), story).toEqual([]);
  const origin = worker.origin(id);
  expect(origin).toBeDefined();
  expect(ofOrigin(a, origin), story).toEqual(ofOrigin(b, origin));
  expect(occurrences(worker.screen(session), `[mam] Job ${id} delegated`), story).toBe(1);
}

/** a job's story across three hosts, for failure messages: the delegator's and the worker's journals of it, and every daemon's log */
export function threeHostStory(A: Host, B: Host, C: Host, id?: string): string {
  return `A's journal:\n${journalText(A, id)}\nB's journal:\n${journalText(B, id)}\nA's daemon:\n${A.log()}\nB's daemon:\n${B.log()}\nC's daemon:\n${C.log()}`;
}

/**
 * the delegator's stages of a loop job whose reviewer passes the second review: `worker` and
 * `reviewer` on two other hosts (`mam@<host>` delivers to each)
 */
export function loopStages(worker: string, reviewer: string): string[] {
  const hostOf = (a: string) => a.slice(a.indexOf("@") + 1);
  const to = (a: string) => [`offered mam`, `received mam@${hostOf(a)}`, `delivered mam@${hostOf(a)}`, `progress ${a}`, `completed ${a}`, "progress mam"];
  const round = [...to(worker), ...to(reviewer)];
  return [...round.slice(0, 3), `started ${worker}`, ...round.slice(3), ...round.slice(0, -1)];
}
