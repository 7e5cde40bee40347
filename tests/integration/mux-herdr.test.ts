// The herdr driver's contract suite: the same cases against the fake herdr (always) and against a
// real herdr on PATH when MAM_REAL_HERDR=1 (skipped otherwise). herdr is reached through a wrapper
// (MAM_HERDR_BIN) that logs every argv, so the number of calls and the argv form are checked too.
// A second part drives stub `herdr` scripts for the failure modes (garbage, error JSON, exit 2,
// missing binary).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { HerdrError, HerdrMux } from "../../lib/mux/herdr.ts";
import { installShim } from "../../lib/mux/shim.ts";
import { AgentGone, AgentPaneBusy, type MuxPane, type StartSpec } from "../../lib/mux/types.ts";
import { MamError } from "../../lib/sys/errors.ts";
import { claimPaneLock } from "../../lib/sys/pane-lock.ts";
import { installFakeAgents, installFakeHerdr, startFakeHerdr } from "../helpers/herdr.ts";
import { MAM_CMD, run } from "../helpers/mam.ts";
import { makeSandbox, waitFor, type Sandbox } from "../helpers/sandbox.ts";

const REAL = process.env.MAM_REAL_HERDR === "1";
if (!REAL) console.error("tests/integration/mux-herdr.test.ts: real herdr cases skipped (set MAM_REAL_HERDR=1 with herdr >= 0.7.5 on PATH)");

interface Running {
  /** the herdr the wrapper execs */
  herdr: string;
  stop(): Promise<void>;
}

interface Target {
  name: string;
  skip: boolean;
  /** put herdr and the fake agents in place and start the server */
  start(sb: Sandbox, session: string): Promise<Running>;
}

const fake: Target = {
  name: "fake herdr",
  skip: false,
  async start(sb, session) {
    // the fake goes off PATH: mam reaches it through MAM_HERDR_BIN (a logging wrapper)
    mkdirSync(join(sb.root, "fakebin"));
    const herdr = installFakeHerdr(join(sb.root, "fakebin"));
    installFakeAgents(sb.bin);
    const h = await startFakeHerdr(sb, { session, settleMs: 150, binDir: join(sb.root, "fakebin") });
    return { herdr, stop: () => h.stop() };
  },
};

const real: Target = {
  name: "real herdr",
  skip: !REAL,
  async start(sb, session) {
    const herdr = Bun.which("herdr", { PATH: process.env.PATH ?? "" });
    if (!herdr) throw new Error("MAM_REAL_HERDR=1 but herdr is not on PATH");
    installFakeAgents(sb.bin);
    const p = Bun.spawn([herdr, "--session", session, "server"], { env: sb.env, cwd: sb.ws, detached: true, stdio: ["ignore", "ignore", "ignore"] });
    p.unref();
    const probe = new HerdrMux(session, sb.with({ MAM_HERDR_BIN: herdr }));
    await waitFor(async () => (await probe.list()).state === "ok", 15_000, 100);
    return {
      herdr,
      async stop() {
        await run([herdr, "--session", session, "server", "stop"], { env: sb.env, timeoutMs: 20_000 });
      },
    };
  },
};

let n = 0;

