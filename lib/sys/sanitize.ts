// Text that others wrote (a prompt, an event's detail or source, a role, a topic, a name) on its
// way to a terminal: the one rule of what never passes raw, for both ways text leaves mam:
//
// * typed into an agent's pane (`typeable`: job headers, end lines, loop texts, cancel notices,
//   the onboarding, mam ui's send, what MCP asks for; lib/ops/session/at-prompt.ts deliver() is
//   the one place mam types prose), and
// * printed to the user's terminal or the daemon's log (`visible`: job logs/list/status/wait,
//   status, create and the other op texts, notices and errors, monitor.log).
//
// The rule: C0 controls (U+0000–U+001F), DEL, C1 controls (U+0080–U+009F), the line and paragraph
// separators U+2028/U+2029 and the bidi controls (U+061C, U+200E, U+200F, U+202A–U+202E,
// U+2066–U+2069) are shown as visible escapes (`\x1b`, `\x03`, `\u202e`), never removed. A
// terminal escape sequence (CSI, OSC, the end of a paste `\e[201~`, C1's CSI) cannot start
// without its ESC or C1 byte, so the rest of it is plain printable text; nothing needs parsing.
// Shown rather than dropped, so that whoever reads it (the user, or the agent it is typed into)
// sees that something odd was sent, and nothing the sender wrote silently disappears. The only
// exceptions are the typed text's own layout: its line breaks (a prompt is typed as a paste; \r\n
// and a lone \r become \n) and tabs (four spaces: a Tab key is completion in most TUIs).
// `--json` keeps the exact text: JSON escapes C0 itself, and outJson (io.ts) writes the other
// characters of the rule as \uXXXX, which parse back to the same text.

/** the characters the rule covers (one at a time) */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_ONE = new RegExp(UNSAFE.source);

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** one character of the rule as its visible escape: \n \r \t, \xHH below U+0100, else \uHHHH */
function escape(c: string): string {
  const named = NAMED[c];
  if (named) return named;
  const n = c.charCodeAt(0);
  return n < 0x100 ? `\\x${n.toString(16).padStart(2, "0")}` : `\\u${n.toString(16).padStart(4, "0")}`;
}

/** does the text hold a character of the rule (a newline and a tab count) */
export function hasUnsafe(s: string): boolean {
  return UNSAFE_ONE.test(s);
}

/** for a terminal or a log line: every character of the rule as its escape; the result is one line */
export function visible(s: string): string {
  return hasUnsafe(s) ? s.replace(UNSAFE, escape) : s;
}

/** for an agent's pane: line breaks kept (\n), tabs as spaces, every other character of the rule as its escape */
export function typeable(s: string): string {
  if (!hasUnsafe(s)) return s;
  return s
    .replace(/\r\n?/g, "\n")
    .replaceAll("\t", "    ")
    .replace(UNSAFE, (c) => (c === "\n" ? c : escape(c)));
}

/** the characters of the rule that JSON.stringify leaves raw in strings (it escapes C0 itself) */
const JSON_RAW = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON.stringify's text with DEL, C1, U+2028/9 and the bidi controls written as \uXXXX: the same
 * value, safe on a terminal (they occur only inside strings; its own newlines stay)
 */
export function jsonSafe(json: string): string {
  return json.replace(JSON_RAW, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
