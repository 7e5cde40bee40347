// End-to-end job fixtures: one fake herdr per describe block, a workspace folder per test, fake
// agents that follow the job header (they run its `mam job event` lines), and small readers.
//
// The fake agent runs tests/…/job-agent (FAKE_AGENT_ON_PROMPT) with each prompt line. job-agent
// runs the header's `started`, `progress` and `completed` lines (never `error`), as written, with
// the environment of <workspace>/.agent-env (broker settings of the test). Controls, per
// workspace:
//   <ws>/.gate/            when it exists, each of progress / completed waits for <ws>/.gate/<event>
//   BLOCK=1 in .agent-env  while it waits at a gate, the pane reports itself blocked to herdr
//   PASSIVE=1 in .agent-env  runs nothing (the test reports for the agent, e.g. from "another machine")
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeHerdrServer, installFakeAgents, startFakeHerdr } from "./herdr.ts";
import { MAM_BIN, MAM_SH, runMam, type RunResult } from "./mam.ts";
import { anchoredPids, makeSandbox, type Sandbox, waitFor } from "./sandbox.ts";
import { writeScript } from "./tmux.ts";

export const JOB_AGENT = `#!/usr/bin/env bash
# FAKE_AGENT_ON_PROMPT: run the job header's started / progress / completed lines
line="$1"
ws="\${MAM_WORKSPACE:-$PWD}"
if [ -f "$ws/.agent-env" ]; then set -a; . "$ws/.agent-env"; set +a; fi
[ "\${PASSIVE:-}" = 1 ] && exit 0
case "$line" in *" job event "*) ;; *) exit 0 ;; esac
cmd="\${line#"\${line%%[![:space:]]*}"}"
# the words before "job event" name mam (mam, its absolute path, or bun and mam.ts)
set -- \${cmd#* job event }
ev="$2"
case "$ev" in started | progress | completed) ;; *) exit 0 ;; esac
if [ "$ev" != started ] && [ -d "$ws/.gate" ]; then
  if [ "\${BLOCK:-}" = 1 ]; then
    "\${HERDR_BIN_PATH:-herdr}" pane report-agent "$HERDR_PANE_ID" --source custom:test --agent claude --state blocked >/dev/null 2>&1
  fi
  for _ in $(seq 1 1200); do [ -e "$ws/.gate/$ev" ] && break; sleep 0.1; done
fi
echo "$(date +%s.%N) run: $cmd" >>"$ws/.agent.log"
eval "$cmd" >>"$ws/.agent.log" 2>&1
echo "$(date +%s.%N) exit $?" >>"$ws/.agent.log"
`;

export interface E2E {
  sb: Sandbox;
  herdr: FakeHerdrServer;
  server: string;
  cleanup(): Promise<void>;
}

/** a sandbox with fake agents, `mam` on PATH, job-agent, and one fake herdr server */
export async function startE2E(prefix: string, server = "e2e"): Promise<E2E> {
  const sb = makeSandbox(prefix);
  installFakeAgents(sb.bin);
  if (MAM_BIN) symlinkSync(MAM_BIN, join(sb.bin, "mam"));
  else writeScript(sb.bin, "mam", `exec ${MAM_SH} "$@"`);
  const agent = writeScript(sb.bin, "job-agent", JOB_AGENT);
  const herdr = await startFakeHerdr(sb, { session: server, env: { FAKE_AGENT_ON_PROMPT: agent } });
  return {
    sb,
    herdr,
    server,
    async cleanup() {
      await herdr.stop();
      // name what is left before the reaper takes it (the cleanup error has only pids)
      for (const pid of anchoredPids(sb.root)) {
        let cmd = "?";
        try {
          cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
        } catch {}
        console.error(`left behind in ${sb.root}: ${pid} ${cmd}`);
      }
      await sb.cleanup();
    },
  };
}

let wsNo = 0;

export interface Ws {
  dir: string;
  /** a session name unique on the shared server (herdr agent names are server-wide) */
  n(base: string): string;
  env: Record<string, string>;
  mam(args: string[], extra?: Record<string, string | undefined>, timeoutMs?: number): Promise<RunResult>;
}

/**
 * a fresh workspace folder in the sandbox; env: the sandbox env with the daemon allowed, quick
 * polls, `extra` (broker settings), which job-agent also gets
 */
