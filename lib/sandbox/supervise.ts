// An agent in its sandbox (docs/sandbox.md): what its pane runs, `mam sandbox exec`, is the
// agent's supervisor outside the sandbox. It serves the socket mam's reports from inside go
// through (./forward.ts) and, with --net model, the outer halves of the relays (./relay.ts); it
// starts bwrap with the plan (./plan.ts), passes the pane's signals on, and ends with the agent:
// its exit status is the agent's (128 + the signal's number when a signal ended it). bwrap's
// --die-with-parent and its pid namespace take everything inside with it when it goes.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import type { Server } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { homeDir, type Env } from "../sys/paths.ts";
import { selfCommand } from "../sys/self.ts";
import { agentStores, gitConfigPaths, insideArgv, pathDirs, programPaths, resolvTarget } from "./inputs.ts";
import { exitStatus, type JobAgent, serveReports } from "./forward.ts";
import { bwrapArgs, INSIDE_DIR, type NetMode, type Plan, parseEndpoint, REPORT_SOCKET, type SandboxSpec, sandboxPlan } from "./plan.ts";
import { listenIn, PROXY_SOCKET, relaysFor, serveOut, serveProxy } from "./relay.ts";

/** the words of the pane's command for an agent `argv` in sandbox `spec` */
export function sandboxedArgv(spec: SandboxSpec, o: { ws: string; name: string; kind: string; bwrap: string }, argv: string[]): string[] {
  const allow = spec.net === "model" ? (spec.allow ?? []).flatMap((a) => ["--allow", a]) : [];
  return [...selfCommand(), "sandbox", "exec", "--workspace", o.ws, "--session", o.name, "--kind", o.kind, "--net", spec.net, ...allow, "--bwrap", o.bwrap, "--", ...insideArgv(o.kind, argv)];
}

/** mam's own files, read inside (the reports' `mam`, the relays' inner half) */
function selfPaths(): string[] {
  return selfCommand().flatMap((p) => (p.endsWith("/mam.ts") ? [dirname(p)] : [p]));
}

/** the plan for an agent of `kind` running `program` in `cwd` (the workspace or its worktree) */
export function planFor(o: { ws: string; cwd: string; kind: string; program: string; net: NetMode; env: Env; socketDir: string }): Plan {
  const ro = [...pathDirs(o.env), ...programPaths(o.program, o.env), ...selfPaths(), ...gitConfigPaths(o.env)];
  return sandboxPlan({ home: homeDir(o.env), ws: o.ws, cwd: o.cwd, ro, rw: agentStores(o.kind, o.env), socketDir: o.socketDir, net: o.net, resolv: resolvTarget() });
}

const SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;

/** run `cmd` with the terminal, passing our signals on; resolves with a shell's exit status */
function runChild(cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: "inherit", ...(env ? { env } : {}) });
    const pass = SIGNALS.map((s) => [s, () => child.kill(s)] as const);
    for (const [s, h] of pass) process.on(s, h);
    const done = (code: number) => {
      for (const [s, h] of pass) process.off(s, h);
      resolve(code);
    };
    child.on("error", (e) => {
      process.stderr.write(`mam sandbox: cannot run ${cmd}: ${e.message}\n`);
      done(127);
    });
    child.on("exit", (code, sig) => done(exitStatus(code, sig)));
  });
}

export interface ExecOptions {
  ws: string;
  session: string;
  kind: string;
  net: NetMode;
  allow: string[];
  bwrap: string;
  argv: string[];
  /** which session each job of the workspace was given to (the reports' check) */
  jobAgent: JobAgent;
}

/** `mam sandbox exec`: the supervisor's whole life; returns the agent's exit status */
export async function superviseExec(o: ExecOptions, env: NodeJS.ProcessEnv): Promise<number> {
  const socketDir = mkdtempSync(join(env.TMPDIR || tmpdir(), "mam-sbx-"));
  const servers: Server[] = [serveReports(join(socketDir, REPORT_SOCKET), o.ws, o.session, env, o.jobAgent)];
  try {
    const plan = planFor({ ws: o.ws, cwd: process.cwd(), kind: o.kind, program: o.argv[0]!, net: o.net, env, socketDir });
    let inside = o.argv;
    if (o.net === "model") {
      const r = relaysFor(o.allow);
      for (const [endpoint, sock] of r.local) servers.push(serveOut(join(socketDir, sock), endpoint));
      if (r.remote.length) servers.push(serveProxy(join(socketDir, PROXY_SOCKET), r.remote));
      const inner = [...r.local.flatMap(([e, s]) => ["--relay", `${e}=${INSIDE_DIR}/${s}`]), ...(r.remote.length ? ["--proxy", `${INSIDE_DIR}/${PROXY_SOCKET}`] : [])];
      if (inner.length) inside = [...selfCommand(), "sandbox", "inner", ...inner, "--", ...o.argv];
    }
    const setenv = { MAM_SANDBOX: "bwrap", MAM_SANDBOX_SOCKET: `${INSIDE_DIR}/${REPORT_SOCKET}` };
    return await runChild(o.bwrap, [...bwrapArgs(plan, setenv), "--", ...inside]);
  } finally {
    for (const s of servers) s.close();
    rmSync(socketDir, { recursive: true, force: true });
  }
}

/**
 * `mam sandbox inner` (inside, net model): the relays' inner halves, then the agent, whose exit
 * status it ends with. `relays`: HOST:PORT=SOCKET; `proxy`: the proxy's socket
 */
export async function runInner(relays: string[], proxy: string | undefined, argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const servers: Server[] = [];
  try {
    for (const r of relays) {
      const [endpoint, sock] = [r.slice(0, r.lastIndexOf("=")), r.slice(r.lastIndexOf("=") + 1)];
      const e = parseEndpoint(endpoint);
      if (!e || !sock) throw new Error(`bad relay '${r}'`);
      servers.push(await listenIn(e.host === "localhost" ? "127.0.0.1" : e.host, e.port, sock));
    }
    let childEnv: NodeJS.ProcessEnv = env;
    if (proxy) {
      const p = await listenIn("127.0.0.1", 0, proxy);
      servers.push(p);
      const url = `http://127.0.0.1:${(p.address() as { port: number }).port}`;
      const noProxy = ["localhost", "127.0.0.1", "::1", env.NO_PROXY].filter(Boolean).join(",");
      childEnv = { ...env, HTTPS_PROXY: url, https_proxy: url, HTTP_PROXY: url, http_proxy: url, NO_PROXY: noProxy, no_proxy: noProxy };
    }
    return await runChild(argv[0]!, argv.slice(1), childEnv);
  } finally {
    for (const s of servers) s.close();
  }
}
