// mam doctor, the pure half: what mam found on this machine and in this workspace (Facts, gathered
// by ./probe.ts) becomes one check per piece, each ok, info, warn or fail, with the fix for
// anything short of ok. A version of an agent CLI other than the one mam was verified on is a
// warning, never a failure: mam still drives it (docs/real-agents.md). Only what stops mam from
// working at all fails: no agent CLI, no multiplexer, a herdr too old, a broker named but
// unreachable, an unreadable registry, an agent of the registry whose CLI is gone.
import type { Support } from "../mux/herdr-version.ts";
import { visible } from "../sys/sanitize.ts";

export type CheckStatus = "ok" | "info" | "warn" | "fail";

export interface Check {
  /** stable id, e.g. "agent.claude", "broker" */
  id: string;
  /** what is checked, as the text shows it */
  name: string;
  status: CheckStatus;
  detail: string;
  /** what to do about it; null when nothing is to be done */
  fix: string | null;
}

export interface AgentFact {
  kind: string;
  exe: string;
  /** where it is on PATH; null: not found */
  path: string | null;
  version: string | null;
  /** the (oldest) version mam was verified on, else null (an unverified kind) */
  verified: string | null;
  /** the newest version mam was verified on, when it differs from `verified` (the supported range) */
  newest?: string | null;
  /** its npm package, when it installs from npm */
  pkg: string | null;
}

export interface Facts {
  mam: { version: string; commit: string; target: string; self: string; compiled: boolean; onPath: string | null; onPathIsSelf: boolean };
  agents: AgentFact[];
  tmux: { path: string | null; version: string | null };
  herdr: { path: string | null; support: Support | null; error: string | null };
  broker: { configured: string | null; address: string | null; reachable: boolean | null; error: string | null };
  /** bubblewrap for --sandbox bwrap: where it is (null: none), and why it cannot make a sandbox here (null: it can, or none) */
  sandbox: { bwrap: string | null; error: string | null };
  /** null: no workspace here (no .mam/ in the folder or above it) */
  workspace: {
    /** the registry file's path */
    registry: string;
    /** it is there (no agent was ever created here when not) */
    hasRegistry: boolean;
    registryError: string | null;
    /** the agent kinds of the registry's running or stopped rows, once each */
    kinds: string[];
    daemon: { pid: number | null; mode: string; since: string | null } | null;
    daemonDisabled: boolean;
    /** rows that need the daemon (running agents) */
    running: number;
    /** running or stopped rows that run in a sandbox (their resume needs bwrap) */
    sandboxed: number;
    hooks: { kind: string; state: "installed" | "partial" | "not-installed" | "unreadable"; where: string }[];
    /** gaps in other hosts' events on this workspace's jobs in the last day, one sentence per host (lib/team/gaps.ts) */
    gaps?: string[];
  } | null;
}

/** pure: the parts of a dotted version, for comparing (non-numbers count as 0) */
function parts(v: string): number[] {
  return (/^\d+(?:\.\d+)*/.exec(v)?.[0] ?? "").split(".").map((p) => Number(p) || 0);
}

/** pure: < 0, 0 or > 0 as a is older, the same or newer than b */
export function compareVersions(a: string, b: string): number {
  const x = parts(a);
  const y = parts(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

/** pure: the first version number in what a `--version` printed ("codex-cli 0.171.0" → 0.171.0, "tmux 3.3a" → 3.3a) */
export function versionIn(text: string): string | null {
  return /(?<![\w.])\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z.]+|[a-z]+)?/.exec(text)?.[0] ?? null;
}

const install = (a: AgentFact) => (a.pkg ? `npm i -g ${a.pkg}` : `install ${a.exe}`);

