// Lines of a captured screen, as the screen rules (regions.ts) and the question reader
// (question.ts) see them: horizontal rules, and a line with its box edges dropped.

/** a horizontal rule: at least 8 rule characters, optional box corners, nothing else */
const RULE_LINE = /^\s*[╭┌├╰└]?[─━═╌╍┄┅\-]{8,}[╮┐┤╯┘]?\s*$/;

/** is the line a horizontal rule (a box's edge, a divider) */
export const isRuleLine = (l: string): boolean => RULE_LINE.test(l);

/** box edges and surrounding space of a line inside a box */
const EDGES = /^[\s│┃║]+|[\s│┃║]+$/g;

/** the line without box edges and surrounding space, inner runs of space as one */
export const cleanLine = (l: string) => l.replace(EDGES, "").replace(/\s+/g, " ");

/**
 * Look-alike characters, an explicit table: what a screen rule sees instead (curly quotes as
 * straight ones, unicode dashes as '-', non-breaking and other wide spaces as a space, fullwidth
 * forms as their ASCII letters; zero-width characters dropped). A label drawn with "don\u2019t"
 * must meet the rule written with "don't": a rule that misses it must not read it as something
 * else (review A6).
 */
const LOOKALIKES: Record<string, string> = {
  "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\u02bc": "'", "\uff07": "'",
  "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\uff02": '"',
  "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-", "\ufe58": "-", "\ufe63": "-", "\uff0d": "-",
  "\u00a0": " ", "\u2007": " ", "\u202f": " ", "\u2000": " ", "\u2001": " ", "\u2002": " ", "\u2003": " ", "\u2004": " ", "\u2005": " ", "\u2006": " ", "\u2008": " ", "\u2009": " ", "\u200a": " ", "\u205f": " ", "\u3000": " ",
  "\u200b": "", "\u200c": "", "\u200d": "", "\u2060": "", "\ufeff": "",
};
const LOOKALIKE_RE = /[\u2018\u2019\u201a\u201b\u2032\u02bc\uff07\u201c-\u201f\u2033\uff02\u2010-\u2015\u2212\ufe58\ufe63\uff0d\u00a0\u2000-\u200d\u202f\u205f\u3000\u2060\ufeff\uff01-\uff5e]/g;

/** the text as screen rules see it: LOOKALIKES replaced, fullwidth forms U+FF01–FF5E as ASCII */
export const plainText = (s: string): string =>
  s.replace(LOOKALIKE_RE, (c) => LOOKALIKES[c] ?? String.fromCharCode(c.charCodeAt(0) - 0xfee0));
