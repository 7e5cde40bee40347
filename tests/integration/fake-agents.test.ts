// The fake agent executables (tests/fakes/agents/fake-agent) outside herdr: the conversation
// stores they write are the ones mam's lib/agents/kinds/ reads, resume works with the kinds'
// resume arguments, the failure knobs, the prompt hook, and a real tmux pane.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KINDS } from "../../lib/agents/kinds/index.ts";
import { installFakeAgents } from "../helpers/herdr.ts";
import { run } from "../helpers/mam.ts";
import { anchoredPids, makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";

let sb: Sandbox;

beforeAll(() => {
  sb = makeSandbox("mam-fag-");
  installFakeAgents(sb.bin);
});

afterAll(() => sb.cleanup());

async function agent(kind: string, args: string[], stdin: string, env: Record<string, string> = {}) {
  return run([join(sb.bin, kind), ...args], { env: sb.with(env), cwd: sb.ws, stdin });
}

const sessionOf = (out: string) => /, session (\S+)$/m.exec(out)?.[1];

const STORE_KINDS = ["claude", "codex", "gemini", "qwen", "agy", "cline", ...(Bun.which("sqlite3") ? ["opencode", "hermes"] : [])];

describe("conversation stores, as mam reads them", () => {
  test.each(STORE_KINDS)("%s: a fresh start writes a conversation of this workspace; resume finds it", async (kind) => {
    const k = KINDS[kind]!;
    const first = await agent(kind, [], `hello\n${k.exitText}\n`);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("got: hello");
    const id = sessionOf(first.stdout)!;
    expect(id).toBeTruthy();
    const store = k.store!;
    expect(store.newest(sb.ws, sb.env)?.id).toBe(id);
    expect(store.find(id, sb.ws, sb.env)?.id).toBe(id);
    // another workspace never sees it
    expect(store.find(id, sb.home, sb.env)).toBeUndefined();
    const again = await agent(kind, k.resumeArgs!(id), `${k.exitText}\n`);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`resumed ${id}`);
    const missing = await agent(kind, k.resumeArgs!("0badc0de-0000-4000-8000-000000000000"), `${k.exitText}\n`);
    expect(missing.code).toBe(1);
  });

  test("claude --session-id uses the given id", async () => {
    const id = "12345678-aaaa-4bbb-8ccc-1234567890ab";
    const r = await agent("claude", ["--session-id", id], "/exit\n");
    expect(sessionOf(r.stdout)).toBe(id);
    expect(KINDS.claude!.store!.find(id, sb.ws, sb.env)?.id).toBe(id);
    const file = join(sb.home, ".claude", "projects", sb.ws.replace(/[^A-Za-z0-9]/g, "-"), `${id}.jsonl`);
    expect(JSON.parse(readFileSync(file, "utf8").split("\n")[0]!)).toMatchObject({ sessionId: id, cwd: sb.ws });
  });
});

describe("behaviour", () => {
  test("exit commands per kind; other lines are answered", async () => {
    for (const [kind, exit] of [
      ["claude", "/exit"],
      ["codex", "/quit"],
      ["gemini", "/quit"],
      ["agy", "Exit"],
      ["aider", "/exit"],
    ]) {
      const r = await agent(kind!, [], `one\n${exit}\nnever\n`);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("got: one");
      expect(r.stdout).toContain("bye");
      expect(r.stdout).not.toContain("got: never");
    }
  });

  test("FAKE_AGENT_EXIT_AT_START: the no-network claude", async () => {
    const r = await agent("claude", [], "", { FAKE_AGENT_EXIT_AT_START: "1" });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("Unable to connect to Anthropic services\n");
  });

  test("FAKE_AGENT_ON_PROMPT runs with the prompt line", async () => {
    const hook = join(sb.root, "on-prompt.sh");
    const log = join(sb.root, "prompts.log");
    writeFileSync(hook, `#!/bin/bash\nprintf '%s\\n' "$1" >> '${log}'\n`);
    chmodSync(hook, 0o755);
    await agent("codex", [], "first job\nsecond job\n/quit\n", { FAKE_AGENT_ON_PROMPT: hook });
    expect(readFileSync(log, "utf8")).toBe("first job\nsecond job\n");
  });

  test("FAKE_BLOCK asks and waits for one more line", async () => {
    const r = await agent("claude", [], "go FAKE_BLOCK\nyes\n/exit\n");
    expect(r.stdout).toContain("Do you want to proceed?");
    expect(r.stdout).toContain("answer: yes");
  });
});

describe("in a real tmux pane (no HERDR_* environment)", () => {
  test("reads what is typed and answers", async () => {
    if (!Bun.which("tmux")) throw new Error("tmux is not installed (.ci/run installs it)");
    const sock = join(sb.root, "tmux.sock");
    const tmux = (...a: string[]) => run(["tmux", "-S", sock, ...a], { env: sb.env, cwd: sb.ws });
    try {
      expect((await tmux("new-session", "-d", "-s", "fa", "-x", "120", "-y", "30", "-c", sb.ws, join(sb.bin, "claude"))).code).toBe(0);
      expect(await waitFor(async () => (await tmux("capture-pane", "-p", "-t", "fa")).stdout.includes("ready in"), 5000)).toBe(true);
      await tmux("send-keys", "-t", "fa", "-l", "hello tmux");
      await tmux("send-keys", "-t", "fa", "Enter");
      expect(await waitFor(async () => (await tmux("capture-pane", "-p", "-t", "fa")).stdout.includes("got: hello tmux"), 5000)).toBe(true);
      await tmux("send-keys", "-t", "fa", "-l", "/exit");
      await tmux("send-keys", "-t", "fa", "Enter");
      expect(await waitFor(async () => (await tmux("has-session", "-t", "fa")).code !== 0, 5000)).toBe(true);
    } finally {
      await tmux("kill-server");
      // kill-server returns before the server process is gone
      await waitFor(() => anchoredPids(sb.root).length === 0, 5000);
    }
  });
});
