// A world for mam-on-herdr tests: a sandbox (workspace, HOME, fakes first on PATH), the fake
// agents, a fake herdr server, and the calls tests make on them; torn down (server stopped,
// leftovers waited for, sandbox reaped) after the test body.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type FakeHerdrServer, installFakeAgents, installFakeHerdr, startFakeHerdr } from "./herdr.ts";
import { type RunResult, runMam } from "./mam.ts";
import { anchoredPids, makeSandbox, type Sandbox, waitFor } from "./sandbox.ts";

export const SERVER = "mam";
export type Row = Record<string, any>;
export type Input = { at: number; kind: "text" | "keys"; text?: string; keys?: string[] };

export interface World {
  sb: Sandbox;
  h: FakeHerdrServer;
  ws: string;
  env: Record<string, string>;
  reg: string;
  /** mam in the workspace (cwd ws) */
  mam(args: string[], o?: { env?: Record<string, string>; cwd?: string }): Promise<RunResult>;
  /** mam create --agent KIND on the server, --no-onboard unless onboard */
  create(kind: string, extra?: string[], o?: { onboard?: boolean; ws?: string }): Promise<RunResult>;
  rows(path?: string): Row[];
  row(name: string): Row;
  panes(): Promise<Row[]>;
  inputs(pane: string): Promise<Input[]>;
}

export interface WorldOptions {
  /** extra environment of the herdr server (and so of its panes and agents) */
  herdrEnv?: Record<string, string>;
  /**
   * the herdr version the fake plays (0.8.0 when not given; "0.8.2" plays 0.8.2's behaviour):
   * FAKE_HERDR_VERSION in the world's env, so the server, mam's herdr calls and the panes agree
   */
  herdrVersion?: string;
  /** the socket protocol the fake speaks (FAKE_HERDR_PROTOCOL in the world's env; else its release's: 19, 0.8.2: 20) */
  herdrProtocol?: number;
  /** put a logging wrapper first on PATH as `herdr` (the fake moves to <root>/fakebin) */
  wrap?: boolean;
}

/** the argv lines the logging herdr wrapper saw */
export function wrapperLog(sb: Sandbox): string[] {
  const p = join(sb.root, "herdr-calls.log");
  return existsSync(p) ? readFileSync(p, "utf8").split("\n").filter(Boolean) : [];
}

/** a `herdr` that logs its argv and execs the fake; server `garb` answers garbage */
export function writeWrapper(sb: Sandbox): string {
  const fake = installFakeHerdr(join(sb.root, "fakebin"));
  const p = join(sb.bin, "herdr");
  writeFileSync(
    p,
    `#!/bin/bash\nprintf '%s\\n' "$*" >> '${join(sb.root, "herdr-calls.log")}'\ncase " $* " in *" --session garb "*) echo 'this is not json'; exit 0 ;; esac\ncase " $* " in *" agent start "*) [ -n "\${WRAP_FAIL_AGENT_START:-}" ] && { echo '{"error":{"code":"agent_start_refused","message":"refused by the test"}}' >&2; exit 1; } ;; esac\ncase " $* " in *" agent start "*) if [ -n "\${WRAP_BUSY_AGENT_START:-}" ]; then n=$(cat '${join(sb.root, "busy.count")}' 2>/dev/null || echo 0); if [ "$n" -lt "$WRAP_BUSY_AGENT_START" ]; then echo $((n + 1)) > '${join(sb.root, "busy.count")}'; echo '{"id":"cli:agent:start","error":{"code":"agent_pane_busy","message":"agent target pane is not an available shell"}}' >&2; exit 1; fi; fi ;; esac\nexec '${fake}' "$@"\n`,
    { mode: 0o755 },
  );
  return p;
}

