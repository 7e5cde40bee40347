// What `mam status` says of a shell session at work (issue 39 item 11): a shell running its own
// job is no drift (its pane's command is the job's, by design), and a job cancelled while it
// waited its turn never was its agent's job (the JOB column keeps the one it runs).
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { readJournal } from "../../lib/jobs/store.ts";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "../helpers/tmux.ts";

let sb: Sandbox;
let server: string;
let env: Record<string, string>;
beforeEach(() => {
  sb = makeSandbox("mam-shst-");
  server = tmuxServerName("mamshst");
  env = sb.with({ TMUX_TMPDIR: sb.root, MAM_MUX: "tmux", MAM_AGENT_SETTLE_S: "0.3" });
});
afterEach(async () => {
  await killTmuxServer(server, env, sb.root);
  await sb.cleanup();
});
const mam = (args: string[]) => runMam(args, { env, cwd: sb.ws, timeoutMs: 30_000 });
const row = async (name: string) => (JSON.parse((await mam(["status", "--json"])).stdout).sessions as { name: string; job: { id: string; status: string } | null; drift: string[] }[]).find((s) => s.name === name)!;

describe.skipIf(!TMUX_BIN)("status of a shell at work", () => {
  test("no pane-changed while it runs its job; a job cancelled in its queue is not its job", async () => {
    expect((await mam(["create", "--agent", "shell", "--session", "sh", "--tmux-server", server])).code).toBe(0);
    // the job runs until the test lets it end (a fixed sleep ran out on a loaded machine before the checks did)
    const go = `${sb.root}/go`;
    const running = (await mam(["job", "submit", "--to", "sh", "--prompt", `until [ -e ${go} ]; do sleep 0.2; done`])).stdout.trim();
    expect(await waitFor(() => readJournal(sb.ws, running).some((e) => e.event === "started"), 10_000)).toBe(true);
    const queued = (await mam(["job", "submit", "--to", "sh", "--prompt", "echo later"])).stdout.trim();
    expect(readJournal(sb.ws, queued).map((e) => e.event)).toEqual(["queued"]);
    const busy = await row("sh");
    expect(busy.drift).toEqual([]);
    expect((await mam(["reconcile", "--dry-run"])).stdout).not.toContain("pane-changed");
    expect((await mam(["job", "cancel", queued])).code).toBe(0);
    expect((await row("sh")).job).toEqual({ id: running, status: "running" });
    writeFileSync(go, "");
    expect((await mam(["job", "wait", running, "--timeout", "20"])).code).toBe(0);
    expect((await row("sh")).job).toEqual({ id: running, status: "completed" });
  }, 60_000);
});
