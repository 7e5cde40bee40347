// The fake herdr (tests/fakes/herdr) and the fake agents (tests/fakes/agents) for tests:
//   installFakeHerdr(binDir)          binDir/herdr → the compiled fake (dist/fake-herdr), else a
//                                     wrapper running `bun tests/fakes/herdr/main.ts`
//   installFakeAgents(binDir, kinds?) binDir/claude, codex, … → tests/fakes/agents/fake-agent
//   startFakeHerdr(sb, opts)          a fake server for the sandbox (its socket is ready), with
//                                     the test controls (inputs, write, exitPane, state) and stop()
// The helper API is stable: additions only.
import { expect } from "bun:test";
import { chmodSync, existsSync, readdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isListening, type Json, openStream, request, type Stream } from "../fakes/herdr/common/client.ts";
import { apiSocketPath } from "../fakes/herdr/common/session.ts";
import { HerdrSchema } from "../fakes/herdr/schema/herdr-schema.ts";
import { formatErrors } from "../fakes/herdr/schema/validator.ts";
import { ROOT, type RunResult, run } from "./mam.ts";
import type { Sandbox } from "./sandbox.ts";

export const FAKE_HERDR_MAIN = join(ROOT, "tests", "fakes", "herdr", "main.ts");
export const FAKE_AGENT_SCRIPT = join(ROOT, "tests", "fakes", "agents", "fake-agent");
export const FAKE_AGENT_KINDS = ["claude", "codex", "gemini", "qwen", "agy", "hermes", "cline", "opencode", "aider"] as const;
/** the compiled fake: MAM_FAKE_HERDR (set by scripts/test.ts), else dist/fake-herdr when built */
export const FAKE_HERDR_COMPILED = process.env.MAM_FAKE_HERDR ?? join(ROOT, "dist", "fake-herdr");

export type { Json, Stream };

/** write binDir/herdr (the fake CLI and server); returns its path */
export function installFakeHerdr(binDir: string): string {
  const path = join(binDir, "herdr");
  if (existsSync(path)) unlinkSync(path);
  if (existsSync(FAKE_HERDR_COMPILED)) {
    symlinkSync(FAKE_HERDR_COMPILED, path);
  } else {
    const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    writeFileSync(path, `#!/bin/bash\nFAKE_HERDR_BIN=${q(path)} exec ${q(process.execPath)} ${q(FAKE_HERDR_MAIN)} "$@"\n`);
    chmodSync(path, 0o755);
  }
  return path;
}

/** symlink the fake agent into binDir under each kind's name; returns the paths */
export function installFakeAgents(binDir: string, kinds: readonly string[] = FAKE_AGENT_KINDS): string[] {
  return kinds.map((k) => {
    const path = join(binDir, k);
    if (existsSync(path)) unlinkSync(path);
    symlinkSync(FAKE_AGENT_SCRIPT, path);
    return path;
  });
}

export interface StartOptions {
  /** the named session (server); default "fh" */
  session?: string;
  /** agent start settle delay (FAKE_HERDR_SETTLE_MS); default 150 */
  settleMs?: number;
  /** protocol number the server reports (FAKE_HERDR_PROTOCOL); default its release's (19, 0.8.2: 20) */
  protocol?: number;
  /**
   * the herdr version the fake plays (FAKE_HERDR_VERSION; default 0.8.0): the server and the
   * CLI runs of `.herdr()` (a 0.8.2 client speaks protocol 20, so both must play it)
   */
  version?: string;
  /** /proc poll period; default 50 */
  pollMs?: number;
  /** extra environment for the server (and so for its panes) */
  env?: Record<string, string>;
  /** the server's cwd (default the sandbox workspace) */
  cwd?: string;
  /** where binDir/herdr is (default sb.bin; installed when missing) */
  binDir?: string;
  /**
   * the server checks every line it writes against herdr's schema (FAKE_HERDR_CHECK_SCHEMA=1);
   * stop() then throws if any line failed. Default true.
   */
  checkSchema?: boolean;
}

export interface FakeHerdrServer {
  session: string;
  socket: string;
  /** the herdr executable (binDir/herdr) */
  bin: string;
  pid: number;
  /** the server's stderr log */
  log: string;
  /** raw request: the whole response object ({id,result} or {id,error}) */
  request(method: string, params?: Json): Promise<Json>;
  /** request and return result; throws on an error response */
  call(method: string, params?: Json): Promise<Json>;
  /** events.subscribe: the stream of lines (acknowledgement first) */
  subscribe(subscriptions: Json[]): Promise<Stream>;
  /** run the herdr CLI against this server (--session added) */
  herdr(args: string[], opts?: { env?: Record<string, string | undefined>; cwd?: string; timeoutMs?: number }): Promise<RunResult>;
  /** fake.inputs: what was typed into a pane, in order */
  inputs(paneId: string): Promise<{ at: number; kind: "text" | "keys"; text?: string; keys?: string[] }[]>;
  /** fake.pane.write: append text to a pane's output */
  write(paneId: string, text: string): Promise<void>;
  /** fake.pane.exit: kill a pane's processes (a crash) */
  exitPane(paneId: string): Promise<void>;
  /** fake.restart: as if the server restarted (ids, layout, labels kept; fresh shells, new
   * terminal ids, no agent names; waits and subscriptions dropped) */
  restart(): Promise<void>;
  /** fake.state: internals for debugging */
  state(): Promise<Json>;
  /** lines the server wrote that failed the schema (with checkSchema) */
  violations(): Promise<string[]>;
  /** server.stop, wait for the exit; panes' processes die with it. Throws after stopping if the
   * server wrote a line that failed the schema. */
  stop(): Promise<void>;
}

let reqNo = 0;

