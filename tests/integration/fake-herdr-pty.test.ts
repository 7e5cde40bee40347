// The fake herdr's panes are real terminals: a pty running the user's shell with its startup files,
// a headless terminal as the screen. These cases show what the pipe-based fake could not: a slow
// rc file keeps a fresh pane busy (herdr's agent_pane_busy), bracketed paste only when the app
// asked for it, the foreground process group from the tty, resize on split, SIGHUP on close,
// herdr's login-shell mode, and that idle panes do not spin.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeHerdrServer, herdrApiError, herdrJson, installFakeAgents, installFakeHerdr, startFakeHerdr } from "../helpers/herdr.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";

let sb: Sandbox;
let h: FakeHerdrServer;

beforeAll(async () => {
  sb = makeSandbox("mam-fhp-");
  installFakeHerdr(sb.bin);
  installFakeAgents(sb.bin);
  h = await startFakeHerdr(sb, { session: "pty" });
  await h.call("workspace.create", { cwd: sb.ws });
});

afterAll(async () => {
  await h?.stop();
  await sb.cleanup();
});

const info = async (pane: string) => ((await h.call("pane.process_info", { pane_id: pane })) as any).process_info;
const screen = async (pane: string, source = "visible") => ((await h.call("pane.read", { pane_id: pane, source })) as any).read.text as string;
const newPane = async (env?: Record<string, string>) => ((await h.call("tab.create", { workspace_id: "w1", cwd: sb.ws, env })) as any).root_pane.pane_id as string;
const alive = (pid: number) => {
  try {
    return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return false;
  }
};

