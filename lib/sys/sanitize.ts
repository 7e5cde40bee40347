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
// separators U+2028/U+2029, the bidi controls (U+061C, U+200E, U+200F, U+202A–U+202E,
// U+2066–U+2069) and the invisible characters are shown as visible escapes (`\x1b`, `\x03`,
// `\u202e`, `\u200b`, `\u{e0041}`), never removed. The invisible ones are text a user cannot see
// but an LLM reads (review O3): the soft hyphen U+00AD, U+180E, the zero-width space, non-joiner and
// joiner U+200B–U+200D, U+2060–U+2065 and U+206A–U+206F (word joiner, invisible operators, the
// deprecated format controls), U+FEFF, the annotation marks U+FFF9–U+FFFB and the tag characters
// U+E0000–U+E007F (ASCII smuggling: one tag per letter). The price: an emoji joined with U+200D
// (👩‍💻) shows as `👩\u200d💻`, and a flag of a region (tags) as its escapes. A variation selector
// (U+FE00–U+FE0F, U+E0100–U+E01EF) after a character is how an emoji or an ideograph picks its
// glyph, so one stays; a run of two or more carries hidden bytes (one per selector) and never
// occurs in real text, so a run is shown, each selector as its escape. A
// terminal escape sequence (CSI, OSC, the end of a paste `\e[201~`, C1's CSI) cannot start
// without its ESC or C1 byte, so the rest of it is plain printable text; nothing needs parsing.
// Shown rather than dropped, so that whoever reads it (the user, or the agent it is typed into)
// sees that something odd was sent, and nothing the sender wrote silently disappears. The only
// exceptions are the typed text's own layout: its line breaks (a prompt is typed as a paste; \r\n
// and a lone \r become \n) and tabs (four spaces: a Tab key is completion in most TUIs).
// `--json` keeps the exact text: JSON escapes C0 itself, and outJson (io.ts) writes the other
// characters of the rule as \uXXXX, which parse back to the same text.

/** the characters the rule covers: one at a time, or a run of two or more variation selectors */
const CHARS = "\\u0000-\\u001f\\u007f-\\u009f\\u00ad\\u061c\\u180e\\u200b-\\u200f\\u2028-\\u202e\\u2060-\\u206f\\ufeff\\ufff9-\\ufffb\\u{e0000}-\\u{e007f}";
const SELECTORS = "[\\ufe00-\\ufe0f\\u{e0100}-\\u{e01ef}]{2,}";
const UNSAFE = new RegExp(`[${CHARS}]|${SELECTORS}`, "gu");
const UNSAFE_ONE = new RegExp(UNSAFE.source, "u");

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** one character of the rule as its visible escape: \n \r \t, \xHH below U+0100, \uHHHH, else \u{HHHHH} */
function escapeOne(c: string): string {
  const named = NAMED[c];
  if (named) return named;
  const n = c.codePointAt(0)!;
  if (n < 0x100) return `\\x${n.toString(16).padStart(2, "0")}`;
  return n < 0x10000 ? `\\u${n.toString(16).padStart(4, "0")}` : `\\u{${n.toString(16)}}`;
}

/** a match of the rule (one character, or a run of selectors) as escapes, one per character */
function escape(match: string): string {
  let out = "";
  for (const c of match) out += escapeOne(c);
  return out;
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
    .replace(UNSAFE, (m) => (m === "\n" ? m : escape(m)));
}

/** the characters of the rule that JSON.stringify leaves raw in strings (it escapes C0 itself) */
const JSON_RAW = new RegExp(`[${CHARS.replace("\\u0000-\\u001f", "")}]|${SELECTORS}`, "gu");

/**
 * JSON.stringify's text with DEL, C1, U+2028/9, the bidi controls and the invisible characters
 * written as \uXXXX (a tag character as its two UTF-16 halves, as JSON spells it): the same value,
 * safe on a terminal (they occur only inside strings; its own newlines stay)
 */
export function jsonSafe(json: string): string {
  return json.replace(JSON_RAW, (m) => {
    let out = "";
    for (let i = 0; i < m.length; i++) out += `\\u${m.charCodeAt(i).toString(16).padStart(4, "0")}`;
    return out;
  });
}
