// Hints that point the right way (issue 39 item 7), through the binary on a private tmux server:
// approve on an agent at its prompt or on an ended job says what is true (no "cannot read the
// dialogs"); a --to or --to-role that names nothing running gets a did-you-mean (a role given
// as --to is the other flag's); resume --all of kinds that keep no conversation names --fresh.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "../helpers/tmux.ts";

let sb: Sandbox;
let server: string;
let env: Record<string, string>;
beforeEach(() => {
  sb = makeSandbox("mam-hint-");
  server = tmuxServerName("mamhint");
  env = sb.with({ TMUX_TMPDIR: sb.root, MAM_MUX: "tmux", MAM_AGENT_SETTLE_S: "0.3" });
});
afterEach(async () => {
  await killTmuxServer(server, env, sb.root);
  await sb.cleanup();
});
const mam = (args: string[]) => runMam(args, { env, cwd: sb.ws, timeoutMs: 30_000 });

describe.skipIf(!TMUX_BIN)("hints that say what is true and what to type", () => {
  test("approve: an agent at its prompt is not at a dialog; an ended job has none", async () => {
    expect((await mam(["create", "--agent", "demo", "--role", "worker", "--session", "w1", "--tmux-server", server, "--no-onboard"])).code).toBe(0);
    const idle = await mam(["approve", "w1"]);
    expect(idle.code).toBe(1);
    expect(idle.stderr).toBe("ERROR: w1 is not at a dialog (it is idle, at its prompt); nothing was pressed; see: mam status (its LIVE column)\n");
    const id = (await mam(["job", "submit", "--to", "w1", "--from", "me", "--prompt", "say hi"])).stdout.trim();
    expect((await mam(["job", "wait", id, "--timeout", "30"])).code).toBe(0);
    const ended = await mam(["approve", id]);
    expect(ended.code).toBe(2);
    expect(ended.stderr).toBe(`ERROR: job ${id} has ended (completed): no dialog is its any more; nothing was pressed; see: mam job status ${id}; a dialog of its agent now: mam approve w1\n`);
    expect(ended.stderr).not.toContain("cannot read the dialogs");
  }, 60_000);

  test("job submit --to / --to-role naming nothing running: did you mean", async () => {
    expect((await mam(["create", "--agent", "demo", "--role", "worker", "--session", "api", "--tmux-server", server, "--no-onboard"])).code).toBe(0);
    const name = await mam(["job", "submit", "--to", "apu", "--prompt", "x"]);
    expect(name.code).toBe(3);
    expect(name.stderr).toContain("no running session named 'apu' in this workspace");
    expect(name.stderr).toContain("; did you mean --to api? see: mam status");
    const role = await mam(["job", "submit", "--to", "wroker", "--prompt", "x"]);
    expect(role.stderr).toContain("; did you mean --to-role worker? see: mam status");
    const pool = await mam(["job", "submit", "--to-role", "wroker", "--prompt", "x"]);
    expect(pool.code).toBe(3);
    expect(pool.stderr).toContain("no running session has the role 'wroker'");
    expect(pool.stderr).toContain("; did you mean --to-role worker? see: mam status (its ROLE column)");
    const none = await mam(["job", "submit", "--to", "zzzzzz", "--prompt", "x"]);
    expect(none.stderr).not.toContain("did you mean");
  }, 60_000);

  test("resume --all of kinds that keep no conversation: the command with --fresh, which brings them back", async () => {
    for (const [kind, name] of [["demo", "d1"], ["shell", "s1"]]) expect((await mam(["create", "--agent", kind!, "--role", "worker", "--session", name!, "--tmux-server", server, "--no-onboard"])).code).toBe(0);
    for (const name of ["d1", "s1"]) expect((await mam(["stop", name])).code).toBe(0);
    const r = await mam(["resume", "--all", "--role", "worker", "--stagger", "0"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("left d1 stopped: demo sessions cannot be resumed\n");
    expect(r.stdout).toContain("d1, s1 have no conversation to resume; start them with a new one: mam resume --all --fresh --role worker\n");
    const again = await mam(["resume", "--all", "--fresh", "--role", "worker", "--stagger", "0"]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain("2 running (0 before)");
    expect(again.stdout).not.toContain("no conversation to resume");
  }, 60_000);
});
