// The fake herdr's pure parts: ids, keys, the screen model, session resolution, CLI argv rules,
// shell quoting, the layout tree.
import { describe, expect, test } from "bun:test";
import { CliRawError, CliUsage, parseArgs, parseSource, parseStatuses } from "../fakes/herdr/cli/args.ts";
import { canonicalKind, kindForProcessName } from "../fakes/herdr/common/kinds.ts";
import { firstInvalidKey, keyBytes } from "../fakes/herdr/common/keys.ts";
import { apiSocketPath, resolveTarget, serverNotRunningMessage, stripSessionFlag, UsageError, validateSessionName } from "../fakes/herdr/common/session.ts";
import { shellQuote } from "../fakes/herdr/server/handlers/agent.ts";
import { decodeNumber, encodeNumber, newTerminalId, paneId, tabId, workspaceId } from "../fakes/herdr/server/ids.ts";
import { leaves, measure, parseArea, removeLeaf, splitLeaf } from "../fakes/herdr/server/layout.ts";
import { strippedTitle } from "../fakes/herdr/server/model.ts";
import { foregroundJob, sessionMembers, stat } from "../fakes/herdr/server/procfs.ts";
import { Screen } from "../fakes/herdr/server/screen.ts";

describe("ids", () => {
  test("bijective base 32: w1…w9, wA…wZ, w0 is the 32nd, w11 the 33rd", () => {
    expect([1, 9, 10, 31, 32, 33, 64, 65].map(encodeNumber)).toEqual(["1", "9", "A", "Z", "0", "11", "10", "21"]);
    for (let n = 1; n < 5000; n++) expect(decodeNumber(encodeNumber(n))).toBe(n);
    expect(encodeNumber(18)).toBe("J"); // I and L are skipped
    expect(encodeNumber(27)).toBe("V"); // U is skipped
    expect(workspaceId(32)).toBe("w0");
    expect(tabId("w2", 1)).toBe("w2:t1");
    expect(paneId("w2", 33)).toBe("w2:p11");
    expect(() => encodeNumber(0)).toThrow();
  });

  test("terminal ids are term_<hex> and unique", () => {
    const a = newTerminalId();
    const b = newTerminalId();
    expect(a).toMatch(/^term_[0-9a-f]+$/);
    expect(a).not.toBe(b);
  });
});

describe("keys", () => {
  test("named keys, combos, aliases, case-insensitive", () => {
    expect(keyBytes("Enter")).toBe("\r");
    expect(keyBytes("RETURN")).toBe("\r");
    expect(keyBytes("ctrl+c")).toBe("\x03");
    expect(keyBytes("C-c")).toBe("\x03");
    expect(keyBytes("Ctrl+D")).toBe("\x04");
    expect(keyBytes("alt+x")).toBe("\x1bx");
    expect(keyBytes("shift+tab")).toBe("\x1b[Z");
    expect(keyBytes("esc")).toBe("\x1b");
    expect(keyBytes("up")).toBe("\x1b[A");
    expect(keyBytes("f5")).toBe("\x1b[15~");
    expect(keyBytes("minus")).toBe("-");
    expect(keyBytes("space")).toBe(" ");
    expect(keyBytes("y")).toBe("y");
  });

  test("invalid keys are found before anything is written", () => {
    expect(firstInvalidKey(["Enter", "bogus", "y"])).toBe("bogus");
    expect(firstInvalidKey(["ctrl+", "x"])).toBe("ctrl+");
    expect(firstInvalidKey(["ctrl+a+b"])).toBe("ctrl+a+b");
    expect(firstInvalidKey(["Enter", "ctrl+c"])).toBeUndefined();
  });

  test("only the names herdr 0.8.0 knows (audit #9): no home/end/pageup/delete/insert, no M-x", () => {
    for (const k of ["home", "end", "pageup", "pgup", "pagedown", "pgdn", "insert", "ins", "delete", "del", "backtab", "M-x", "equal", "dot", "grave", "tilde", "doublequote"]) {
      expect(keyBytes(k)).toBeUndefined();
    }
    // what 0.8.0's parse_key_combo does accept
    expect(keyBytes("double_quote")).toBe('"');
    expect(keyBytes("BS")).toBe("\x7f");
    expect(keyBytes("+")).toBe("+");
    expect(keyBytes("c-c")).toBe("\x03");
    expect(keyBytes("option+x")).toBe("\x1bx");
    expect(keyBytes("X")).toBe("X");
    expect(keyBytes("f13")).toBe("");
    expect(keyBytes("hyper+x")).toBe("x");
  });
});

