// Port of seeds/test_issue50_pane_lock.py P1–P5 (same assertions and time bounds), plus the bad
// inputs of SPEC §4.1–4.2. `python3 -m lib_py.pane_lock …` is `mam pane-lock …` here.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { MAM_CMD, MAM_SH, run, runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

let sb: Sandbox;
beforeEach(() => {
  sb = makeSandbox("mam-pl-");
});
afterEach(async () => {
  await sb.cleanup();
});

// a bash holder, as the shim is: fd 9 on the file, the lock taken by the helper, then it sleeps
const HOLDER = `exec 9>>"$1"; ${MAM_SH} pane-lock acquire --fd 9; echo held; exec sleep "\${2:-600}"`;

async function lockPath(session: string | null, env: Record<string, string>): Promise<string> {
  const args = session === null ? ["pane-lock", "path"] : ["pane-lock", "path", "--session", session];
  const r = await runMam(args, { env });
  expect(r.code).toBe(0);
  return r.stdout.trim();
}

async function waitSeconds(env: Record<string, string>): Promise<number> {
  const r = await runMam(["pane-lock", "wait-seconds"], { env });
  expect(r.code).toBe(0);
  return Number(r.stdout.trim());
}

async function holder(path: string, seconds = "600", env: Record<string, string> = sb.env) {
  const p = Bun.spawn(["bash", "-c", HOLDER, "holder", path, seconds], { env, stdout: "pipe", stderr: "inherit" });
  const reader = p.stdout.getReader();
  let buf = "";
  const dec = new TextDecoder();
  while (buf.split("\n").length < 3) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value);
  }
  const lines = buf.split("\n");
  expect(lines[0]).toBe("locked");
  expect(lines[1]).toBe("held");
  return p;
}

function acquire(path: string, extra: Record<string, string> = {}) {
  return run(["bash", "-c", `exec 9>>"$1"; ${MAM_SH} pane-lock acquire --fd 9`, "x", path], { env: { ...sb.env, ...extra } });
}

/** env with only the given vars besides PATH (the seed passes minimal envs to lock_path) */
function only(vars: Record<string, string>): Record<string, string> {
  return { PATH: sb.env.PATH!, ...vars };
}

describe("P1 the lock file is per server under the sessions home", () => {
  test("named, ambient, HOME_DIR, distinct servers, and the CLI", async () => {
    const t = sb.root;
    const env = only({ HOME: t });
    expect(await lockPath("t50-x", env)).toBe(join(t, ".local/state/mam/pane-lock/t50-x.lock"));
    expect(await lockPath("", env)).toBe(join(t, ".local/state/mam/pane-lock/default.lock"));
    expect((await lockPath("t50-x", only({ HOME_DIR: join(t, "h") }))).startsWith(join(t, "h"))).toBe(true);
    expect(await lockPath("t50-x", env)).not.toBe(await lockPath("t50-y", env));
  });
});

describe("P1b the ambient target locks the caller's server", () => {
  // herdr's precedence (src/session.rs:80-91, 173-181), not the seed's: HERDR_SOCKET_PATH decides
  // which server a plain `herdr …` reaches, so it decides the lock too (audit #8a)
  test("HERDR_SOCKET_PATH > HERDR_SESSION > default", async () => {
    const t = sb.root;
    const home = { HOME: t };
    const sock = { HERDR_SOCKET_PATH: join(t, ".config/herdr/sessions/t50-x/herdr.sock") };
    const named = await lockPath("t50-x", only(home));
    for (const ambient of ["", "default", null]) {
      expect(await lockPath(ambient, only({ ...home, ...sock }))).toBe(named);
      expect(await lockPath(ambient, only({ ...home, HERDR_SESSION: "t50-x" }))).toBe(named);
      expect(
        await lockPath(ambient, only({ ...home, HERDR_SESSION: "t50-y", HERDR_SOCKET_PATH: join(t, ".config/herdr/sessions/t50-x/herdr.sock") })),
      ).toBe(named);
      const viaDefaultSock = await lockPath(ambient, only({ ...home, HERDR_SOCKET_PATH: join(t, ".config/herdr/herdr.sock") }));
      expect(viaDefaultSock).toBe(await lockPath("default", only(home)));
      expect(viaDefaultSock).toBe(join(t, ".local/state/mam/pane-lock/default.lock"));
      expect((await lockPath(ambient, only({ ...home, HERDR_SOCKET_PATH: "/elsewhere/herdr.sock" }))).endsWith("/default.lock")).toBe(true);
      expect((await lockPath(ambient, only(home))).endsWith("/default.lock")).toBe(true);
    }
    // a named target is that server's, wherever it is called from
    expect(await lockPath("t50-y", only({ ...home, ...sock }))).not.toBe(named);
  });

  test("XDG_CONFIG_HOME moves herdr's socket folder", async () => {
    const t = sb.root;
    const env = only({ HOME: t, XDG_CONFIG_HOME: join(t, "xdg"), HERDR_SOCKET_PATH: join(t, "xdg/herdr/sessions/srv/herdr.sock") });
    expect(await lockPath("", env)).toBe(join(t, ".local/state/mam/pane-lock/srv.lock"));
  });
});

