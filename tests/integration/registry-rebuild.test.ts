// A broken registry with no backup, or one moved away, while its agents run (issue 23 item 16,
// the newcomer's dead end): every registry error names the way out that exists (`mam registry
// restore --yes` when the .bak reads, else `mam registry rebuild`), and `mam registry rebuild`
// re-registers the panes mam labelled in this workspace, on the default and the other private
// tmux servers it finds, keeping the broken file.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "../helpers/tmux.ts";

const it = TMUX_BIN ? test : test.skip;

let sb: Sandbox;
let yaml: string;
let env: Record<string, string>;
let other: string;
beforeEach(() => {
  sb = makeSandbox("mam-rebuild-");
  yaml = join(sb.ws, ".mam", "agent-sessions.yaml");
  // the default server `mam` and one named one, both sockets under the sandbox's TMUX_TMPDIR
  env = sb.with({ TMUX_TMPDIR: sb.root, MAM_MUX: "tmux" });
  other = tmuxServerName("mamrb");
});
afterEach(async () => {
  await killTmuxServer("mam", env, sb.root);
  await killTmuxServer(other, env, sb.root);
  await sb.cleanup();
});

const mam = (args: string[], cwd = sb.ws) => runMam(args, { env, cwd, timeoutMs: 60_000 });
const rowsOf = () => (Bun.YAML.parse(readFileSync(yaml, "utf8")) as { tmux_sessions?: Record<string, any>[] }).tmux_sessions ?? [];

/** two sessions of this workspace (one on another private server) and one of another workspace on the shared server */
async function team(): Promise<string> {
  for (const [name, role, server] of [["lead", "lead", "mam"], ["w1", "worker", other]] as const) {
    const r = await mam(["create", "--agent", "demo", "--role", role, "--session", name, "--tmux-server", server, "--no-onboard"]);
    expect(r.code, r.stderr).toBe(0);
  }
  const elsewhere = join(sb.root, "other-ws");
  mkdirSync(elsewhere);
  const r = await mam(["create", "--agent", "demo", "--role", "worker", "--session", "theirs", "--no-onboard", "--workspace", elsewhere], elsewhere);
  expect(r.code, r.stderr).toBe(0);
  return elsewhere;
}