describe("screen (a headless xterm, read as herdr 0.8.0 reads ghostty)", () => {
  // a pty turns "\n" into "\r\n" (ONLCR); the screen gets what the pty gives
  const feed = async (s: Screen, text: string) => s.write(text.replace(/\n/g, "\r\n"));

  test("carriage return overwrites, backspace moves, escape sequences are not text; ansi keeps SGR", async () => {
    const s = new Screen(80, 24);
    await feed(s, "hello\nworld\n\x1b[31mred\x1b[0m\nabc\rX\nab\bc\n\x1b]0;title\x07t\n");
    expect(s.read("recent_unwrapped", undefined, "text").text).toBe("hello\nworld\nred\nXbc\nac\nt");
    expect(s.read("visible", undefined, "text").text).toBe("hello\nworld\nred\nXbc\nac\nt\n");
    expect(s.read("recent_unwrapped", undefined, "ansi").text).toContain("\x1b[0;31mred\x1b[0m");
    expect(s.title).toBe("title");
  });

  test("recent keeps soft wraps as rows, recent_unwrapped joins them; visible and recent end in a newline", async () => {
    const s = new Screen(80, 24);
    await feed(s, `${"x".repeat(100)}\nshort\n`);
    expect(s.read("recent", undefined, "text").text).toBe(`${"x".repeat(80)}\n${"x".repeat(20)}\nshort\n`);
    expect(s.read("recent_unwrapped", undefined, "text").text).toBe(`${"x".repeat(100)}\nshort`);
    // the row limit counts rendered rows of scrollback + screen, blank screen rows included
    expect(s.read("recent", 30, "text")).toEqual({ text: `${"x".repeat(80)}\n${"x".repeat(20)}\nshort\n`, truncated: false });
    expect(s.read("recent", 5, "text")).toEqual({ text: "", truncated: true });
  });

  test("visible is the screen; --lines keeps its last lines; recent defaults to 80 rows, capped at 1000", async () => {
    const s = new Screen(80, 24);
    let out = "";
    for (let i = 1; i <= 1500; i++) out += `line ${i}\n`;
    await feed(s, out);
    const vis = s.read("visible", undefined, "text").text.split("\n");
    expect(vis).toHaveLength(24); // 23 rows of text, the cursor's empty row dropped, a final newline
    expect(vis[22]).toBe("line 1500");
    expect(s.read("visible", 2, "text")).toEqual({ text: "line 1499\nline 1500\n", truncated: true });
    expect(s.read("recent", undefined, "text").text.split("\n")).toHaveLength(80); // 79 rows + ""
    expect(s.read("recent", 5000, "text").text.split("\n")).toHaveLength(1000);
    expect(s.read("detection", 3, "text").text).toBe("line 1498\nline 1499\nline 1500\n");
  });

  test("bracketed paste follows DECSET/DECRST 2004 from the app; new output wraps at a new width", async () => {
    const s = new Screen(20, 5);
    expect(s.bracketedPaste).toBe(false);
    await s.write("\x1b[?2004h");
    expect(s.bracketedPaste).toBe(true);
    await s.write("\x1b[?2004l");
    expect(s.bracketedPaste).toBe(false);
    await feed(s, "abcdefghijklmnopqrstuvwxyz");
    expect(s.read("visible", undefined, "text").text).toBe("abcdefghijklmnopqrst\nuvwxyz\n");
    s.resize(10, 5);
    expect([s.cols, s.rows]).toEqual([10, 5]);
    await feed(s, "\n0123456789ABCDE");
    expect(s.lastLines(2)).toEqual(["0123456789", "ABCDE"]);
  });
});

describe("procfs (what herdr reads of a pane's processes)", () => {
  test("stat fields; a process without a controlling terminal has no foreground job", () => {
    const me = stat(process.pid)!;
    expect(me.state).toMatch(/^[RSD]$/);
    expect(me.ppid).toBe(process.ppid);
    expect(me.startTime).toBeGreaterThan(0);
    const detached = Bun.spawnSync(["setsid", "-w", "sh", "-c", "cat /proc/$$/stat"], { stdin: "ignore" }).stdout.toString();
    expect(detached.slice(detached.lastIndexOf(")") + 2).split(" ")[5]).toBe("-1"); // tpgid
    expect(foregroundJob(999_999_999)).toBeUndefined();
  });

  test("a session is swept only while its leader is the process that started it", () => {
    const leader = Bun.spawn(["setsid", "sleep", "30"], { stdin: "ignore" });
    try {
      // setsid forks when it is a group leader already; wait for the sleep's own session
      let sid = 0;
      for (let i = 0; i < 100 && !sid; i++) {
        const st = stat(leader.pid);
        if (st && st.session === leader.pid) sid = leader.pid;
        else Bun.sleepSync(10);
      }
      expect(sid).toBe(leader.pid);
      const start = stat(sid)!.startTime;
      expect(sessionMembers(sid, start)).toEqual([sid]);
      expect(sessionMembers(sid, start + 1)).toEqual([]); // a recycled id: someone else's session
    } finally {
      leader.kill("SIGKILL");
    }
  });
});

