// The kinds table and the workspace-scoped conversation stores (SPEC §5.1).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { claudeProjectKey } from "../../lib/agents/kinds/claude.ts";
import { geminiSettingsFiles, sessionCleanupOff } from "../../lib/agents/kinds/gemini.ts";
import { agentKind, idField, KINDS, ownId } from "../../lib/agents/kinds/index.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "mam-agents-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const home = join(root, "home");
const env = { HOME: home };
const ws = "/work/proj_a";
const other = "/work/proj_b";
/** the conversation store of a kind that has one */
const store = (kind: string) => agentKind(kind).store!;

function put(p: string, text: string, ageS = 0) {
  mkdirSync(join(p, ".."), { recursive: true });
  writeFileSync(p, text);
  const t = Date.now() / 1000 - ageS;
  utimesSync(p, t, t);
}

describe("kinds", () => {
  test("every SPEC kind is there", () => {
    for (const k of ["claude", "codex", "gemini", "agy", "hermes", "cline", "aider", "opencode", "shell", "qwen", "copilot", "crush", "kilo", "amp"]) expect(KINDS[k]).toBeDefined();
  });
  test("claude gets an assigned id and resumes with --resume", () => {
    const c = agentKind("claude");
    expect(c.assignsId).toBe(true);
    expect(c.freshArgs("abc")).toEqual(["--session-id", "abc"]);
    expect(c.resumeArgs!("abc")).toEqual(["--resume", "abc"]);
    expect(c.exitText).toBe("/exit");
  });
  test("resume args of the others", () => {
    // codex: its rate-limit model nudge off for the process, so that no modal holds an unwatched agent
    expect(agentKind("codex").resumeArgs!("x")).toEqual(["-c", "notice.hide_rate_limit_model_nudge=true", "resume", "x"]);
    expect(agentKind("codex").freshArgs(undefined)).toEqual(["-c", "notice.hide_rate_limit_model_nudge=true"]);
    expect(agentKind("agy").resumeArgs!("x")).toEqual(["--conversation", "x"]);
    expect(agentKind("gemini").resumeArgs!("x")).toEqual(["--resume", "x"]);
    expect(agentKind("agy").exitText).toBe("Exit");
    expect(agentKind("codex").exitText).toBe("/quit");
  });
  test("aider and shell are typed with pane run (no herdr kind)", () => {
    expect(agentKind("aider").herdrKind).toBeNull();
    expect(agentKind("shell").herdrKind).toBeNull();
    expect(agentKind("claude").herdrKind).toBe("claude");
  });
  test("an unknown kind is a usage error", () => {
    expect(() => agentKind("gpt")).toThrow(/unknown agent kind 'gpt'/);
    expect(() => agentKind("constructor")).toThrow(/unknown agent kind/);
  });
  test("own id field, and the original's field name", () => {
    expect(idField("claude")).toBe("claude_session_id_own");
    expect(ownId({ claude_session_id_own: "a" }, "claude")).toBe("a");
    expect(ownId({ agy_conversation_id_own: "b" }, "agy")).toBe("b");
    expect(ownId({}, "agy")).toBeUndefined();
  });
});