export function newWorkspace(e: E2E, extra: Record<string, string> = {}, opts: { gated?: boolean; agent?: Record<string, string> } = {}): Ws {
  const dir = join(e.sb.root, `w${++wsNo}`);
  mkdirSync(dir, { recursive: true });
  if (opts.gated) mkdirSync(join(dir, ".gate"));
  const agentEnv = { ...extra, ...(opts.agent ?? {}) };
  writeFileSync(join(dir, ".agent-env"), Object.entries(agentEnv).map(([k, v]) => `${k}='${v}'\n`).join(""));
  const env = e.sb.with({ MAM_NO_SUBSCRIBER_DAEMON: undefined, RECONCILE_POLL_INTERVAL: "1", MAM_AGENT_SETTLE_S: "0.3", ...extra });
  const tag = `w${wsNo}`;
  return {
    dir,
    n: (base) => `${base}-${tag}`,
    env,
    mam: (args, more = {}, timeoutMs = 60_000) => {
      const en = { ...env };
      for (const [k, v] of Object.entries(more)) {
        if (v === undefined) delete en[k];
        else en[k] = v;
      }
      const cut = args.indexOf("--");
      const argv = cut < 0 ? [...args, "--workspace", dir] : [...args.slice(0, cut), "--workspace", dir, ...args.slice(cut)];
      return runMam(argv, { env: en, cwd: dir, timeoutMs });
    },
  };
}

/**
 * `mam daemon ensure` in the workspace, then wait until it reports `mode`; its pid. The workspace
 * goes into `started` at once (the caller stops those daemons after each test, a failed wait too).
 */
export async function ensureDaemon(w: Ws, mode: "mqtt" | "polling", started: Ws[]): Promise<number> {
  const r = await w.mam(["daemon", "ensure"]);
  if (r.code !== 0) throw new Error(`daemon ensure: ${r.stderr}`);
  started.push(w);
  const ok = await waitFor(async () => {
    const s = await w.mam(["daemon", "status", "--json"]);
    return s.code === 0 && JSON.parse(s.stdout).mode === mode;
  }, 20_000, 100);
  if (!ok) throw new Error(`the daemon did not reach ${mode} mode: ${monitorLog(w.dir)}`);
  return Number(r.stdout.trim());
}

/** mam create of a fake agent on the e2e server; returns its pane id */
export async function createAgent(e: E2E, w: Ws, name: string, role: string, opts: { agent?: string; extra?: string[]; agentArgs?: string[] } = {}): Promise<string> {
  const r = await w.mam(["create", "--agent", opts.agent ?? "claude", "--role", role, "--session", name, "--herdr-session", e.server, "--no-onboard", "--json", ...(opts.extra ?? []), ...(opts.agentArgs ? ["--", ...opts.agentArgs] : [])]);
  if (r.code !== 0) throw new Error(`mam create ${name} failed (${r.code}): ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout).pane as string;
}

export const journalOf = (ws: string, id: string) => join(ws, ".mam", "jobs", `${id}.events.ndjson`);

/** how many job records the workspace holds (a refused submit writes none) */
export function jobRecords(ws: string): number {
  try {
    return readdirSync(join(ws, ".mam", "jobs")).filter((f) => f.endsWith(".json")).length;
  } catch {
    return 0;
  }
}

export function journalEvents(ws: string, id: string): { seq: number; event: string; detail: string; source: string }[] {
  const p = journalOf(ws, id);
  if (!existsSync(p)) return [];
  return readFileSync(p, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

/** the text typed into a pane, all inputs joined */
export async function typed(herdr: FakeHerdrServer, pane: string): Promise<string> {
  const ins = await herdr.inputs(pane);
  return ins.map((i) => i.text ?? "").join("");
}

export async function waitTyped(herdr: FakeHerdrServer, pane: string, needle: string, ms = 20_000): Promise<boolean> {
  return waitFor(async () => (await typed(herdr, pane)).includes(needle), ms, 100);
}

export function openGate(ws: string, ...events: string[]): void {
  mkdirSync(join(ws, ".gate"), { recursive: true });
  for (const ev of events) writeFileSync(join(ws, ".gate", ev), "");
}

export const agentLog = (ws: string) => (existsSync(join(ws, ".agent.log")) ? readFileSync(join(ws, ".agent.log"), "utf8") : "");
export const monitorLog = (ws: string) => (existsSync(join(ws, ".mam", "monitor.log")) ? readFileSync(join(ws, ".mam", "monitor.log"), "utf8") : "");

/** `mam job submit ARGS` in the workspace: the new job's id (anything but a bare id on stdout throws) */
export async function submitJob(w: Ws, args: string[]): Promise<string> {
  const r = await w.mam(["job", "submit", ...args]);
  if (r.code !== 0 || !/^[0-9a-f]{8}\n$/.test(r.stdout)) throw new Error(`job submit: ${r.code} ${r.stdout}${r.stderr}`);
  return r.stdout.trim();
}
