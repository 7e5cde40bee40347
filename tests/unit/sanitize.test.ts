// The one rule of what never reaches a terminal or a pane raw (lib/sys/sanitize.ts), and where it
// is applied without a process: renderings, the end line, the send rule, JSON output; the pure
// parts of a job to a shell (issue 23 items 1–3).
import { describe, expect, test } from "bun:test";
import { hasUnsafe, jsonSafe, typeable, visible } from "../../lib/sys/sanitize.ts";
import { MamError } from "../../lib/sys/errors.ts";
import { noticeLine, warning } from "../../lib/sys/notice.ts";
import { HOSTILE, INVISIBLE, INVISIBLE_SHOWN, rawControls } from "../helpers/recorder.ts";

describe("visible: for a terminal or a log line", () => {
  test("every control character, C1, U+2028/9 and bidi control is shown as an escape; the result is one line", () => {
    expect(visible("a\x1b]52;c;cHduZWQ=\x07b")).toBe("a\\x1b]52;c;cHduZWQ=\\x07b");
    expect(visible("x\ny\r\tz\x00\x7f")).toBe("x\\ny\\r\\tz\\x00\\x7f");
    expect(visible("\u009b2J \u0085 \u2028 \u2029 \u202e \u2066 \u200f \u061c")).toBe("\\x9b2J \\x85 \\u2028 \\u2029 \\u202e \\u2066 \\u200f \\u061c");
    expect(rawControls(visible(HOSTILE))).toEqual([]);
  });
  test("other text is untouched (accents, emoji, right-to-left letters, backslashes)", () => {
    for (const s of ["héllo wörld", "日本語 🚀", "שלום עולם", "C:\\path\\x1b literally", ""]) expect(visible(s)).toBe(s);
  });
  test("idempotent: what it shows passes again unchanged", () => {
    expect(visible(visible(HOSTILE))).toBe(visible(HOSTILE));
  });
});

describe("invisible characters an LLM reads and a user cannot see (review O3)", () => {
  test("zero-width, word joiner, BOM, soft hyphen, U+180E, annotation marks and tag characters are shown as escapes", () => {
    expect(visible(INVISIBLE)).toBe(INVISIBLE_SHOWN);
    expect(typeable(INVISIBLE)).toBe(INVISIBLE_SHOWN);
    expect(visible("\u180e\u2061\u2064\u206a\u206f\ufff9\ufffb\u{e0001}\u{e0020}\u{e007f}")).toBe("\\u180e\\u2061\\u2064\\u206a\\u206f\\ufff9\\ufffb\\u{e0001}\\u{e0020}\\u{e007f}");
    expect(rawControls(visible(INVISIBLE))).toEqual([]);
    expect(visible(visible(INVISIBLE))).toBe(visible(INVISIBLE));
  });
  test("a single variation selector (an emoji's or an ideograph's glyph) stays; a run of them is shown", () => {
    for (const s of ["\u2764\ufe0f", "\u{1f44d}\ufe0f ok \u2764\ufe0e", "\u845b\u{e0100}", "1\ufe0f\u20e3"]) expect(visible(s)).toBe(s);
    expect(visible("x\ufe00\ufe01\ufe0f y")).toBe("x\\ufe00\\ufe01\\ufe0f y");
    expect(hasUnsafe("\u{1f600}\u{e0131}\u{e0142}")).toBe(true);
  });
  test("tag characters just past the block and other letters stay", () => {
    for (const s of ["\u{e0080}", "\u200a thin space", "\u3000", "\u{1f3f4}"]) expect(visible(s)).toBe(s);
  });
  test("the send op refuses them; --json writes them as \\u escapes that parse back", async () => {
    const { parseAction } = await import("../../lib/ui/actions.ts");
    for (const text of ["zero\u200bwidth", "tag \u{e0041}", "bom \ufeff", "shy\u00ad", "vs \u{e0100}\u{e0101}"]) {
      expect(() => parseAction({ action: "session.send", input: { name: "w1", text } }), JSON.stringify(text)).toThrow(/invisible character/);
    }
    const value = { detail: INVISIBLE };
    const text = jsonSafe(JSON.stringify(value));
    expect(rawControls(text)).toEqual([]);
    expect(text).toContain("\\udb40\\udc41");
    expect(JSON.parse(text)).toEqual(value);
  });
});

