// docs/machines.md's "A team across machines in five commands", followed as written on two
// machines: hosts `laptop` and `build`, each in a network namespace of its own
// (tests/helpers/netlab.ts), each with its own HOME, project, tmux server and daemon, and `mam`
// on PATH. The commands are read from the page, numbered 1 to 5, with only what a reader fills in
// replaced: laptop.lan is laptop's address in the lab, the join code is the one `team init`
// printed, and a demo agent stands for claude. Neither machine sets MQTT_BROKER: the team names
// the broker (mam's own, on laptop). Then what the page promises: `status --fleet` lists w@build,
// the job completes, and laptop's journal has every stage once, in the order build made them,
// although laptop's daemon starts only with that first submit.
//
// Needs root (network namespaces), iproute2 and tmux: without them the test is skipped with the
// reason.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fencedBlocks } from "../helpers/docs.ts";
import { MAM_CMD, ROOT } from "../helpers/mam.ts";
import { cleanupNetLabs, makeNetLab, type NetLab, netLabSkip } from "../helpers/netlab.ts";
import { baseEnv, makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { stages } from "../helpers/team.ts";
import { TMUX_BIN } from "../helpers/tmux.ts";
import type { JobEvent } from "../../lib/jobs/event.ts";

const SKIP = (await netLabSkip({ broker: false })) ?? (TMUX_BIN ? undefined : "tmux is not installed (apt-get install tmux)");
if (SKIP) console.log(`team quickstart test skipped: ${SKIP}`);

const PAGE = join(ROOT, "docs", "machines.md");

/** the numbered commands of the page's five-command section: [number, command] in order */
function fiveCommands(): { n: number; cmd: string }[] {
  const md = readFileSync(PAGE, "utf8");
  const start = md.indexOf("## A team across machines in five commands");
  const end = md.indexOf("\n## ", start + 1);
  expect(start, "docs/machines.md has the section").toBeGreaterThanOrEqual(0);
  const section = md.slice(start, end);
  const out: { n: number; cmd: string }[] = [];
  for (const b of fencedBlocks(section)) {
    if (b.info !== "sh") continue;
    for (const line of b.body) {
      const m = /^(.*?)\s+#\s*(\d)\.\s/.exec(line);
      if (m) out.push({ n: Number(m[2]), cmd: m[1]!.trim() });
    }
  }
  return out;
}

describe.skipIf(!!SKIP)("docs/machines.md: a team across machines in five commands", () => {
  let sb: Sandbox;
  let lab: NetLab | undefined;
  afterAll(async () => {
    await lab?.cleanup();
    await cleanupNetLabs();
    await sb?.cleanup();
  }, 60_000);

  test("the five commands as written, on two hosts: the job is typed on build, completes, and every stage lands on laptop once, in order", async () => {
    const cmds = fiveCommands();
    expect(cmds.map((c) => c.n)).toEqual([1, 2, 3, 4, 5]);
    sb = makeSandbox("mam-tqs-");
    const l = await makeNetLab({ hosts: ["laptop", "build"], dir: sb.root });
    if ("skip" in l) throw new Error(l.skip);
    lab = l;
    // `mam` on PATH, as an install puts it
    const bin = join(sb.root, "bin");
    writeFileSync(join(bin, "mam"), `#!/bin/sh\nexec ${MAM_CMD.map((a) => `'${a}'`).join(" ")} "$@"\n`);
    chmodSync(join(bin, "mam"), 0o755);
    const machine = (host: string) => {
      const home = join(sb.root, host, "home");
      const project = join(sb.root, host, "project");
      for (const d of [home, project]) mkdirSync(d, { recursive: true });
      const env: Record<string, string> = {
        ...baseEnv(),
        PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}`,
        HOME: home,
        NO_COLOR: "1",
        // the lab's hosts share this machine's hostname
        MAM_HOST: host,
        // each its own tmux server (a client in a namespace would find any socket)
        TMUX_TMPDIR: join(sb.root, host),
      };
      return { host, home, project, env };
    };
    const laptop = machine("laptop");
    const build = machine("build");
    const sh = async (m: typeof laptop, cmd: string, timeoutMs = 60_000) => {
      const r = await l.exec(m.host, ["sh", "-c", cmd], { env: m.env, cwd: m.project, timeoutMs });
      return { ...r, all: `[${m.host}] $ ${cmd}\n${r.stdout}${r.stderr}(exit ${r.code})` };
    };
    const fill = (cmd: string, code = "") =>
      cmd
        .replaceAll("laptop.lan", l.addr("laptop"))
        .replace(/mamteam1\.\S+/, code)
        .replace("--agent claude", "--agent demo");
    const story: string[] = [];
    const must = async (m: typeof laptop, cmd: string, timeoutMs?: number) => {
      const r = await sh(m, cmd, timeoutMs);
      story.push(r.all);
      expect(r.code, story.join("\n\n")).toBe(0);
      return r;
    };

    // 1. the broker, left running on laptop
    expect(cmds[0]!.cmd).toMatch(/^mam broker /);
    const broker = l.spawn("laptop", ["sh", "-c", `exec ${fill(cmds[0]!.cmd)}`], { env: laptop.env, stdout: "pipe", stderr: "pipe" });
    let said = "";
    void (async () => {
      for await (const chunk of broker.stdout) said += new TextDecoder().decode(chunk);
    })().catch(() => {});
    void new Response(broker.stderr).text().then((t) => (said += t));
    expect(await waitFor(() => said.includes("mam broker listening on mqtt://0.0.0.0:1883"), 10_000), said).toBe(true);
    // 2. the team, on laptop: it prints the join line
    const init = await must(laptop, fill(cmds[1]!.cmd));
    const code = /mam team join (mamteam1\.\S+)/.exec(init.stdout)?.[1];
    expect(code, init.all).toBeDefined();
    // 3, 4 on build
    await must(build, fill(cmds[2]!.cmd, code));
    await must(build, fill(cmds[3]!.cmd));
    // what the page says to look at: laptop sees w@build
    let fleet = "";
    const seen = await waitFor(async () => {
      fleet = (await sh(laptop, "mam status --fleet")).stdout;
      return /w@build\s+demo\s+worker/.test(fleet);
    }, 20_000, 250);
    expect(seen, fleet).toBe(true);
    // 5. the job, from laptop, whose daemon this submit starts
    expect(existsDaemon(laptop.project)).toBe(false);
    const sub = await must(laptop, fill(cmds[4]!.cmd), 90_000);
    const id = sub.stdout.split("\n")[0]!.trim();
    expect(id).toMatch(/^[0-9a-f]{8}$/);
    expect(sub.stdout).toContain(`${id} completed`);
    // laptop's daemon journals the last stage after `--wait` heard it
    const journal = () =>
      readFileSync(join(laptop.project, ".mam", "jobs", `${id}.events.ndjson`), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((x) => JSON.parse(x) as JobEvent);
    await waitFor(() => journal().some((e) => e.event === "completed"), 10_000);
    await Bun.sleep(1500); // room for a late copy to show
    const log = readFileSync(join(laptop.project, ".mam", "monitor.log"), "utf8");
    expect(stages(journal()), `${story.join("\n\n")}\nlaptop's daemon:\n${log}`).toEqual(["offered mam", "received mam@build", "delivered mam@build", "started w@build", "progress w@build", "completed w@build"]);
    expect(log).not.toContain(`gap in job ${id}`);
    const logs = await must(laptop, `mam job logs ${id}`);
    expect(logs.stdout).toMatch(/offered {4}mam: the job for w@build/);
    expect(logs.stdout).toMatch(/received {3}mam@build: the job for w@build, by build/);
    expect(logs.stdout).toContain("delivered  mam@build: the job was typed into w@build and left its input box");
    broker.kill();
    await broker.exited;
  }, 180_000);
});

function existsDaemon(project: string): boolean {
  try {
    readFileSync(join(project, ".mam", "monitor.state.json"));
    return true;
  } catch {
    return false;
  }
}