describe("terminal titles", () => {
  test("herdr strips one leading spinner or claude activity glyph (src/terminal/title.rs cases)", () => {
    for (const t of ["⠋ task", "✳ task", "  ⠙   task  ", "✢ task", "✻ task"]) expect(strippedTitle(t)).toBe("task");
    expect(strippedTitle("⠋ ⠙ task")).toBe("⠙ task");
    for (const t of ["★task", "✨ task", "@ task", "task ⠋ detail", "[prod] task"]) expect(strippedTitle(t)).toBe(t);
    expect(strippedTitle(" ⠋ 修复🙂标题 ")).toBe("修复🙂标题");
    expect(strippedTitle("⠋")).toBeUndefined();
    expect(strippedTitle("  ")).toBeUndefined();
  });
});

describe("sessions and socket resolution", () => {
  const env = { HOME: "/h", XDG_CONFIG_HOME: "/x" };

  test("session names", () => {
    expect(validateSessionName("mam.test_1-a")).toBeUndefined();
    expect(validateSessionName("")).toBeDefined();
    expect(validateSessionName(".")).toBeDefined();
    expect(validateSessionName("a/b")).toBeDefined();
    expect(validateSessionName("x".repeat(65))).toBeDefined();
  });

  test("--session is stripped anywhere before --, in both forms", () => {
    expect(stripSessionFlag(["pane", "list", "--session", "mam"])).toEqual({ argv: ["pane", "list"], session: "mam" });
    expect(stripSessionFlag(["--session=a", "server", "stop"])).toEqual({ argv: ["server", "stop"], session: "a" });
    expect(stripSessionFlag(["agent", "start", "n", "--", "--session", "x"])).toEqual({ argv: ["agent", "start", "n", "--", "--session", "x"], session: undefined });
    expect(() => stripSessionFlag(["pane", "--session"])).toThrow(UsageError);
  });

  test("precedence: --session > HERDR_SOCKET_PATH > HERDR_SESSION > default", () => {
    const all = { ...env, HERDR_SOCKET_PATH: "/s/herdr.sock", HERDR_SESSION: "envs" };
    expect(resolveTarget(all, "flag").socket).toBe("/x/herdr/sessions/flag/herdr.sock");
    expect(resolveTarget(all, "default").socket).toBe("/x/herdr/herdr.sock");
    expect(resolveTarget(all).socket).toBe("/s/herdr.sock");
    expect(resolveTarget({ ...env, HERDR_SESSION: "envs" }).socket).toBe("/x/herdr/sessions/envs/herdr.sock");
    expect(resolveTarget({ ...env, HERDR_SESSION: "default" }).socket).toBe("/x/herdr/herdr.sock");
    expect(resolveTarget(env).socket).toBe("/x/herdr/herdr.sock");
    expect(apiSocketPath({ HOME: "/h" })).toBe("/h/.config/herdr/herdr.sock");
  });

  test("an empty or invalid HERDR_SESSION is a usage error only when it is the one in force", () => {
    expect(() => resolveTarget({ ...env, HERDR_SESSION: "" })).toThrow(UsageError);
    expect(() => resolveTarget({ ...env, HERDR_SESSION: "a b" })).toThrow(UsageError);
    expect(resolveTarget({ ...env, HERDR_SESSION: "" }, "ok").socket).toContain("/sessions/ok/");
    expect(resolveTarget({ ...env, HERDR_SESSION: "", HERDR_SOCKET_PATH: "/s.sock" }).socket).toBe("/s.sock");
    expect(() => resolveTarget(env, "bad/name")).toThrow(UsageError);
  });

  test("server_not_running names the attach command", () => {
    expect(serverNotRunningMessage(resolveTarget(env, "foo"))).toBe("no herdr server is running at /x/herdr/sessions/foo/herdr.sock; run `herdr session attach foo` to start or attach it");
    expect(serverNotRunningMessage(resolveTarget(env))).toBe("no herdr server is running at /x/herdr/herdr.sock; run `herdr` to start or attach it");
  });
});