for (const target of [fake, real]) {
  describe.skipIf(target.skip)(`herdr driver against the ${target.name}`, () => {
    let sb: Sandbox;
    let srv: Running;
    let session: string;
    let env: Record<string, string>;
    let mux: HerdrMux;
    let calls: string;

    beforeEach(async () => {
      sb = makeSandbox("mam-hx-");
      session = `mamc-${process.pid}-${++n}`;
      srv = await target.start(sb, session);
      calls = join(sb.root, "herdr-calls.log");
      const wrapper = join(sb.root, "herdr-wrapper");
      writeFileSync(wrapper, `#!/bin/bash\nprintf '%s\\n' "$*" >> '${calls}'\nexec '${srv.herdr}' "$@"\n`);
      chmodSync(wrapper, 0o755);
      env = sb.with({ MAM_HERDR_BIN: wrapper });
      mux = new HerdrMux(session, env);
    });
    afterEach(async () => {
      await srv.stop();
      await sb.cleanup();
    });

    const logged = () => (existsSync(calls) ? readFileSync(calls, "utf8").trim().split("\n").filter(Boolean) : []);
    const spec = (name: string, argv: string[], extra: Partial<StartSpec> = {}): StartSpec => ({
      session: name,
      argv,
      cwd: sb.ws,
      env: {},
      settleMs: 300,
      ...extra,
    });
    const listed = async (): Promise<MuxPane[]> => {
      const l = await mux.list();
      if (l.state !== "ok") throw new Error(`listing: ${l.state}: ${l.detail}`);
      return l.panes;
    };
    const waitRead = async (paneId: string, needle: string) => {
      let text = "";
      if (!(await waitFor(async () => (text = await mux.read(paneId, 200)).includes(needle), 10_000))) {
        throw new Error(`pane ${paneId} never showed ${JSON.stringify(needle)}; it shows:\n${text.slice(-1500)}`);
      }
      return text;
    };

    test("list is one CLI call, in the argv form of 0.8.0, and sees every pane", async () => {
      const other = join(sb.root, "other");
      mkdirSync(other);
      const a = await mux.claimPane(sb.ws, () => false);
      const b = await mux.claimPane(other, () => false);
      const before = logged().length;
      const panes = await listed();
      expect(logged().length - before).toBe(1);
      expect(logged().at(-1)).toBe(`--session ${session} pane list`);
      expect(panes.map((p) => p.id).sort()).toEqual([a.id, b.id].sort());
      expect(panes.find((p) => p.id === a.id)).toMatchObject({ cwd: sb.ws, status: "unknown" });
      for (const line of logged()) {
        expect(line.startsWith(`--session ${session} `)).toBe(true);
        expect(line.split(" ").some((w) => /^--[a-z-]+=/.test(w))).toBe(false);
        expect(line).not.toContain("--json");
      }
    });

    test("claimPane: a fresh server gets a workspace for the folder, reused next time; free panes first; split when none is free; taken panes never", async () => {
      const other = join(sb.root, "other");
      mkdirSync(other);
      const elsewhere = await mux.claimPane(other, () => false);
      const p1 = await mux.claimPane(sb.ws, () => false);
      expect(p1.fresh).toBe(true);
      expect(p1.workspaceId).not.toBe(elsewhere.workspaceId);
      expect(p1.cwd).toBe(sb.ws);
      expect(logged().filter((l) => l.includes("workspace create"))).toHaveLength(2);
      expect(logged().find((l) => l.includes(`workspace create --cwd ${sb.ws}`))).toContain("--no-focus");
      // still free and not taken: the same pane again
      const again = await mux.claimPane(sb.ws, () => false);
      expect(again.id).toBe(p1.id);
      expect(again.fresh).toBeUndefined();
      // taken: a split of the same workspace, not a new workspace
      const p2 = await mux.claimPane(sb.ws, (id) => id === p1.id);
      expect(p2.id).not.toBe(p1.id);
      expect(p2.workspaceId).toBe(p1.workspaceId);
      expect(p2.fresh).toBe(true);
      expect(logged().filter((l) => l.includes("workspace create"))).toHaveLength(2);
      expect(logged().some((l) => new RegExp(`pane split \\S+ --direction right --cwd ${sb.ws} --no-focus`).test(l))).toBe(true);
      // p1 runs a command now (busy), p2 is free and not taken: p2
      await mux.sendText(p1.id, "sleep 30", true);
      await waitFor(async () => (await mux.processInfo(p1.id)).foreground.some((f) => f.name === "sleep"), 5000);
      const p3 = await mux.claimPane(sb.ws, () => false);
      expect(p3.id).toBe(p2.id);
      // nothing free (p1 busy, p2 taken): split again
      const p4 = await mux.claimPane(sb.ws, (id) => id === p2.id);
      expect([p1.id, p2.id]).not.toContain(p4.id);
      expect(p4.workspaceId).toBe(p1.workspaceId);
    });

    test("claimPane gives its env to the panes it creates", async () => {
      const p = await mux.claimPane(sb.ws, () => false, { MAM_TEST_VAR: "from-claim", PATH: `${sb.bin}:${sb.env.PATH}` });
      await mux.sendText(p.id, 'echo "VAR=$MAM_TEST_VAR"', true);
      await waitRead(p.id, "VAR=from-claim");
    });

    test("label renames the pane; list shows it", async () => {
      const p = await mux.claimPane(sb.ws, () => false);
      await mux.label(p.id, "mam:api.worker");
      expect((await listed()).find((x) => x.id === p.id)!.label).toBe("mam:api.worker");
      expect(logged().at(-2)).toBe(`--session ${session} pane rename ${p.id} mam:api.worker`);
    });

    test("start of a kind herdr knows: agent start with the derived name, ready when it returns", async () => {
      const p = await mux.claimPane(sb.ws, () => false);
      const started = await mux.start(p, spec("Api.Worker", ["claude", "--session-id", "3f0c-1"], { herdrKind: "claude", readyTimeoutMs: 20_000 }));
      expect(started.id).toBe(p.id);
      expect(started.agentName).toMatch(/^api-worker-[0-9a-f]{8}$/);
      expect(logged().some((l) => l === `--session ${session} agent start ${started.agentName} --kind claude --pane ${p.id} --timeout 20000 -- --session-id 3f0c-1`)).toBe(true);
      const row = (await listed()).find((x) => x.id === p.id)!;
      expect(row.agent).toBe("claude");
      expect(["idle", "done"]).toContain(row.status);
      await waitRead(p.id, "ready");
      // the pane is taken now: a second start there is AgentPaneBusy
      const busy = await mux.start(p, spec("second", ["claude"], { herdrKind: "claude" })).catch((e) => e);
      expect(busy).toBeInstanceOf(AgentPaneBusy);
      expect((busy as AgentPaneBusy).paneId).toBe(p.id);
    });

    test("start of a typed kind: pane run, then the agent must own the terminal for settleMs", async () => {
      const p = await mux.claimPane(sb.ws, () => false);
      const started = await mux.start(p, spec("typed", ["aider", "--model", "x y"], { settleMs: 400 }));
      expect(started.pid).toBeGreaterThan(0);
      expect(logged().some((l) => l === `--session ${session} pane run ${p.id} aider --model 'x y'`)).toBe(true);
      const info = await mux.processInfo(p.id);
      expect(info.shellPid).toBeGreaterThan(0);
      expect(info.foreground.some((f) => f.pid === started.pid)).toBe(true);
      await waitRead(p.id, "ready");
    });

    for (const kind of ["herdr kind (claude)", "typed kind (aider)"]) {
      test(`an agent that exits at once, ${kind}: the error with its last output, the pane closed`, async () => {
        const p = await mux.claimPane(sb.ws, () => false, { FAKE_AGENT_EXIT_AT_START: "1" });
        const s = kind.includes("claude") ? spec("dies", ["claude"], { herdrKind: "claude" }) : spec("dies", ["aider"], { agent: "aider" });
        const err = await mux.start(p, s).catch((e) => e);
        expect(err).toBeInstanceOf(MamError);
        const name = kind.includes("claude") ? "claude" : "aider";
        expect((err as MamError).render()).toBe(`ERROR: ${name} exited right after start in ${p.id}; last output: Unable to connect to Anthropic services`);
        expect((err as MamError).exitCode).toBe(1);
        expect((await listed()).map((x) => x.id)).not.toContain(p.id);
      });
    }

    test("sendText, sendKeys, read, processInfo, close", async () => {
      const p = await mux.claimPane(sb.ws, () => false);
      const s = await mux.start(p, spec("io", ["claude"], { herdrKind: "claude" }));
      await waitRead(p.id, "ready");
      await mux.sendText(p.id, "hello world", true);
      await waitRead(p.id, "got: hello world");
      await mux.sendText(p.id, "typed ", false);
      await mux.sendText(p.id, "later", false);
      await mux.sendKeys(p.id, ["enter"]);
      await waitRead(p.id, "got: typed later");
      const text = await mux.read(p.id, 2);
      expect(text.trimEnd().split("\n").length).toBeLessThanOrEqual(2);
      const info = await mux.processInfo(p.id);
      expect(info.foreground.length).toBeGreaterThan(0);
      expect(info.foreground.some((f) => f.pid !== info.shellPid)).toBe(true);
      expect(s.agentName).toBe("io");
      await mux.close(p.id);
      expect((await listed()).map((x) => x.id)).not.toContain(p.id);
      await mux.close(p.id); // already gone: not an error
      const gone = await mux.processInfo(p.id).catch((e) => e);
      expect(gone).toBeInstanceOf(HerdrError);
      expect((gone as HerdrError).code).toBe("pane_not_found");
    });

    test("submit: agent prompt for a herdr kind, pane run for a typed one; a pane whose agent exited stays a shell and is refused (AgentGone), nothing typed", async () => {
      const p = await mux.claimPane(sb.ws, () => false);
      await mux.start(p, spec("subm", ["claude"], { herdrKind: "claude", readyTimeoutMs: 20_000 }));
      await waitRead(p.id, "ready");
      await mux.submit(p.id, "hello agent", true);
      await waitRead(p.id, "got: hello agent");
      expect(logged()).toContain(`--session ${session} agent prompt ${p.id} hello agent`);
      await Bun.sleep(400); // agent prompt's Enter follows 300 ms later
      await mux.submit(p.id, "/exit", true);
      expect(await waitFor(async () => (await listed()).find((x) => x.id === p.id)?.agent === undefined, 10_000)).toBe(true);
      expect((await listed()).map((x) => x.id)).toContain(p.id);
      for (const managed of [true, false]) {
        const e = await mux.submit(p.id, "echo SHOULD-NOT-RUN", managed).catch((x) => x);
        expect(e).toBeInstanceOf(AgentGone);
      }
      await Bun.sleep(500);
      expect(await mux.read(p.id, 50)).not.toContain("SHOULD-NOT-RUN");
      // a typed kind: pane run once its command owns the terminal
      const t = await mux.claimPane(sb.ws, () => false);
      await mux.start(t, spec("typed-s", ["aider"], { settleMs: 300 }));
      await waitRead(t.id, "ready");
      await mux.submit(t.id, "typed hello", false);
      await waitRead(t.id, "got: typed hello");
      expect(logged()).toContain(`--session ${session} pane run ${t.id} typed hello`);
      expect(logged().filter((l) => l.includes(" send-text "))).toEqual([]);
    });

    test("a herdr shim first on PATH is skipped: mam holds the pane-claim lock and must not wait on itself", async () => {
      const shimDir = join(sb.ws, ".mam", "bin");
      installShim(shimDir, MAM_CMD);
      const e2 = sb.with({ PATH: `${shimDir}:${join(srv.herdr, "..")}:${sb.env.PATH}`, MAM_PANE_CLAIM_WAIT_S: "1" });
      const m2 = new HerdrMux(session, e2);
      expect(m2.bin).toBe(srv.herdr);
      const lock = await claimPaneLock(session, e2);
      try {
        const p = await m2.claimPane(sb.ws, () => false);
        expect(p.id).toMatch(/^w\w+:p\w+$/);
      } finally {
        lock.close();
      }
    });

    test("server not running: list says not-running; ensureRunning(false) gives the exact error; ensureRunning(true) starts it", async () => {
      const name = `off-${process.pid}-${n}`;
      const off = new HerdrMux(name, env);
      const l = await off.list();
      expect(l.state).toBe("not-running");
      const e = await off.ensureRunning(false).catch((x) => x);
      expect(e).toBeInstanceOf(MamError);
      expect((e as MamError).render()).toBe(`ERROR: herdr server '${name}' is not running; start it with: herdr --session ${name} server`);
      const e2 = await off.claimPane(sb.ws, () => false).catch((x) => x);
      expect((e2 as MamError).render()).toBe((e as MamError).render());
      await off.ensureRunning(true);
      try {
        expect((await off.list()).state).toBe("ok");
        expect(logged().some((x) => x === `--session ${name} server`)).toBe(true);
        expect(existsSync(join(sb.home, ".local", "state", "mam", `herdr-server-${name}.log`))).toBe(true);
        const p = await off.claimPane(sb.ws, () => false);
        expect(p.cwd).toBe(sb.ws);
      } finally {
        await run([srv.herdr, "--session", name, "server", "stop"], { env: sb.env, timeoutMs: 20_000 });
      }
    });
  });
}

