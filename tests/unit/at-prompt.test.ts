// Typing into agents (lib/sessions/at-prompt.ts): where an agent is, from herdr's status and the
// screen detector; when mam may type; whether a typed text is still waiting in the input box.
import { describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resumeLoadedOf, startDialogOf } from "../../lib/agents/kinds/index.ts";
import { anyGrew, geminiTrust } from "../../lib/agents/kinds/gemini.ts";
import { sha256Hex } from "../../lib/sys/digest.ts";
import { detectScreen, hasInputBox, inputBoxText } from "../../lib/agents/screen/detect.ts";
import { AgentBlocked, type Mux } from "../../lib/mux/types.ts";
import { afterStart } from "../../lib/ops/session/after-start.ts";
import { answerHint, deliver, holdsText, mayType, PROMPT_STEADY_MS, paneStateOf, promptWaitMs, typeInto, waitForPrompt, waitingAt } from "../../lib/ops/session/at-prompt.ts";
import { sessionReach } from "../../lib/ops/session/reach.ts";
import { MamError } from "../../lib/sys/errors.ts";

const FIX = join(import.meta.dir, "..", "fixtures", "screens");
const screen = (kind: string, name: string) => {
  const title = (() => {
    try {
      return readFileSync(join(FIX, kind, `${name}.title`), "utf8").trim();
    } catch {
      return "";
    }
  })();
  return { text: readFileSync(join(FIX, kind, `${name}.txt`), "utf8"), title };
};

/**
 * a tmux pane that always shows gemini's input box (the box it draws before its trust dialog on a
 * machine too slow to draw the dialog in time, or before `gemini --resume` has loaded), recording
 * what is typed
 */
function geminiBoxPane(typed: string[]): Mux {
  return {
    backend: "tmux",
    async screen() {
      return screen("gemini", "idle-real-prompt");
    },
    async sendText(_p: string, text: string) {
      typed.push(text);
    },
    async sendKeys(_p: string, keys: string[]) {
      typed.push(...keys);
    },
    async submit(_p: string, text: string) {
      typed.push(text);
    },
  } as unknown as Mux;
}

describe("paneStateOf", () => {
  test("the real start dialogs of claude, codex, gemini and qwen are dialogs with a name, never a prompt", () => {
    for (const kind of ["claude", "codex", "gemini"]) {
      const s = paneStateOf("idle", detectScreen(kind, screen(kind, "blocked-real-start-trust")));
      expect(s).toMatchObject({ at: "dialog", dialog: "start", name: "trust this folder" });
      expect(waitingAt(s as Extract<typeof s, { at: "dialog" }>)).toBe(`its "trust this folder" dialog`);
    }
    expect(paneStateOf("unknown", detectScreen("codex", screen("codex", "blocked-real-start-sign-in")))).toMatchObject({ at: "dialog", name: "sign-in" });
    expect(paneStateOf("idle", detectScreen("qwen", screen("qwen", "blocked-real-start-provider")))).toMatchObject({ at: "dialog", name: "connect a provider" });
  });

  test("a permission prompt is named with its reason", () => {
    const s = paneStateOf("unknown", detectScreen("claude", screen("claude", "blocked-real-permission-bash")));
    expect(s.at).toBe("dialog");
    expect(waitingAt(s as Extract<typeof s, { at: "dialog" }>)).toMatch(/^a permission prompt \(.+\)$/);
  });

  test("the real idle prompts are the prompt; a shell left after an exit is unknown", () => {
    expect(paneStateOf("unknown", detectScreen("claude", screen("claude", "idle-real-prompt")))).toEqual({ at: "prompt" });
    expect(paneStateOf("unknown", detectScreen("codex", screen("codex", "idle-real-prompt")))).toEqual({ at: "prompt" });
    expect(paneStateOf("unknown", detectScreen("claude", screen("claude", "unknown-real-exited-unable-to-connect")))).toEqual({ at: "unknown" });
    // codex's first seconds: a composer, but it is not ready (a trust dialog may still come)
    expect(paneStateOf("unknown", detectScreen("codex", screen("codex", "unknown-real-starting")))).toEqual({ at: "unknown" });
  });
});