export async function withWorld(o: WorldOptions, fn: (w: World) => Promise<void>): Promise<void> {
  const sb = makeSandbox("mam-sh-");
  if (o.herdrVersion !== undefined) sb.env.FAKE_HERDR_VERSION = o.herdrVersion;
  if (o.herdrProtocol !== undefined) sb.env.FAKE_HERDR_PROTOCOL = String(o.herdrProtocol);
  installFakeAgents(sb.bin);
  let binDir: string | undefined;
  if (o.wrap) {
    mkdirSync(join(sb.root, "fakebin"));
    writeWrapper(sb);
    binDir = join(sb.root, "fakebin");
  }
  const h = await startFakeHerdr(sb, { session: SERVER, env: o.herdrEnv, binDir });
  const ws = sb.ws;
  const reg = join(ws, ".mam", "agent-sessions.yaml");
  const w: World = {
    sb,
    h,
    ws,
    env: sb.env,
    reg,
    mam: (args, ro = {}) => runMam(args, { env: ro.env ?? sb.env, cwd: ro.cwd ?? ws, timeoutMs: 120_000 }),
    create: (kind, extra = [], co = {}) =>
      w.mam(["create", "--agent", kind, "--herdr-session", SERVER, ...(co.onboard ? [] : ["--no-onboard"]), ...(co.ws ? ["--workspace", co.ws] : []), ...extra], { cwd: co.ws ?? ws }),
    rows: (path = reg) => {
      const d = Bun.YAML.parse(readFileSync(path, "utf8")) as { herdr_sessions?: Row[]; tmux_sessions?: Row[] };
      return [...(d.herdr_sessions ?? []), ...(d.tmux_sessions ?? [])];
    },
    row: (name) => {
      const r = w.rows().filter((x) => x.name === name);
      if (r.length !== 1) throw new Error(`expected one row named ${name}, found ${r.length}: ${readFileSync(reg, "utf8")}`);
      return r[0]!;
    },
    panes: async () => (await h.call("pane.list", {})).panes as Row[],
    inputs: (pane) => h.inputs(pane) as Promise<Input[]>,
  };
  try {
    await fn(w);
  } finally {
    await h.stop();
    // the server's panes were SIGKILLed; on a loaded machine a killed agent can take a moment to
    // be scheduled and die: wait for that (bounded), so cleanup reports only real leftovers
    await waitFor(() => anchoredPids(sb.root).length === 0, 5000);
    await sb.cleanup();
  }
}

/** the text lines typed into a pane (each text followed by an Enter key) */
export function typed(inputs: Input[]): string[] {
  return inputs.filter((i) => i.kind === "text").map((i) => i.text!);
}

/** typed lines that start the agent `exe` (the agent command lines) */
export function agentLines(inputs: Input[], exe = "claude"): string[] {
  return typed(inputs).filter((t) => t === exe || t.startsWith(`${exe} `));
}

export function ok(r: RunResult): RunResult {
  if (r.code !== 0) throw new Error(`mam exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

/** the name in create's summary line */
export function createdName(r: RunResult): string {
  const m = /^created (\S+) \(/m.exec(r.stdout);
  if (!m) throw new Error(`no summary line in: ${r.stdout} ${r.stderr}`);
  return m[1]!;
}

export async function paneText(w: World, pane: string): Promise<string> {
  const r = (await w.h.call("pane.read", { pane_id: pane, source: "recent_unwrapped", lines: 200 })) as Row;
  return String(r.read?.text ?? "");
}

export async function waitPaneText(w: World, pane: string, needle: string): Promise<string> {
  let text = "";
  const found = await waitFor(async () => (text = String(await paneText(w, pane))).includes(needle), 10_000, 50);
  if (!found) throw new Error(`pane ${pane} never showed ${JSON.stringify(needle)}; it shows:\n${text}`);
  return text;
}

/** the environment of a process as a map */
export function environOf(pid: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")) {
    const i = kv.indexOf("=");
    if (i > 0) out[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return out;
}

/** every file and folder under dir (relative), for "nothing was created" checks */
export function tree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, rel: string) => {
    let ents: string[] = [];
    try {
      ents = readdirSync(d);
    } catch {
      return;
    }
    for (const e of ents) {
      const p = join(d, e);
      out.push(join(rel, e));
      try {
        if (statSync(p).isDirectory()) walk(p, join(rel, e));
      } catch {}
    }
  };
  walk(dir, "");
  return out.sort();
}

