// The "leave it" view (issue 34 item 5) through the compiled binary, on a real tmux: three agents,
// one idle at its prompt (a claude look-alike), one at a permission prompt (the look-alike's real
// Bash dialog: tests/helpers/agent-screens.ts), one at a usage limit (the fake codex refusing its
// turn, seen by the workspace's daemon in its rollout: tests/fakes/agents/fake-agent "Limits").
// `mam status --needs-me` lists exactly the blocked one with its approve command (text and JSON),
// mam status says why each is not working; after that command, nothing needs you.
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLAUDE_LOOKALIKE } from "../helpers/agent-screens.ts";
import { startSubscriber, unreachableBrokerEnv } from "../helpers/daemon.ts";
import { installFakeAgents } from "../helpers/herdr.ts";
import { run, runMam } from "../helpers/mam.ts";
import { makeSandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName, writeScript } from "../helpers/tmux.ts";

type Session = { name: string; live: string; limit?: object; why: { kind: string; text: string }; question?: { subject: string; fingerprint: string } };

test("idle, blocked, limited: --needs-me lists the blocked one with its approve command; after it, nothing needs you", async () => {
  if (!TMUX_BIN) throw new Error("tmux is not installed: this test needs a real tmux (apt install tmux)");
  const sb = makeSandbox("mam-nm-");
  installFakeAgents(sb.bin, ["codex"]);
  writeScript(sb.bin, "claude", CLAUDE_LOOKALIKE);
  const server = tmuxServerName("mamnm");
  const env = sb.with({ TMUX_TMPDIR: sb.root, MAM_AGENT_SETTLE_S: "0.3", MAM_MUX: "tmux", USER: "alice", ...unreachableBrokerEnv });
  const mam = (args: string[]) => runMam(args, { env, cwd: sb.ws, timeoutMs: 60_000 });
  const tmux = (args: string[]) => run([TMUX_BIN!, "-L", server, ...args], { env });
  const keys = async (session: string, text: string) => {
    expect((await tmux(["send-keys", "-t", `=${session}:`, "-l", text])).code).toBe(0);
    await tmux(["send-keys", "-t", `=${session}:`, "Enter"]);
  };
  const sessions = async (): Promise<Session[]> => {
    const r = await mam(["status", "--json"]);
    if (r.code !== 0) throw new Error(`status exited ${r.code}: ${r.stderr}`);
    return (JSON.parse(r.stdout) as { sessions: Session[] }).sessions;
  };
  const one = async (name: string) => (await sessions()).find((s) => s.name === name)!;
  const create = async (name: string, agent: string) => {
    const r = await mam(["create", "--agent", agent, "--session", name, "--tmux-server", server, "--no-onboard"]);
    if (r.code !== 0) throw new Error(`create ${name} exited ${r.code}: ${r.stdout}${r.stderr}`);
  };
  const d = startSubscriber(sb, join(sb.root, "daemon.log"), env);
  try {
    await create("idl", "claude");
    await create("wrk", "claude");
    // the fake codex refuses every turn at a usage limit, as the real one does (no reset given)
    writeFileSync(join(sb.ws, ".agent-limit.lim"), "You've hit your usage limit. Upgrade to Pro or try again later.\n");
    await create("lim", "codex");
    expect(await waitFor(async () => (await one("idl")).live === "idle" && (await one("wrk")).live === "idle", 15_000, 100)).toBe(true);

    // nothing needs you yet
    expect((await mam(["status", "--needs-me"])).stdout).toBe("nothing needs you\n");

    await keys("lim", "first task");
    let lim: Session | undefined;
    if (!(await waitFor(async () => (lim = await one("lim")).limit !== undefined, 30_000, 200))) throw new Error(`lim never limited: ${JSON.stringify(lim)}`);
    expect(lim!.why).toEqual({ kind: "limited", text: "limited (reset unknown)" });
    await keys("wrk", "ask touch x");
    let wrk: Session | undefined;
    expect(await waitFor(async () => (wrk = await one("wrk")).question?.subject === "touch x", 15_000, 100)).toBe(true);
    const fp = wrk!.question!.fingerprint;
    expect(wrk!.why).toEqual({ kind: "blocked", text: "blocked on a permission prompt: touch x" });
    expect((await one("idl")).why).toEqual({ kind: "idle", text: "at its prompt, no job" });

    // exactly the blocked one, with the command that answers it
    const text = await mam(["status", "--needs-me"]);
    expect(text.code).toBe(0);
    expect(text.stdout).toBe(`wrk asks: Bash command: touch x  →  mam approve wrk --fingerprint ${fp}   (add --deny for the no)\n`);
    const json = await mam(["status", "--needs-me", "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([
      { kind: "permission", what: "wrk asks: Bash command: touch x", session: "wrk", act: `mam approve wrk --fingerprint ${fp}`, deny: `mam approve wrk --fingerprint ${fp} --deny` },
    ]);
    // mam status: the block on top, each agent's why under the table
    const human = (await mam(["status"])).stdout;
    expect(human.startsWith(`needs you now:\n  wrk asks: Bash command: touch x  →  mam approve wrk --fingerprint ${fp}`)).toBe(true);
    for (const l of ["idl: at its prompt, no job", "wrk: blocked on a permission prompt: touch x", "lim: limited (reset unknown)"]) expect(human).toContain(`\n${l}\n`);

    // the user runs the command it names
    const ap = await mam((JSON.parse(json.stdout)[0].act as string).split(" ").slice(1));
    expect(ap.code, ap.stderr).toBe(0);
    expect(await waitFor(async () => (await mam(["status", "--needs-me"])).stdout === "nothing needs you\n", 15_000, 100)).toBe(true);
    const after = await mam(["status", "--needs-me", "--json"]);
    expect(after.code).toBe(0);
    expect(JSON.parse(after.stdout)).toEqual([]);
    expect((await mam(["status"])).stdout).not.toContain("needs you now");
  } finally {
    await d.kill();
    await killTmuxServer(server, env, sb.root);
    await sb.cleanup();
  }
}, 120_000);