describe("waitForPrompt: a new agent is at its prompt only once the prompt stayed in view", () => {
  /** a tmux pane whose screen is the fixture `at(ms since the first look)` names */
  function timedPane(kind: string, at: (ms: number) => string): Mux {
    let t0: number | undefined;
    return {
      backend: "tmux",
      async screen() {
        t0 ??= Date.now();
        return screen(kind, at(Date.now() - t0));
      },
    } as unknown as Mux;
  }

  test("gemini's input box drawn 0.3 s before its trust dialog: the dialog, never the prompt", async () => {
    const mux = timedPane("gemini", (ms) => (ms < 300 ? "idle-real-prompt" : "blocked-real-start-trust"));
    expect(await waitForPrompt(mux, "%1", "gemini", {}, 10_000)).toMatchObject({ at: "dialog", name: "trust this folder" });
  });

  test("a prompt that stays: at it after PROMPT_STEADY_MS, not before; one that comes and goes starts the count again", async () => {
    const t0 = Date.now();
    expect(await waitForPrompt(timedPane("gemini", () => "idle-real-prompt"), "%1", "gemini", {}, 10_000)).toMatchObject({ at: "prompt" });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(PROMPT_STEADY_MS);
    const t1 = Date.now();
    const flicker = timedPane("gemini", (ms) => (ms < 500 ? "idle-real-prompt" : ms < 900 ? "working-real-answer" : "idle-real-prompt"));
    expect(await waitForPrompt(flicker, "%1", "gemini", {}, 10_000)).toMatchObject({ at: "prompt" });
    expect(Date.now() - t1).toBeGreaterThanOrEqual(900 + PROMPT_STEADY_MS);
  });

  test("the wait ends with the last look: a prompt seen too briefly is still the prompt; no wait at all takes the first look", async () => {
    const t0 = Date.now();
    expect(await waitForPrompt(timedPane("gemini", () => "idle-real-prompt"), "%1", "gemini", {}, 300)).toMatchObject({ at: "prompt" });
    expect(Date.now() - t0).toBeLessThan(PROMPT_STEADY_MS);
    expect(await waitForPrompt(timedPane("gemini", () => "idle-real-prompt"), "%1", "gemini", {}, 0)).toMatchObject({ at: "prompt" });
  });
});

