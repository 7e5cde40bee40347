// Key names as herdr's send-keys accepts them (herdr.md §2.3 notes): case-insensitive combos,
// `C-x` / `M-x` aliases, named punctuation, f1…f12. A key becomes the bytes a terminal would send.

const NAMED: Record<string, string> = {
  enter: "\r",
  return: "\r",
  esc: "\x1b",
  escape: "\x1b",
  tab: "\t",
  "shift+tab": "\x1b[Z",
  backtab: "\x1b[Z",
  backspace: "\x7f",
  bs: "\x7f",
  space: " ",
  up: "\x1b[A",
  down: "\x1b[B",
  right: "\x1b[C",
  left: "\x1b[D",
  home: "\x1b[H",
  end: "\x1b[F",
  pageup: "\x1b[5~",
  pgup: "\x1b[5~",
  pagedown: "\x1b[6~",
  pgdn: "\x1b[6~",
  insert: "\x1b[2~",
  ins: "\x1b[2~",
  delete: "\x1b[3~",
  del: "\x1b[3~",
  // named punctuation
  minus: "-",
  plus: "+",
  slash: "/",
  backslash: "\\",
  equal: "=",
  equals: "=",
  comma: ",",
  period: ".",
  dot: ".",
  semicolon: ";",
  colon: ":",
  quote: "'",
  apostrophe: "'",
  doublequote: '"',
  backtick: "`",
  grave: "`",
  tilde: "~",
  bang: "!",
  exclamation: "!",
  at: "@",
  hash: "#",
  dollar: "$",
  percent: "%",
  caret: "^",
  ampersand: "&",
  asterisk: "*",
  star: "*",
  underscore: "_",
  pipe: "|",
  question: "?",
  lparen: "(",
  rparen: ")",
  lbracket: "[",
  rbracket: "]",
  lbrace: "{",
  rbrace: "}",
  lt: "<",
  gt: ">",
};

const FKEYS = ["\x1bOP", "\x1bOQ", "\x1bOR", "\x1bOS", "\x1b[15~", "\x1b[17~", "\x1b[18~", "\x1b[19~", "\x1b[20~", "\x1b[21~", "\x1b[23~", "\x1b[24~"];

function base(name: string): string | undefined {
  if (name.length === 1) return name;
  const n = NAMED[name.toLowerCase()];
  if (n !== undefined) return n;
  const f = /^f(\d{1,2})$/i.exec(name);
  if (f) {
    const i = Number(f[1]);
    if (i >= 1 && i <= 12) return FKEYS[i - 1];
  }
  return undefined;
}

function ctrl(ch: string): string | undefined {
  const c = ch.toLowerCase();
  if (c.length !== 1) return undefined;
  if (c >= "a" && c <= "z") return String.fromCharCode(c.charCodeAt(0) - 96);
  const special: Record<string, string> = { "@": "\x00", " ": "\x00", "[": "\x1b", "\\": "\x1c", "]": "\x1d", "^": "\x1e", _: "\x1f", "?": "\x7f" };
  return special[c];
}

/** the bytes for one key, or undefined when herdr would answer invalid_key */
export function keyBytes(key: string): string | undefined {
  if (key === "") return undefined;
  let k = key;
  // tmux-style aliases: C-c, M-x
  const tm = /^([CcMm])-(.+)$/.exec(k);
  if (tm) k = `${tm[1]!.toLowerCase() === "c" ? "ctrl" : "alt"}+${tm[2]}`;
  const whole = base(k);
  if (whole !== undefined && !k.includes("+")) return whole;
  if (k.toLowerCase() === "shift+tab") return NAMED["shift+tab"];
  const parts = k.split("+");
  if (parts.length < 2 || parts.some((p) => p === "")) {
    // a lone "+" is a printable key
    return k === "+" ? "+" : undefined;
  }
  const last = parts.pop()!;
  const mods = parts.map((p) => p.toLowerCase());
  let bytes = base(last);
  if (bytes === undefined) return undefined;
  let alt = false;
  for (const m of mods) {
    if (m === "ctrl" || m === "control") {
      const c = ctrl(last.length === 1 ? last : bytes);
      if (c === undefined) return undefined;
      bytes = c;
    } else if (m === "alt" || m === "meta" || m === "option") {
      alt = true;
    } else if (m === "shift") {
      if (last.length === 1) bytes = last.toUpperCase();
      else if (last.toLowerCase() !== "tab") return undefined;
      else bytes = NAMED["shift+tab"]!;
    } else {
      return undefined;
    }
  }
  return alt ? `\x1b${bytes}` : bytes;
}

/** the first invalid key in keys, or undefined when all are valid */
export function firstInvalidKey(keys: string[]): string | undefined {
  return keys.find((k) => keyBytes(k) === undefined);
}