describe("herdr driver failure modes (stub herdr scripts)", () => {
  let sb: Sandbox;
  beforeEach(() => {
    sb = makeSandbox("mam-hs-");
  });
  afterEach(async () => {
    await sb.cleanup();
  });

  function stub(body: string): HerdrMux {
    const p = join(sb.bin, "herdr");
    writeFileSync(p, `#!/bin/bash\n${body}\n`);
    chmodSync(p, 0o755);
    return new HerdrMux("stubbed", sb.env);
  }

  test("garbage on stdout: unreachable, and an error naming the command and the first bytes", async () => {
    const m = stub(`echo 'Segmentation fault (core dumped)'`);
    const l = await m.list();
    expect(l.state).toBe("unreachable");
    const e = await m.processInfo("w1:p1").catch((x) => x);
    expect(e).toBeInstanceOf(MamError);
    expect((e as MamError).message).toBe(`herdr pane process-info printed something that is not herdr's JSON: "Segmentation fault (core dumped)"`);
    expect((e as MamError).exitCode).toBe(1);
  });

  test("exit 1 with error JSON: a typed error with herdr's code; protocol_mismatch is unreachable, not not-running", async () => {
    const m = stub(`echo '{"id":"cli:pane:list","error":{"code":"protocol_mismatch","message":"server speaks 21, client 19"}}' >&2; exit 1`);
    const l = await m.list();
    expect(l).toEqual({ state: "unreachable", detail: "herdr pane list failed on herdr server 'stubbed': protocol_mismatch: server speaks 21, client 19" });
    const e = await m.label("w1:p1", "mam:x").catch((x) => x);
    expect(e).toBeInstanceOf(HerdrError);
    expect((e as HerdrError).code).toBe("protocol_mismatch");
  });

  test("exit 2: named as a mam/herdr usage mismatch", async () => {
    const m = stub(`echo 'unknown option: --no-focus' >&2; exit 2`);
    const e = await m.claimPane(sb.ws, () => false).catch((x) => x);
    expect(e).toBeInstanceOf(HerdrError);
    expect((e as HerdrError).message).toContain("herdr pane list rejected its arguments (exit 2: \"unknown option: --no-focus\"): a mam/herdr usage mismatch");
  });

  test("a herdr that hangs: a timeout, unreachable", async () => {
    const p = join(sb.bin, "herdr");
    writeFileSync(p, "#!/bin/bash\nexec sleep 30\n");
    chmodSync(p, 0o755);
    const m = new HerdrMux("stubbed", sb.env, { timeoutMs: 300 });
    const l = await m.list();
    expect(l.state).toBe("unreachable");
    expect(l.state === "unreachable" && l.detail).toBe("herdr pane list did not answer within 0.3 s (herdr server 'stubbed')");
  });

  test("ensureRunning(true) with a server that dies at once fails fast, naming its log", async () => {
    const m = stub(`if [ "$3" = server ]; then echo "config error" >&2; exit 3; fi
echo '{"id":"cli:pane:list","error":{"code":"server_not_running","message":"no herdr server is running"}}' >&2; exit 1`);
    const t0 = Date.now();
    const e = await m.ensureRunning(true).catch((x) => x);
    expect(Date.now() - t0).toBeLessThan(10_000);
    const log = join(sb.home, ".local", "state", "mam", "herdr-server-stubbed.log");
    expect((e as MamError).render()).toBe(`ERROR: herdr server 'stubbed' exited right after start (exit 3); see ${log}`);
    expect(readFileSync(log, "utf8")).toContain("config error");
  });

  test("herdr missing from PATH (and a bad MAM_HERDR_BIN): clear errors; list is unreachable", async () => {
    const m = new HerdrMux("x", sb.with({ PATH: "/nonexistent" }));
    const e = await m.ensureRunning(true).catch((x) => x);
    expect((e as MamError).render()).toBe("ERROR: herdr not found on PATH; install herdr or set MAM_HERDR_BIN (or use --mux tmux)");
    expect((await m.list()).state).toBe("unreachable");
    const b = new HerdrMux("x", sb.with({ MAM_HERDR_BIN: join(sb.root, "nope") }));
    expect(((await b.list()) as { detail: string }).detail).toContain("MAM_HERDR_BIN");
  });
});
