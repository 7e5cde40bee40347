// Key names exactly as herdr 0.8.0's send-keys accepts them (src/config/keybinds.rs:1151-1264
// parse_key_combo, src/app/api_helpers.rs normalize_api_key_alias): `+`-separated combos,
// case-insensitive, at most one key with any modifiers (ctrl/control, shift, alt/option/meta,
// cmd/command/super, hyper); keys: space, enter/return, esc/escape, tab (shift+tab = backtab),
// backspace/bs, the four arrows, named punctuation, any single character (upper case = shift),
// f<N> (any u8); aliases `C-c`/`c-c` → ctrl+c and `+` → plus. Everything else (home, end,
// pageup, delete, insert, `M-x`, …) is `invalid_key`, as in 0.8.0. A key becomes the bytes a
// terminal sends (f13+ and super/hyper have no bytes here; 0.8.0's mis-encoded shift+tab through
// send-keys is not copied: the fake sends backtab).

const NAMED: Record<string, string> = {
  space: " ",
  enter: "\r",
  return: "\r",
  esc: "\x1b",
  escape: "\x1b",
  tab: "\t",
  backspace: "\x7f",
  bs: "\x7f",
  up: "\x1b[A",
  down: "\x1b[B",
  right: "\x1b[C",
  left: "\x1b[D",
  minus: "-",
  comma: ",",
  period: ".",
  slash: "/",
  backslash: "\\",
  quote: "'",
  double_quote: '"',
  "double-quote": '"',
  semicolon: ";",
  colon: ":",
  percent: "%",
  ampersand: "&",
  backtick: "`",
  plus: "+",
};

const FKEYS = ["\x1bOP", "\x1bOQ", "\x1bOR", "\x1bOS", "\x1b[15~", "\x1b[17~", "\x1b[18~", "\x1b[19~", "\x1b[20~", "\x1b[21~", "\x1b[23~", "\x1b[24~"];

type Mod = "ctrl" | "shift" | "alt" | "super" | "hyper";
const MODS: Record<string, Mod> = { ctrl: "ctrl", control: "ctrl", shift: "shift", alt: "alt", option: "alt", meta: "alt", cmd: "super", command: "super", super: "super", hyper: "hyper" };

/** the key part alone → bytes, or undefined when 0.8.0 does not know it */
function base(key: string): { bytes: string; char?: string } | undefined {
  const lower = key.toLowerCase();
  const n = NAMED[lower];
  if (n !== undefined) return { bytes: n, ...(n.length === 1 && n !== "\r" && n !== "\t" && n !== "\x1b" && n !== "\x7f" ? { char: n } : {}) };
  if ([...key].length === 1) return { bytes: key, char: key };
  const f = /^f(\d+)$/.exec(lower);
  if (f && Number(f[1]) <= 255) {
    const i = Number(f[1]);
    return { bytes: i >= 1 && i <= 12 ? FKEYS[i - 1]! : "" };
  }
  return undefined;
}

function ctrlOf(ch: string): string | undefined {
  const c = ch.toLowerCase();
  if (c >= "a" && c <= "z") return String.fromCharCode(c.charCodeAt(0) - 96);
  const special: Record<string, string> = { "@": "\x00", " ": "\x00", "[": "\x1b", "\\": "\x1c", "]": "\x1d", "^": "\x1e", _: "\x1f", "?": "\x7f" };
  return special[c];
}

/** the bytes for one key, or undefined when herdr 0.8.0 would answer invalid_key */
export function keyBytes(key: string): string | undefined {
  let k = key.trim();
  if (k === "C-c" || k === "c-c") k = "ctrl+c";
  else if (k === "+") k = "plus";
  const mods = new Set<Mod>();
  let keyPart: string | undefined;
  for (const raw of k.split("+")) {
    const part = raw.trim();
    if (part === "") return undefined;
    const m = MODS[part.toLowerCase()];
    if (m) mods.add(m);
    else if (keyPart !== undefined) return undefined;
    else keyPart = part;
  }
  if (keyPart === undefined) return undefined;
  const b = base(keyPart);
  if (!b) return undefined;
  let bytes = b.bytes;
  if (keyPart.toLowerCase() === "tab" && mods.has("shift")) bytes = "\x1b[Z";
  else if (b.char !== undefined && mods.has("shift") && !mods.has("ctrl")) bytes = b.char.toUpperCase();
  if (mods.has("ctrl")) {
    const c = b.char !== undefined ? ctrlOf(b.char) : undefined;
    if (c !== undefined) bytes = c;
  }
  return mods.has("alt") ? `\x1b${bytes}` : bytes;
}

/** the first invalid key in keys, or undefined when all are valid */
export function firstInvalidKey(keys: string[]): string | undefined {
  return keys.find((k) => keyBytes(k) === undefined);
}