describe("stores are scoped to the workspace", () => {
  test("claude", () => {
    expect(claudeProjectKey("/work/proj_a")).toBe("-work-proj-a");
    const dir = join(home, ".claude", "projects", "-work-proj-a");
    put(join(dir, "old.jsonl"), `${JSON.stringify({ sessionId: "old", cwd: ws })}\n`, 100);
    put(join(dir, "new.jsonl"), `${JSON.stringify({ type: "summary" })}\n${JSON.stringify({ sessionId: "new" })}\n`, 1);
    put(join(home, ".claude", "projects", "-work-proj-b", "theirs.jsonl"), `${JSON.stringify({ sessionId: "theirs" })}\n`, 0);
    expect(store("claude").newest(ws, env)!.id).toBe("new");
    expect(store("claude").find("old", ws, env)!.files).toEqual([join(dir, "old.jsonl")]);
    expect(store("claude").find("theirs", ws, env)).toBeUndefined();
    expect(store("claude").newest(other, env)!.id).toBe("theirs");
    expect(store("claude").newest(ws, { ...env, CLAUDE_CONFIG_DIR: join(root, "elsewhere") })).toBeUndefined();
  });

  test("codex", () => {
    const d = join(home, ".codex", "sessions", "2026", "11", "30");
    put(join(d, "rollout-1-a.jsonl"), `${JSON.stringify({ type: "session_meta", payload: { id: "ca", cwd: ws } })}\n`, 50);
    put(join(d, "rollout-2-b.jsonl"), `${JSON.stringify({ type: "session_meta", payload: { id: "cb", cwd: other } })}\n`, 0);
    put(join(d, "rollout-3-c.jsonl"), `${JSON.stringify({ type: "session_meta", payload: { id: "cc", cwd: ws } })}\n`, 10);
    expect(store("codex").newest(ws, env)!.id).toBe("cc");
    expect(store("codex").find("cb", ws, env)).toBeUndefined();
    expect(store("codex").find("ca", ws, env)).toBeDefined();
  });

  test("gemini (0.61.0: a slug folder per project, matched by the projectHash of each file's first line)", () => {
    const hash = (p: string) => createHash("sha256").update(p).digest("hex");
    const d = join(home, ".gemini", "tmp", "proj-a", "chats");
    put(join(d, "session-2026-12-01T10-00-g1aaaaaa.jsonl"), `${JSON.stringify({ sessionId: "g1", projectHash: hash(ws), kind: "main" })}\n{"$set":{}}\n`, 5);
    // a resumed conversation leaves an empty twin with the same id: both are its files
    put(join(d, "session-2026-12-01T11-00-g1aaaaaa.jsonl"), `${JSON.stringify({ sessionId: "g1", projectHash: hash(ws), kind: "main" })}\n`, 1);
    // another workspace whose folder has the same name got the slug proj-a-1
    put(join(home, ".gemini", "tmp", "proj-a-1", "chats", "session-2026-12-01T10-00-g2bbbbbb.jsonl"), `${JSON.stringify({ sessionId: "g2", projectHash: hash(other) })}\n`, 0);
    // an older gemini: tmp/<sha256>/chats/*.json
    put(join(home, ".gemini", "tmp", hash(ws), "chats", "session-old.json"), JSON.stringify({ sessionId: "g0" }), 50);
    expect(store("gemini").newest(ws, env)!.id).toBe("g1");
    expect(store("gemini").find("g1", ws, env)!.files.sort()).toEqual([join(d, "session-2026-12-01T10-00-g1aaaaaa.jsonl"), join(d, "session-2026-12-01T11-00-g1aaaaaa.jsonl")]);
    expect(store("gemini").find("g0", ws, env)).toBeDefined();
    expect(store("gemini").find("g2", ws, env)).toBeUndefined();
    expect(store("gemini").newest(other, env)!.id).toBe("g2");
    expect(store("gemini").newest(ws, { ...env, GEMINI_CLI_HOME: join(root, "elsewhere") })).toBeUndefined();
  });

  test("qwen", () => {
    const d = join(home, ".qwen", "projects", ws.replace(/[^A-Za-z0-9]/g, "-"), "chats");
    put(join(d, "q1.jsonl"), `${JSON.stringify({ sessionId: "q1", cwd: ws })}\n`, 5);
    put(join(d, "q1.runtime.json"), "{}", 5);
    put(join(d, "q2.jsonl"), `${JSON.stringify({ sessionId: "q2", cwd: ws })}\n`, 1);
    expect(store("qwen").newest(ws, env)!.id).toBe("q2");
    expect(store("qwen").find("q1", ws, env)!.files).toEqual([join(d, "q1.jsonl"), join(d, "q1.runtime.json")]);
    expect(store("qwen").newest(other, env)).toBeUndefined();
  });

  test("agy", () => {
    const d = join(home, ".gemini", "antigravity-cli");
    put(join(d, "cache", "last_conversations.json"), JSON.stringify({ [ws]: "a1", [other]: { conversation_id: "a2" } }));
    put(join(d, "conversations", "a1.db"), "x");
    expect(store("agy").newest(ws, env)!.id).toBe("a1");
    expect(store("agy").find("a2", ws, env)).toBeUndefined();
    expect(store("agy").newest(other, env)).toBeUndefined(); // no .db on disk
  });

  test("cline", () => {
    const d = join(home, ".cline", "data", "sessions");
    put(join(d, "s1", "s1.json"), JSON.stringify({ session_id: "s1", cwd: ws }), 20);
    put(join(d, "s2", "s2.json"), JSON.stringify({ session_id: "s2", workspace_root: ws }), 2);
    put(join(d, "s3", "s3.json"), JSON.stringify({ session_id: "s3", cwd: other }), 0);
    expect(store("cline").newest(ws, env)!.id).toBe("s2");
    expect(store("cline").find("s3", ws, env)).toBeUndefined();
  });

  test("opencode (1.18.33: SQLite opencode.db, table session; subagents' sessions are not the conversation)", () => {
    const dir = join(home, ".local", "share", "opencode");
    mkdirSync(dir, { recursive: true });
    const db = new Database(join(dir, "opencode.db"));
    db.run("CREATE TABLE session (id TEXT PRIMARY KEY, directory TEXT NOT NULL, parent_id TEXT, time_updated INTEGER NOT NULL)");
    db.run("INSERT INTO session VALUES ('ses_1', ?, NULL, 100), ('ses_2', ?, NULL, 300), ('ses_3', ?, 'ses_1', 900), ('ses_4', ?, NULL, 200)", [ws, other, ws, ws]);
    db.close();
    expect(store("opencode").newest(ws, env)!.id).toBe("ses_4");
    expect(store("opencode").find("ses_1", ws, env)).toEqual({ id: "ses_1", mtimeMs: 100, files: [] });
    expect(store("opencode").find("ses_2", ws, env)).toBeUndefined();
    expect(store("opencode").find("ses_3", ws, env)).toBeUndefined();
    expect(store("opencode").newest(ws, { ...env, XDG_DATA_HOME: join(root, "elsewhere") })).toBeUndefined();
  });

  test("hermes (SQLite state.db)", () => {
    mkdirSync(join(home, ".hermes"), { recursive: true });
    const db = new Database(join(home, ".hermes", "state.db"));
    db.run("CREATE TABLE sessions (id TEXT, cwd TEXT, updated_at INTEGER)");
    db.run("INSERT INTO sessions VALUES ('h1', ?, 1), ('h2', ?, 2), ('h3', ?, 3)", [ws, ws, other]);
    db.close();
    expect(store("hermes").newest(ws, env)!.id).toBe("h2");
    expect(store("hermes").find("h1", ws, env)).toBeDefined();
    expect(store("hermes").find("h3", ws, env)).toBeUndefined();
  });
});

