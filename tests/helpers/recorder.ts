// For the tests of what mam types and prints (issue 23, "Keystrokes and terminals"): an agent that
// records exactly the bytes typed into its pane, the hostile texts they send, and a check for a
// control character or an invisible direction mark that must never arrive raw.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * An "agent" for a real tmux pane that writes every byte it receives to `rec-$MAM_SESSION.bin` in
 * its folder: no echo, no line editing, no flow control, CR kept as CR; the terminal's signal keys
 * stay on, so a Ctrl-C typed into it kills it as it would a real agent (the review's `cat > file`).
 * Installed under an agent kind's executable name (aider) in the sandbox's bin.
 */
export const RECORDER = `#!/usr/bin/env bash
stty -icanon -echo -ixon -iexten -icrnl min 1 time 0
exec cat > "$PWD/rec-\${MAM_SESSION:-agent}.bin"
`;

/** what the recorder of a session got, as text */
export const recorded = (ws: string, session: string): string => {
  const p = join(ws, `rec-${session}.bin`);
  return existsSync(p) ? readFileSync(p, "utf8") : "";
};

/**
 * Each thing a hostile worker (or prompt, or role) may carry. Ctrl-C, Ctrl-D, Ctrl-U, Ctrl-Z, ESC
 * sequences (a clipboard write, a window title, clear screen, the end of a bracketed paste), C1's
 * CSI and NEL, DEL, the line separator and a right-to-left override.
 */
export const HOSTILE = [
  "\x03",
  "\x04",
  "\x15",
  "\x1a",
  "\x1b]52;c;cHduZWQ=\x07",
  "\x1b]0;pwned\x07",
  "\x1b[2J",
  "\x1b[201~",
  "\u009b31m",
  "\u0085",
  "\x7f",
  "\u2028",
  "\u202e",
].join(" ");

/**
 * Invisible characters an LLM reads and a user cannot see (review O3): the zero-width space,
 * joiner and non-joiner, word joiner, BOM, soft hyphen, two tag characters (ASCII smuggling: "AB")
 * and a run of variation selectors after an emoji (one hidden byte each).
 */
export const INVISIBLE = ["a\u200bb", "\u200c\u200d", "\u2060", "\ufeff", "soft\u00adhyphen", "\u{e0041}\u{e0042}", "\u{1f600}\ufe01\u{e0100}\u{e0101}"].join(" ");

/** INVISIBLE as mam shows it */
export const INVISIBLE_SHOWN = "a\\u200bb \\u200c\\u200d \\u2060 \\ufeff soft\\xadhyphen \\u{e0041}\\u{e0042} \u{1f600}\\ufe01\\u{e0100}\\u{e0101}";

/**
 * the characters that must never arrive raw (C0 but the given ones, DEL, C1, U+2028/9, bidi
 * controls, the invisible ones, a run of variation selectors), written out here on purpose rather
 * than taken from lib/sys/sanitize.ts
 */
export function rawControls(text: string, allowed: string[] = []): string[] {
  const bad: string[] = [];
  let selectorBefore = false;
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    const control = c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || c === 0x2029 || c === 0x61c || c === 0x200e || c === 0x200f || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
    const invisible = c === 0xad || c === 0x180e || (c >= 0x200b && c <= 0x200d) || (c >= 0x2060 && c <= 0x206f) || c === 0xfeff || (c >= 0xfff9 && c <= 0xfffb) || (c >= 0xe0000 && c <= 0xe007f);
    const selector = (c >= 0xfe00 && c <= 0xfe0f) || (c >= 0xe0100 && c <= 0xe01ef);
    if ((control || invisible) && !allowed.includes(ch)) bad.push(`U+${c.toString(16).padStart(4, "0")}`);
    if (selector && selectorBefore) bad.push(`U+${c.toString(16).padStart(4, "0")} after a selector`);
    selectorBefore = selector;
  }
  return bad;
}
