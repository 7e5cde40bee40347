// The herdr shim (SPEC §4.3) in front of a stub "real herdr" that records when it ran, with which
// arguments and whether it still held fd 9; and `mam shim install`.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentShimDir } from "../../lib/mux/shim.ts";
import { MAM_CMD, MAM_SH, run, runMam, type RunResult } from "../helpers/mam.ts";
import { makeSandbox, waitFor, type Sandbox } from "../helpers/sandbox.ts";

let sb: Sandbox;
let shim: string;
let realDir: string;
let stub: string;
let log: string;

const STUB = `#!/usr/bin/env bash
t0=$(date +%s%N)
fd9=no; [ -e /proc/$$/fd/9 ] && fd9=yes
sleep "\${STUB_SLEEP:-0}"
t1=$(date +%s%N)
printf '%s %s %s fd9=%s %s\\n' "$$" "$t0" "$t1" "$fd9" "$*" >> "$STUB_LOG"
printf '{"stub":"out","argv":"%s"}\\n' "$*"
printf 'stub-err\\n' >&2
exit "\${STUB_EXIT:-0}"
`;

interface Call {
  start: number;
  end: number;
  fd9: boolean;
  args: string;
}

function calls(): Call[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [, t0, t1, fd9, ...rest] = l.split(" ");
      return { start: Number(t0) / 1e6, end: Number(t1) / 1e6, fd9: fd9 === "fd9=yes", args: rest.join(" ") };
    });
}

beforeEach(async () => {
  sb = makeSandbox("mam-shim-");
  realDir = join(sb.root, "real");
  mkdirSync(realDir);
  stub = join(realDir, "herdr");
  writeFileSync(stub, STUB);
  chmodSync(stub, 0o755);
  log = join(sb.root, "stub.log");
  const r = await runMam(["shim", "install"], { env: sb.env, cwd: sb.ws });
  expect(r.code).toBe(0);
  shim = r.stdout.trim();
});
afterEach(async () => {
  await sb.cleanup();
});

/** the shim's env: the stub as the real herdr, no ambient herdr variables */
function shimEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  return sb.with({ MAM_REAL_HERDR: stub, STUB_LOG: log, ...extra });
}

function herdr(args: string[], extra: Record<string, string | undefined> = {}): Promise<RunResult> {
  return run([shim, ...args], { env: shimEnv(extra), cwd: sb.ws });
}

async function lockPath(server: string): Promise<string> {
  const r = await runMam(["pane-lock", "path", "--session", server], { env: sb.env });
  expect(r.code).toBe(0);
  return r.stdout.trim();
}

