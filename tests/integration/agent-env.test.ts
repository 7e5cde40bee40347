// What an agent's pane inherits (issue 23; security review attempts 41 and 44, R1 and R3), on a
// real tmux and on the fake herdr: none of mam's secrets (MQTT_PASSWORD, MAM_JOB_TOKEN,
// MAM_BROKER_PASSWORD) in the pane's process or in the tmux server's global environment, also
// when another process started that server with them and when a later mam runs with other
// values; the agents' own keys still there; and no folder of the workspace on the agents' PATH
// (a workspace that ships .mam/bin/git does not run its git for the agents). An agent that must
// log in to the broker reads the password from MQTT_PASSWORD_FILE.
import { describe, expect, test } from "bun:test";
import mqtt from "mqtt";
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { registerJob } from "../../lib/jobs/store.ts";
import { agentShimDir } from "../../lib/mux/shim.ts";
import { startMosquitto } from "../helpers/brokers.ts";
import { environOf, ok, SERVER, withWorld } from "../helpers/herdr-world.ts";
import { type RunResult, run, runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "../helpers/tmux.ts";

const SECRETS = ["MQTT_PASSWORD", "MAM_JOB_TOKEN", "MAM_BROKER_PASSWORD"];
const secretsOf = (env: Record<string, string>) => SECRETS.filter((k) => env[k] !== undefined && env[k] !== "");

interface TmuxWorld {
  sb: Sandbox;
  server: string;
  env: Record<string, string>;
  mam(args: string[], env?: Record<string, string>): Promise<RunResult>;
  tmux(args: string[], env?: Record<string, string>): Promise<RunResult>;
  /** the pid of a session's pane, from the registry */
  panePid(name: string): number;
}

function needTmux(): string {
  if (!TMUX_BIN) throw new Error("tmux is not installed: these tests need a real tmux (apt install tmux); they are not skipped on purpose");
  return TMUX_BIN;
}

async function withTmux(fn: (w: TmuxWorld) => Promise<void>): Promise<void> {
  const tmuxBin = needTmux();
  const sb = makeSandbox("mam-aenv-");
  const server = tmuxServerName("mamenv");
  const env = sb.with({ TMUX_TMPDIR: sb.root });
  const w: TmuxWorld = {
    sb,
    server,
    env,
    mam: (args, e = env) => runMam(args, { env: e, cwd: sb.ws, timeoutMs: 60_000 }),
    tmux: (args, e = env) => run([tmuxBin, "-L", server, ...args], { env: e, cwd: sb.ws, timeoutMs: 20_000 }),
    panePid: (name) => {
      const d = Bun.YAML.parse(readFileSync(join(sb.ws, ".mam", "agent-sessions.yaml"), "utf8")) as { tmux_sessions?: { name: string; pane: { pid: number } }[] };
      const row = (d.tmux_sessions ?? []).find((r) => r.name === name);
      if (!row?.pane.pid) throw new Error(`no pane pid for ${name}`);
      return row.pane.pid;
    },
  };
  try {
    await fn(w);
  } finally {
    await killTmuxServer(server, env, sb.root);
    await sb.cleanup();
  }
}

/** `tmux show-environment -g` as a map (a removed variable, `-NAME`, is left out) */
async function globalEnv(w: TmuxWorld): Promise<Record<string, string>> {
  const r = await w.tmux(["show-environment", "-g"]);
  expect(r.code).toBe(0);
  const out: Record<string, string> = {};
  for (const line of r.stdout.split("\n")) {
    const i = line.indexOf("=");
    if (i > 0 && !line.startsWith("-")) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}

const createShell = (w: TmuxWorld, name: string, env?: Record<string, string>) =>
  w.mam(["create", "--agent", "shell", "--mux", "tmux", "--tmux-server", w.server, "--session", name, "--no-onboard"], env);

describe.concurrent("R1: mam's secrets never reach an agent's pane (tmux)", () => {
  test("tmux is installed", () => {
    expect(TMUX_BIN, "tmux is not installed: these tests need it (apt install tmux)").toBeTruthy();
  });

  test("a server mam starts holds none of them, nor does the pane; a later mam with other values adds none; the agent's own key stays", async () => {
    await withTmux(async (w) => {
      const first = { ...w.env, MQTT_PASSWORD: "pw-first", MAM_JOB_TOKEN: "tok-first", MAM_BROKER_PASSWORD: "bpw-first", MQTT_USERNAME: "team", ANTHROPIC_API_KEY: "sk-agent-key" };
      ok(await createShell(w, "a1", first));
      const pane1 = environOf(w.panePid("a1"));
      expect(secretsOf(pane1)).toEqual([]);
      expect(pane1).toMatchObject({ ANTHROPIC_API_KEY: "sk-agent-key", MQTT_USERNAME: "team", MAM_SESSION: "a1", MAM_WORKSPACE: w.sb.ws });
      expect(secretsOf(await globalEnv(w))).toEqual([]);

      // a later mam, another environment: still nothing of it in the new pane or the server
      const second = { ...w.env, MQTT_PASSWORD: "pw-second", MAM_JOB_TOKEN: "tok-second", MAM_BROKER_PASSWORD: "bpw-second" };
      ok(await createShell(w, "a2", second));
      expect(secretsOf(environOf(w.panePid("a2")))).toEqual([]);
      expect(secretsOf(await globalEnv(w))).toEqual([]);
    });
  });

  test("a server something else started with them (an older mam, your own tmux -L): they are removed before mam's pane starts", async () => {
    await withTmux(async (w) => {
      const polluted = { ...w.env, MQTT_PASSWORD: "stale-pw", MAM_JOB_TOKEN: "stale-tok", MAM_BROKER_PASSWORD: "stale-bpw" };
      expect((await w.tmux(["new-session", "-d", "-s", "theirs", "sleep 600"], polluted)).code).toBe(0);
      // the scenario: tmux keeps the starting client's environment for every later pane
      expect(secretsOf(await globalEnv(w)).sort()).toEqual([...SECRETS].sort());

      ok(await createShell(w, "b1"));
      expect(secretsOf(environOf(w.panePid("b1")))).toEqual([]);
      expect(secretsOf(await globalEnv(w))).toEqual([]);
      // and a pane tmux makes later, for anyone, gets none of them either
      expect((await w.tmux(["new-session", "-d", "-s", "later", "sleep 600"])).code).toBe(0);
      const pid = Number((await w.tmux(["display-message", "-p", "-t", "=later:", "#{pane_pid}"])).stdout.trim());
      expect(secretsOf(environOf(pid))).toEqual([]);
    });
  });
});

describe.concurrent("R3: the workspace cannot put its programs first on the agents' PATH", () => {
  test("tmux: a workspace that ships .mam/bin/git (and an old mam's PATH with it first): the shell agent runs the real git", async () => {
    await withTmux(async (w) => {
      const planted = join(w.sb.ws, ".mam", "bin");
      mkdirSync(planted, { recursive: true });
      const marker = join(w.sb.root, "planted-git-ran");
      writeFileSync(join(planted, "git"), `#!/bin/sh\ntouch '${marker}'\necho planted git\n`, { mode: 0o755 });
      // an agent started by an older mam has the workspace's .mam/bin first: its creates pass it on
      const agentish = { ...w.env, PATH: `${planted}:${w.env.PATH}` };
      ok(await createShell(w, "g1", agentish));
      const path = environOf(w.panePid("g1")).PATH!.split(":");
      expect(path.filter((d) => d.includes(".mam/bin"))).toEqual([]);
      expect((await w.tmux(["send-keys", "-t", "=g1:", "-l", "--", "git --version; echo done-$((40+2))"])).code).toBe(0);
      expect((await w.tmux(["send-keys", "-t", "=g1:", "Enter"])).code).toBe(0);
      let screen = "";
      const seen = await waitFor(async () => (screen = (await w.tmux(["capture-pane", "-p", "-t", "=g1:"])).stdout).includes("done-42"), 10_000, 100);
      expect(seen, screen).toBe(true);
      expect(screen).toContain("git version");
      expect(screen).not.toContain("planted git");
      expect(existsSync(marker)).toBe(false);
    });
  });

  test("herdr: the shim lives in a 0700 folder of mam's, first on PATH; a planted .mam/bin/herdr is not used; secrets set empty in the pane", async () => {
    // a herdr server the user started with the secrets in its environment
    await withWorld({ herdrEnv: { MQTT_PASSWORD: "server-pw", MAM_JOB_TOKEN: "server-tok" } }, async (w) => {
      const planted = join(w.ws, ".mam", "bin");
      mkdirSync(planted, { recursive: true });
      // a planted "shim" (the marker line is all 0.2 checked before keeping it)
      writeFileSync(join(planted, "herdr"), "#!/bin/sh\n# mam-herdr-shim: planted\necho planted\n", { mode: 0o755 });
      writeFileSync(join(planted, "git"), "#!/bin/sh\necho planted git\n", { mode: 0o755 });
      const env = { ...w.env, MQTT_PASSWORD: "mam-pw", MAM_BROKER_PASSWORD: "mam-bpw", PATH: `${planted}:${w.env.PATH}` };
      ok(await w.mam(["create", "--agent", "claude", "--herdr-session", SERVER, "--no-onboard", "--session", "h1"], { env }));
      const agent = environOf(w.row("h1").pane.pid);
      expect(secretsOf(agent)).toEqual([]);
      const dir = agentShimDir(w.ws, w.env);
      const path = agent.PATH!.split(":");
      expect(path[0]).toBe(dir);
      expect(path.filter((d) => d.includes(".mam/bin"))).toEqual([]);
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      const shim = join(dir, "herdr");
      expect(statSync(shim).mode & 0o111).not.toBe(0);
      expect(readFileSync(shim, "utf8").split("\n")[1]).toStartWith("# mam-herdr-shim:");
      expect(readFileSync(shim, "utf8")).not.toContain("planted");
      // the workspace's files are left alone
      expect(readFileSync(join(planted, "herdr"), "utf8")).toContain("planted");

      // whatever lands in mam's folder is replaced by the next create
      writeFileSync(shim, "#!/bin/sh\necho tampered\n", { mode: 0o755 });
      ok(await w.mam(["create", "--agent", "claude", "--herdr-session", SERVER, "--no-onboard", "--session", "h2"], { env }));
      expect(readFileSync(shim, "utf8").split("\n")[1]).toStartWith("# mam-herdr-shim:");
    });
  });
});

describe("MQTT_PASSWORD_FILE: an agent logs in to the broker without the password in its environment", () => {
  test("mam job event publishes live with the password from the file; a wrong one is a note, the journal keeps the event", async () => {
    const sbx = makeSandbox("mam-pwf-");
    const mosq = await startMosquitto(join(sbx.root, "mosq"), { username: "team", password: "s3cret" });
    const job = await registerJob(sbx.ws, {
      agent_session: "wrk", agent: "claude", prompt: "p", delegator: null, type: "single", reviewer_session: null,
      max_iterations: null, timeout_sec: 0, idle_timeout_sec: 0, expected_artifacts: [], topic_prefix_base: "mam/jobs",
    });
    const sub = await mqtt.connectAsync({ protocol: "mqtt", host: "127.0.0.1", port: mosq.port, username: "team", password: "s3cret", clientId: "t-sub-pwfile", reconnectPeriod: 0 } as never);
    const got: string[] = [];
    sub.on("message", (_t, p) => got.push(p.toString()));
    try {
      await sub.subscribeAsync(`mam/jobs/${job.job_id}/events`, { qos: 1 });
      const file = join(sbx.root, "mqtt.pw");
      writeFileSync(file, "s3cret\n", { mode: 0o600 });
      const env = sbx.with({ MQTT_BROKER: `127.0.0.1:${mosq.port}`, MQTT_PORT: undefined, MQTT_USERNAME: "team", MQTT_PASSWORD_FILE: file });
      const r = await runMam(["job", "event", job.job_id, "started", "--detail", "from the file"], { env, cwd: sbx.ws });
      expect(r.code).toBe(0);
      expect(r.stderr).toBe("");
      expect(await waitFor(() => got.some((m) => m.includes("from the file")), 5000)).toBe(true);

      writeFileSync(file, "wrong\n");
      const bad = await runMam(["job", "event", job.job_id, "progress", "--detail", "wrong password"], { env, cwd: sbx.ws });
      expect(bad.code).toBe(0);
      expect(bad.stderr).toContain(`NOTE: job ${job.job_id} event #2 is saved in the journal`);
    } finally {
      await sub.endAsync();
      await mosq.stop();
      await sbx.cleanup();
    }
  }, 30_000);
});