describe("typeable: for an agent's pane", () => {
  test("line breaks stay (\\r\\n and a lone \\r become \\n), tabs become spaces, the rest is shown as in visible", () => {
    expect(typeable("line 1\r\nline 2\rline 3\n\tindented")).toBe("line 1\nline 2\nline 3\n    indented");
    expect(typeable("done\x03 bye\x1b[201~ \x04\x15\u009b\u2028\u202e")).toBe("done\\x03 bye\\x1b[201~ \\x04\\x15\\x9b\\u2028\\u202e");
    expect(rawControls(typeable(`a\n${HOSTILE}\nb`), ["\n"])).toEqual([]);
    expect(typeable("plain text")).toBe("plain text");
  });
});

describe("hasUnsafe: the rule as a check (mam ui's send)", () => {
  test("C0 (newline too), DEL, C1, U+2028/9 and bidi controls are caught; plain text is not", () => {
    for (const s of ["a\nb", "\x1b[2J", "\x7f", "\u0085", "\u009b", "\u2028", "\u2029", "\u202e", "\u2067", "\u200e"]) expect(hasUnsafe(s), JSON.stringify(s)).toBe(true);
    for (const s of ["hello there", "$(touch x); `id`", "שלום", "🚀"]) expect(hasUnsafe(s)).toBe(false);
  });
  test("the send op refuses them with one message", async () => {
    const { parseAction } = await import("../../lib/ui/actions.ts");
    for (const text of ["C1 \u009b31m", "sep \u2028 x", "rlo \u202e x", "nel \u0085"]) {
      expect(() => parseAction({ action: "session.send", input: { name: "w1", text } })).toThrow(/control character/);
    }
  });
});

describe("jsonSafe: --json keeps the exact text", () => {
  test("DEL, C1, U+2028/9 and bidi written as \\uXXXX; JSON.parse gives the same value back; its own newlines stay", () => {
    const value = { detail: HOSTILE, role: "r\u202eole", nested: ["\u0085", { k: "\x7f" }] };
    const text = jsonSafe(JSON.stringify(value, null, 2));
    expect(rawControls(text, ["\n"])).toEqual([]);
    expect(JSON.parse(text)).toEqual(value);
    expect(text.split("\n").length).toBeGreaterThan(3);
  });
});

describe("errors and notices are printed safe", () => {
  test("ERROR and WARNING lines show what they quote escaped, on one line", () => {
    expect(new MamError("no session named 'a\x1b[2Jb'", 3, "see: x\ny").render()).toBe("ERROR: no session named 'a\\x1b[2Jb'; see: x\\ny");
    expect(noticeLine(warning("could not tell w (\x1b]0;t\x07)"))).toBe("WARNING: could not tell w (\\x1b]0;t\\x07)");
  });
});