describe("P2 a free lock is taken at once and a held one times out", () => {
  test("free, held, other server", async () => {
    const lock = join(sb.root, "s.lock");
    let t0 = Date.now();
    expect((await acquire(lock)).stdout.trim()).toBe("locked");
    expect(Date.now() - t0).toBeLessThan(5000);
    const h = await holder(lock);
    try {
      t0 = Date.now();
      const res = await acquire(lock, { MAM_PANE_CLAIM_WAIT_S: "2" });
      expect(res.stdout.trim()).toBe("timeout");
      expect(res.code).toBe(5);
      const took = (Date.now() - t0) / 1000;
      expect(took).toBeGreaterThanOrEqual(1.5);
      expect(took).toBeLessThan(10);
      expect((await acquire(join(sb.root, "other-server.lock"), { MAM_PANE_CLAIM_WAIT_S: "2" })).stdout.trim()).toBe("locked");
    } finally {
      h.kill("SIGKILL");
      await h.exited;
    }
  });
});

describe("P3 the lock ends with its holder's process", () => {
  test("kill -9 leaves nothing stale", async () => {
    const lock = join(sb.root, "s.lock");
    const h = await holder(lock);
    h.kill("SIGKILL");
    await h.exited;
    const t0 = Date.now();
    expect((await acquire(lock, { MAM_PANE_CLAIM_WAIT_S: "30" })).stdout.trim()).toBe("locked");
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});

describe("P4 a waiter gets the lock when the holder ends", () => {
  test("holder sleeping 2 s", async () => {
    const lock = join(sb.root, "s.lock");
    const h = await holder(lock, "2");
    const t0 = Date.now();
    const res = await acquire(lock, { MAM_PANE_CLAIM_WAIT_S: "30" });
    expect(res.stdout.trim()).toBe("locked");
    const took = (Date.now() - t0) / 1000;
    expect(took).toBeGreaterThanOrEqual(1);
    expect(took).toBeLessThan(10);
    await h.exited;
  });

  test("the waiter wakes within 100 ms of the release (SPEC §4.2)", async () => {
    const lock = join(sb.root, "s.lock");
    // the holder prints the time it releases, the waiter the time it got the lock
    const script = `exec 9>>"$1"; ${MAM_SH} pane-lock acquire --fd 9 >/dev/null; sleep 1; date +%s%N; exec 9>&-; sleep 1`;
    const h = Bun.spawn(["bash", "-c", script, "h", lock], { env: sb.env, stdout: "pipe" });
    await Bun.sleep(300);
    const w = await run(["bash", "-c", `exec 9>>"$1"; ${MAM_SH} pane-lock acquire --fd 9 >/dev/null; date +%s%N`, "w", lock], { env: sb.env });
    const released = Number((await new Response(h.stdout).text()).trim());
    await h.exited;
    const got = Number(w.stdout.trim());
    expect((got - released) / 1e6).toBeLessThan(100);
  });
});

describe("P5 the wait knob is a decimal with a floor of one", () => {
  test("values", async () => {
    expect(await waitSeconds(sb.with({ MAM_PANE_CLAIM_WAIT_S: undefined }))).toBe(120);
    expect(await waitSeconds(sb.with({ MAM_PANE_CLAIM_WAIT_S: "7" }))).toBe(7);
    expect(await waitSeconds(sb.with({ MAM_PANE_CLAIM_WAIT_S: "0700" }))).toBe(700);
    for (const bad of ["0", "abc", "", "-1", " "]) {
      expect(await waitSeconds(sb.with({ MAM_PANE_CLAIM_WAIT_S: bad }))).toBe(120);
    }
  });
});

describe("bad input touches nothing", () => {
  test("invalid server names are usage errors and create no folder", async () => {
    for (const bad of ["../x", "a/b", "x".repeat(65), ".", "..", "-x", "a b", "a;b"]) {
      const r = await runMam(["pane-lock", "path", "--session", bad], { env: sb.env });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/^ERROR: invalid herdr server name/);
    }
    expect(existsSync(join(sb.home, ".local"))).toBe(false);
  });

  test("an invalid ambient HERDR_SESSION is a usage error", async () => {
    const r = await runMam(["pane-lock", "path"], { env: sb.with({ HERDR_SESSION: "../evil" }) });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("ERROR: invalid herdr server name");
  });

  test("path creates the lock folder 0700 but never the lock file", async () => {
    const p = await lockPath("fresh", sb.env);
    expect(existsSync(p)).toBe(false);
    const dir = join(sb.home, ".local/state/mam/pane-lock");
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const r = await run(["bash", "-c", `exec 9>>"$(${MAM_SH} pane-lock path --session fresh2)"; ${MAM_SH} pane-lock acquire --fd 9`], { env: sb.env });
    expect(r.stdout.trim()).toBe("locked");
  });

  test("a descriptor that is not open, or not a number, is a usage error", async () => {
    for (const fd of ["9", "abc", "-1", "1.5"]) {
      const r = await runMam(["pane-lock", "acquire", "--fd", fd], { env: sb.env });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(/^ERROR: /);
    }
  });

  test("the lock stays with the caller's descriptor after mam exits", async () => {
    const f = join(sb.root, "keep.lock");
    const r = await run(["bash", "-c", `exec 9>>"$1"; ${MAM_SH} pane-lock acquire --fd 9; flock -n "$1" true || echo held`, "x", f], { env: sb.env });
    expect(r.stdout).toBe("locked\nheld\n");
  });
});

test("MAM_CMD is the compiled binary under npm test", () => {
  if (process.env.npm_lifecycle_event === "test") expect(MAM_CMD.length).toBe(1);
});