/** a bash process holding a server's pane-claim lock until killed */
async function holdLock(server: string) {
  const path = await lockPath(server);
  const p = Bun.spawn(["bash", "-c", `exec 9>>"$1"; ${MAM_SH} pane-lock acquire --fd 9 >/dev/null && echo held && exec sleep 600`, "h", path], {
    env: sb.env,
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = p.stdout.getReader();
  const { value } = await reader.read();
  expect(new TextDecoder().decode(value)).toContain("held");
  reader.releaseLock();
  return p;
}

describe("mam shim install", () => {
  test("writes the workspace's agents' shim (a 0700 folder of mam's, never in the workspace) that names the installing mam, prints its path", async () => {
    expect(shim).toBe(join(agentShimDir(sb.ws, sb.env), "herdr"));
    expect(shim).toStartWith(join(sb.home, ".local", "state", "mam", "shims") + "/");
    const st = statSync(shim);
    expect(st.mode & 0o777).toBe(0o755);
    expect(statSync(agentShimDir(sb.ws, sb.env)).mode & 0o777).toBe(0o700);
    expect(existsSync(join(sb.ws, ".mam"))).toBe(false);
    const text = readFileSync(shim, "utf8");
    expect(text.split("\n")[0]).toBe("#!/usr/bin/env bash");
    expect(text.split("\n")[1]).toStartWith("# mam-herdr-shim:");
    expect(text).toContain(`MAM_SHIM_MAM=(${MAM_CMD.map((a) => `'${a}'`).join(" ")})`);
  });

  test("is idempotent, creates --dir, and refuses to overwrite a file that is not a shim", async () => {
    const again = await runMam(["shim", "install", "--workspace", sb.ws], { env: sb.env });
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`${shim}\n`);
    const dir = join(sb.root, "a", "b");
    const r = await runMam(["shim", "install", "--dir", dir], { env: sb.env, cwd: sb.ws });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${join(dir, "herdr")}\n`);
    expect(readFileSync(join(dir, "herdr"), "utf8")).toBe(readFileSync(shim, "utf8"));
    const bad = await runMam(["shim", "install", "--dir", realDir], { env: sb.env });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(`ERROR: ${stub} exists and is not a mam herdr shim; refusing to overwrite it; pass another --dir\n`);
    expect(readFileSync(stub, "utf8")).toBe(STUB);
    const nows = await runMam(["shim", "install", "--workspace", join(sb.root, "nope")], { env: sb.env });
    expect(nows.code).toBe(2);
  });
});

describe("the herdr shim", () => {
  test("three concurrent pane splits on one server run one at a time, each holding fd 9", async () => {
    const rs = await Promise.all(
      [1, 2, 3].map((i) => herdr(["--session", "srv-a", "pane", "split", `w1:p${i}`, "--direction", "right"], { STUB_SLEEP: "0.3" })),
    );
    for (const r of rs) {
      expect(r.code).toBe(0);
      expect(r.stdout).toStartWith('{"stub":"out"');
    }
    const cs = calls().sort((a, b) => a.start - b.start);
    expect(cs).toHaveLength(3);
    for (let i = 1; i < cs.length; i++) expect(cs[i]!.start).toBeGreaterThanOrEqual(cs[i - 1]!.end);
    expect(cs.every((c) => c.fd9)).toBe(true);
    expect(cs.map((c) => c.args).sort()).toEqual([1, 2, 3].map((i) => `--session srv-a pane split w1:p${i} --direction right`));
  });

  test("a claim on another server is not blocked by a held lock", async () => {
    const holder = await holdLock("srv-a");
    try {
      const r = await herdr(["pane", "split", "w1:p1", "--direction", "right", "--session", "srv-b"]);
      expect(r.code).toBe(0);
      expect(calls().map((c) => c.args)).toEqual(["pane split w1:p1 --direction right --session srv-b"]);
      expect(holder.exitCode).toBeNull(); // srv-a's lock was held the whole time
    } finally {
      holder.kill();
      await holder.exited;
    }
  });

  test("timeout: exit 75, nothing on stdout, the exact message, herdr not run", async () => {
    const holder = await holdLock("srv-a");
    try {
      for (const args of [
        ["--session", "srv-a", "workspace", "create", "--cwd", sb.ws],
        ["tab", "create", "--session", "srv-a"],
        ["agent", "start", "w", "--kind", "claude", "--pane", "w1:p1", "--session", "srv-a"],
      ]) {
        const r = await herdr(args, { MAM_PANE_CLAIM_WAIT_S: "1" });
        expect(r.code).toBe(75);
        expect(r.stdout).toBe("");
        expect(r.stderr).toBe(
          "herdr shim: gave up after 1 s waiting for the pane-claim lock of server 'srv-a'; raise MAM_PANE_CLAIM_WAIT_S to wait longer\n",
        );
      }
      expect(calls()).toEqual([]);
    } finally {
      holder.kill();
      await holder.exited;
    }
  });

  test("-L X becomes --session X and locks X; -L X --session Y is exit 2; -L X --session X passes once", async () => {
    let r = await herdr(["-L", "srv-x", "pane", "split", "w1:p1", "--direction", "down"]);
    expect(r.code).toBe(0);
    expect(calls().at(-1)!.args).toBe("--session srv-x pane split w1:p1 --direction down");
    const holder = await holdLock("srv-x");
    try {
      r = await herdr(["pane", "split", "w1:p1", "-L", "srv-x", "--direction", "down"], { MAM_PANE_CLAIM_WAIT_S: "1" });
      expect(r.code).toBe(75);
      expect(r.stderr).toContain("lock of server 'srv-x'");
    } finally {
      holder.kill();
      await holder.exited;
    }
    r = await herdr(["-L", "srv-x", "--session", "srv-y", "pane", "list"]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe("herdr shim: -L 'srv-x' and --session 'srv-y' name different servers; give one of them\n");
    const before = calls().length;
    r = await herdr(["-L", "srv-x", "--session", "srv-x", "pane", "list"]);
    expect(r.code).toBe(0);
    expect(calls()).toHaveLength(before + 1);
    expect(calls().at(-1)!.args).toBe("--session srv-x pane list");
  });

  test("HERDR_SESSION_NAME names the target; empty or default means the ambient server", async () => {
    let r = await herdr(["pane", "split", "w1:p1", "--direction", "right"], { HERDR_SESSION_NAME: "srv-n" });
    expect(r.code).toBe(0);
    expect(calls().at(-1)!.args).toBe("--session srv-n pane split w1:p1 --direction right");
    // an explicit --session wins over HERDR_SESSION_NAME
    r = await herdr(["pane", "split", "w1:p1", "--session", "srv-e"], { HERDR_SESSION_NAME: "srv-n" });
    expect(calls().at(-1)!.args).toBe("pane split w1:p1 --session srv-e");
    const holder = await holdLock("srv-amb");
    try {
      for (const name of ["default", ""]) {
        // the caller runs in a pane of srv-amb: the ambient lock is srv-amb's, and herdr gets no --session
        r = await herdr(["pane", "split", "w1:p1", "--direction", "right"], {
          HERDR_SESSION_NAME: name,
          HERDR_SESSION: "srv-amb",
          MAM_PANE_CLAIM_WAIT_S: "1",
        });
        expect(r.code).toBe(75);
        expect(r.stderr).toContain("lock of server 'srv-amb'");
      }
      r = await herdr(["pane", "split", "w1:p1"], { HERDR_SESSION_NAME: "default", HERDR_SESSION: "srv-other" });
      expect(r.code).toBe(0);
      expect(calls().at(-1)!.args).toBe("pane split w1:p1");
    } finally {
      holder.kill();
      await holder.exited;
    }
  });

  test("audit #8b: an explicit --session default is herdr's default server and takes its lock, also in a pane of another server", async () => {
    const holder = await holdLock("default");
    try {
      const r = await herdr(["--session", "default", "pane", "split", "w1:p1"], { HERDR_SESSION: "srv-amb", HERDR_SOCKET_PATH: join(sb.home, ".config/herdr/sessions/srv-amb/herdr.sock"), MAM_PANE_CLAIM_WAIT_S: "1" });
      expect(r.code).toBe(75);
      expect(r.stderr).toContain("lock of server 'default'");
    } finally {
      holder.kill();
      await holder.exited;
    }
    const r = await herdr(["--session", "default", "pane", "split", "w1:p1"], { HERDR_SESSION: "srv-amb" });
    expect(r.code).toBe(0);
    expect(calls().at(-1)!.args).toBe("--session default pane split w1:p1");
  });

  test("everything else passes through unchanged: stdout, stderr, exit code, arguments after --", async () => {
    const holder = await holdLock("default");
    try {
      const r = await herdr(["pane", "send-text", "w1:p1", "--", "-L", "x", "--session", "y"], { STUB_EXIT: "3" });
      expect(r.code).toBe(3);
      expect(r.stdout).toBe('{"stub":"out","argv":"pane send-text w1:p1 -- -L x --session y"}\n');
      expect(r.stderr).toBe("stub-err\n");
      expect(calls()[0]!.fd9).toBe(false); // no lock taken
      const l = await herdr(["--session", "srv-a", "pane", "list"]);
      expect(l.code).toBe(0);
      expect(calls().at(-1)!.args).toBe("--session srv-a pane list");
    } finally {
      holder.kill();
      await holder.exited;
    }
  });

  test("the recursion guard finds the real herdr behind the shim's folder, even on PATH twice, and behind other shims", async () => {
    const binDir = agentShimDir(sb.ws, sb.env);
    const other = join(sb.root, "other-shim");
    const r0 = await runMam(["shim", "install", "--dir", other], { env: sb.env });
    expect(r0.code).toBe(0);
    const PATH = [binDir, other, binDir, realDir, sb.env.PATH].join(":");
    const r = await run([shim, "pane", "split", "w1:p1", "--session", "srv-r"], { env: sb.with({ PATH, STUB_LOG: log }), timeoutMs: 20_000 });
    expect(r.stderr).toBe("stub-err\n");
    expect(r.code).toBe(0);
    expect(calls().at(-1)!).toMatchObject({ fd9: true, args: "pane split w1:p1 --session srv-r" });
    // through PATH, by name, as agents call it
    const viaPath = await run(["bash", "-c", "herdr pane list"], { env: sb.with({ PATH, STUB_LOG: log }), timeoutMs: 20_000 });
    expect(viaPath.code).toBe(0);
    expect(calls().at(-1)!.args).toBe("pane list");
  });

  test("herdr 0.8.2's HERDR_BIN_PATH (the herdr running the pane's server) comes before PATH; a missing one or a shim is skipped", async () => {
    const running = join(sb.root, "running");
    mkdirSync(running);
    writeFileSync(join(running, "herdr"), STUB.replace('"$*" >> "$STUB_LOG"', '"running $*" >> "$STUB_LOG"'));
    chmodSync(join(running, "herdr"), 0o755);
    const PATH = [agentShimDir(sb.ws, sb.env), realDir, sb.env.PATH].join(":");
    const via = async (bin: string | undefined) => {
      const r = await run([shim, "pane", "list"], { env: sb.with({ PATH, STUB_LOG: log, HERDR_BIN_PATH: bin }), timeoutMs: 20_000 });
      expect(r.code).toBe(0);
      return calls().at(-1)!.args;
    };
    expect(await via(join(running, "herdr"))).toBe("running pane list");
    expect(await via(join(sb.root, "no-such-herdr"))).toBe("pane list");
    expect(await via(shim)).toBe("pane list");
    expect(await via(undefined)).toBe("pane list");
    // MAM_REAL_HERDR still wins
    const r = await run([shim, "pane", "list"], { env: sb.with({ PATH, STUB_LOG: log, HERDR_BIN_PATH: join(running, "herdr"), MAM_REAL_HERDR: stub }), timeoutMs: 20_000 });
    expect(r.code).toBe(0);
    expect(calls().at(-1)!.args).toBe("pane list");
  });

  test("no real herdr anywhere: exit 127 and a clear message", async () => {
    const PATH = [agentShimDir(sb.ws, sb.env), "/usr/bin", "/bin"].join(":");
    const r = await run([shim, "pane", "list"], { env: sb.with({ PATH }) });
    expect(r.code).toBe(127);
    expect(r.stderr).toBe("herdr shim: the real herdr is not on PATH (mam shims skipped); install herdr or set MAM_REAL_HERDR\n");
    const self = await run([shim, "pane", "list"], { env: sb.with({ MAM_REAL_HERDR: shim }) });
    expect(self.code).toBe(127);
    expect(self.stderr).toContain("MAM_REAL_HERDR points at this shim");
  });

  test("a waiter gets the lock when the holder ends", async () => {
    const holder = await holdLock("srv-w");
    const pending = herdr(["pane", "split", "w1:p1", "--session", "srv-w"]);
    await Bun.sleep(300);
    expect(calls()).toEqual([]);
    holder.kill();
    await holder.exited;
    const r = await pending;
    expect(r.code).toBe(0);
    expect(await waitFor(() => calls().length === 1, 2000)).toBe(true);
  });
});