function agentCheck(a: AgentFact, used: boolean): Check | undefined {
  const id = `agent.${a.kind}`;
  if (a.path === null) {
    if (used) return { id, name: a.kind, status: "fail", detail: `not installed, and this workspace's registry has ${a.kind} agents (they cannot be resumed)`, fix: install(a) };
    if (a.verified === null) return undefined; // an unverified kind nobody uses: not worth a line
    return { id, name: a.kind, status: "info", detail: "not installed", fix: `to use it: ${install(a)}` };
  }
  if (a.verified === null) return { id, name: a.kind, status: "warn", detail: `${a.version ?? "version unknown"} at ${a.path}: mam has not run this kind for real; its screens are read from its docs`, fix: "use a verified kind for unattended work (claude, codex, gemini, opencode, qwen, cline)" };
  if (a.version === null) return { id, name: a.kind, status: "warn", detail: `at ${a.path}, version unknown (verified: ${a.newest ? `${a.verified} to ${a.newest}` : a.verified})`, fix: `check that \`${a.exe} --version\` runs; ${install(a)}@${a.newest ?? a.verified} is ${a.newest ? "the newest" : "the"} verified one` };
  const newest = a.newest ?? a.verified;
  const older = compareVersions(a.version, a.verified) < 0;
  const newer = compareVersions(a.version, newest) > 0;
  if (newest === a.verified) {
    if (!older && !newer) return { id, name: a.kind, status: "ok", detail: `${a.version} at ${a.path} (the verified version)`, fix: null };
  } else if (!older && !newer) {
    const which = a.version === a.verified ? "the oldest verified version" : a.version === newest ? "the newest verified version" : `within the verified range ${a.verified} to ${newest}`;
    return { id, name: a.kind, status: "ok", detail: `${a.version} at ${a.path} (${which})`, fix: null };
  }
  const verified = newest === a.verified ? a.verified : `${a.verified} to ${newest}`;
  return {
    id,
    name: a.kind,
    status: "warn",
    detail: `${a.version} at ${a.path}: mam was verified on ${verified} (this one is ${newer ? "newer" : "older"}); mam still drives it, but may misread a screen that changed`,
    fix: `${install(a)}@${newest} for the ${newest === a.verified ? "verified" : "newest verified"} one, or report what differs`,
  };
}

function herdrCheck(h: Facts["herdr"], tmux: boolean): Check {
  const name = "herdr";
  if (h.path === null) return { id: "herdr", name, status: "info", detail: tmux ? "not installed: mam uses tmux" : "not installed", fix: "for herdr panes: install herdr 0.8.x (https://herdr.dev), or keep tmux" };
  const s = h.support;
  if (s === null) return { id: "herdr", name, status: "warn", detail: `at ${h.path}: ${h.error ?? "its version could not be read"}`, fix: `check that \`${h.path} --version\` runs` };
  const proto = s.protocol !== undefined ? `, protocol ${s.protocol}` : "";
  if (s.kind === "supported") return { id: "herdr", name, status: "ok", detail: `${s.version}${proto} at ${h.path}`, fix: null };
  if (s.kind === "old") return { id: "herdr", name, status: "fail", detail: `${s.version}${proto} at ${h.path}: mam needs herdr 0.8.0 or newer`, fix: "upgrade herdr to 0.8.x" };
  const what = s.kind === "newer" ? s.version : s.text;
  return { id: "herdr", name, status: "warn", detail: `${what}${proto} at ${h.path}: newer than the herdr mam was checked with (0.8.0 and 0.8.2)`, fix: "mam warns and goes on; if panes misbehave, use herdr 0.8.2 or --mux tmux" };
}