describe("a pane is a real terminal", () => {
  test("the shell has a controlling tty and job control: the foreground group comes from the tty", async () => {
    const pane = await newPane();
    expect(await waitFor(async () => (await screen(pane)).trim() !== "", 5000)).toBe(true);
    const free = await info(pane);
    expect(free.foreground_process_group_id).toBe(free.shell_pid);
    expect(free.foreground_processes.map((p: any) => p.pid)).toEqual([free.shell_pid]);
    expect("tty" in free).toBe(false); // herdr 0.8.0 never fills it
    await h.herdr(["pane", "run", pane, "tty; sleep 300 & sleep 301"]);
    expect(await waitFor(async () => (await info(pane)).foreground_processes?.[0]?.argv?.join(" ") === "sleep 301", 5000)).toBe(true);
    const busy = await info(pane);
    // the background job is in its own group: not in the foreground
    expect(busy.foreground_processes.map((p: any) => p.argv.join(" "))).toEqual(["sleep 301"]);
    expect(busy.foreground_process_group_id).toBe(busy.foreground_processes[0].pid);
    expect(await screen(pane)).toMatch(/\/dev\/pts\/\d+/);
    herdrApiError(await h.herdr(["agent", "start", "busy-one", "--kind", "claude", "--pane", pane]), "agent_pane_busy");
    await h.herdr(["pane", "send-keys", pane, "C-c"]);
    expect(await waitFor(async () => (await info(pane)).foreground_process_group_id === busy.shell_pid, 5000)).toBe(true);
    await h.call("pane.close", { pane_id: pane });
  });

  test("a slow rc file keeps a fresh pane busy (agent_pane_busy) until it is done", async () => {
    // the rc file waits on a fifo the test opens when it is done asserting: busy for as long as the
    // test needs, however slow the machine (a timed sleep raced the herdr CLI under load)
    const gate = join(sb.home, "rc-gate");
    if (Bun.spawnSync(["mkfifo", gate]).exitCode !== 0) throw new Error("mkfifo failed");
    writeFileSync(join(sb.home, ".bashrc"), `cat ${gate} >/dev/null\nPS1='rc-done> '\n`);
    try {
      const pane = await newPane();
      const during = await info(pane);
      expect(during.shell_pid).toBeGreaterThan(0);
      expect(await waitFor(async () => (await info(pane)).foreground_processes?.some((p: any) => p.name === "cat"), 5000)).toBe(true);
      herdrApiError(await h.herdr(["agent", "start", "early", "--kind", "claude", "--pane", pane]), "agent_pane_busy");
      expect(await screen(pane)).not.toContain("rc-done>");
      writeFileSync(gate, "go\n"); // cat has the fifo open: this returns at once and cat sees its end
      expect(await waitFor(async () => (await screen(pane)).includes("rc-done>"), 5000)).toBe(true);
      const started = herdrJson(await h.herdr(["agent", "start", "late", "--kind", "claude", "--pane", pane]));
      expect(started.result.agent).toMatchObject({ name: "late", agent: "claude", interactive_ready: true });
      await h.call("pane.close", { pane_id: pane });
    } finally {
      writeFileSync(join(sb.home, ".bashrc"), "");
      rmSync(gate, { force: true });
    }
  });

  test("bracketed paste only when the app turned it on; send-text is always raw", async () => {
    const pane = await newPane();
    expect(await waitFor(async () => (await screen(pane)).trim() !== "", 5000)).toBe(true);
    // an app that asks for bracketed paste and shows what it receives
    await h.herdr(["pane", "run", pane, "printf '\\033[?2004h'; stty -echo; cat -v"]);
    expect(await waitFor(async () => (await h.call("fake.state", {}) as any).panes.find((p: any) => p.pane_id === pane)?.bracketed_paste === true, 5000)).toBe(true);
    await h.herdr(["pane", "run", pane, "pasted text"]);
    await h.herdr(["pane", "send-text", pane, "raw text"]);
    await h.herdr(["pane", "send-keys", pane, "Enter"]);
    expect(await waitFor(async () => (await screen(pane)).includes("raw text"), 5000)).toBe(true);
    const text = await screen(pane);
    expect(text).toContain("^[[200~pasted text^[[201~");
    expect(text).not.toContain("^[[200~raw text");
    await h.herdr(["pane", "send-keys", pane, "C-c"]);
    await h.call("pane.close", { pane_id: pane });
  });

  test("the app's OSC title is the pane's terminal_title (and its stripped form)", async () => {
    const pane = await newPane();
    await h.herdr(["pane", "run", pane, "printf '\\033]0;⠋ fixing the bug\\007'"]);
    expect(await waitFor(async () => ((await h.call("pane.get", { pane_id: pane })) as any).pane.terminal_title === "⠋ fixing the bug", 5000)).toBe(true);
    expect(((await h.call("pane.get", { pane_id: pane })) as any).pane.terminal_title_stripped).toBe("fixing the bug");
    await h.call("pane.close", { pane_id: pane });
  });

  test("a split resizes the pane's terminal (the app sees the new size)", async () => {
    const pane = await newPane();
    await h.herdr(["pane", "run", pane, "stty size"]);
    expect(await waitFor(async () => /^50 200$/m.test(await screen(pane)), 5000)).toBe(true);
    const right = ((await h.call("pane.split", { target_pane_id: pane, direction: "right", cwd: sb.ws })) as any).pane.pane_id;
    await h.herdr(["pane", "run", pane, "stty size"]);
    expect(await waitFor(async () => /^50 100$/m.test(await screen(pane)), 5000)).toBe(true);
    await h.call("pane.close", { pane_id: right });
    await h.herdr(["pane", "run", pane, "clear; stty size"]);
    expect(await waitFor(async () => /^50 200$/m.test(await screen(pane)), 5000)).toBe(true);
    await h.call("pane.close", { pane_id: pane });
  });

  test("closing a pane hangs up its session; what ignores SIGHUP is killed", async () => {
    const pane = await newPane();
    await h.herdr(["pane", "run", pane, "trap '' HUP; sleep 302 & sleep 303"]);
    let pids: number[] = [];
    expect(
      await waitFor(async () => {
        pids = readPidsOf("sleep 30[23]");
        return pids.length === 2;
      }, 5000),
    ).toBe(true);
    const shell = (await info(pane)).shell_pid;
    await h.call("pane.close", { pane_id: pane });
    expect(await waitFor(() => ![shell, ...pids].some(alive), 3000)).toBe(true);
  });
});