describe("CLI argv rules (herdr 0.8.0)", () => {
  const spec = { usage: "usage: herdr pane split <pane_id> --direction right|down", positional: ["id"], flags: { "--direction": "value", "--focus": "bool", "--env": "multi" } } as const;

  test("positional first, then --flag value", () => {
    const p = parseArgs(["w1:p1", "--direction", "right", "--focus", "--env", "A=1", "--env", "B=2"], { ...spec, flags: { ...spec.flags } });
    expect(p.pos.id).toBe("w1:p1");
    expect(p.flags["--direction"]).toBe("right");
    expect(p.bools.has("--focus")).toBe(true);
    expect(p.multi["--env"]).toEqual(["A=1", "B=2"]);
  });

  test("bool flags keep their order: --focus/--no-focus is last-one-wins, as 0.8.0's parsers", () => {
    const s = { ...spec, flags: { ...spec.flags, "--no-focus": "bool" as const } };
    expect(parseArgs(["w1:p1", "--no-focus", "--focus"], s).boolOrder).toEqual(["--no-focus", "--focus"]);
    expect(parseArgs(["w1:p1", "--focus", "--no-focus"], s).boolOrder).toEqual(["--focus", "--no-focus"]);
  });

  test("--flag=value, flags before the id, unknown flags and missing values are usage errors", () => {
    const s = { ...spec, flags: { ...spec.flags } };
    expect(() => parseArgs(["w1:p1", "--direction=right"], s)).toThrow("unknown option: --direction=right");
    expect(() => parseArgs(["--direction", "right", "w1:p1"], s)).toThrow(CliUsage);
    expect(() => parseArgs(["w1:p1", "--bogus"], s)).toThrow("unknown option: --bogus");
    expect(() => parseArgs(["w1:p1", "--direction"], s)).toThrow("missing value for --direction");
  });

  test("literal positionals keep flag-looking text (agent prompt)", () => {
    const p = parseArgs(["rev-1", "--wait", "--wait"], { usage: "u", positional: ["target", "text?"], literal: true, flags: { "--wait": "bool" } });
    expect(p.pos.text).toBe("--wait");
    expect(p.bools.has("--wait")).toBe(true);
  });

  test("value checks: a bad --source is a raw error, a bad status a usage error", () => {
    expect(parseSource("recent-unwrapped")).toBe("recent_unwrapped");
    expect(() => parseSource("screen")).toThrow(CliRawError);
    expect(() => parseStatuses(["ready"])).toThrow("invalid agent status: ready (expected idle, working, blocked, done, or unknown)");
  });
});

describe("kinds, quoting, layout", () => {
  test("kinds, aliases and process names", () => {
    expect(canonicalKind("Claude-Code")).toBe("claude");
    expect(canonicalKind("antigravity")).toBe("agy");
    expect(canonicalKind("aider")).toBeUndefined();
    expect(kindForProcessName("/usr/bin/cursor-agent")).toBe("cursor");
    expect(kindForProcessName("kiro-cli")).toBe("kiro");
    expect(kindForProcessName("bash")).toBeUndefined();
  });

  test("shell quoting round-trips through bash", () => {
    const words = ["claude", "--session-id", "3f0c", "it's", "a b", "$(touch x)", "", "ünï"];
    const line = words.map(shellQuote).join(" ");
    const r = Bun.spawnSync(["bash", "-c", `for a in ${line}; do printf '%s\\n' "$a"; done`]);
    expect(r.stdout.toString()).toBe(`${words.join("\n")}\n`);
  });

  test("the tab area: COLSxROWS, else 200x50", () => {
    expect(parseArea("120x80")).toEqual({ x: 0, y: 0, width: 120, height: 80 });
    for (const bad of [undefined, "", "120", "1x1", "axb", "120x80x2"]) expect(parseArea(bad)).toEqual({ x: 0, y: 0, width: 200, height: 50 });
  });

  test("layout: split, order, remove, measure", () => {
    let t = splitLeaf({ type: "pane", paneId: "p1" }, "p1", "p2", "right", 0.5, "s1");
    t = splitLeaf(t, "p1", "p3", "down", 0.5, "s2");
    expect(leaves(t)).toEqual(["p1", "p3", "p2"]);
    const m = measure(t);
    expect(m.panes.find((p) => p.pane_id === "p2")!.rect).toEqual({ x: 100, y: 0, width: 100, height: 50 });
    expect(leaves(removeLeaf(t, "p1")!)).toEqual(["p3", "p2"]);
    expect(removeLeaf({ type: "pane", paneId: "p1" }, "p1")).toBeUndefined();
  });
});