describe("renderings show others' text escaped", () => {
  const ev = (over: Record<string, unknown> = {}) =>
    ({ schema_version: 1, seq: 3, job_id: "0123abcd", event: "progress", timestamp: "2026-01-01T00:00:00Z\x1b[2J", detail: `half ${HOSTILE}`, source: "w\x1b]0;x\x07", data: { note: "\u009b1m\u2028" }, ...over }) as never;
  test("job logs, wait lines and progress notes", async () => {
    const { eventLine, eventNote, waitLine } = await import("../../lib/jobs/render.ts");
    for (const line of [eventLine(ev()), eventNote(ev()), waitLine({ job_id: "0123abcd", status: "running", last_event: ev() } as never)]) {
      expect(rawControls(line)).toEqual([]);
      expect(line).toContain("half \\x03 \\x04");
    }
    expect(eventLine(ev())).toContain("w\\x1b]0;x\\x07: half");
  });
  test("the delegator's end line: one line, control characters shown", async () => {
    const { endLine } = await import("../../lib/ops/react/reactor.ts");
    expect(endLine({ job_id: "0123abcd", event: "completed", detail: "done\x03 bye\n\x1b[201~next" } as never)).toBe("[mam] job 0123abcd completed: done\\x03 bye \\x1b[201~next");
  });
  test("mam status: names, roles, servers and blocked reasons", async () => {
    const { renderStatus } = await import("../../lib/ops/session/status.ts");
    const doc = {
      workspace: "/w",
      registry: "/w/.mam/agent-sessions.yaml",
      sessions: [{ name: "w1", agent: "claude", role: "r\x1b]52;c;eA==\x07", status: "running", live: "blocked", reason: "Allow \x1b[2J?", mux: "tmux", server: "mam", pane: "%1", job: null, drift: [], why: { kind: "blocked" as const, text: "blocked on a dialog (Allow \x1b[2J?)" } }],
      needs: [{ kind: "dialog" as const, what: "w1 is blocked on a dialog (Allow \x1b[2J?)", session: "w1", act: "answer it" }],
    };
    for (const color of [false, true]) {
      const text = renderStatus(doc, color);
      expect(text).toContain("r\\x1b]52;c;eA==\\x07");
      expect(text).toContain("Allow \\x1b[2J?");
      // colour is mam's own SGR only
      expect(text.replace(/\x1b\[\d+m/g, "")).not.toContain("\x1b");
    }
  });
});

describe("the team's fleet (status --fleet, team show)", () => {
  test("what other hosts announce is shown escaped", async () => {
    const { rosterText } = await import("../../lib/ops/table/team.ts");
    const agent = { name: "w", address: "w@b", agent: "claude", role: "r\x1b]0;t\x07", live: "idle", job: null };
    const text = rosterText({ team: "lab", host: "a", broker: "127.0.0.1:1883", topic_prefix: "mam/team/lab", reachable: true, warnings: [],
      workspaces: [{ host: "b\x1b[2J", workspace: "/w\u202e", ws_id: "x", online: true, last_seen: new Date().toISOString(), here: false, agents: [agent] }] });
    expect(rawControls(text, ["\n"])).toEqual([]);
    expect(text).toContain("r\\x1b]0;t\\x07");
  });
});

describe("a job to a shell (pure parts)", () => {
  test("the detail is the output's last lines, as a terminal shows them", async () => {
    const { outputTail } = await import("../../lib/ops/job/shell-run.ts");
    expect(outputTail("a\nb\nc\n\n")).toBe("a\nb\nc");
    expect(outputTail("10%\r50%\r100%\ndone\n")).toBe("100%\ndone");
    expect(outputTail(Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n"), 3)).toBe("line 27\nline 28\nline 29");
    expect(outputTail("x".repeat(50), 10, 10)).toBe(`…${"x".repeat(9)}`);
    expect(outputTail("")).toBe("");
  });
  test("exit 0 completes; any other exit, a signal or a stop is an error; the last lines are the detail", async () => {
    const { endEvent } = await import("../../lib/ops/job/shell-run.ts");
    expect(endEvent("sh", 0, null, "ok")).toEqual({ event: "completed", detail: "ok", source: "sh", data: { exit_code: 0 } });
    expect(endEvent("sh", 0, null, "")).toMatchObject({ event: "completed", detail: "exit 0 (no output)" });
    expect(endEvent("sh", 3, null, "boom")).toEqual({ event: "error", detail: "exit 3: boom", source: "sh", data: { exit_code: 3 } });
    expect(endEvent("sh", null, "SIGKILL", "")).toEqual({ event: "error", detail: "killed by SIGKILL (no output)", source: "sh", data: { signal: "SIGKILL" } });
    expect(endEvent("sh", null, "SIGTERM", "half", "SIGINT")).toMatchObject({ event: "error", detail: "stopped by SIGINT to mam shell-job: half" });
  });
  test("what mam types into a shell for a job: one command line, nothing of the prompt", async () => {
    const { shellJobLine } = await import("../../lib/jobs/header.ts");
    expect(shellJobLine({ job_id: "0123abcd" }, "/my ws", "mam")).toBe("mam shell-job 0123abcd --workspace '/my ws'");
  });
});
