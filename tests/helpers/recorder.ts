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
 * the characters that must never arrive raw (C0 but the given ones, DEL, C1, U+2028/9, bidi
 * controls), written out here on purpose rather than taken from lib/sys/sanitize.ts
 */
export function rawControls(text: string, allowed: string[] = []): string[] {
  const bad: string[] = [];
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    const control = c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || c === 0x2029 || c === 0x61c || c === 0x200e || c === 0x200f || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
    if (control && !allowed.includes(ch)) bad.push(`U+${c.toString(16).padStart(4, "0")}`);
  }
  return bad;
}