describe("gemini's session cleanup deletes a resumed conversation: the note after a resume", () => {
  test("sessionCleanupOff: only an explicit false turns it off; the strongest file that says something wins; comments are fine", () => {
    const off = '{ // mam\n "general": {"sessionRetention": {"enabled": false}} }';
    const on = '{"general": {"sessionRetention": {"enabled": true, "maxAge": "30d"}}}';
    expect(sessionCleanupOff([])).toBe(false);
    expect(sessionCleanupOff([undefined, "{}", '{"general": {}}'])).toBe(false);
    expect(sessionCleanupOff([undefined, off, undefined, undefined])).toBe(true);
    // the folder's settings over the user's, the system's over both
    expect(sessionCleanupOff([undefined, off, on, undefined])).toBe(false);
    expect(sessionCleanupOff([undefined, on, undefined, off])).toBe(true);
    // a broken file says nothing
    expect(sessionCleanupOff([off, "{ not json"])).toBe(true);
    expect(sessionCleanupOff(['{"general": {"sessionRetention": {"enabled": "no"}}}'])).toBe(false);
  });

  test("the settings files gemini reads, weakest first; GEMINI_CLI_HOME and the system paths of its variables", () => {
    expect(geminiSettingsFiles(ws, env)).toEqual(["/etc/gemini-cli/system-defaults.json", join(home, ".gemini", "settings.json"), join(ws, ".gemini", "settings.json"), "/etc/gemini-cli/settings.json"]);
    const e = { HOME: home, GEMINI_CLI_HOME: "/g", GEMINI_CLI_SYSTEM_SETTINGS_PATH: "/s/settings.json" };
    expect(geminiSettingsFiles(ws, e)).toEqual(["/s/system-defaults.json", "/g/.gemini/settings.json", join(ws, ".gemini", "settings.json"), "/s/settings.json"]);
    expect(geminiSettingsFiles(ws, { ...e, GEMINI_CLI_SYSTEM_DEFAULTS_PATH: "/d.json" })[0]).toBe("/d.json");
  });

  test("gemini says it after a resume until the user's settings turn the cleanup off; the other kinds say nothing", () => {
    const gh = join(root, "gemini-note");
    const e = { HOME: gh, GEMINI_CLI_SYSTEM_SETTINGS_PATH: join(gh, "none", "settings.json") };
    const note = KINDS.gemini!.resumeNote!(ws, e);
    expect(note).toContain(`when another gemini conversation starts in ${ws}`);
    expect(note).toContain(`"general": {"sessionRetention": {"enabled": false}} in ${join(gh, ".gemini", "settings.json")}`);
    put(join(gh, ".gemini", "settings.json"), JSON.stringify({ general: { sessionRetention: { enabled: false } } }));
    expect(KINDS.gemini!.resumeNote!(ws, e)).toBeNull();
    for (const k of Object.keys(KINDS).filter((k) => k !== "gemini")) expect(KINDS[k]!.resumeNote).toBeNull();
  });
});

