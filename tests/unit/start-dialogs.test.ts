// What claude's and qwen's own records say about their start dialogs (issue 39 #0): each rule as
// the real CLIs showed it (claude 2.1.197, qwen 0.24.4), on config fixtures; "a dialog will come"
// only where the records show it surely will, else null (the screen decides).
import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claudeStartDialogOf } from "../../lib/agents/kinds/claude.ts";
import { startDialogOf } from "../../lib/agents/kinds/index.ts";
import { qwenAuthFromEnv, qwenNeedsProvider } from "../../lib/agents/kinds/qwen.ts";
import { recordsEnv } from "../../lib/ops/session/after-start.ts";

const KEY = "sk-ant-mam-test-0123456789abcdefghij";
const cfg = (o: Record<string, unknown>) => JSON.stringify({ hasCompletedOnboarding: true, customApiKeyResponses: { approved: [KEY.slice(-20)], rejected: [] }, ...o });
const trusting = (...paths: string[]) => Object.fromEntries(paths.map((p) => [p, { hasTrustDialogAccepted: true, allowedTools: [] }]));

describe("claude: .claude.json", () => {
  const of = (config: string | undefined, env: Record<string, string> = { ANTHROPIC_API_KEY: KEY }, settings: (string | undefined)[] = []) => claudeStartDialogOf("/w/parent/ws", env, { config, settings });

  test("the folder trusted, onboarding done, the key approved: no dialog", () => {
    expect(of(cfg({ projects: trusting("/w/parent/ws") }))).toBeNull();
  });

  test("no project, or hasTrustDialogAccepted false: the trust dialog", () => {
    expect(of(cfg({}))).toBe("trust this folder");
    expect(of(cfg({ projects: { "/w/parent/ws": { hasTrustDialogAccepted: false } } }))).toBe("trust this folder");
    expect(of(cfg({ projects: trusting("/w/parent/wsx", "/w/parent/ws/sub") }))).toBe("trust this folder");
  });

  test("a folder above it trusted: no dialog, even with the folder's own false (claude writes that false itself)", () => {
    expect(of(cfg({ projects: trusting("/w/parent") }))).toBeNull();
    expect(of(cfg({ projects: { ...trusting("/w/parent"), "/w/parent/ws": { hasTrustDialogAccepted: false } } }))).toBeNull();
    // compared as real paths too
    expect(claudeStartDialogOf("/real/ws", {}, { config: cfg({ projects: trusting("/link/ws") }), settings: [] }, (p) => p.replace("/link", "/real"))).toBeNull();
  });

  test("onboarding not done: its first-run setup, before the trust dialog", () => {
    expect(of(JSON.stringify({ projects: trusting("/w/parent/ws") }))).toBe("first-run setup");
    expect(of(JSON.stringify({}))).toBe("first-run setup");
  });

  test("ANTHROPIC_API_KEY neither approved nor rejected: its API key question, after the trust dialog; no key in the env: none", () => {
    const noAnswers = JSON.stringify({ hasCompletedOnboarding: true, projects: trusting("/w/parent/ws") });
    expect(of(noAnswers)).toBe("first-run setup");
    expect(of(JSON.stringify({ hasCompletedOnboarding: true }))).toBe("trust this folder");
    expect(of(noAnswers, {})).toBeNull();
    expect(of(JSON.stringify({ hasCompletedOnboarding: true, projects: trusting("/w/parent/ws"), customApiKeyResponses: { approved: [], rejected: [KEY.slice(-20)] } }))).toBeNull();
    expect(of(cfg({ projects: trusting("/w/parent/ws") }), { ANTHROPIC_API_KEY: "sk-ant-another-key-9876543210zyxwvuts" })).toBe("first-run setup");
  });

  test("not sure: no config file (a first run: claude may stop instead), a file it cannot read, a bypass-permissions setting", () => {
    expect(of(undefined)).toBeNull();
    expect(of("{ not json")).toBeNull();
    expect(of("[]")).toBeNull();
    expect(of(cfg({}), { ANTHROPIC_API_KEY: KEY }, [JSON.stringify({ permissions: { defaultMode: "bypassPermissions" } })])).toBeNull();
  });

  test("on disk: CLAUDE_CONFIG_DIR/.claude.json, else ~/.claude.json; the answer follows the file", () => {
    const home = mkdtempSync(join(tmpdir(), "mam-cl-"));
    try {
      const ws = join(home, "ws");
      mkdirSync(ws);
      const dir = join(home, "cfg");
      mkdirSync(dir);
      const env = { HOME: home, CLAUDE_CONFIG_DIR: dir, ANTHROPIC_API_KEY: KEY };
      expect(startDialogOf("claude", ws, env)).toBeNull();
      writeFileSync(join(dir, ".claude.json"), cfg({}));
      expect(startDialogOf("claude", ws, env)).toBe("trust this folder");
      writeFileSync(join(dir, ".claude.json"), cfg({ projects: trusting(ws) }));
      expect(startDialogOf("claude", ws, env)).toBeNull();
      const { CLAUDE_CONFIG_DIR: _, ...noDir } = env;
      writeFileSync(join(home, ".claude.json"), cfg({}));
      expect(startDialogOf("claude", ws, noDir)).toBe("trust this folder");
      mkdirSync(join(ws, ".claude"));
      writeFileSync(join(ws, ".claude", "settings.local.json"), JSON.stringify({ permissions: { defaultMode: "bypassPermissions" } }));
      expect(startDialogOf("claude", ws, noDir)).toBeNull();
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe("qwen: its provider", () => {
  const OPENAI = { OPENAI_API_KEY: "k", OPENAI_BASE_URL: "http://x/v1", OPENAI_MODEL: "m" };

  test("no selectedType in any settings file, none from the env, no .env file: 'Connect a Provider' comes", () => {
    expect(qwenNeedsProvider([], {}, false)).toBe(true);
    expect(qwenNeedsProvider([undefined, JSON.stringify({ general: { enableAutoUpdate: false } }), undefined], {}, false)).toBe(true);
    // a key alone is not a provider (qwen asked, tested)
    expect(qwenNeedsProvider([], { OPENAI_API_KEY: "k" }, false)).toBe(true);
  });

  test("a selectedType in any settings file, or a provider from the env: no dialog", () => {
    for (const i of [0, 1, 2, 3]) {
      const s: (string | undefined)[] = [undefined, undefined, undefined, undefined];
      s[i] = JSON.stringify({ security: { auth: { selectedType: "openai" } } });
      expect(qwenNeedsProvider(s, {}, false)).toBe(false);
    }
    expect(qwenNeedsProvider([JSON.stringify({ selectedAuthType: "openai" })], {}, false)).toBe(false);
    expect(qwenNeedsProvider([], OPENAI, false)).toBe(false);
    expect(qwenAuthFromEnv(OPENAI)).toBe("openai");
    expect(qwenAuthFromEnv({ ...OPENAI, OPENAI_MODEL: undefined, QWEN_MODEL: "m" })).toBe("openai");
    expect(qwenAuthFromEnv({ QWEN_OAUTH: "1" })).toBe("qwen-oauth");
    expect(qwenAuthFromEnv({ ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: "u" })).toBeUndefined();
    expect(qwenAuthFromEnv({ GEMINI_API_KEY: "k", GEMINI_MODEL: "m" })).toBe("gemini");
  });

  test("not sure: a settings file's env, a .env file, a settings file it cannot read", () => {
    expect(qwenNeedsProvider([JSON.stringify({ env: OPENAI })], {}, false)).toBe(false);
    expect(qwenNeedsProvider([], {}, true)).toBe(false);
    expect(qwenNeedsProvider(["{ not json"], {}, false)).toBe(false);
    // comments are fine (qwen's settings are JSON with comments)
    expect(qwenNeedsProvider(["// mine\n{}"], {}, false)).toBe(true);
  });

  test("on disk: QWEN_HOME's settings.json, the folder's .qwen/settings.json and .env files", () => {
    const home = mkdtempSync(join(tmpdir(), "mam-qw-"));
    try {
      const ws = join(home, "ws");
      mkdirSync(join(ws, ".qwen"), { recursive: true });
      mkdirSync(join(home, ".qwen"));
      const env = { HOME: home, QWEN_CODE_SYSTEM_SETTINGS_PATH: join(home, "none", "settings.json") };
      expect(startDialogOf("qwen", ws, env)).toBe("connect a provider");
      writeFileSync(join(home, ".qwen", "settings.json"), JSON.stringify({ security: { auth: { selectedType: "openai" } } }));
      expect(startDialogOf("qwen", ws, env)).toBeNull();
      mkdirSync(join(home, "qh"));
      expect(startDialogOf("qwen", ws, { ...env, QWEN_HOME: join(home, "qh") })).toBe("connect a provider");
      writeFileSync(join(ws, ".qwen", "settings.json"), JSON.stringify({ security: { auth: { selectedType: "openai" } } }));
      expect(startDialogOf("qwen", ws, { ...env, QWEN_HOME: join(home, "qh") })).toBeNull();
      rmSync(join(ws, ".qwen", "settings.json"));
      writeFileSync(join(ws, ".env"), "OPENAI_API_KEY=k\n");
      expect(startDialogOf("qwen", ws, { ...env, QWEN_HOME: join(home, "qh") })).toBeNull();
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

test("the records are read with the agent's own environment when it is that session's, else mam's", () => {
  const own = { CLAUDE_CONFIG_DIR: "/mam" };
  expect(recordsEnv(own, { CLAUDE_CONFIG_DIR: "/agent", MAM_SESSION: "w1" }, "w1")).toEqual({ CLAUDE_CONFIG_DIR: "/agent", MAM_SESSION: "w1" });
  expect(recordsEnv(own, { CLAUDE_CONFIG_DIR: "/agent", MAM_SESSION: "other" }, "w1")).toBe(own);
  expect(recordsEnv(own, undefined, "w1")).toBe(own);
});