/** pure: the checks, in the order the text shows them */
export function diagnose(f: Facts): Check[] {
  const checks: Check[] = [];
  const m = f.mam;
  const where = `${m.version} (${m.commit}, ${m.target}) at ${m.self}`;
  if (!m.compiled) checks.push({ id: "mam", name: "mam", status: "info", detail: `${where}: run from source`, fix: null });
  else if (m.onPath === null) checks.push({ id: "mam", name: "mam", status: "warn", detail: `${where}; no \`mam\` on PATH`, fix: "put it on PATH (e.g. ~/.local/bin): agents are then told `mam`, not its full path, and hooks and shims find it" });
  else if (!m.onPathIsSelf) checks.push({ id: "mam", name: "mam", status: "warn", detail: `${where}; \`mam\` on PATH is another file, ${m.onPath}`, fix: "remove or replace the other one, so agents and hooks run the same mam as you" });
  else checks.push({ id: "mam", name: "mam", status: "ok", detail: `${where}, the \`mam\` on PATH`, fix: null });

  // multiplexers
  const t = f.tmux;
  checks.push(
    t.path === null
      ? { id: "tmux", name: "tmux", status: "info", detail: "not installed", fix: "for tmux panes: apt install tmux (or brew install tmux)" }
      : { id: "tmux", name: "tmux", status: "ok", detail: `${t.version ?? "version unknown"} at ${t.path}`, fix: null },
  );
  checks.push(herdrCheck(f.herdr, t.path !== null));
  if (t.path === null && f.herdr.path === null) checks.push({ id: "mux", name: "multiplexer", status: "fail", detail: "neither tmux nor herdr is installed: mam has nowhere to run agents", fix: "apt install tmux (or brew install tmux), or install herdr" });

  // agent CLIs
  const used = new Set(f.workspace?.kinds ?? []);
  for (const a of f.agents) {
    const c = agentCheck(a, used.has(a.kind));
    if (c) checks.push(c);
  }
  if (!f.agents.some((a) => a.path !== null)) {
    const verified = f.agents.filter((a) => a.verified !== null && a.pkg !== null).map((a) => a.pkg);
    checks.push({ id: "agents", name: "agent CLIs", status: "fail", detail: "no agent CLI is installed", fix: `install one: npm i -g ${verified[0] ?? "@anthropic-ai/claude-code"} (or ${verified.slice(1).join(", ")}); \`mam demo\` runs without one` });
  }

  // broker
  const b = f.broker;
  if (b.configured === null) checks.push({ id: "broker", name: "broker", status: "info", detail: "none (MQTT_BROKER unset): jobs report through their journals and the daemon polls; a team across machines needs one", fix: "for events as they happen: run mosquitto and set MQTT_BROKER=127.0.0.1:1883" });
  else if (b.address === null) checks.push({ id: "broker", name: "broker", status: "fail", detail: `MQTT_BROKER='${b.configured}': ${b.error ?? "not an address"}`, fix: "set MQTT_BROKER to host, host:port or mqtt://host:port (and MQTT_PORT, if set, to the same port)" });
  else if (b.reachable && b.error !== null) checks.push({ id: "broker", name: "broker", status: "warn", detail: `${b.address}: reachable, but not every node answers (${b.error})`, fix: "mam connects to a node that answers; bring the others back, or take them out of MQTT_BROKER" });
  else if (b.reachable) checks.push({ id: "broker", name: "broker", status: "ok", detail: `${b.address} reachable`, fix: null });
  else checks.push({ id: "broker", name: "broker", status: "fail", detail: `${b.address} unreachable (${b.error ?? "no answer"})`, fix: "start the broker (mosquitto), or fix MQTT_BROKER; until then jobs fall back to their journals" });

  // the sandbox (only --sandbox bwrap needs it; a workspace with sandboxed agents does)
  const sx = f.sandbox;
  const need = f.workspace?.sandboxed ?? 0;
  const needs = need > 0 ? `, and this workspace has ${need} sandboxed agent${need === 1 ? "" : "s"} (they cannot be resumed)` : "";
  if (sx.bwrap === null) checks.push({ id: "sandbox", name: "sandbox", status: need > 0 ? "fail" : "info", detail: `bwrap not installed${needs || " (only --sandbox bwrap needs it)"}`, fix: "apt install bubblewrap (or set MAM_BWRAP to its path)" });
  else if (sx.error !== null) checks.push({ id: "sandbox", name: "sandbox", status: need > 0 ? "fail" : "warn", detail: `${sx.bwrap} cannot make a sandbox here: ${sx.error}${needs}`, fix: "allow unprivileged user namespaces (docs/troubleshooting.md, Sandboxes)" });
  else checks.push({ id: "sandbox", name: "sandbox", status: "ok", detail: `${sx.bwrap} makes sandboxes here`, fix: null });

  // the workspace
  const w = f.workspace;
  if (w === null) {
    checks.push({ id: "workspace", name: "workspace", status: "info", detail: "none here (no .mam/ in this folder or above it)", fix: "`mam create` in a project folder makes one" });
    return checks;
  }
  if (w.registryError !== null) checks.push({ id: "registry", name: "registry", status: "fail", detail: w.registryError, fix: "mam registry check (and mam registry restore --yes to put its backup back)" });
  else if (!w.hasRegistry) checks.push({ id: "registry", name: "registry", status: "info", detail: `none yet (no agent was created in this workspace)`, fix: null });
  else checks.push({ id: "registry", name: "registry", status: "ok", detail: `${w.registry} reads${w.kinds.length ? ` (agents: ${w.kinds.join(", ")})` : ""}`, fix: null });
  if (w.daemon !== null) checks.push({ id: "daemon", name: "daemon", status: "ok", detail: `pid ${w.daemon.pid ?? "?"}, ${w.daemon.mode}${w.daemon.since ? ` since ${w.daemon.since}` : ""}`, fix: null });
  else if (w.daemonDisabled) checks.push({ id: "daemon", name: "daemon", status: "warn", detail: "not running, and MAM_NO_SUBSCRIBER_DAEMON=1 keeps mam from starting it: nothing reacts to limits, dialogs, queued jobs or schedules", fix: "unset MAM_NO_SUBSCRIBER_DAEMON, then mam daemon ensure" });
  else if (w.running > 0) checks.push({ id: "daemon", name: "daemon", status: "warn", detail: `not running, with ${w.running} running agent${w.running === 1 ? "" : "s"}: queued jobs, schedules, limits and dead agents wait until it is back`, fix: "mam daemon ensure" });
  else checks.push({ id: "daemon", name: "daemon", status: "info", detail: "not running (no agent runs; mam starts it with the next create)", fix: null });
  if (w.gaps?.length) {
    checks.push({ id: "team.gaps", name: "team broker", status: "warn", detail: w.gaps.join("; "), fix: "nothing was lost, but look at the broker: a client queue limit (Mosquitto max_queued_messages, HiveMQ's 1000), a node that went down, or a network that cuts out" });
  }
  for (const h of w.hooks) {
    const id = `hooks.${h.kind}`;
    const name = `${h.kind} hooks`;
    if (h.state === "installed") checks.push({ id, name, status: "ok", detail: `installed (${h.where})`, fix: null });
    else if (h.state === "unreadable") checks.push({ id, name, status: "warn", detail: `${h.where} is not a settings file mam can read`, fix: `fix it, then mam hooks install ${h.kind}` });
    else checks.push({ id, name, status: "info", detail: h.state === "partial" ? `some of mam's hooks are missing (${h.where})` : "not installed: mam reads its state from its screen alone", fix: `mam hooks install ${h.kind}` });
  }
  return checks;
}

/** pure: the exit status: 1 when a check failed, else 0 */
export const doctorExit = (checks: Check[]) => (checks.some((c) => c.status === "fail") ? 1 : 0);

/** pure: the text `mam doctor` prints (paths and versions come from the machine: shown visible) */
export function doctorText(checks: Check[]): string {
  const width = Math.max(...checks.map((c) => c.name.length));
  const lines = checks.flatMap((c) => [`${c.status.padEnd(5)} ${c.name.padEnd(width)}  ${visible(c.detail)}`, ...(c.fix && c.status !== "ok" ? [`${" ".repeat(6 + width + 2)}fix: ${visible(c.fix)}`] : [])]);
  const n = (s: CheckStatus) => checks.filter((c) => c.status === s).length;
  const fails = n("fail");
  const warns = n("warn");
  const sum = fails + warns === 0 ? "all good" : [fails ? `${fails} problem${fails === 1 ? "" : "s"}` : "", warns ? `${warns} warning${warns === 1 ? "" : "s"}` : ""].filter(Boolean).join(", ");
  return `${lines.join("\n")}\n\n${sum}`;
}
