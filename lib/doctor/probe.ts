// mam doctor, the half that looks: what is installed on PATH and in which version, the herdr mam
// would use, whether the broker answers, and this workspace's registry, daemon and hooks (Facts
// for ./diagnose.ts). It changes nothing (but herdr's version cache, as any mam call on herdr) and
// it is bounded: each process it runs (`tmux -V`, an
// agent's `--version` when its npm package does not say) has a 5 s limit, the broker a 2 s connect.
import { readGaps, recentGaps } from "../team/gaps.ts";
import { existsSync, readFileSync } from "node:fs";
import { connect } from "node:net";
import { dirname, join } from "node:path";
import { oursIn } from "../agents/hooks-config.ts";
import { HOOK_KINDS, KINDS, VERIFIED } from "../agents/kinds/index.ts";
import { brokerConfigFromEnv, describeBroker, describeEndpoint } from "../jobs/broker-config.ts";
import { execCapture } from "../mux/exec.ts";
import { findHerdr } from "../mux/herdr-env.ts";
import { herdrSupport } from "../mux/herdr-version.ts";
import { readRegistry } from "../registry/load.ts";
import { bwrapPath, probeBwrap } from "../sandbox/inputs.ts";
import { registryPath } from "../registry/paths.ts";
import { daemonDisabled, daemonStatus } from "../sys/daemon-proc.ts";
import { type Env, homeDir, mamDir, realOr } from "../sys/paths.ts";
import { selfCommand } from "../sys/self.ts";
import { type AgentFact, type Facts, versionIn } from "./diagnose.ts";

const TIMEOUT_MS = 5000;
const CONNECT_MS = 2000;

const which = (exe: string, env: Env) => Bun.which(exe, { PATH: env.PATH ?? "" });

/**
 * the version of an npm-installed CLI from its package.json (the nearest one above the real file,
 * inside node_modules): no process to start (claude's `--version` takes seconds on a busy machine)
 */
function npmVersionOf(exePath: string): string | null {
  let dir = dirname(realOr(exePath));
  for (let i = 0; i < 6 && dir.includes("/node_modules/"); i++, dir = dirname(dir)) {
    const p = join(dir, "package.json");
    if (!existsSync(p)) continue;
    try {
      const v = (JSON.parse(readFileSync(p, "utf8")) as { version?: unknown }).version;
      if (typeof v === "string" && versionIn(v) !== null) return v;
    } catch {}
    return null;
  }
  return null;
}

async function versionOf(argv: string[], env: Env): Promise<string | null> {
  const r = await execCapture(argv, { env, timeoutMs: TIMEOUT_MS }).catch(() => undefined);
  return r && r.code === 0 ? versionIn(`${r.stdout}\n${r.stderr}`) : null;
}

async function agentFact(kind: string, env: Env): Promise<AgentFact> {
  const k = KINDS[kind]!;
  const v = VERIFIED[kind];
  const path = which(k.exe, env);
  const fact: AgentFact = { kind, exe: k.exe, path, version: null, verified: v?.version ?? null, newest: v?.newest ?? null, pkg: v?.package ?? null };
  if (path !== null) fact.version = npmVersionOf(path) ?? (await versionOf([path, "--version"], env));
  return fact;
}

function reachable(host: string, port: number): Promise<string | null> {
  return new Promise((done) => {
    const s = connect({ host, port });
    const finish = (e: string | null) => {
      clearTimeout(timer);
      s.destroy();
      done(e);
    };
    const timer = setTimeout(() => finish(`no answer within ${CONNECT_MS / 1000} s`), CONNECT_MS);
    s.once("connect", () => finish(null));
    s.once("error", (e: NodeJS.ErrnoException) => finish(e.code ? `${e.code}` : e.message));
  });
}

async function brokerFact(env: Env): Promise<Facts["broker"]> {
  const raw = env.MQTT_BROKER ?? "";
  if (raw === "") return { configured: null, address: null, reachable: null, error: null };
  try {
    const cfg = brokerConfigFromEnv(env);
    // a cluster's nodes: reachable when one answers (mam connects to the first that does); each that does not is named
    const errs = await Promise.all(cfg.endpoints.map((ep) => reachable(ep.host, ep.port)));
    const down = cfg.endpoints.flatMap((ep, i) => (errs[i] === null ? [] : [cfg.endpoints.length > 1 ? `${describeEndpoint(ep)}: ${errs[i]}` : errs[i]!]));
    return { configured: raw, address: describeBroker(cfg), reachable: errs.some((e) => e === null), error: down.length ? down.join("; ") : null };
  } catch (e) {
    return { configured: raw, address: null, reachable: null, error: (e as Error).message };
  }
}