export async function startFakeHerdr(sb: Sandbox, o: StartOptions = {}): Promise<FakeHerdrServer> {
  const session = o.session ?? "fh";
  const binDir = o.binDir ?? sb.bin;
  const bin = join(binDir, "herdr");
  if (!existsSync(bin)) installFakeHerdr(binDir);
  const env: Record<string, string> = {
    ...sb.env,
    FAKE_HERDR_SETTLE_MS: String(o.settleMs ?? 150),
    FAKE_HERDR_POLL_MS: String(o.pollMs ?? 50),
    FAKE_HERDR_CHECK_SCHEMA: o.checkSchema === false ? "0" : "1",
    // panes run $SHELL as herdr does: bash, so tests do not depend on the developer's shell
    // (an empty-HOME zsh would start its new-user wizard); o.env may choose another
    SHELL: "/bin/bash",
    ...(o.protocol !== undefined ? { FAKE_HERDR_PROTOCOL: String(o.protocol) } : {}),
    ...(o.version !== undefined ? { FAKE_HERDR_VERSION: o.version } : {}),
    ...(o.env ?? {}),
  };
  const socket = apiSocketPath(env, session);
  const log = join(sb.root, `fake-herdr-${session}.log`);
  const proc = Bun.spawn([bin, "--session", session, "server"], { env, cwd: o.cwd ?? sb.ws, stdin: "ignore", stdout: Bun.file(log), stderr: Bun.file(log) });
  const deadline = Date.now() + 15_000;
  let exited = false;
  void proc.exited.then(() => (exited = true));
  while (!(await isListening(socket))) {
    if (exited || Date.now() > deadline) {
      proc.kill("SIGKILL");
      const text = existsSync(log) ? readFileSync(log, "utf8") : "";
      throw new Error(`fake herdr server '${session}' did not start (socket ${socket}): ${text}`);
    }
    await Bun.sleep(20);
  }
  const raw = (method: string, params: Json = {}) => request(socket, { id: `test:${++reqNo}`, method, params }, { timeoutMs: 30_000 });
  const call = async (method: string, params: Json = {}) => {
    const r = await raw(method, params);
    if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
    return r.result as Json;
  };
  const srv: FakeHerdrServer = {
    session,
    socket,
    bin,
    pid: proc.pid,
    log,
    request: raw,
    call,
    subscribe: (subscriptions) => openStream(socket, { id: `test:${++reqNo}`, method: "events.subscribe", params: { subscriptions } }),
    herdr: (args, ro = {}) => {
      const e: Record<string, string> = { ...sb.env, ...(o.version !== undefined ? { FAKE_HERDR_VERSION: o.version } : {}) };
      for (const [k, v] of Object.entries(ro.env ?? {})) {
        if (v === undefined) delete e[k];
        else e[k] = v;
      }
      return run([bin, "--session", session, ...args], { env: e, cwd: ro.cwd ?? sb.ws, timeoutMs: ro.timeoutMs ?? 60_000 });
    },
    inputs: async (paneId) => (await call("fake.inputs", { pane_id: paneId })).inputs as never,
    write: async (paneId, text) => void (await call("fake.pane.write", { pane_id: paneId, text })),
    exitPane: async (paneId) => void (await call("fake.pane.exit", { pane_id: paneId })),
    restart: async () => void (await call("fake.restart")),
    state: () => call("fake.state"),
    violations: async () => ((await call("fake.state")).schema_violations as string[]) ?? [],
    async stop() {
      let violations: string[] = [];
      if (!exited) {
        try {
          violations = await srv.violations();
        } catch {}
        try {
          await request(socket, { id: "test:stop", method: "server.stop", params: {} }, { timeoutMs: 5000 });
        } catch {}
        const t = setTimeout(() => proc.kill("SIGKILL"), 10_000);
        await proc.exited;
        clearTimeout(t);
      }
      // sweep until nothing of this server is left (a dying process may still fork once)
      const until = Date.now() + 3000;
      while (killBySocket(socket).length && Date.now() < until) await Bun.sleep(50);
      if (violations.length) throw new Error(`the fake herdr '${session}' wrote lines that fail herdr's schema:\n${violations.join("\n")}`);
    },
  };
  return srv;
}

/** SIGKILL every process whose environment names this server's socket (a crashed server's panes) */
export function killBySocket(socket: string): number[] {
  const hits: number[] = [];
  const needle = `HERDR_SOCKET_PATH=${socket}`;
  for (const ent of readdirSync("/proc")) {
    if (!/^\d+$/.test(ent) || Number(ent) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${ent}/environ`, "utf8").split("\0").includes(needle)) {
        process.kill(Number(ent), "SIGKILL");
        hits.push(Number(ent));
      }
    } catch {}
  }
  return hits;
}

let schema: HerdrSchema | undefined;

/** schema errors of one line herdr wrote (response or event); "" when it is valid */
export function herdrSchemaErrors(v: unknown): string {
  schema ??= HerdrSchema.load();
  return formatErrors(schema.checkServerLine(v));
}

/** a herdr CLI success: exit 0, one JSON line on stdout, valid against herdr's schema */
export function herdrJson(r: RunResult): any {
  if (r.code !== 0) throw new Error(`exit ${r.code}: ${r.stderr}`);
  const v = JSON.parse(r.stdout);
  expect(herdrSchemaErrors(v)).toBe("");
  return v;
}

/** a herdr API error: exit 1, nothing on stdout, the error JSON (schema-valid) on stderr with `code` */
export function herdrApiError(r: RunResult, code: string): any {
  expect(r.code).toBe(1);
  expect(r.stdout).toBe("");
  const v = JSON.parse(r.stderr.trim());
  expect(herdrSchemaErrors(v)).toBe("");
  expect(v.error.code).toBe(code);
  return v;
}
