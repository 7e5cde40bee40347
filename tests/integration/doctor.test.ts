// mam doctor through the binary, on a PATH the test makes: only tmux and what the test puts there.
// An npm-installed claude newer than the verified one (a warning with the pin), the registry's
// codex missing (a failure), a broker down and up, a malformed registry, --json.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { MAM_BIN, runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

let sb: Sandbox;
let env: Record<string, string>;
beforeEach(() => {
  sb = makeSandbox("mam-doc-");
  const tools = join(sb.root, "tools");
  mkdirSync(tools);
  const tmux = Bun.which("tmux");
  if (tmux) symlinkSync(tmux, join(tools, "tmux"));
  // as a user's shell is: no broker named, the daemon allowed
  env = { ...sb.env, PATH: `${sb.bin}:${tools}` };
  for (const k of ["MQTT_BROKER", "MQTT_PORT", "MAM_NO_SUBSCRIBER_DAEMON"]) delete env[k];
});
afterEach(() => sb.cleanup());

const doctor = (args: string[] = [], e: Record<string, string> = env) => runMam(["doctor", ...args], { env: e, cwd: sb.ws });

/** a CLI installed as npm installs one: node_modules/<pkg>/package.json, its bin linked from PATH */
function npmInstall(pkg: string, exe: string, version: string): void {
  const dir = join(sb.root, "prefix", "lib", "node_modules", ...pkg.split("/"));
  mkdirSync(join(dir, "bin"), { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: pkg, version }));
  const bin = join(dir, "bin", exe);
  writeFileSync(bin, "#!/bin/sh\necho 'a CLI that must not be run by mam doctor' >&2\nexit 9\n");
  chmodSync(bin, 0o755);
  symlinkSync(bin, join(sb.bin, exe));
}

describe("mam doctor", () => {
  test("nothing installed but tmux, no workspace: names every missing piece with its fix, exit 1", async () => {
    const r = await doctor();
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^warn  mam .*; no `mam` on PATH\n +fix: put it on PATH/m);
    expect(r.stdout).toMatch(/^info  claude +not installed\n +fix: to use it: npm i -g @anthropic-ai\/claude-code$/m);
    expect(r.stdout).toMatch(/^fail  agent CLIs +no agent CLI is installed\n +fix: install one: npm i -g @anthropic-ai\/claude-code/m);
    expect(r.stdout).toMatch(/^info  workspace +none here/m);
    expect(r.stdout).toMatch(/^info  sandbox +bwrap not installed \(only --sandbox bwrap needs it\)\n +fix: apt install bubblewrap/m);
    expect(r.stdout).toEndWith("1 problem, 1 warning\n");
  });

  test("claude newer than the verified range: a warning with the newest pin; the version read from its package, the CLI never run; mam on PATH", async () => {
    npmInstall("@anthropic-ai/claude-code", "claude", "2.1.400");
    symlinkSync(MAM_BIN!, join(sb.bin, "mam"));
    const r = await doctor(["--json"]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.ok).toBe(true);
    const claude = doc.checks.find((c: any) => c.id === "agent.claude");
    expect(claude).toMatchObject({ name: "claude", status: "warn", fix: "npm i -g @anthropic-ai/claude-code@2.1.332 for the newest verified one, or report what differs" });
    expect(claude.detail).toStartWith(`2.1.400 at ${join(sb.bin, "claude")}: mam was verified on 2.1.197 to 2.1.332 (this one is newer)`);
    expect(doc.checks.find((c: any) => c.id === "mam")).toMatchObject({ status: "ok" });
    if (Bun.which("tmux")) expect(doc.checks.find((c: any) => c.id === "tmux").detail).toMatch(/^\d+\.\d+\w* at /);
    for (const c of doc.checks) expect(Object.keys(c).sort()).toEqual(["detail", "fix", "id", "name", "status"]);
  });

  test("a workspace: its codex agent without codex installed fails; the daemon, hooks and registry are read", async () => {
    npmInstall("@anthropic-ai/claude-code", "claude", "2.1.197");
    mkdirSync(join(sb.ws, ".mam"));
    writeFileSync(join(sb.ws, ".mam", "agent-sessions.yaml"), "herdr_sessions: []\ntmux_sessions:\n  - name: cx\n    status: stopped\n    role: worker\n    agent: codex\n");
    const r = await doctor();
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^fail  codex +not installed, and this workspace's registry has codex agents \(they cannot be resumed\)\n +fix: npm i -g @openai\/codex$/m);
    expect(r.stdout).toMatch(/^ok    claude +2\.1\.197 at .* \(the oldest verified version\)$/m);
    expect(r.stdout).toMatch(/^ok    registry +.*agent-sessions\.yaml reads \(agents: codex\)$/m);
    expect(r.stdout).toMatch(/^info  daemon +not running \(no agent runs/m);
    expect(r.stdout).toMatch(/^info  claude hooks +not installed.*\n +fix: mam hooks install claude$/m);
    // a malformed registry: a failure that names the way out, and nothing written
    writeFileSync(join(sb.ws, ".mam", "agent-sessions.yaml"), "tmux_sessions: [\n");
    const bad = await doctor();
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/^fail  registry .*\n +fix: mam registry check/m);
  });

  test("the broker: down is a failure, up is ok, a malformed MQTT_BROKER says what it takes", async () => {
    npmInstall("@openai/codex", "codex", "0.171.0");
    const srv: Server = createServer((s) => s.destroy());
    await new Promise<void>((ok) => srv.listen(0, "127.0.0.1", ok));
    const port = (srv.address() as { port: number }).port;
    try {
      const up = await doctor(["--json"], { ...env, MQTT_BROKER: `127.0.0.1:${port}` });
      expect(JSON.parse(up.stdout).checks.find((c: any) => c.id === "broker")).toMatchObject({ status: "ok", detail: `127.0.0.1:${port} reachable` });
    } finally {
      srv.close();
    }
    const down = await doctor([], { ...env, MQTT_BROKER: `127.0.0.1:${port}` });
    expect(down.code).toBe(1);
    expect(down.stdout).toMatch(new RegExp(`^fail  broker +127\\.0\\.0\\.1:${port} unreachable \\(ECONNREFUSED\\)$`, "m"));
    const bad = await doctor([], { ...env, MQTT_BROKER: "not a host!" });
    expect(bad.stdout).toMatch(/^fail  broker +MQTT_BROKER='not a host!': MQTT_BROKER must be a host/m);
  });
});