describe("herdr's login-shell mode and CPU", () => {
  test("FAKE_HERDR_SHELL_MODE=login runs the shell as a login shell (its profile is read)", async () => {
    writeFileSync(join(sb.home, ".bash_profile"), "echo profile-read-$((6*7))\n");
    const s = await startFakeHerdr(sb, { session: "login", env: { FAKE_HERDR_SHELL_MODE: "login" } });
    try {
      const pane = ((await s.call("workspace.create", { cwd: sb.ws })) as any).root_pane.pane_id;
      const read = async () => ((await s.call("pane.read", { pane_id: pane, source: "visible" })) as any).read.text as string;
      expect(await waitFor(async () => (await read()).includes("profile-read-42"), 5000)).toBe(true);
      const fg = ((await s.call("pane.process_info", { pane_id: pane })) as any).process_info.foreground_processes;
      expect(fg[0].argv[0]).toBe("-bash");
    } finally {
      await s.stop();
      writeFileSync(join(sb.home, ".bash_profile"), "");
    }
  });

  test("FAKE_HERDR_AREA sets the area panes share (a taller pane than the default)", async () => {
    const s = await startFakeHerdr(sb, { session: "area", env: { FAKE_HERDR_AREA: "120x80" } });
    try {
      const pane = ((await s.call("workspace.create", { cwd: sb.ws })) as any).root_pane.pane_id;
      await s.herdr(["pane", "run", pane, "stty size"]);
      const read = async () => ((await s.call("pane.read", { pane_id: pane, source: "visible" })) as any).read.text as string;
      expect(await waitFor(async () => /^80 120$/m.test(await read()), 5000)).toBe(true);
      expect(((await s.call("session.snapshot", {})) as any).snapshot.layouts[0].area).toEqual({ x: 0, y: 0, width: 120, height: 80 });
      // herdr's row-count rule: 50 rows of an 80-row screen miss output at its top
      const r50 = ((await s.call("pane.read", { pane_id: pane, source: "recent_unwrapped", lines: 50 })) as any).read.text as string;
      expect(r50).not.toContain("80 120");
    } finally {
      await s.stop();
    }
  });

  test("ten idle panes do not spin", async () => {
    const s = await startFakeHerdr(sb, { session: "cpu" });
    try {
      const w = (await s.call("workspace.create", { cwd: sb.ws })) as any;
      for (let i = 0; i < 9; i++) await s.call("tab.create", { workspace_id: w.workspace.workspace_id, cwd: sb.ws });
      await Bun.sleep(1000);
      const t0 = cpuTicks(s.pid);
      await Bun.sleep(3000);
      const used = (cpuTicks(s.pid) - t0) / 100; // seconds of CPU (USER_HZ = 100)
      // the /proc poll of ten panes every 50 ms costs a few percent of one core at most
      expect(used).toBeLessThan(0.6);
    } finally {
      await s.stop();
    }
  });
});

/** utime + stime of a process, in clock ticks */
function cpuTicks(pid: number): number {
  const s = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
  return Number(f[11]) + Number(f[12]);
}

/** pids of live processes in this sandbox whose command line matches re */
function readPidsOf(pattern: string): number[] {
  const re = new RegExp(`^${pattern}$`);
  const out: number[] = [];
  for (const e of require("node:fs").readdirSync("/proc") as string[]) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const cmd = readFileSync(`/proc/${e}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
      const env = readFileSync(`/proc/${e}/environ`, "utf8");
      if (re.test(cmd) && env.includes(sb.root) && alive(Number(e))) out.push(Number(e));
    } catch {}
  }
  return out;
}