describe("what the agent's own records say about its start dialogs (issue 39 #0)", () => {
  const on = JSON.stringify({ security: { folderTrust: { enabled: true } } });
  const off = JSON.stringify({ security: { folderTrust: { enabled: false } } });
  const t = (rules: Record<string, string>) => JSON.stringify(rules);

  test("gemini: folder trust on (the default) and no rule for the folder: it asks; a rule of the folder or a parent decides", () => {
    expect(geminiTrust("/w/proj", {}, [], undefined)).toBe("ask");
    expect(geminiTrust("/w/proj", {}, [undefined, on], t({}))).toBe("ask");
    expect(geminiTrust("/w/proj", {}, [undefined, on], t({ "/w/proj": "TRUST_FOLDER" }))).toBe("trusted");
    expect(geminiTrust("/w/proj/sub", {}, [undefined, on], t({ "/w/proj": "TRUST_FOLDER" }))).toBe("trusted");
    // TRUST_PARENT trusts the rule's parent folder and everything in it
    expect(geminiTrust("/w/other", {}, [], t({ "/w/proj": "TRUST_PARENT" }))).toBe("trusted");
    expect(geminiTrust("/x/proj", {}, [], t({ "/w/proj": "TRUST_PARENT" }))).toBe("ask");
    // DO_NOT_TRUST: untrusted, no dialog; the longest rule path wins
    expect(geminiTrust("/w/proj", {}, [], t({ "/w/proj": "DO_NOT_TRUST" }))).toBe("untrusted");
    expect(geminiTrust("/w/proj/sub", {}, [], t({ "/w": "TRUST_FOLDER", "/w/proj": "DO_NOT_TRUST" }))).toBe("untrusted");
    expect(geminiTrust("/w/proj/sub", {}, [], t({ "/w": "DO_NOT_TRUST", "/w/proj/sub": "TRUST_FOLDER" }))).toBe("trusted");
    // a name that only starts like the rule is not under it
    expect(geminiTrust("/w/project", {}, [], t({ "/w/proj": "TRUST_FOLDER" }))).toBe("ask");
    // rules compare real paths
    expect(geminiTrust("/real/proj", {}, [], t({ "/link/proj": "TRUST_FOLDER" }), (p) => p.replace("/link", "/real"))).toBe("trusted");
  });

  test("gemini: folder trust off in the user's or system settings (not the folder's own), the env, a broken trust file", () => {
    expect(geminiTrust("/w/proj", {}, [undefined, off], t({}))).toBe("trusted");
    expect(geminiTrust("/w/proj", {}, [off, on], t({}))).toBe("ask");
    expect(geminiTrust("/w/proj", {}, [undefined, on, off], t({}))).toBe("ask");
    expect(geminiTrust("/w/proj", {}, [undefined, on, undefined, off], t({}))).toBe("trusted");
    expect(geminiTrust("/w/proj", { GEMINI_CLI_TRUST_WORKSPACE: "true" }, [], t({}))).toBe("trusted");
    expect(geminiTrust("/w/proj", { GEMINI_CLI_TRUST_WORKSPACE: "false" }, [], t({}))).toBe("untrusted");
    expect(geminiTrust("/w/proj", {}, [], "{ not json")).toBe("untrusted");
  });

  test("gemini's records on disk: its settings and trustedFolders.json under GEMINI_CLI_HOME", () => {
    const home = mkdtempSync(join(tmpdir(), "mam-gem-"));
    try {
      const ws = join(home, "ws");
      mkdirSync(join(home, ".gemini"), { recursive: true });
      mkdirSync(ws);
      const env = { GEMINI_CLI_HOME: home, GEMINI_CLI_SYSTEM_SETTINGS_PATH: join(home, "none.json") };
      writeFileSync(join(home, ".gemini", "settings.json"), on);
      expect(startDialogOf("gemini", ws, env)).toBe("trust this folder");
      writeFileSync(join(home, ".gemini", "trustedFolders.json"), t({ [ws]: "TRUST_FOLDER" }));
      expect(startDialogOf("gemini", ws, env)).toBeNull();
      expect(startDialogOf("codex", ws, env)).toBeNull();
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("while the records say a dialog comes, a steady prompt is not the prompt: the wait ends at that dialog, nothing typed", async () => {
    let expected: string | null = "trust this folder";
    const typed: string[] = [];
    const st = await waitForPrompt(geminiBoxPane(typed), "%1", "gemini", {}, PROMPT_STEADY_MS + 600, undefined, undefined, () => expected);
    expect(st).toMatchObject({ at: "dialog", dialog: "start", name: "trust this folder" });
    // no wait at all: the same
    expect(await waitForPrompt(geminiBoxPane(typed), "%1", "gemini", {}, 0, undefined, undefined, () => expected)).toMatchObject({ at: "dialog", name: "trust this folder" });
    // the user trusted the folder meanwhile: the prompt counts again
    setTimeout(() => (expected = null), 300);
    expect(await waitForPrompt(geminiBoxPane(typed), "%1", "gemini", {}, 10_000, undefined, undefined, () => expected)).toMatchObject({ at: "prompt" });
    expect(typed).toEqual([]);
  });

  test("afterStart in a folder gemini does not trust: no onboarding typed, a warning names the dialog", async () => {
    const home = mkdtempSync(join(tmpdir(), "mam-gem-"));
    try {
      const typed: string[] = [];
      const env = { GEMINI_CLI_HOME: home, GEMINI_CLI_SYSTEM_SETTINGS_PATH: join(home, "none.json"), MAM_PROMPT_WAIT_S: "1" };
      const r = await afterStart({ mux: geminiBoxPane(typed), name: "gem", kind: "gemini", backend: "tmux", server: "mam", paneId: "%1", cwd: home, env, text: "You are gem" });
      expect(r).toMatchObject({ at_prompt: false, waiting_at: 'its "trust this folder" dialog', onboarding: "not sent" });
      expect(r.warnings.map((w) => w.text)).toEqual(['gemini waits at its "trust this folder" dialog in %1: answer it there (tmux -L mam attach -t gem); the onboarding was not sent']);
      expect(typed).toEqual([]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("a resumed agent is at its prompt once its records say it has loaded the conversation (issue 39 #6a)", () => {
  test("gemini while it resumes: 'Resuming session...' is work, not its prompt", () => {
    expect(paneStateOf("unknown", detectScreen("gemini", screen("gemini", "working-real-resuming")))).toEqual({ at: "working" });
  });

  test("anyGrew: a file past its size before; one gone or unchanged is not", () => {
    const size = (p: string) => ({ a: 10, b: 5 })[p] ?? -1;
    expect(anyGrew([["a", 10], ["b", 5]], size)).toBe(false);
    expect(anyGrew([["a", 9], ["b", 5]], size)).toBe(true);
    expect(anyGrew([["c", 3]], size)).toBe(false);
    expect(anyGrew([], size)).toBe(false);
  });

  test("gemini's records on disk: loaded once the conversation's file grew after the check was made; no such conversation: nothing to wait for", () => {
    const home = mkdtempSync(join(tmpdir(), "mam-gem-"));
    try {
      const ws = join(home, "ws");
      const chats = join(home, ".gemini", "tmp", "ws", "chats");
      mkdirSync(chats, { recursive: true });
      mkdirSync(ws);
      const env = { GEMINI_CLI_HOME: home };
      const id = "07565103-d818-42fb-bfb9-82400edfda3a";
      const file = join(chats, "session-2026-12-02T04-02-07565103.jsonl");
      writeFileSync(file, `${JSON.stringify({ sessionId: id, projectHash: sha256Hex(ws), kind: "main" })}\n{"id":"m1","type":"user"}\n`);
      const loaded = resumeLoadedOf("gemini", id, ws, env)!;
      expect(loaded()).toBe(false);
      // gemini starts: its empty twin of the same id is not the conversation loaded
      writeFileSync(join(chats, "session-2026-12-02T04-05-07565103.jsonl"), `${JSON.stringify({ sessionId: id, projectHash: sha256Hex(ws), kind: "main" })}\n`);
      expect(loaded()).toBe(false);
      // it loaded the conversation: the line it appends
      appendFileSync(file, `${JSON.stringify({ $set: { sessionId: id } })}\n`);
      expect(loaded()).toBe(true);
      expect(resumeLoadedOf("gemini", "00000000-0000-0000-0000-000000000000", ws, env)!()).toBe(true);
      expect(resumeLoadedOf("claude", id, ws, env)).toBeNull();
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("a steady box before the conversation is loaded is not the prompt; once loaded (and steady) it is", async () => {
    let loaded = false;
    setTimeout(() => (loaded = true), 600);
    const t0 = Date.now();
    expect(await waitForPrompt(geminiBoxPane([]), "%1", "gemini", {}, 10_000, undefined, undefined, () => null, () => loaded)).toEqual({ at: "prompt" });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(600 + PROMPT_STEADY_MS);
  });

  test("afterStart of a resume never loaded in time: not at its prompt, a warning says to wait for it, nothing typed", async () => {
    const typed: string[] = [];
    const r = await afterStart({ mux: geminiBoxPane(typed), name: "gem", kind: "gemini", backend: "tmux", server: "mam", paneId: "%1", cwd: "/nowhere", env: { MAM_PROMPT_WAIT_S: "1" }, loaded: () => false });
    expect(r).toMatchObject({ at_prompt: false, waiting_at: null, onboarding: "off" });
    expect(r.warnings.map((w) => w.text)).toEqual(["gemini has not loaded its conversation within 1 s in %1: give it a job once it shows its prompt there (tmux -L mam attach -t gem)"]);
    expect(typed).toEqual([]);
    const ok = await afterStart({ mux: geminiBoxPane(typed), name: "gem", kind: "gemini", backend: "tmux", server: "mam", paneId: "%1", cwd: "/nowhere", env: { MAM_PROMPT_WAIT_S: "5" }, loaded: () => true });
    expect(ok).toMatchObject({ at_prompt: true, warnings: [] });
  });
});

describe("mayType", () => {
  test("at the prompt or working: yes; a dialog or gone: never; unknown: only when mam cannot know or did not wait", () => {
    expect(mayType({ at: "prompt" }, true, true)).toBe(true);
    expect(mayType({ at: "working" }, true, true)).toBe(true);
    expect(mayType({ at: "dialog", dialog: "start" }, false, false)).toBe(false);
    expect(mayType({ at: "gone", why: "x" }, false, false)).toBe(false);
    expect(mayType({ at: "unknown" }, true, true)).toBe(false);
    expect(mayType({ at: "unknown" }, false, true)).toBe(true);
    expect(mayType({ at: "unknown" }, true, false)).toBe(true);
  });
});

describe("the input box", () => {
  test("claude and codex name one; the real idle screens show it empty (a placeholder is not our text)", () => {
    expect(hasInputBox("claude")).toBe(true);
    expect(hasInputBox("codex")).toBe(true);
    expect(hasInputBox("aider")).toBe(false);
    expect(inputBoxText("claude", screen("claude", "idle-real-prompt"))).toBe("");
    const codexBox = inputBoxText("codex", screen("codex", "idle-real-prompt"));
    expect(codexBox).toBeDefined();
    expect(holdsText(codexBox!, "You are wrk, a codex agent")).toBe(false);
  });

  test("gemini, qwen and cline name one: empty on their real idle screens (the placeholder is not our text), the typed text or a paste stand-in when it waits there", () => {
    for (const kind of ["gemini", "qwen"]) {
      expect(hasInputBox(kind)).toBe(true);
      for (const name of ["idle-real-prompt", "idle-real-after-answer"]) expect({ kind, name, box: inputBoxText(kind, screen(kind, name)) }).toEqual({ kind, name, box: "" });
      const typed = (line: string) => ({ text: screen(kind, "idle-real-prompt").text.replace(/>\s+Type your message or @path\/to\/file/, line), title: "" });
      expect(holdsText(inputBoxText(kind, typed("> You are wrk, a gemini agent"))!, "You are wrk, a gemini agent with the role")).toBe(true);
      expect(holdsText(inputBoxText(kind, typed("> [Pasted Text: 8 lines]"))!, "[mam] Job 1234abcd delegated to you\nmore")).toBe(true);
    }
    expect(inputBoxText("cline", screen("cline", "idle-real-prompt"))).toBe("");
    expect(inputBoxText("cline", screen("cline", "idle-real-after-answer"))).toBe("");
    const clineTyped = { text: screen("cline", "idle-real-prompt").text.replace(/❯ What can I do for you\?/, "❯ You are wrk, a cline agent"), title: "" };
    expect(holdsText(inputBoxText("cline", clineTyped)!, "You are wrk, a cline agent with the role")).toBe(true);
    // opencode's box (┃ lines, its mode line last) names no input line mam can read: delivery is unchecked
    expect(hasInputBox("opencode")).toBe(false);
  });

  test("text left in claude's box, or a paste stand-in in codex's, is found", () => {
    const rule = "─".repeat(40);
    const claude = { text: `some history\n${rule}\n❯ You are wrk, a claude agent with the role\n  "worker" in the mam team\n${rule}\n  ? for shortcuts\n`, title: "" };
    expect(holdsText(inputBoxText("claude", claude)!, "You are wrk, a claude agent with the role \"worker\" in the mam team")).toBe(true);
    expect(holdsText(inputBoxText("claude", claude)!, "[mam] Job 1234abcd delegated to you")).toBe(false);
    const codex = { text: "\n› [Pasted Content 712 chars]\n\n  ? for shortcuts\n", title: "" };
    expect(holdsText(inputBoxText("codex", codex)!, "anything")).toBe(true);
    // a numbered menu line is not the input box
    expect(inputBoxText("codex", { text: "› 1. Trust and continue\n  2. Quit\n", title: "" })).toBeUndefined();
  });

  test("claude 2.1.332's dim placeholder after an API error is an empty box, not text left in it; text typed over it is found", () => {
    const rule = "─".repeat(40);
    const box = (line: string) => ({ text: `● API Error: Connection error.\n\n${rule}\n${line}\n${rule}\n  ⏸ manual mode on · ? for shortcuts\n`, title: "" });
    expect(inputBoxText("claude", box("❯ Resend your message to try again"))).toBe("");
    expect(inputBoxText("claude", box("❯ continue"))).toBe("continue");
    expect(inputBoxText("claude", box("❯ Resend your message to try again, and then the tests"))).toBe("Resend your message to try again, and then the tests");
  });
});

test("MAM_PROMPT_WAIT_S: default 30 s, 0 allowed, junk falls back", () => {
  expect(promptWaitMs({})).toBe(30_000);
  expect(promptWaitMs({ MAM_PROMPT_WAIT_S: "0" })).toBe(0);
  expect(promptWaitMs({ MAM_PROMPT_WAIT_S: "2.5" })).toBe(2500);
  expect(promptWaitMs({ MAM_PROMPT_WAIT_S: "x" })).toBe(30_000);
  expect(answerHint("tmux", "mam", "wrk", "%3")).toBe("tmux -L mam attach -t wrk");
});

describe("deliver: typed, seen in the box, Enter, seen to leave", () => {
  const rule = "─".repeat(40);
  const TEXT = "[mam] Job 1234abcd delegated to you (wrk) by the user.";
  /** a tmux pane running claude: the box holds what was typed until an Enter is taken */
  function fakePane(o: { takesEnterAt?: number; landsAfterLooks?: number; dialogUnderText?: boolean } = {}) {
    const calls: string[] = [];
    let typed = "";
    let enters = 0;
    let looks = 0;
    const mux = {
      backend: "tmux",
      async sendText(_p: string, text: string, enter: boolean) {
        calls.push(`text${enter ? "+enter" : ""}`);
        typed = text;
      },
      async sendKeys(_p: string, keys: string[]) {
        calls.push(keys.join(","));
        enters++;
        if (o.takesEnterAt !== undefined && enters >= o.takesEnterAt) typed = "";
      },
      async submit() {
        calls.push("submit");
      },
      async screen() {
        looks++;
        if (o.dialogUnderText && typed !== "") return { text: "Quick safety check: Is this a project you created or one you trust?\n❯ 1. Yes, I trust this folder\n", title: "" };
        const shown = looks > (o.landsAfterLooks ?? 0) ? typed : "";
        return { text: `history\n${rule}\n❯ ${shown}\n${rule}\n  ? for shortcuts\n`, title: "" };
      },
    } as unknown as Mux;
    return { mux, calls };
  }

  test("the box shows the text late (a TUI still starting), one Enter takes it: submitted", async () => {
    const p = fakePane({ takesEnterAt: 1, landsAfterLooks: 2 });
    expect(await deliver(p.mux, "%1", "claude", TEXT, true, {})).toBe("submitted");
    expect(p.calls).toEqual(["text", "Enter"]);
  });

  test("an Enter that is not taken is pressed again (twice at the most)", async () => {
    const p = fakePane({ takesEnterAt: 2 });
    expect(await deliver(p.mux, "%1", "claude", TEXT, true, {})).toBe("submitted");
    expect(p.calls).toEqual(["text", "Enter", "Enter"]);
    const never = fakePane({});
    expect(await deliver(never.mux, "%1", "claude", TEXT, true, {})).toBe("left-in-box");
    expect(never.calls).toEqual(["text", "Enter", "Enter", "Enter"]);
  }, 20_000);

  test("a dialog under the text: no Enter at all; a dialog before it: nothing typed", async () => {
    const p = fakePane({ dialogUnderText: true });
    expect(await deliver(p.mux, "%1", "claude", TEXT, true, {})).toBe("left-in-box");
    expect(p.calls).toEqual(["text"]);
    const q = fakePane({ dialogUnderText: true });
    await q.mux.sendText("%1", "earlier", false);
    q.calls.length = 0;
    await expect(deliver(q.mux, "%1", "claude", TEXT, true, {})).rejects.toThrow("nothing was typed");
    expect(q.calls).toEqual([]);
  });

  test("no input box on screen (a fake agent, a screen mam does not know): Mux.submit at once, unchecked", async () => {
    const calls: string[] = [];
    const mux = {
      backend: "tmux",
      async submit() {
        calls.push("submit");
      },
      async screen() {
        return { text: "claude (fake agent) ready\n> ", title: "" };
      },
    } as unknown as Mux;
    expect(await deliver(mux, "%1", "claude", TEXT, true, {})).toBe("unchecked");
    expect(calls).toEqual(["submit"]);
  });

  test("herdr, a kind without an input box, or the detector off: Mux.submit, unchecked", async () => {
    for (const [kind, env, backend] of [["claude", {}, "herdr"], ["aider", {}, "tmux"], ["claude", { MAM_SCREEN_DETECT: "0" }, "tmux"]] as const) {
      const p = fakePane({ takesEnterAt: 1 });
      (p.mux as { backend: string }).backend = backend;
      expect(await deliver(p.mux, "%1", kind, TEXT, true, env)).toBe("unchecked");
      expect(p.calls).toEqual(["submit"]);
    }
  });
});

describe("an agent that goes to a dialog between mam's look and the typing (herdr refuses: AgentBlocked)", () => {
  /** a herdr pane whose agent looks idle, and whose submit herdr refuses (0.8.2 agent_blocked) */
  function refusingPane() {
    const calls: string[] = [];
    const mux = {
      backend: "herdr",
      server: "mam",
      async list() {
        return { state: "ok", panes: [{ id: "w1:p2", status: "idle", agent: "claude" }] };
      },
      async screen() {
        return { text: "claude (fake agent) ready\n> ", title: "" };
      },
      async submit(paneId: string) {
        calls.push("submit");
        throw new AgentBlocked(paneId, "herdr refused the text: agent_blocked");
      },
    } as unknown as Mux;
    return { mux, calls };
  }

  test("typeInto: the same error as a dialog seen by the look, nothing typed", async () => {
    const p = refusingPane();
    const s = { name: "wrk", paneId: "w1:p2", agent: "claude", backend: "herdr" as const, server: "mam" };
    const e = await typeInto(p.mux, s, "[mam] Job 1234abcd", true, {}).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(MamError);
    expect(e).not.toBeInstanceOf(AgentBlocked);
    expect((e as MamError).render()).toBe("ERROR: session 'wrk' waits at a question (herdr reports it blocked) in w1:p2; nothing was typed; answer it there (herdr --session mam, pane w1:p2), then try again");
    expect(p.calls).toEqual(["submit"]);
  });

  test("afterStart: the onboarding is not sent, the warning names the question", async () => {
    const p = refusingPane();
    const r = await afterStart({ mux: p.mux, name: "wrk", kind: "claude", backend: "herdr", server: "mam", paneId: "w1:p2", cwd: "/ws", env: {}, text: "You are wrk" });
    expect(r).toMatchObject({ at_prompt: false, waiting_at: "a question (herdr reports it blocked)", onboarding: "not sent" });
    expect(r.warnings.map((w) => w.text)).toEqual(["claude waits at a question (herdr reports it blocked) in w1:p2: answer it there (herdr --session mam, pane w1:p2); the onboarding was not sent"]);
  });
});

describe("sessionReach: typing into a pane is one text at a time in a process", () => {
  test("two texts for one pane at once: the second is typed after the first is done; another pane's beside them", async () => {
    const log: string[] = [];
    const mux = {
      backend: "tmux",
      async screen() {
        return { text: "$ ", title: "" };
      },
      async submit(pane: string, text: string) {
        log.push(`${pane} ${text} start`);
        await Bun.sleep(text === "first" ? 200 : 20);
        log.push(`${pane} ${text} end`);
      },
    } as unknown as Mux;
    const rt = sessionReach(() => ({}) as never, () => mux, {});
    const at = (paneId: string) => ({ name: `s${paneId}`, backend: "tmux" as const, server: "t", paneId, agent: "aider" });
    await Promise.all([rt.prompt(at("%1"), "first"), rt.prompt(at("%1"), "second"), rt.prompt(at("%2"), "other")]);
    expect(log.indexOf("%1 second start")).toBeGreaterThan(log.indexOf("%1 first end"));
    expect(log.indexOf("%2 other end")).toBeLessThan(log.indexOf("%1 first end"));
    // a failure lets the next text through
    const failing = { ...mux, submit: async () => Promise.reject(new Error("tmux went away")) } as unknown as Mux;
    const rt2 = sessionReach(() => ({}) as never, () => failing, {});
    await expect(rt2.prompt(at("%3"), "x")).rejects.toThrow("tmux went away");
    await expect(rt.prompt(at("%3"), "after")).resolves.toBeUndefined();
  });
});