describe("mam registry rebuild", () => {
  it("a broken registry with no .bak: the error names rebuild; the dry run changes nothing; --yes re-registers the running agents and keeps the broken file", async () => {
    await team();
    // a server that ended and left its socket behind (tmux 3.3 does on kill-server): not a server to look at
    const dead = tmuxServerName("mamrbdead");
    expect(Bun.spawnSync([TMUX_BIN!, "-L", dead, "new-session", "-d", "sleep 60"], { env }).exitCode).toBe(0);
    Bun.spawnSync([TMUX_BIN!, "-L", dead, "kill-server"], { env });
    expect(readdirSync(join(sb.root, `tmux-${process.getuid!()}`))).toContain(dead);
    const garbage = Buffer.concat([Buffer.from("garbage: [unclosed\n"), Buffer.from([0x00, 0xff])]); // the newcomer's file
    writeFileSync(yaml, garbage);
    rmSync(`${yaml}.bak`, { force: true });
    const way = "fix it, or rebuild it from the panes the agents run in: mam registry rebuild";
    for (const args of [["status"], ["stop", "lead"], ["reconcile"], ["registry", "check"]]) {
      const r = await mam(args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr).toBe(`ERROR: ${yaml} is not valid YAML (line 2: invalid UTF-8); ${way}\n`);
    }
    const restore = await mam(["registry", "restore"]);
    expect(restore.code).toBe(3);
    expect(restore.stderr).toContain("; mam registry rebuild re-registers the running agents from their panes");

    const dry = await mam(["registry", "rebuild"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`${yaml}: is not valid YAML (line 2: invalid UTF-8); would be kept as agent-sessions.yaml.broken-<time>\n`);
    expect(dry.stdout).toMatch(/^looked at: .*tmux:mam \(2 panes\).*$/m);
    expect(dry.stdout).toContain(`tmux:${other} (1 pane)`);
    expect(dry.stdout).toContain("would register 2 sessions:\n");
    // each keeps the role it was created with (tmux keeps it on the session: issue 39 item 12)
    expect(dry.stdout).toMatch(/^ {2}lead {2}tmux pane %\d+ on mam \(demo, role lead\)$/m);
    expect(dry.stdout).toMatch(new RegExp(`^  w1  tmux pane %\\d+ on ${other} \\(demo, role worker\\)$`, "m"));
    expect(dry.stdout).not.toContain(dead);
    // mam started it for the other workspace (@mam_workspace): left out as that workspace's
    expect(dry.stdout).toMatch(/^left out 1 pane with a mam label:\n {2}tmux pane %\d+ on mam \(label 'mam:theirs'\): it belongs to workspace .*other-ws$/m);
    expect(readFileSync(yaml)).toEqual(garbage);

    const j = await mam(["registry", "rebuild", "--yes", "--json"]);
    expect(j.code, j.stderr).toBe(0);
    const doc = JSON.parse(j.stdout);
    expect(doc.previous.state).toBe("broken");
    expect(doc.previous.moved_to).toMatch(/agent-sessions\.yaml\.broken-\d{8}T\d{6}Z$/);
    expect(readFileSync(doc.previous.moved_to)).toEqual(garbage);
    expect(doc.registered.map((r: { name: string }) => r.name).sort()).toEqual(["lead", "w1"]);
    expect(rowsOf().map((r) => [r.name, r.status, r.agent, r.tmux_server, r.role])).toEqual([
      ["lead", "running", "demo", "mam", "lead"],
      ["w1", "running", "demo", other, "worker"],
    ]);
    const st = await mam(["status", "--json"]);
    expect(JSON.parse(st.stdout).sessions.map((s: { name: string; live: string }) => [s.name, s.live])).toEqual([
      ["lead", "idle"],
      ["w1", "idle"],
    ]);
    // the agents are reachable again: stop, and create of the name
    expect((await mam(["stop", "w1", "--hard"])).code).toBe(0);
    // a registry that reads fine is not rebuilt
    const again = await mam(["registry", "rebuild", "--yes"]);
    expect(again.code).toBe(4);
    expect(again.stderr).toBe(`ERROR: ${yaml} reads fine and has 2 rows; nothing was rebuilt; mam reconcile registers the agent panes it lacks; to start over, move the file away first\n`);
  });

  it("a registry moved away: rebuild registers the orphaned agents (roles from the .bak when it has them); with a usable .bak the error names restore", async () => {
    await team();
    copyFileSync(yaml, `${yaml}.bak`); // a backup that reads: lead (lead), w1 (worker)
    writeFileSync(yaml, "tmux_sessions: [oops\n");
    const r = await mam(["status"]);
    expect(r.stderr).toBe(`ERROR: ${yaml} is not valid YAML (line 2: flow sequence in block collection must be sufficiently indented and end with a ]); fix it, or put back its previous version ${yaml}.bak: mam registry restore --yes\n`);
    renameSync(yaml, join(sb.root, "moved.yaml"));
    // the newcomer's dead end: reconcile sees no server, the name is taken on tmux, stop finds no
    // row; create names the way out
    expect((await mam(["reconcile"])).stdout).toMatch(/nothing to do|0 server/);
    // (on mam's server: the workspace remembers the other one w1 was created on, issue 39 item 10)
    const c = await mam(["create", "--agent", "demo", "--role", "lead", "--session", "lead", "--no-onboard", "--tmux-server", "mam"]);
    expect(c.code).toBe(4);
    expect(c.stderr).toMatch(/^ERROR: tmux session 'lead' already exists on tmux server 'mam' \(this workspace's\); if mam status does not list it, mam registry rebuild registers it again from its pane; or end it \(tmux -L mam kill-session -t '=lead'\), or pick another --session\n$/);
    const y = await mam(["registry", "rebuild", "--yes"]);
    expect(y.code, y.stderr).toBe(0);
    expect(y.stdout).toContain(`${yaml}: missing\n`);
    expect(y.stdout).toMatch(/^ {2}lead {2}tmux pane %\d+ on mam \(demo, role lead, from the backup\)$/m);
    expect(rowsOf().map((r) => [r.name, r.role, r.status])).toEqual([
      ["lead", "lead", "running"],
      ["w1", "worker", "running"],
    ]);
    expect(readdirSync(join(sb.ws, ".mam")).filter((f) => f.includes(".broken-"))).toEqual([]);
    expect((await mam(["stop", "lead", "--hard"])).code).toBe(0);
    expect((await mam(["stop", "w1", "--hard"])).code).toBe(0);
    expect(existsSync(yaml)).toBe(true);
  });
});
