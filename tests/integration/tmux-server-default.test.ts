// A workspace remembers its tmux server (issue 39 item 10): a create given --tmux-server makes it
// the workspace's, so its later creates need no flag; MAM_TMUX_SERVER comes before it, an
// explicit flag before both; a .mam/tmux-server mam would refuse chooses nothing.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "../helpers/tmux.ts";

let sb: Sandbox;
let env: Record<string, string>;
let servers: string[];
beforeEach(() => {
  sb = makeSandbox("mam-tsd-");
  env = sb.with({ TMUX_TMPDIR: sb.root, MAM_AGENT_SETTLE_S: "0.3", MAM_MUX: undefined });
  servers = ["mam", tmuxServerName("mamtsa"), tmuxServerName("mamtsb"), tmuxServerName("mamtse")];
});
afterEach(async () => {
  for (const s of servers) await killTmuxServer(s, env, sb.root);
  await sb.cleanup();
});

describe.skipIf(!TMUX_BIN)("the tmux server a workspace remembers", () => {
  test("given once, used by the next creates; MAM_TMUX_SERVER and the flag come first", async () => {
    const [, own, another, fromEnv] = servers as [string, string, string, string];
    const ws2 = join(sb.root, "ws2");
    mkdirSync(ws2);
    const create = (ws: string, name: string, extra: string[] = [], e = env) =>
      runMam(["create", "--agent", "demo", "--mux", "tmux", "--session", name, "--no-onboard", "--workspace", ws, ...extra], { env: e, cwd: ws, timeoutMs: 30_000 });
    const serverOf = (r: { stdout: string }) => /on tmux server (\S+)/.exec(r.stdout)?.[1];
    // the first workspace on mam's default server; the second refused there, then given its own
    expect(serverOf(await create(sb.ws, "a"))).toBe("mam");
    expect((await create(ws2, "a")).code).toBe(4);
    expect(serverOf(await create(ws2, "a", ["--tmux-server", own]))).toBe(own);
    expect(readFileSync(join(ws2, ".mam", "tmux-server"), "utf8")).toBe(`${own}\n`);
    // no flag: the workspace's server (also without --mux: a remembered tmux server means tmux)
    const b = await runMam(["create", "--agent", "demo", "--session", "b", "--no-onboard"], { env, cwd: ws2, timeoutMs: 30_000 });
    expect(b.code, b.stderr).toBe(0);
    expect(serverOf(b)).toBe(own);
    // the first workspace still uses mam's
    expect(serverOf(await create(sb.ws, "b"))).toBe("mam");
    // MAM_TMUX_SERVER before the workspace's; not remembered
    expect(serverOf(await create(ws2, "c", [], { ...env, MAM_TMUX_SERVER: fromEnv }))).toBe(fromEnv);
    expect(readFileSync(join(ws2, ".mam", "tmux-server"), "utf8")).toBe(`${own}\n`);
    // a flag wins, and is the workspace's from now on
    expect(serverOf(await create(ws2, "d", ["--tmux-server", another], { ...env, MAM_TMUX_SERVER: fromEnv }))).toBe(another);
    expect(serverOf(await create(ws2, "e"))).toBe(another);
    // status and stop find each on its own server
    const st = JSON.parse((await runMam(["status", "--json"], { env, cwd: ws2 })).stdout) as { sessions: { name: string; server: string }[] };
    expect(Object.fromEntries(st.sessions.map((s) => [s.name, s.server]))).toMatchObject({ a: own, b: own, c: fromEnv, d: another, e: another });
    // a name mam would refuse in the file chooses nothing
    writeFileSync(join(ws2, ".mam", "tmux-server"), "../../evil\n");
    expect(serverOf(await create(ws2, "f"))).toBe("mam");
  }, 120_000);
});