describe("the demo agent's plan", () => {
  const { demoSteps, jobOf } = require("../../lib/agents/demo-agent.ts") as typeof import("../../lib/agents/demo-agent.ts");
  const header = [
    "[mam] Job deadbeef delegated to you (w) by the user.",
    "Task: add a greeting",
    "Expected artifacts: hello.txt",
    "Report with these commands, exactly as written (replace the text in quotes):",
    `  mam job event deadbeef started --source w --workspace '/tmp/my ws' --detail "what you are starting"`,
  ].join("\n");
  test("finds the job in a header, with quoted workspaces", () => {
    expect(jobOf(header)).toEqual({ id: "deadbeef", source: "w", ws: "/tmp/my ws" });
    expect(jobOf("hello")).toBeUndefined();
  });
  test("finds it whatever words name mam: mam, an absolute path, quoted, or bun and mam.ts from source", () => {
    for (const m of ["mam", "/opt/tools/mam", "'/my dl/mam'", "'/x/bun' '/y/mam.ts'", "/x/bun /y/mam.ts"]) {
      const h = header.replace("  mam job event", `  ${m} job event`);
      expect(h).toContain(`${m} job event deadbeef`);
      expect(jobOf(h)).toEqual({ id: "deadbeef", source: "w", ws: "/tmp/my ws" });
    }
  });
  test("a worker starts, writes the artifacts, completes", () => {
    expect(demoSteps(header, { passOn: 2 }, 0)).toEqual([
      { event: "started", detail: "demo agent on it" },
      { event: "progress", detail: "working" },
      { write: "hello.txt" },
      { event: "completed", detail: "done: add a greeting" },
    ]);
  });
  test("a reviewer sends feedback before its pass-on review, then PASS", () => {
    const review = header.replace("[mam] Job deadbeef delegated to you (w) by the user.", "[mam] Review for job deadbeef (iteration 1 of 3): w reports completed: done");
    expect(demoSteps(review, { passOn: 2 }, 0).at(-1)).toEqual({ event: "completed", detail: "feedback: please also handle the empty input" });
    expect(demoSteps(review, { passOn: 2 }, 1).at(-1)).toEqual({ event: "completed", detail: "PASS: looks good" });
  });
  test("anything else gets a ready, also the last line of a request arriving on its own", () => {
    expect(demoSteps("You are x, a demo agent…", { passOn: 2 }, 0)).toEqual([{ say: "ready" }]);
    expect(demoSteps(`  mam job event deadbeef progress --source r --workspace /w --detail "short status"`, { passOn: 2 }, 1)).toEqual([{ say: "ready" }]);
  });
});
