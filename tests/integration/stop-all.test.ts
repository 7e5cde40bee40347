// `mam stop --all` (and `--role R`), the other half of `resume --all`, and resume making sure the
// daemon runs as create does (issue 39 item 8), through the binary on a private tmux server.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { daemonPids, killAndWait } from "../helpers/daemon.ts";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "../helpers/tmux.ts";

let sb: Sandbox;
let server: string;
let env: Record<string, string>;
beforeEach(() => {
  sb = makeSandbox("mam-stopall-");
  server = tmuxServerName("mamsa");
  env = sb.with({ TMUX_TMPDIR: sb.root, MAM_MUX: "tmux", MAM_AGENT_SETTLE_S: "0.3" });
});
afterEach(async () => {
  await killAndWait(daemonPids(sb.ws));
  await killTmuxServer(server, env, sb.root);
  await sb.cleanup();
});
const mam = (args: string[], e = env) => runMam(args, { env: e, cwd: sb.ws, timeoutMs: 30_000 });
const statuses = async () =>
  Object.fromEntries((JSON.parse((await mam(["status", "--json"])).stdout).sessions as { name: string; status: string }[]).map((s) => [s.name, s.status]));

describe.skipIf(!TMUX_BIN)("stop --all", () => {
  test("--role stops that role's running sessions only; --all the rest; the result lists each; resume --all brings them back", async () => {
    for (const [name, role] of [["w1", "worker"], ["w2", "worker"], ["r1", "reviewer"]]) {
      expect((await mam(["create", "--agent", "demo", "--role", role!, "--session", name!, "--tmux-server", server, "--no-onboard"])).code).toBe(0);
    }
    const role = await mam(["stop", "--all", "--role", "worker"]);
    expect(role.code, role.stderr).toBe(0);
    expect(role.stdout).toBe("w1 stopped\nw2 stopped\n");
    expect(await statuses()).toEqual({ w1: "stopped", w2: "stopped", r1: "running" });
    const all = await mam(["stop", "--all", "--reason", "done for today", "--json"]);
    expect(all.code, all.stderr).toBe(0);
    const doc = JSON.parse(all.stdout) as { stopped: { name: string; status: string }[]; left: unknown[]; role: string | null };
    expect(doc.stopped.map((s) => [s.name, s.status])).toEqual([["r1", "stopped"]]);
    expect(doc.left).toEqual([]);
    expect((await mam(["stop", "--all"])).stdout).toBe("no running sessions to stop\n");
    // the usage rules: --all or a name, --role with --all, purge still needs --yes
    expect((await mam(["stop", "w1", "--all"])).stderr).toBe("ERROR: --all stops every running session: no NAME\n");
    expect((await mam(["stop", "--role", "worker"])).stderr).toBe("ERROR: --role goes with --all\n");
    expect((await mam(["stop", "--all", "--hard", "--purge-conversation"])).stderr).toBe("ERROR: --purge-conversation deletes conversation files; add --yes to confirm\n");
    const back = await mam(["resume", "--all", "--fresh", "--stagger", "0"]);
    expect(back.code, back.stderr).toBe(0);
    expect(await statuses()).toEqual({ w1: "running", w2: "running", r1: "running" });
  }, 90_000);

  test("resume starts the workspace's daemon, as create does", async () => {
    const withDaemon = sb.with({ TMUX_TMPDIR: sb.root, MAM_MUX: "tmux", MAM_AGENT_SETTLE_S: "0.3", MAM_NO_SUBSCRIBER_DAEMON: undefined });
    expect((await mam(["create", "--agent", "demo", "--session", "w1", "--tmux-server", server, "--no-onboard"], withDaemon)).code).toBe(0);
    expect((await mam(["stop", "w1"], withDaemon)).code).toBe(0);
    expect((await mam(["daemon", "stop"], withDaemon)).code).toBe(0);
    expect(await waitFor(() => daemonPids(sb.ws).length === 0, 10_000)).toBe(true);
    const r = await mam(["resume", "w1", "--fresh", "--json"], withDaemon);
    expect(r.code, r.stderr).toBe(0);
    const pid = (JSON.parse(r.stdout) as { daemon_pid: number | null }).daemon_pid;
    expect(typeof pid).toBe("number");
    const st = await mam(["daemon", "status", "--json"], withDaemon);
    expect(st.code, st.stderr).toBe(0);
    expect((await mam(["daemon", "stop"], withDaemon)).code).toBe(0);
  }, 90_000);
});