async function herdrFact(env: Env): Promise<Facts["herdr"]> {
  let path: string;
  try {
    path = findHerdr(env);
  } catch (e) {
    // MAM_HERDR_BIN that is not a herdr is an error worth showing; none on PATH is "not installed"
    return env.MAM_HERDR_BIN ? { path: env.MAM_HERDR_BIN, support: null, error: (e as Error).message } : { path: null, support: null, error: null };
  }
  try {
    return { path, support: await herdrSupport(path, env), error: null };
  } catch (e) {
    return { path, support: null, error: (e as Error).message };
  }
}

function workspaceFact(ws: string | null, env: Env): Facts["workspace"] {
  if (ws === null || !existsSync(mamDir(ws))) return null;
  let registryError: string | null = null;
  const kinds = new Set<string>();
  let running = 0;
  let sandboxed = 0;
  const yaml = registryPath(ws, env);
  const hasRegistry = existsSync(yaml);
  if (hasRegistry) {
    try {
      const d = readRegistry(yaml);
      for (const r of [...d.herdr_sessions, ...d.tmux_sessions]) {
        if (r.status === "running") running++;
        if ((r.status === "running" || r.status === "stopped") && r.sandbox !== undefined) sandboxed++;
        if ((r.status === "running" || r.status === "stopped") && typeof r.agent === "string" && Object.hasOwn(KINDS, r.agent)) kinds.add(r.agent);
      }
    } catch (e) {
      registryError = (e as Error).message;
    }
  }
  const d = daemonStatus(ws);
  const hooks: NonNullable<Facts["workspace"]>["hooks"] = [];
  for (const [kind, hk] of Object.entries(HOOK_KINDS)) {
    if (!kinds.has(kind) && which(KINDS[kind]!.exe, env) === null) continue; // neither used nor installed
    const files = [join(ws, hk.projectFile), hk.globalFile(env, homeDir(env))];
    let best: { state: "installed" | "partial" | "not-installed" | "unreadable"; where: string } = { state: "not-installed", where: files.join(" or ") };
    for (const f of files) {
      if (!existsSync(f)) continue;
      let events: string[];
      try {
        events = oursIn(JSON.parse(readFileSync(f, "utf8") || "{}"), kind).events;
      } catch {
        if (best.state === "not-installed") best = { state: "unreadable", where: f };
        continue;
      }
      if (events.length === 0) continue;
      const state = hk.events.every((e) => events.includes(e)) ? "installed" : "partial";
      if (state === "installed" || best.state !== "installed") best = { state, where: f };
    }
    hooks.push({ kind, ...best });
  }
  const gaps = recentGaps(readGaps(ws), Date.now());
  return {
    ...(gaps.length ? { gaps } : {}),
    registry: yaml,
    hasRegistry,
    registryError,
    kinds: [...kinds].sort(),
    daemon: d ? { pid: d.pid, mode: d.mode, since: d.since } : null,
    daemonDisabled: daemonDisabled(env),
    running,
    sandboxed,
    hooks,
  };
}

/** bubblewrap, and whether it can make a sandbox here (lib/sandbox/inputs.ts, as create checks it) */
function sandboxFact(env: Env): Facts["sandbox"] {
  let bwrap: string;
  try {
    bwrap = bwrapPath(env);
  } catch {
    return { bwrap: null, error: null };
  }
  try {
    probeBwrap(bwrap, true);
    return { bwrap, error: null };
  } catch (e) {
    return { bwrap, error: (e as Error).message.replace(/^.*?cannot make a sandbox on this machine: /, "") };
  }
}

/** what the binary says of itself (lib/cli/version.ts) */
export interface Self {
  version: string;
  commit: string;
  target: string;
}

/** everything mam doctor looks at; `ws`: the workspace (null: none) */
export async function probe(me: Self, ws: string | null, env: Env): Promise<Facts> {
  const self = selfCommand();
  const compiled = Bun.isStandaloneExecutable;
  const onPath = which("mam", env);
  const tmuxPath = which("tmux", env);
  const [agents, tmuxVersion, herdr, broker] = await Promise.all([
    Promise.all(Object.keys(KINDS).filter((k) => k !== "demo" && k !== "shell").map((k) => agentFact(k, env))),
    tmuxPath ? versionOf([tmuxPath, "-V"], env) : Promise.resolve(null),
    herdrFact(env),
    brokerFact(env),
  ]);
  return {
    mam: { version: me.version, commit: me.commit, target: me.target, self: compiled ? realOr(self[0]!) : self.join(" "), compiled, onPath, onPathIsSelf: onPath !== null && compiled && realOr(onPath) === realOr(self[0]!) },
    agents,
    tmux: { path: tmuxPath, version: tmuxVersion },
    herdr,
    broker,
    sandbox: sandboxFact(env),
    workspace: workspaceFact(ws, env),
  };
}
