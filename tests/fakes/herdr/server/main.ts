// `herdr [--session NAME] server`: the fake server in the foreground (herdr.md §1.3). Binds the
// session's API socket (mode 0600; a stale socket is removed, a live one means "already
// running"), runs until server.stop or SIGTERM/SIGINT/SIGHUP, then kills every pane's processes.
import { chmodSync, existsSync, mkdirSync, unlinkSync } from "node:fs";
import { createServer } from "node:net";
import { basename, dirname, join } from "node:path";
import { isListening } from "../common/client.ts";
import { fakeProtocol, fakeRelease, fakeVersion } from "../common/release.ts";
import type { Target } from "../common/session.ts";
import { HerdrSchema } from "../schema/herdr-schema.ts";
import { FakeHerdr } from "./core.ts";
import { Transport } from "./transport.ts";

function intEnv(name: string, dflt: number): number {
  const v = process.env[name];
  if (v === undefined || v === "") return dflt;
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got '${v}'`);
  return n;
}

function compiled(): boolean {
  return !/\/(bun|bun-debug|node)$/.test(process.execPath);
}

export async function runServer(target: Target, explicitDefault: boolean): Promise<number> {
  // a server started for a named session carries HERDR_SESSION, and its panes inherit it
  if (target.via === "flag") {
    if (target.name) process.env.HERDR_SESSION = target.name;
    else if (explicitDefault) delete process.env.HERDR_SESSION;
  }
  const socket = target.socket;
  const dir = dirname(socket);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (existsSync(socket)) {
    if (await isListening(socket)) {
      process.stderr.write(`herdr server already running at ${socket}\n`);
      return 1;
    }
    unlinkSync(socket);
  }
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  const release = fakeRelease();
  // HERDR_BIN_PATH: every 0.8.2 pane has it, no 0.8.0 pane does; FAKE_HERDR_PANE_BIN_PATH=1/0 forces it
  const binKnob = process.env.FAKE_HERDR_PANE_BIN_PATH;
  const paneBinPath = binKnob === "1" || ((binKnob === undefined || binKnob === "") && release === "0.8.2");
  const h = new FakeHerdr({
    version: fakeVersion(),
    release,
    protocol: fakeProtocol(),
    settleMs: intEnv("FAKE_HERDR_SETTLE_MS", 3000),
    graceMs: intEnv("FAKE_HERDR_STARTUP_GRACE_MS", 3000),
    pollMs: Math.max(10, intEnv("FAKE_HERDR_POLL_MS", 50)),
    socket,
    binPath: paneBinPath ? process.env.FAKE_HERDR_BIN || (compiled() ? process.execPath : process.argv[1]!) : undefined,
    env,
    cwd: process.cwd(),
    shellMode: process.env.FAKE_HERDR_SHELL_MODE || undefined,
    toastDelivery: process.env.FAKE_HERDR_TOAST_DELIVERY === "herdr" ? "herdr" : "off",
  });
  const transport = new Transport(h, HerdrSchema.load());
  if (process.env.FAKE_HERDR_TRACE) transport.trace = (d, l) => process.stderr.write(`${d} ${l}\n`);
  transport.checkSchema = process.env.FAKE_HERDR_CHECK_SCHEMA === "1";
  const oldMask = process.umask(0o177);
  try {
    await transport.listen(socket);
  } finally {
    process.umask(oldMask);
  }
  chmodSync(socket, 0o600);
  // a stand-in for the TUI client socket (session stop waits for both to go)
  let client: ReturnType<typeof createServer> | undefined;
  const clientSock = join(dir, "herdr-client.sock");
  if (basename(socket) === "herdr.sock") {
    try {
      if (existsSync(clientSock)) unlinkSync(clientSock);
      client = createServer((s) => s.destroy());
      client.listen(clientSock);
    } catch {
      client = undefined;
    }
  }
  h.start();

  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((r) => (resolveDone = r));
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    await h.shutdown();
    await Promise.race([transport.close(), Bun.sleep(1000)]);
    client?.close();
    for (const s of [socket, clientSock]) {
      try {
        if (s !== clientSock || client) unlinkSync(s);
      } catch {}
    }
    resolveDone(code);
  };
  // answer server.stop first, then go
  h.requestStop = () => setTimeout(() => void stop(0), 20);
  h.dropConnections = (keep) => transport.dropAll(keep);
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(sig, () => void stop(0));
  return done;
}
